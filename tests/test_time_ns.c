/* nt_parser_time_ns (the conversion behind nt_sample.time_ns) equals the
 * exact nt_ticks_to_ns for every clock and tick, across the boundaries of
 * its fast routes (whole-ns periods; multiply-shift with one correction). */
#include "nettrace.h"
#include "streams.h"

#include "ltest.h"

#include <criterion/criterion.h>
#include <stdint.h>

__extension__ typedef __int128 i128;

/* A parser that has read a trace header with this clock frequency. */
static nt_parser *parser_with_clock(int64_t freq)
{
    tb b = { 0 };
    tb_header(&b, 8, freq);
    nt_parser *p = nt_parser_new(NULL, NULL, NULL, NULL);
    cr_assert_not_null(p);
    cr_assert_eq(nt_parser_feed(p, b.d, b.n), NT_OK);
    tb_free(&b);
    return p;
}

static uint64_t next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void check(nt_parser *p, int64_t freq, int64_t t)
{
    int64_t want = nt_ticks_to_ns(t, freq), got = nt_parser_time_ns(p, t);
    cr_assert_eq(got, want, "freq %lld ticks %lld: %lld, exact %lld", (long long)freq, (long long)t, (long long)got,
                 (long long)want);
}

LTest(time_ns, equals_the_exact_conversion)
{
    static const int64_t freqs[] = { 1000000000, 10000000, 3124099, 2435927, 14318180, 1, 3, 7, 999999999,
                                     1000000007, 2000000000, 24000000, 19200000, INT64_MAX, 1099511627776ll };
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t f = 0; f < sizeof freqs / sizeof *freqs; f++) {
        int64_t freq = freqs[f];
        nt_parser *p = parser_with_clock(freq);
        static const int64_t edges[] = { 0, 1, -1, 2, 1000, INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1 };
        for (size_t i = 0; i < sizeof edges / sizeof *edges; i++)
            check(p, freq, edges[i]);
        /* Around every power of two (where a shift route ends) and near where the result leaves int64. */
        for (int k = 0; k < 63; k++) {
            int64_t b = (int64_t)(1ull << k);
            for (int64_t d = -2; d <= 2; d++)
                if (b + d >= 0)
                    check(p, freq, b + d);
        }
        int64_t sat = (int64_t)((i128)INT64_MAX * freq / 1000000000);
        for (int64_t d = -3; d <= 3; d++)
            if (sat <= INT64_MAX - 3 && sat + d >= 0)
                check(p, freq, sat + d);
        /* Random ticks of every magnitude, and multiples of the frequency (exact seconds). */
        for (int i = 0; i < 200000; i++) {
            uint64_t r = next(&x);
            int64_t t = (int64_t)(r >> (r % 64));
            check(p, freq, t);
            check(p, freq, -t);
            if (freq < INT64_MAX / 1000)
                check(p, freq, (int64_t)(r % 1000) * freq);
        }
        nt_parser_free(p);
    }
}

LTest(time_ns, zero_before_the_header)
{
    nt_parser *p = nt_parser_new(NULL, NULL, NULL, NULL);
    cr_expect_eq(nt_parser_time_ns(p, 12345), 0);
    cr_expect_eq(nt_parser_time_ns(NULL, 12345), 0);
    nt_parser_free(p);
}
