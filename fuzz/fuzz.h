/* Shared by the libFuzzer harnesses and their plain replay driver.
 *
 * Each harness is one file that defines LLVMFuzzerTestOneInput.  Built with
 * clang -fsanitize=fuzzer it is a libFuzzer target; linked with replay_main.c
 * it replays corpus files under any compiler (make check).  A broken invariant
 * calls fz_fail(), which prints what broke and aborts, so both libFuzzer and
 * the replay driver report it as a crash with the input kept. */
#ifndef FUZZ_H
#define FUZZ_H

#include "nettrace.h"
#include "support.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Print "harness invariant broken: <msg>" and abort. */
void fz_fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

/* FNV-1a of the input: a deterministic source of choices that leaves the
 * input itself a plain stream (so every harness can share one corpus). */
uint64_t fz_hash(const uint8_t *data, size_t size);

/* An export's output gathered in memory (d: n bytes, grown by doubling; the caller frees d). */
typedef struct fz_sink {
    uint8_t *d;
    size_t n, cap;
} fz_sink;

/* The exporters' nt_sink_fn over an fz_sink (user); 1 when memory is short. */
int fz_sink_write(void *user, const void *data, size_t len);

/* xorshift64 step; the state must be non-zero. */
uint64_t fz_next(uint64_t *state);

/* The limits the whole-input, chunked and allocation harnesses parse with:
 * the defaults scaled down (1 MiB blocks, 64 Ki stacks, 4 Ki threads ...) so
 * that an input hitting a table limit costs milliseconds, not a 16 MiB table
 * fill, and the campaigns keep their execution rate.  The code paths are the
 * same as under the defaults; fuzz_parser_limits goes much tighter. */
void fz_harness_limits(nt_limits *lim);

/* Is s one of the statuses a parse may end with? */
int fz_parse_status_ok(nt_status s);

/* One parse with the digest callbacks, the input fed in chunks chosen by
 * next_chunk (NULL = one feed).  Returns the final status; fills *d, *stats
 * (taken before nt_parser_free) and *err_offset.  Checks the invariants every
 * parse must keep: a defined status, error offset within the input, a message
 * for every error, the stats agreeing with the callbacks. */
typedef size_t (*fz_chunker)(void *ctx, size_t left);
nt_status fz_parse(const uint8_t *data, size_t size, fz_chunker next_chunk, void *chunk_ctx,
                   const nt_limits *lim, const nt_allocator *alloc, uint64_t stop_after,
                   ts_digest *d, nt_parser_stats *stats, uint64_t *err_offset);

/* Abort unless the two parses agree on everything that must not depend on
 * chunking (the digest includes the final status and error offset). */
void fz_same(const char *what, const ts_digest *a, const nt_parser_stats *sa, const ts_digest *b,
             const nt_parser_stats *sb);

#endif
