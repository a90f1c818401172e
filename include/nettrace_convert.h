/*
 * libnettrace conversion — re-write a NetTrace stream (V4/V5 or V6) as V4/V5
 * or V6, whole or as a time slice, through the parser and the writer.
 *
 * What carries over: the trace header, every metadata record, every event's
 * header and raw payload (with its stack, thread ids, sequence number and
 * activity ids), and the sequence points.  Metadata and stack ids are
 * re-numbered (stacks are interned again).  V6 label-list overrides of an
 * event's version, opcode, level or keywords become metadata records of
 * their own; a V6 output that would need more metadata records than a reader
 * holds gets a metadata-flushing sequence point and defines what it uses
 * again.  Field types the output cannot describe (V6-only types in V4,
 * arrays of arrays, fixed-length arrays) make the record lose its field list
 * (the payload bytes are unchanged); events without metadata are left out.
 * Both are counted in nt_convert_stats.
 *
 * A slice (nt_convert_options.from / .to) keeps the header, the window's
 * events with the stacks and metadata they use, the sequence points inside
 * it, every module and assembly record of the input, and the method records
 * (loads and unloads before and after the window, the rundowns) whose code
 * holds an address of the window's stacks, so the slice's frames are named
 * as the original's are: a first pass over the input finds those addresses
 * (nt_convert_bytes, and nt_convert on a regular file, read from where it
 * is and put back there; from a pipe, or with NT_CONVERT_RECORDS_ALL, every
 * method record is kept).  Sequence numbers are numbered
 * again in a slice, since the events left out are not lost.
 *
 *   nt_convert_options o = { .format = 6 };
 *   nt_convert_stats st = NT_STRUCT_INIT(nt_convert_stats);
 *   nt_status s = nt_convert(fd, &o, my_sink, my_file, &st);
 *   ... s != NT_OK: st.message says what and where; st.output_failed tells
 *       an input's damage (the output still holds what was read before it)
 *       from a failure of the output ...
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NETTRACE_CONVERT_H
#define NETTRACE_CONVERT_H

#include "nettrace.h"
#include "nettrace_trace.h"
#include "nettrace_writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a conversion writes.  Zero selects the default in every member. */
typedef struct nt_convert_options {
    uint32_t struct_size;          /**< 0, or sizeof(nt_convert_options) (see "How structs grow" in nettrace.h) */
    uint32_t format;               /**< 4 (V4/V5) or 6; 0 = the input's own (a V5 input is V4) */
    bool uncompressed;             /**< uncompressed event headers */
    const nt_limits *limits;       /**< the parser's limits; NULL = defaults */
    const nt_feed_options *feed;   /**< nt_convert's reads (deadline, progress, chunk size); NULL = defaults */
    nt_time_bound from, to;        /**< a slice [from, to) of the events by their time (nt_sample's time_ns);
                                        both unset: the whole trace */
    const nt_allocator *alloc;     /**< every allocation of the conversion; NULL = malloc */
    uint32_t records;              /**< a slice's method records: NT_CONVERT_RECORDS_NEEDED (0: those whose code
                                        holds a frame of the window) or NT_CONVERT_RECORDS_ALL */
} nt_convert_options;

#define NT_CONVERT_RECORDS_NEEDED 0u
#define NT_CONVERT_RECORDS_ALL 1u

/** What a conversion did.  The library fills it (set struct_size first, see "How structs grow"). */
typedef struct nt_convert_stats {
    uint32_t struct_size;
    nt_status status;              /**< what the call returned */
    bool output_failed;            /**< the failure is the output's (the sink, the writer, memory, a limit of the
                                        output format), not damage in the input */
    uint64_t error_offset;         /**< input byte an input failure refers to (truncation: where the incomplete
                                        unit began) */
    uint64_t input_bytes;          /**< bytes read */
    uint64_t output_bytes;         /**< bytes handed to the sink */
    uint64_t events_written;
    uint64_t events_without_metadata; /**< left out: their metadata was never defined */
    uint64_t fieldless_metadata;   /**< metadata records written without the field list the output cannot hold */
    uint64_t metadata_flushes;     /**< sequence points added so the V6 output's metadata stays readable */
    uint64_t events_outside_window;/**< a slice's events left out (records kept for names are not counted) */
    uint64_t records_outside_window; /**< method, module and assembly records kept from outside the window */
    int os_error;                  /**< errno of a failed read (status NT_ERR_IO with output_failed false) */
    char message[256];             /**< what went wrong, with the byte offset; "" on success */
    uint64_t method_records_left_out; /**< a slice's method records from outside the window whose code holds no
                                           frame of it */
} nt_convert_stats;

/**
 * Convert the stream read from fd (to its end; not closed) into the sink.
 * A stream damaged or cut short still gives a complete output of what was
 * read before the damage, and returns the input's status (NT_ERR_TRUNCATED,
 * NT_ERR_MALFORMED, ...); a failing sink gives NT_ERR_IO with output_failed.
 * stats may be NULL.  NT_ERR_INVALID_ARG for a format other than 0, 4 or 6, a
 * window whose end is before its start, or a struct a newer header set up.
 */
NT_API nt_status nt_convert(int fd, const nt_convert_options *opt, nt_sink_fn out, void *user,
                            nt_convert_stats *stats);

/** The same over a stream in memory (opt->feed is not used). */
NT_API nt_status nt_convert_bytes(const void *data, size_t len, const nt_convert_options *opt, nt_sink_fn out,
                                  void *user, nt_convert_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* NETTRACE_CONVERT_H */
