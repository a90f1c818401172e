/*
 * libnettrace — a NetTrace stream in memory parsed by several threads.
 *
 * The stream is cut into parts at sequence points (stack ids and V6 label
 * lists restart there; metadata and V6 thread rows live in their own
 * blocks), found by the block index (nettrace_index.h).  Each part is parsed
 * by a parser of its own that first reads, without callbacks, the trace
 * header and every metadata, thread and sequence-point block before the
 * part; what it delivers is kept (events, samples, stacks and records with
 * their strings) and handed to the caller's callbacks in stream order on one
 * thread.  The callbacks see the same calls with the same arguments as
 * nt_parse_buffer gives them, so every result built from them is the same.
 *
 * Where a part's parse could differ from the sequential one, it is not used:
 * the thread table a part starts from (per-thread sequence numbers, which
 * count lost events) is compared with the one the parse before it ended
 * with, and on any difference (a thread the sequence point does not list,
 * the framing not ending where the index said, a V6 metadata flush inside
 * the part, memory short) that part is parsed again, sequentially, by the
 * parser that read the part before it.  A damaged stream gives the same
 * status, offset and message as the sequential parse, after the same
 * callbacks.  nt_parallel_stats says how many parts went either way.
 *
 * Two ways to run it:
 *  - nt_parse_parallel: the library starts jobs - 1 threads (POSIX threads)
 *    and the calling thread both parses parts and delivers them; every
 *    callback runs on the calling thread.  Returns when the stream is done.
 *  - the caller's threads: nt_parallel_new, then nt_parallel_decode(k) for
 *    each part on any threads (each part once; parts may be decoded in any
 *    order and at the same time), and nt_parallel_deliver(k) on one thread
 *    for k = 0, 1, ... in order, each after decode(k) has returned (the
 *    caller's own synchronization orders the two).  A decoded part holds
 *    about its own size in memory until it is delivered: decode a few parts
 *    ahead of delivery, not the whole file.
 *
 * The data must stay valid and unchanged until the handle is freed: payloads
 * handed to callbacks point into it.
 */
#ifndef NETTRACE_PARALLEL_H
#define NETTRACE_PARALLEL_H

#include "nettrace.h"
#include "nettrace_index.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A consumer that takes a part's callbacks on the thread that parses it
 * (nt_parallel_options.consumer), so that the consumer's own work is spread
 * too, not only the parse.  Without one, a part's callbacks are recorded and
 * replayed to the caller's callbacks on the delivering thread.
 *
 *  - part_new(ctx, k, cb): on the thread decoding part k, before its parse; a
 *    consumer of that part alone (its user pointer), and in *cb (zeroed, a
 *    struct_size set) the callbacks it takes -- every callback the caller's
 *    own consumer takes, since nothing else of the part is kept.  NULL: the
 *    part is recorded for replay instead.
 *  - part_merge(ctx, k, part): on the delivering thread, in part order, once
 *    the part's own parse proved to be the stream's (where the replay would
 *    have run): fold the part's consumer into the caller's, so that it ends
 *    as the callbacks of the sequential parse would have left it.  Returns 0
 *    (merged), a positive value (not merged, nothing changed: the part is
 *    parsed again, sequentially, with the caller's callbacks -- e.g. when a
 *    limit could be reached inside it, where the sequential parse would stop)
 *    or a negative value (stop: delivery ends with NT_ERR_STOPPED).
 *  - part_free(ctx, part): frees a part's consumer, merged or not (any thread).
 *
 * A part whose consumer stopped its parse (a callback returned nonzero) is
 * parsed again sequentially.  The trace builder provides one
 * (nt_trace_builder_parallel).
 */
typedef struct nt_parallel_consumer {
    void *ctx;
    void *(*part_new)(void *ctx, size_t k, nt_callbacks *cb);
    int (*part_merge)(void *ctx, size_t k, void *part);
    void (*part_free)(void *ctx, void *part);
} nt_parallel_consumer;

/** How to cut and run a parallel parse; zero fields select the defaults. */
typedef struct nt_parallel_options {
    uint32_t struct_size;      /**< 0, or sizeof(nt_parallel_options) (see "How structs grow" in nettrace.h) */
    uint32_t jobs;             /**< nt_parse_parallel: threads parsing, the calling thread included (default:
                                    the online processors, at most 16); 1 parses sequentially on the calling
                                    thread */
    uint64_t part_bytes;       /**< bytes a part holds at least before it ends at the next sequence point
                                    (default 8 MiB; raised so that reading the blocks before each part stays
                                    within a few times one read of the stream's block headers) */
    const nt_limits *limits;   /**< every part's parser's limits (NULL: defaults) */
    const nt_allocator *alloc; /**< NULL = malloc; called from several threads at once */
    bool lazy_names;           /**< records carry names as nt_str16 only (nt_parser_set_lazy_names) */
    const nt_parallel_consumer *consumer; /**< per-part consumers (copied; NULL: parts are replayed); a member
                                               beyond the first layout: set struct_size to use it */
} nt_parallel_options;

#define NT_DEFAULT_PARALLEL_PART_BYTES (8u << 20)
#define NT_DEFAULT_PARALLEL_MAX_JOBS 16u

/** What a parallel parse did. */
typedef struct nt_parallel_stats {
    uint32_t struct_size;   /**< set before the call: 0, or sizeof(nt_parallel_stats) */
    uint32_t parts;         /**< parts the stream was cut into (1: it was parsed sequentially) */
    uint32_t replayed;      /**< parts delivered from their own parse */
    uint32_t reparsed;      /**< parts parsed again sequentially (their start state differed, see above) */
    uint64_t primed_blocks; /**< blocks read before the parts (the cost of starting mid-stream) */
    uint32_t merged;        /**< of the replayed parts, those whose consumer was merged (nt_parallel_consumer) */
} nt_parallel_stats;

typedef struct nt_parallel nt_parallel;

/**
 * Plan a parallel parse of the len bytes at data, for the callbacks cb with
 * user (copied; what a part keeps is what these callbacks are handed, so a
 * NULL member costs nothing).  ix is the stream's index (NULL: built here
 * from the buffer; it is not kept).  Returns NT_OK with
 * *out set, NT_ERR_NOMEM or NT_ERR_INVALID_ARG (*out NULL).  A stream the
 * index cannot cut (no sequence point, damaged early, not NetTrace) is one
 * part: nt_parallel_deliver(0) then parses it sequentially.
 */
NT_API nt_status nt_parallel_new(const void *data, size_t len, const nt_index *ix, const nt_callbacks *cb,
                                 void *user, const nt_parallel_options *opt, nt_parallel **out);
/** Parts of the plan (at least 1); 0 for NULL. */
NT_API size_t nt_parallel_part_count(const nt_parallel *pp);
/** Parse part k (any thread; each k once).  NT_OK, or NT_ERR_INVALID_ARG / NT_ERR_STATE for a bad or
 *  repeated k; a damaged part is not an error here: its delivery reports it. */
NT_API nt_status nt_parallel_decode(nt_parallel *pp, size_t k);
/**
 * Deliver part k to the callbacks on the calling thread; k = 0, 1, ... in order,
 * each after nt_parallel_decode(k) returned.  Returns NT_OK while the stream
 * is good so far; after the last part, the status nt_parser_finish gives
 * (NT_OK, NT_ERR_TRUNCATED, ...).  An error ends the parse: later parts are
 * not delivered (NT_ERR_STATE).
 */
NT_API nt_status nt_parallel_deliver(nt_parallel *pp, size_t k);
/**
 * The parser that holds the stream's state once delivery stopped or ended:
 * its status, message, error offset, trace header and stats (nt_parser_stats_get:
 * the stream's counts, the same as the sequential parse's; memory is that
 * parser's own) -- what nt_trace_builder_finish and nt_profile_builder_finish
 * take.  Owned by pp; NULL before part 0 was delivered.
 */
NT_API const nt_parser *nt_parallel_parser(const nt_parallel *pp);
NT_API void nt_parallel_stats_get(const nt_parallel *pp, nt_parallel_stats *out);
/** Free pp and every parser and part it holds; NULL is accepted. */
NT_API void nt_parallel_free(nt_parallel *pp);

/**
 * The whole parse on jobs threads (opt->jobs; 0 = default), callbacks on the
 * calling thread.  Returns the stream's status as nt_parse_buffer does.  If
 * out is not NULL, *out is the plan (nt_parallel_parser, nt_parallel_stats_get;
 * free it with nt_parallel_free), else it is freed here.  msg (msg_size bytes)
 * gets the message ("" when there is none).  Memory: about (jobs + 1) parts
 * at a time.
 */
NT_API nt_status nt_parse_parallel(const void *data, size_t len, const nt_index *ix, const nt_callbacks *cb,
                                   void *user, const nt_parallel_options *opt, nt_parallel **out, char *msg,
                                   size_t msg_size);

#ifdef __cplusplus
}
#endif

#endif
