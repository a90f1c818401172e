/* Test support shared by the Criterion suites, the fuzz harnesses and the
 * benchmarks: file loading, locating ../shared/corpus, and a digest of every
 * callback with its arguments (the chunk-invariance oracle). */
#ifndef TEST_SUPPORT_H
#define TEST_SUPPORT_H

#include "nettrace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Directory of the shared reference traces (../shared/corpus beside the
 * source tree, or $NETTRACE_SHARED_CORPUS), or NULL when it is absent. */
const char *ts_shared_corpus(void);
/* Directory of the project's own traces (corpus/ in the source tree). */
const char *ts_own_corpus(void);
/* Path join into a static buffer (valid until the next call). */
const char *ts_path(const char *dir, const char *name);

/* Read a whole file into an exact-size heap buffer (so ASan sees over-reads). */
bool ts_read_file(const char *path, uint8_t **data, size_t *len);
/* Write len bytes to path (created or replaced); false when any step fails. */
bool ts_write_file(const char *path, const void *data, size_t len);

/* A running digest of the callback sequence. */
typedef struct ts_digest {
    uint64_t h;             /* FNV-1a over every callback and its arguments */
    uint64_t calls;
    uint64_t traces, metadata, events, stacks, samples, methods, modules, assemblies, sequence_points;
    uint64_t stop_after;    /* return non-zero from the Nth callback (0 = never) */
    uint64_t field_nomem;   /* field iterations that ended NT_ERR_NOMEM (not mixed into h) */
} ts_digest;

void ts_digest_init(ts_digest *d);
/* Callbacks that fold everything they see into a ts_digest (user pointer). */
void ts_digest_callbacks(nt_callbacks *cb);

/* Feed data in chunks: sizes[i % nsizes] bytes at a time (nsizes 0 = whole),
 * then finish.  Returns the final status; *d has the digest. */
nt_status ts_digest_feed(const uint8_t *data, size_t len, const size_t *sizes, size_t nsizes,
                         const nt_limits *lim, ts_digest *d, uint64_t *err_offset);

/* The same with a deterministic pseudo-random split from seed. */
nt_status ts_digest_feed_random(const uint8_t *data, size_t len, uint64_t seed, size_t max_chunk,
                                const nt_limits *lim, ts_digest *d, uint64_t *err_offset);

/* A trace built from data by the trace builder: fed to one parser (jobs 0) or over the parts of a
 * parallel parse with the builder's part consumer (nt_trace_builder_parallel; parts as small as the
 * stream allows), counted or not, lazy names or not, under the parser limits lim and the trace limits
 * tl (NULL: defaults).  *st gets the stream's status, *fs nt_trace_builder_finish's, *pst (when not
 * NULL and jobs) the parallel parse's stats; returns the trace (NULL when finish failed). */
struct nt_trace;
struct nt_trace_limits;
struct nt_parallel_stats;
struct nt_trace *ts_build_trace(const uint8_t *data, size_t len, uint32_t jobs, bool count, bool lazy,
                                const nt_limits *lim, const struct nt_trace_limits *tl, nt_status *st, nt_status *fs,
                                struct nt_parallel_stats *pst);

#endif
