/* The cursor's LEB128 readers: the unrolled, unchecked forms the event
 * header uses when the block has room must agree with the checked loop on
 * every length, including the overlong and out-of-range encodings both
 * reject, and the checked forms must stop at the span's end. */
#include <criterion/criterion.h>

#include "common/cursor.h"

/* Encodes v in n bytes (n at least its minimal length; padding bytes are 0x80 ... 0x00). */
static size_t encode(uint64_t v, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++) {
        out[i] = (uint8_t)(v & 0x7f) | (i + 1 < n ? 0x80 : 0);
        v >>= 7;
    }
    return n;
}

/* A reference decoder: value and length, or 0 when it takes more than max bytes. */
static size_t reference(const uint8_t *b, size_t max, uint64_t *v)
{
    uint64_t r = 0;
    for (size_t i = 0; i < max; i++) {
        if (i < 10)
            r |= (uint64_t)(b[i] & 0x7f) << (7 * i);
        if (!(b[i] & 0x80)) {
            *v = r;
            return i + 1;
        }
    }
    return 0;
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* Checks every reader on the 16 bytes at buf (the varint first, then filler). */
static void check_all(const uint8_t *buf)
{
    uint64_t ref;
    size_t len = reference(buf, 10, &ref);
    bool ok64 = len != 0 && !(len == 10 && buf[9] > 1);
    bool ok32 = len != 0 && len <= 5 && ref <= UINT32_MAX && !(len == 5 && buf[4] >= 0x10);

    cm_cursor c = cm_cursor_make(buf, 16);
    uint64_t v64 = 0;
    cr_assert_eq(cm_cur_varu64_roomy(&c, &v64), ok64, "64-bit roomy on %02x %02x %02x", buf[0], buf[1], buf[2]);
    if (ok64) {
        cr_assert_eq(v64, ref);
        cr_assert_eq((size_t)(c.p - buf), len);
    }
    c = cm_cursor_make(buf, 16);
    cr_assert_eq(cm_cur_varu64(&c, &v64), ok64);
    if (ok64)
        cr_assert(v64 == ref && (size_t)(c.p - buf) == len);

    uint32_t v32 = 0;
    c = cm_cursor_make(buf, 16);
    cr_assert_eq(cm_cur_varu32_roomy(&c, &v32), ok32, "32-bit roomy on %02x %02x %02x %02x %02x", buf[0], buf[1],
                 buf[2], buf[3], buf[4]);
    if (ok32)
        cr_assert(v32 == ref && (size_t)(c.p - buf) == len);
    c = cm_cursor_make(buf, 16);
    cr_assert_eq(cm_cur_varu32(&c, &v32), ok32);
    if (ok32)
        cr_assert(v32 == ref && (size_t)(c.p - buf) == len);

    /* Cut just before the end of the varint: the checked readers refuse. */
    if (len > 0) {
        c = cm_cursor_make(buf, len - 1);
        cr_assert(!cm_cur_varu64(&c, &v64) && c.p == buf);
        c = cm_cursor_make(buf, len - 1);
        cr_assert(!cm_cur_varu32(&c, &v32) && c.p == buf);
    }
}

Test(cursor, varints_of_every_length_agree_with_the_reference)
{
    uint64_t seed = 0x9e3779b97f4a7c15u;
    uint8_t buf[16];
    for (int bits = 0; bits <= 64; bits++) {
        for (int k = 0; k < 200; k++) {
            uint64_t v = bits == 0 ? 0 : next(&seed) >> (64 - bits);
            size_t min = 1;
            for (uint64_t x = v >> 7; x; x >>= 7)
                min++;
            for (size_t n = min; n <= 11; n++) { /* minimal, padded, and overlong */
                memset(buf, (int)(next(&seed) & 0xff), sizeof buf);
                encode(v, n, buf);
                check_all(buf);
            }
        }
    }
}

Test(cursor, random_bytes_agree_with_the_reference)
{
    uint64_t seed = 12345;
    uint8_t buf[16];
    for (int k = 0; k < 200000; k++) {
        for (size_t i = 0; i < sizeof buf; i++)
            buf[i] = (uint8_t)next(&seed);
        /* bias toward long varints: set the continuation bit on a random prefix */
        size_t run = next(&seed) % 12;
        for (size_t i = 0; i < run && i < sizeof buf; i++)
            buf[i] |= 0x80;
        check_all(buf);
    }
}
