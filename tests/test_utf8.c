/* The one UTF-8 decoder (src/common/utf8.c) under both policies: what each
 * kind of invalid input becomes, and how far it advances. */
#include "common/utf8.h"

#include "ltest.h"

#include <criterion/criterion.h>
#include <string.h>

typedef struct utf8_case {
    const char *in;
    uint32_t cp;        /* expected code point (REPLACE) */
    size_t used;        /* bytes it consumes (REPLACE) */
    bool valid;         /* REJECT accepts it */
} utf8_case;

static const utf8_case cases[] = {
    { "A", 'A', 1, true },
    { "\xC3\xA9", 0xE9, 2, true },
    { "\xE2\x82\xAC", 0x20AC, 3, true },
    { "\xF0\x9F\x98\x80", 0x1F600, 4, true },
    { "\xF4\x8F\xBF\xBF", 0x10FFFF, 4, true },
    { "\xC0\x80", 0xFFFD, 2, false },         /* overlong NUL: one replacement for the sequence */
    { "\xE0\x80\xAF", 0xFFFD, 3, false },     /* overlong '/' */
    { "\xED\xA0\x80", 0xFFFD, 3, false },     /* a surrogate */
    { "\xF4\x90\x80\x80", 0xFFFD, 4, false }, /* above U+10FFFF */
    { "\xF5\x80\x80\x80", 0xFFFD, 4, false },
    { "\x80", 0xFFFD, 1, false },             /* a stray continuation byte */
    { "\xFF", 0xFFFD, 1, false },
    { "\xC3" "A", 0xFFFD, 1, false },         /* a missing continuation: the next byte is kept */
    { "\xE2\x82", 0xFFFD, 1, false },         /* cut by the terminator: never read past it */
};

LTest(utf8, both_policies)
{
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const utf8_case *k = &cases[i];
        const unsigned char *s = (const unsigned char *)k->in, *p = s;
        uint32_t cp = cm_utf8_next(&p, CM_UTF8_REPLACE);
        cr_expect_eq(cp, k->cp, "case %zu: U+%04X", i, cp);
        cr_expect_eq((size_t)(p - s), k->used, "case %zu: %zu bytes used", i, (size_t)(p - s));
        p = s;
        cp = cm_utf8_next(&p, CM_UTF8_REJECT);
        if (k->valid) {
            cr_expect_eq(cp, k->cp, "case %zu", i);
            cr_expect_eq((size_t)(p - s), k->used, "case %zu", i);
        } else {
            cr_expect_eq(cp, CM_UTF8_INVALID, "case %zu is refused", i);
            cr_expect_eq(p, s, "case %zu: a refusal does not advance", i);
        }
    }
}

LTest(utf8, utf16_encoding)
{
    uint16_t u[2];
    cr_expect_eq(cm_utf16_encode(0x41, u), 1);
    cr_expect_eq(u[0], 0x41);
    cr_expect_eq(cm_utf16_encode(0x1F600, u), 2);
    cr_expect_eq(u[0], 0xD83D);
    cr_expect_eq(u[1], 0xDE00);
}
