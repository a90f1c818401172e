/*
 * libnettrace writer — emit NetTrace streams (V4/V5 as the .NET runtime
 * writes them, or V6) to a sink of your choice.
 *
 * Use it to make test traces, fuzz seeds, converted traces, or traces of your
 * own events.  The writer buffers blocks the way the runtime does: events
 * gather in an event block that is flushed at ~100 KiB (or on demand), and
 * the metadata, stacks (and in V6 threads and label lists) that events refer
 * to are always flushed before the event block that refers to them.  Every
 * stream it produces is accepted by nt_parser (and by TraceEvent 4.0.0, as
 * checked on the seeds and converted traces; one caveat: TraceEvent credits
 * sequence numbers to the capture thread of the last event marked is_sorted,
 * so mark an event sorted where the capture thread changes or its EventsLost
 * comes out wrong; tests/conformance/edges.c does so).  Anything a reader would refuse
 * or silently drop (an undefined metadata or stack id, an IP wider than the
 * pointer size, a field list nested too deep) is refused with
 * NT_ERR_INVALID_ARG or NT_ERR_LIMIT instead.
 *
 *   nt_membuf out = { 0 };
 *   nt_writer *w = nt_writer_new(NULL, nt_membuf_write, &out, NULL);
 *   uint32_t stack_id;
 *   uint64_t ips[] = { 0x1000, 0x2000 };
 *   nt_writer_stack(w, ips, 2, &stack_id);
 *   nt_writer_event hdr = { .thread_id = 42, .timestamp = 1000, .stack_id = stack_id };
 *   nt_writer_sample(w, &hdr, NT_SAMPLE_MANAGED);
 *   nt_writer_finish(w);
 *   nt_writer_free(w);
 *   ... out.data / out.len hold the stream ...
 *   nt_membuf_free(&out);
 *
 * Errors are sticky: after a failure every call returns the same status.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NETTRACE_WRITER_H
#define NETTRACE_WRITER_H

#include "nettrace.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What the writer writes, and the trace header's values.  Zero selects the
 *  default in every member (a zeroed struct is the same as nt_writer_options_default). */
typedef struct nt_writer_options {
    uint32_t struct_size; /**< 0, or sizeof(nt_writer_options) (see "How structs grow" in nettrace.h) */
    uint32_t format;              /**< 4 (NetTrace V4/V5, the default) or 6 */
    uint32_t format_minor;        /**< V6 minor version (default 0) */
    bool uncompressed;            /**< uncompressed event headers (legal, never written by the runtime;
                                       V4 blobs are not padded, as TraceEvent reads them) */
    uint32_t pointer_size;        /**< 4 or 8 (default 8): width of stack IPs */
    nt_systemtime sync_time_utc;  /**< default (all zero) 1970-01-01T00:00:00Z; else a date from 1601-01-01 to
                                       9999-12-31 (TraceEvent makes it a DateTime), or every call fails with
                                       NT_ERR_INVALID_ARG */
    int64_t sync_qpc;             /**< an event whose timestamp readers cannot place on their calendar from it
                                       (years 1 to 9999, timestamp - sync_qpc within int64) is refused with
                                       NT_ERR_INVALID_ARG */
    int64_t qpc_frequency;        /**< default 1,000,000,000 */
    uint32_t process_id;
    uint32_t processor_count;     /**< default 1; V6: the HardwareThreadCount key */
    uint32_t sampling_interval_ns;/**< default 1,000,000; V6: the ExpectedCPUSamplingRate key */
    uint32_t block_bytes;         /**< flush an event block once it holds this much (default 100 KiB) */
} nt_writer_options;

/** Fill *opt with the defaults (V4, compressed, 64-bit, 1 GHz clock, 1 ms sampling). */
NT_API void nt_writer_options_default(nt_writer_options *opt);

typedef struct nt_writer nt_writer;

/**
 * Create a writer writing to `write` (a failing sink makes every later call
 * return NT_ERR_IO).  opt NULL = defaults (as do its zero members); alloc NULL =
 * malloc.  Nothing is written until the first block is flushed (the stream
 * header goes first).  Returns NULL when memory is short or an option is
 * invalid (a format other than 4 or 6, a pointer size other than 4 or 8).
 */
NT_API nt_writer *nt_writer_new(const nt_writer_options *opt, nt_sink_fn write, void *user,
                                const nt_allocator *alloc);
/** Release the writer without writing anything more (NULL is fine). */
NT_API void nt_writer_free(nt_writer *w);

/** Sticky status, a description of it, and the bytes handed to the sink so far. */
NT_API nt_status nt_writer_status(const nt_writer *w);
NT_API const char *nt_writer_message(const nt_writer *w);
NT_API uint64_t nt_writer_offset(const nt_writer *w);

/**
 * Define an event type (a metadata record).  Uses desc->provider, event_id,
 * event_name (NULL = ""), keywords, version, level, opcode and the fields
 * (pre-order, nested fields at depth + 1 after their object or array of
 * objects; V4 writes arrays in the V5 V2Params form; V6-only types need V6;
 * arrays of arrays are refused and a V6 FixedLengthArray is written with
 * ElementCount 0, because nt_field holds neither).  desc->metadata_id 0 picks the next free
 * id; a non-zero id must not be in use.  *id_out (may be NULL) gets the id.
 */
NT_API nt_status nt_writer_define(nt_writer *w, const nt_event_desc *desc, uint32_t *id_out);

/**
 * Intern a stack (IPs innermost first; count 0 = an empty stack) in the
 * current sequence-point interval.  Identical stacks share an id.  With a
 * 4-byte pointer size every IP must fit in 32 bits.
 */
NT_API nt_status nt_writer_stack(nt_writer *w, const uint64_t *ips, uint32_t count, uint32_t *id_out);

/** An event's header and payload. */
typedef struct nt_writer_event {
    uint32_t metadata_id;         /**< from nt_writer_define (ignored by the typed calls) */
    uint64_t thread_id;           /**< the thread the event is about (OS id) */
    uint64_t capture_thread_id;   /**< the thread that wrote it; 0 = thread_id */
    uint32_t processor_number;
    uint32_t sequence_number;     /**< 0 = the capture thread's next number */
    uint32_t stack_id;            /**< 0 = none; else from nt_writer_stack in this interval */
    int64_t timestamp;
    uint8_t activity_id[16];      /**< V6: the writer puts them in a label list of their own */
    uint8_t related_activity_id[16];
    bool is_sorted;               /**< no later event is older; see the note on TraceEvent above */
    uint32_t label_list_id;       /**< V6 only: 0 = none, else from nt_writer_label_list */
    const void *payload;          /**< ignored by the typed calls */
    uint32_t payload_size;
} nt_writer_event;

/** Write one event. */
NT_API nt_status nt_writer_write_event(nt_writer *w, const nt_writer_event *ev);

/* Typed events: the writer defines the metadata itself (once per provider,
 * event id and version) and encodes the payload; the parser gives them back
 * as the matching typed callback with the same fields.  hdr supplies the
 * header (thread, time, stack); for the record calls hdr may be NULL, and
 * then the record's timestamp is used with thread 0. */

/** A SampleProfiler ThreadSample about hdr->thread_id (type: nt_sample_type). */
NT_API nt_status nt_writer_sample(nt_writer *w, const nt_writer_event *hdr, uint32_t type);
/** A MethodLoadVerbose / MethodUnloadVerbose / MethodDCStartVerbose / MethodDCEndVerbose (m->which, m->version 0-2). */
NT_API nt_status nt_writer_method(nt_writer *w, const nt_writer_event *hdr, const nt_method *m);
/** A Module or DomainModule Load/Unload/DCStart/DCEnd (m->which, m->domain, m->version 0-2).  There is no DomainModuleUnload. */
NT_API nt_status nt_writer_module(nt_writer *w, const nt_writer_event *hdr, const nt_module *m);
/** An AssemblyLoad/Unload/DCStart/DCEnd (a->which, a->version 0-1). */
NT_API nt_status nt_writer_assembly(nt_writer *w, const nt_writer_event *hdr, const nt_assembly *a);

/** V6 sequence-point flags. */
#define NT_SP_FLUSH_THREADS 1u
#define NT_SP_FLUSH_METADATA 2u

/**
 * Flush every pending block, then write a sequence point listing every
 * capture thread with its last sequence number.  Stack ids (and V6 label
 * lists) restart after it.  flags: V6 only (NT_SP_FLUSH_*); with
 * NT_SP_FLUSH_METADATA every metadata id must be defined again before use.
 */
NT_API nt_status nt_writer_sequence_point(nt_writer *w, int64_t timestamp, uint32_t flags);

/**
 * The same with the thread list given (capture thread id and sequence number
 * of each; `dropped` is ignored), e.g. to carry a source trace's lists over:
 * a number above the thread's last event tells the reader events were lost.
 */
NT_API nt_status nt_writer_sequence_point_threads(nt_writer *w, int64_t timestamp, uint32_t flags,
                                                  const nt_sp_thread *threads, uint32_t count);

/** V6 label kinds. */
typedef enum nt_label_kind {
    NT_LABEL_ACTIVITY_ID = 1, NT_LABEL_RELATED_ACTIVITY_ID = 2, NT_LABEL_TRACE_ID = 3,
    NT_LABEL_SPAN_ID = 4, NT_LABEL_STRING = 5, NT_LABEL_INT = 6, NT_LABEL_OPCODE = 7,
    NT_LABEL_KEYWORDS = 8, NT_LABEL_LEVEL = 9, NT_LABEL_VERSION = 10
} nt_label_kind;

/** One label: the members its kind uses. */
typedef struct nt_label {
    uint32_t kind;        /**< nt_label_kind */
    uint8_t guid[16];     /**< ACTIVITY_ID, RELATED_ACTIVITY_ID, TRACE_ID */
    uint64_t value;       /**< SPAN_ID, OPCODE, KEYWORDS, LEVEL, VERSION; INT (as int64) */
    const char *key;      /**< STRING, INT */
    const char *text;     /**< STRING */
} nt_label;

/**
 * V6: define a label list of count >= 1 labels for the current sequence-point
 * interval; events refer to it by *id_out.  Opcode, keywords, level and
 * version labels override the event's metadata.  NT_ERR_STATE for V4.
 */
NT_API nt_status nt_writer_label_list(nt_writer *w, const nt_label *labels, size_t count, uint32_t *id_out);

/** V6: the thread will write no more events: flush, then a RemoveThread block with its last sequence number.  V4: no-op. */
NT_API nt_status nt_writer_remove_thread(nt_writer *w, uint64_t thread_id);

/** Hand every pending block to the sink now (the stream header first if not yet written). */
NT_API nt_status nt_writer_flush(nt_writer *w);

/** Flush and write the end of the stream.  The writer accepts nothing more. */
NT_API nt_status nt_writer_finish(nt_writer *w);

/* ---- a growable memory sink ------------------------------------------- */

/** Zero-initialize; data is malloc'd (free with nt_membuf_free). */
typedef struct nt_membuf {
    uint8_t *data;
    size_t len, cap;
} nt_membuf;

/** nt_sink_fn appending to the nt_membuf at user. */
NT_API int nt_membuf_write(void *user, const void *data, size_t len);
NT_API void nt_membuf_free(nt_membuf *b);

#ifdef __cplusplus
}
#endif

#endif /* NETTRACE_WRITER_H */
