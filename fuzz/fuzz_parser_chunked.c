/* Differential: the parser fed the input in chunks must produce exactly the
 * callbacks (digest of every callback and its arguments, final status and
 * error offset) and stats of the whole-input parse.
 *
 * The split is derived from a hash of the input, so the input stays a plain
 * stream and shares its corpus with the other parser harnesses; several
 * split plans run per input: byte-at-a-time for short inputs, two pieces at a
 * chosen point, and random chunks (zero-length feeds included) with a chunk
 * size ceiling drawn from 1..4096.  A callback stop at a chosen call must
 * also end the same way however the input is split. */
#include "fuzz.h"

typedef struct plan {
    int kind;          /* 0 bytes, 1 two pieces, 2 random */
    size_t cut, max;
    uint64_t x;
    size_t fed;
} plan;

static size_t next_chunk(void *ctx, size_t left)
{
    plan *pl = ctx;
    size_t n;
    switch (pl->kind) {
    case 0:
        n = 1;
        break;
    case 1:
        n = pl->fed < pl->cut ? pl->cut - pl->fed : left;
        break;
    default: {
        uint64_t r = fz_next(&pl->x);
        n = (r & 7) == 0 ? 0 : (size_t)((r >> 3) % pl->max) + 1;
        break;
    }
    }
    if (n > left)
        n = left;
    pl->fed += n;
    return n;
}

static nt_limits lim;

static void compare(const uint8_t *data, size_t size, plan *pl, uint64_t stop_after, const ts_digest *whole,
                    const nt_parser_stats *wst, const char *what)
{
    ts_digest d;
    nt_parser_stats st = { 0 };
    uint64_t err;
    pl->fed = 0;
    fz_parse(data, size, next_chunk, pl, &lim, NULL, stop_after, &d, &st, &err);
    fz_same(what, whole, wst, &d, &st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t h = fz_hash(data, size);
    fz_harness_limits(&lim);
    ts_digest whole;
    nt_parser_stats wst = { 0 };
    uint64_t err;
    fz_parse(data, size, NULL, NULL, &lim, NULL, 0, &whole, &wst, &err);

    plan pl = { 0 };
    if (size <= 4096) {
        pl.kind = 0;
        compare(data, size, &pl, 0, &whole, &wst, "one byte at a time");
    }
    pl.kind = 1;
    pl.cut = size ? (size_t)(h % (size + 1)) : 0;
    compare(data, size, &pl, 0, &whole, &wst, "two pieces");

    static const size_t ceilings[] = { 1, 2, 3, 7, 16, 64, 255, 256, 257, 1024, 4096 };
    pl.kind = 2;
    pl.x = h;
    pl.max = ceilings[(h >> 32) % (sizeof ceilings / sizeof *ceilings)];
    compare(data, size, &pl, 0, &whole, &wst, "random chunks");

    /* Stopping from a callback must not depend on chunking either. */
    if (whole.calls) {
        uint64_t k = 1 + (h >> 17) % whole.calls;
        ts_digest ws;
        nt_parser_stats wss = { 0 };
        fz_parse(data, size, NULL, NULL, &lim, NULL, k, &ws, &wss, &err);
        pl.x = h ^ 0x5555;
        compare(data, size, &pl, k, &ws, &wss, "random chunks, stopped by a callback");
    }
    return 0;
}
