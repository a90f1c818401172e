/* The parser under tight limits taken from the input.
 *
 * Input: 8 bytes of settings, then the stream.  Bytes 0-6 give the seven
 * nt_limits fields (small values, so the limits are what ends most parses);
 * byte 7 chooses one feed or random chunks of at most byte-7 bytes.
 * Checks: memory_peak never exceeds a bound computed from the limits (every
 * table's growth rule, see peak_bound), and the verdict under limits does not
 * depend on chunking. */
#include "fuzz.h"
#include "peak_bound.h"

#include <string.h>

static size_t random_chunk(void *ctx, size_t left)
{
    uint64_t *st = ctx;
    uint64_t r = fz_next(st);
    size_t max = (size_t)(st[1]);
    size_t n = (size_t)(r % max) + 1;
    return n < left ? n : left;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8)
        return 0;
    const uint8_t *b = data;
    nt_limits lim = { 0 };
    lim.max_block_bytes = (32u << (b[0] % 12)) + b[0];       /* 32 .. 64 KiB */
    lim.max_metadata = 1u + b[1] % 64;
    lim.max_metadata_bytes = (16u << (b[2] % 14)) + b[2];   /* 16 .. 128 KiB */
    lim.max_fields = 1u + b[3] % 32;
    lim.max_stacks = 1u + b[4];
    lim.max_stack_frames = 1u + 8u * b[5];
    lim.max_threads = 1u + b[6] % 64;
    const uint8_t *stream = data + 8;
    size_t len = size - 8;

    ts_digest whole;
    nt_parser_stats wst = { 0 };
    uint64_t err;
    fz_parse(stream, len, NULL, NULL, &lim, NULL, 0, &whole, &wst, &err);
    size_t bound = fuzz_peak_bound(&lim);
    if (wst.memory_peak > bound)
        fz_fail("memory peak %zu above the %zu bytes the limits allow", wst.memory_peak, bound);

    if (b[7]) {
        uint64_t st[2] = { fz_hash(data, size), b[7] };
        ts_digest d;
        nt_parser_stats cst = { 0 };
        fz_parse(stream, len, random_chunk, st, &lim, NULL, 0, &d, &cst, &err);
        if (cst.memory_peak > bound)
            fz_fail("chunked: memory peak %zu above the %zu bytes the limits allow", cst.memory_peak, bound);
        fz_same("limits, random chunks", &whole, &wst, &d, &cst);
    }
    return 0;
}
