/* cm_checksum64 (common/checksum.h), the sidecar's seal: it changes when any
 * one bit of the input flips, wherever it is (in a 32-byte stripe, the
 * 8-byte tail or the last bytes), when the input is cut or grown by zero
 * bytes, and it is the same for the same bytes at any alignment. */
#include "common/checksum.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define LEN 203 /* six stripes, two tail words and three tail bytes */

static void fill(uint8_t *p, size_t n)
{
    uint64_t x = 0x243F6A8885A308D3ull;
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (uint8_t)(x >> 56);
    }
}

Test(checksum, every_single_bit_flip_changes_it)
{
    uint8_t buf[LEN];
    fill(buf, sizeof buf);
    uint64_t base = cm_checksum64(buf, sizeof buf);
    for (size_t i = 0; i < sizeof buf; i++)
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (uint8_t)(1u << bit);
            cr_assert_neq(cm_checksum64(buf, sizeof buf), base, "byte %zu bit %d", i, bit);
            buf[i] ^= (uint8_t)(1u << bit);
        }
    cr_assert_eq(cm_checksum64(buf, sizeof buf), base);
}

Test(checksum, cuts_and_zero_growth_change_it)
{
    uint8_t buf[LEN + 64] = { 0 };
    fill(buf, LEN);
    uint64_t whole = cm_checksum64(buf, LEN);
    for (size_t n = 0; n < LEN + 64; n++)
        if (n != LEN)
            cr_assert_neq(cm_checksum64(buf, n), whole, "length %zu", n);
    uint8_t zeros[64] = { 0 };
    cr_assert_neq(cm_checksum64(zeros, 32), cm_checksum64(zeros, 64), "zero stripes are counted");
}

Test(checksum, alignment_does_not_matter)
{
    uint8_t *raw = malloc(LEN + 8);
    cr_assert_not_null(raw);
    fill(raw, LEN);
    uint64_t want = cm_checksum64(raw, LEN);
    for (size_t shift = 1; shift < 8; shift++) {
        memmove(raw + shift, raw + shift - 1, LEN);
        cr_assert_eq(cm_checksum64(raw + shift, LEN), want, "shift %zu", shift);
    }
    free(raw);
}
