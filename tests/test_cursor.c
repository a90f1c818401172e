/* The cursor's LEB128 readers: the unrolled, unchecked forms the event
 * header uses when the block has room must agree with the checked loop on
 * every length, including the overlong and out-of-range encodings both
 * reject, and the checked forms must stop at the span's end. */
#include <criterion/criterion.h>

#include "common/byte_buf.h"
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

/* The one byte writer (common/byte_buf.h) against the cursor: what it writes
 * the cursor reads back, in the bytes the formats fix. */
Test(byte_buf, writes_what_the_cursor_reads)
{
    cm_mem mem;
    cm_mem_init(&mem, NULL);
    cm_buf b = { .mem = &mem };
    cm_buf_u8(&b, 0xA5);
    cm_buf_u16(&b, 0x1234);
    cm_buf_u32(&b, 0x89ABCDEFu);
    cm_buf_u64(&b, 0x0102030405060708ull);
    cm_buf_varu(&b, 300);
    cm_buf_utf16z(&b, "a\xC3\xA9", CM_UTF8_REPLACE);
    cm_buf_str8(&b, "hi");
    const uint8_t want[] = { 0xA5, 0x34, 0x12, 0xEF, 0xCD, 0xAB, 0x89, 8, 7, 6, 5, 4, 3, 2, 1,
                             0xAC, 0x02, 'a', 0, 0xE9, 0, 0, 0, 2, 'h', 'i' };
    cr_assert_not(b.failed);
    cr_assert_eq(b.n, sizeof want);
    cr_assert_arr_eq(b.d, want, sizeof want);
    cm_cursor c = cm_cursor_make(b.d, b.n);
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64, var;
    cr_assert(cm_cur_u8(&c, &u8) && cm_cur_u16(&c, &u16) && cm_cur_u32(&c, &u32) && cm_cur_u64(&c, &u64) &&
              cm_cur_varu64(&c, &var));
    cr_assert(u8 == 0xA5 && u16 == 0x1234 && u32 == 0x89ABCDEFu && u64 == 0x0102030405060708ull && var == 300);
    cm_buf_put32(&b, 1, 0xFFFFFFFFu);
    cr_assert_eq(cm_le32(b.d + 1), 0xFFFFFFFFu, "a patch overwrites in place");
    cm_buf_put32(&b, b.n - 3, 0); /* beyond what was written: ignored */
    cr_assert_arr_eq(b.d + b.n - 3, want + sizeof want - 3, 3);
    cm_buf_free(&b);
    cr_assert_eq(mem.used, 0, "the buffer's storage is returned");
}

Test(byte_buf, fixed_storage_fails_past_its_size_and_keeps_what_fit)
{
    uint8_t storage[8] = { 0 };
    cm_buf b = cm_buf_over(storage, 6);
    cm_buf_u32(&b, 0x11223344u);
    cr_assert_not(b.failed);
    cm_buf_u32(&b, 0x55667788u); /* 8 bytes into 6 */
    cr_assert(b.failed, "fixed storage does not grow");
    cr_assert_eq(b.n, 4);
    cr_assert_eq(storage[4], 0, "nothing is written past the bytes that fit");
    cm_buf_u8(&b, 1);
    cr_assert_eq(b.n, 4, "a failed buffer stays failed");
}

Test(byte_buf, utf16_policies)
{
    uint8_t storage[32];
    cm_buf b = cm_buf_over(storage, sizeof storage);
    cm_buf_utf16z(&b, "x\xC3", CM_UTF8_REJECT);
    cr_assert(b.failed, "REJECT fails the buffer on malformed UTF-8");
    cr_assert_eq(cm_utf16_units("x\xC3", CM_UTF8_REJECT), SIZE_MAX);
    b = cm_buf_over(storage, sizeof storage);
    cm_buf_utf16z(&b, "x\xC3", CM_UTF8_REPLACE);
    const uint8_t want[] = { 'x', 0, 0xFD, 0xFF, 0, 0 };
    cr_assert_not(b.failed);
    cr_assert_eq(b.n, sizeof want);
    cr_assert_arr_eq(storage, want, sizeof want);
    cr_assert_eq(cm_utf16_units("x\xC3", CM_UTF8_REPLACE), 2);
    cr_assert_eq(cm_utf16_units("\xF0\x9F\x98\x80", CM_UTF8_REJECT), 2, "a surrogate pair is two units");
}
