/* Lazy names: with nt_parser_set_lazy_names the records' UTF-8 members are
 * NULL, the nt_str16 spans convert (nt_str16_utf8) to exactly the strings
 * the eager parser hands out, and the parser converts none of them.
 * nt_str16_utf8 cuts like snprintf. */
#include "parse/context.h"
#include "support.h"

#include "ltest.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

typedef struct names {
    char *text;   /* every name, NUL-separated, in callback order */
    size_t len, cap;
    size_t records;
    bool saw_utf8; /* a UTF-8 member was non-NULL */
} names;

static void add(names *n, const char *s, size_t len)
{
    if (n->len + len + 1 > n->cap) {
        n->cap = (n->len + len + 1) * 2;
        n->text = realloc(n->text, n->cap);
        cr_assert_not_null(n->text);
    }
    memcpy(n->text + n->len, s, len);
    n->text[n->len + len] = '\0';
    n->len += len + 1;
}

/* Adds the string: from UTF-8 when the parser converted it, else from the span. */
static void add_name(names *n, const char *utf8, nt_str16 span)
{
    if (utf8) {
        n->saw_utf8 = true;
        add(n, utf8, strlen(utf8));
        return;
    }
    size_t need = 3 * (size_t)span.count + 1;
    char *buf = malloc(need);
    size_t len = nt_str16_utf8(span, buf, need);
    cr_assert_lt(len, need);
    add(n, buf, len);
    free(buf);
}

static int on_method(void *u, const nt_method *m)
{
    names *n = u;
    n->records++;
    add_name(n, m->declaring_type, m->declaring_type16);
    add_name(n, m->name, m->name16);
    add_name(n, m->signature, m->signature16);
    return 0;
}

static int on_module(void *u, const nt_module *m)
{
    names *n = u;
    n->records++;
    add_name(n, m->il_path, m->il_path16);
    add_name(n, m->native_path, m->native_path16);
    return 0;
}

static int on_assembly(void *u, const nt_assembly *a)
{
    names *n = u;
    n->records++;
    add_name(n, a->name, a->name16);
    return 0;
}

static nt_status collect(const uint8_t *d, size_t len, bool lazy, names *n, uint64_t *converted)
{
    nt_callbacks cb = { 0 };
    cb.method = on_method;
    cb.module = on_module;
    cb.assembly = on_assembly;
    nt_parser *p = nt_parser_new(&cb, n, NULL, NULL);
    cr_assert_not_null(p);
    nt_parser_set_lazy_names(p, lazy);
    nt_status s = nt_parser_feed(p, d, len);
    if (s == NT_OK)
        s = nt_parser_finish(p);
    *converted = p->names_converted;
    nt_parser_free(p);
    return s;
}

static void compare_on(const char *path)
{
    uint8_t *d;
    size_t len;
    cr_assert(ts_read_file(path, &d, &len), "%s", path);
    names eager = { 0 }, lazy = { 0 };
    uint64_t eager_conv, lazy_conv;
    nt_status es = collect(d, len, false, &eager, &eager_conv);
    nt_status ls = collect(d, len, true, &lazy, &lazy_conv);
    cr_expect_eq(es, ls, "%s", path);
    cr_expect_gt(eager.records, 0, "%s has records", path);
    cr_expect_eq(eager.records, lazy.records, "%s", path);
    cr_expect(eager.saw_utf8 && !lazy.saw_utf8, "%s: UTF-8 members only when eager", path);
    cr_expect_eq(eager.len, lazy.len, "%s", path);
    cr_expect(eager.len == lazy.len && memcmp(eager.text, lazy.text, eager.len) == 0, "%s: same strings", path);
    cr_expect_gt(eager_conv, 0);
    cr_expect_eq(lazy_conv, 0, "%s: lazy names convert nothing", path);
    free(eager.text);
    free(lazy.text);
    free(d);
}

LTest(lazy_names, same_strings_no_conversion_own_corpus)
{
    compare_on(ts_path(ts_own_corpus(), "spin-threads.nettrace"));
}

LTest(lazy_names, same_strings_no_conversion_shared_corpus)
{
    const char *dir = ts_shared_corpus();
    if (!dir) {
        cr_skip_test("../shared/corpus is absent");
    }
    compare_on(ts_path(dir, "perfview__HeartRateMonitor.10068.nettrace"));
    compare_on(ts_path(dir, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace"));
}

LTest(lazy_names, conversion_cuts_like_snprintf)
{
    /* "aé€😀" then an unpaired high surrogate */
    const uint8_t units[] = { 'a', 0, 0xE9, 0, 0xAC, 0x20, 0x3D, 0xD8, 0x00, 0xDE, 0x00, 0xD8 };
    nt_str16 s = { units, 6 };
    char buf[32];
    size_t full = nt_str16_utf8(s, buf, sizeof buf);
    cr_expect_eq(full, 1 + 2 + 3 + 4 + 3);
    cr_expect_str_eq(buf, "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xEF\xBF\xBD");
    cr_expect_eq(nt_str16_utf8(s, buf, 5), full, "the whole length, as snprintf");
    cr_expect_str_eq(buf, "a\xC3\xA9", "cut before a character that does not fit");
    cr_expect_eq(nt_str16_utf8(s, NULL, 0), full);
}
