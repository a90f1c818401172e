/*
 * libnettrace — profiles besides CPU: allocations, exceptions, lock
 * contention, and the GC timeline.
 *
 * nt_profile is built, like nt_trace, only from the parser's callbacks: it
 * holds an nt_trace (samples, method records, resolved stacks) and beside it
 * the runtime's stack-bearing events, each stack resolved exactly as a
 * sample's (same records, same address x time rule, same names), so every
 * profile has the frames and exporters of the CPU one.
 *
 *   alloc       GCAllocationTick (every version): bytes (AllocationAmount64
 *               where present, else AllocationAmount) and count, labelled by
 *               the allocated type (TypeName, V2+; "" before) and the heap
 *               (AllocationKind: small, large, pinned object heap)
 *   exceptions  ExceptionThrown (V1; V0 has no stack-worthy fields but is
 *               counted too): count, labelled by the exception type, and
 *               with nt_profile_options.exception_messages by its message
 *               too (ExceptionMessage; off by default, so records of one
 *               type merge whatever their messages)
 *   contention  ContentionStart / ContentionStop paired per thread: wait in
 *               ns (stop time - start time) and count, on the start's stack;
 *               a start without a stop is kept as an open wait (its weight
 *               runs to the last event of the stream) and counted apart
 *
 * Memory is proportional to distinct (stack, thread, label) keys, not to
 * events: events on the same interned stack, thread and label merge into one
 * record, unless nt_profile_options.keep_events asks for one record per event
 * (for a per-event dump).  Records are split when method code is unloaded
 * during the trace (a later event on the same addresses may resolve to other
 * code); a record resolves at the time of its first event.
 *
 * The GC timeline (one entry per GC: GCStart, GCEnd, the GC's SuspendEE /
 * RestartEE, GCHeapStats) is kept too; it grows with the number of GCs.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NETTRACE_PROFILE_H
#define NETTRACE_PROFILE_H

#include "nettrace_trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nt_profile_kind {
    NT_PROFILE_CPU = 0,     /**< thread samples (the nt_trace's), weight = samples */
    NT_PROFILE_WALL,        /**< thread samples, weight = time to the thread's next sample */
    NT_PROFILE_ALLOC,
    NT_PROFILE_EXCEPTIONS,
    NT_PROFILE_CONTENTION,
    NT_PROFILE_KIND_COUNT_
} nt_profile_kind;

/** "cpu", "wall", "alloc", "exceptions", "contention"; NULL for another value. */
NT_API const char *nt_profile_kind_name(nt_profile_kind k);
/** The kind named s; false when none is. */
NT_API bool nt_profile_kind_parse(const char *s, nt_profile_kind *out);

/** Allocation heaps (GCAllocationTick AllocationKind). */
typedef enum nt_alloc_heap {
    NT_HEAP_SOH = 0,   /**< small object heap */
    NT_HEAP_LOH = 1,   /**< large object heap */
    NT_HEAP_POH = 2,   /**< pinned object heap (.NET 5+) */
    NT_HEAP_OTHER = 3  /**< a value the runtime did not document */
} nt_alloc_heap;

/** "soh", "loh", "poh", "other". */
NT_API const char *nt_alloc_heap_name(nt_alloc_heap h);

/** One record of an event profile: events merged by stack, thread and label
 *  (one event each with keep_events). */
typedef struct nt_profile_record {
    nt_profile_kind kind;     /**< ALLOC, EXCEPTIONS or CONTENTION */
    uint32_t stack_index;     /**< resolved stack: nt_trace_stack_at(nt_profile_trace(p), stack_index) */
    uint64_t thread_id;
    const char *label;        /**< allocated type / exception type / "" for contention; valid with the profile */
    const char *message;      /**< exceptions with exception_messages: the ExceptionMessage; else "" */
    uint32_t heap;            /**< alloc: nt_alloc_heap; contention: ContentionFlags (0 managed, 1 native) */
    bool open;                /**< contention: a start with no stop in the stream */
    int64_t value;            /**< bytes (alloc), events (exceptions), wait ns (contention) */
    int64_t count;            /**< events merged */
    int64_t timestamp;        /**< ticks of the first event merged */
    int64_t time_ns;          /**< its time in ns */
} nt_profile_record;

/** One GC of the timeline.  Times are trace-clock ns; -1 when the event was absent. */
typedef struct nt_gc {
    uint32_t number;          /**< GCStart Count */
    uint32_t generation;      /**< GCStart Depth */
    uint32_t reason;          /**< GCStart Reason (nt_gc_reason_name) */
    uint32_t type;            /**< GCStart Type: 0 blocking, 1 background, 2 foreground */
    uint64_t thread_id;       /**< the thread that wrote GCStart */
    int64_t start_ns;         /**< GCStart */
    int64_t end_ns;           /**< GCEnd */
    int64_t suspend_begin_ns; /**< the GC's SuspendEEBegin (reason GC or GC prep) */
    int64_t suspend_end_ns;   /**< its SuspendEEEnd */
    int64_t restart_end_ns;   /**< the RestartEEEnd that ended the pause */
    int64_t suspension_ns;    /**< suspend_end - suspend_begin, or -1 */
    int64_t pause_ns;         /**< restart_end - suspend_begin (the threads' stop), else end - start, or -1 */
    int64_t heap_after;       /**< GCHeapStats: sum of the generation sizes (gen0-2, LOH, POH), or -1 */
    int64_t heap_before;      /**< the previous GC's heap_after plus the bytes allocation ticks reported
                                   between the two GCs; in a trace without allocation ticks the sum of
                                   the GC's GCPerHeapHistory SizeBefore (every heap and generation);
                                   -1 when neither is known */
    int64_t promoted;         /**< GCHeapStats: sum of TotalPromotedSize0-4, or -1 */
    int64_t gen_size[5];      /**< GCHeapStats GenerationSize0-3, and 4 (POH, V2), or -1 */
} nt_gc;

/** "AllocSmall", "Induced", ... (GCStart Reason), or "Reason<n>". */
NT_API const char *nt_gc_reason_name(uint32_t reason);
/** "blocking", "background", "foreground", or "other". */
NT_API const char *nt_gc_type_name(uint32_t type);

/** Totals of a profile, per kind. */
typedef struct nt_profile_totals {
    uint32_t struct_size; /**< set before the call: 0, or sizeof(nt_profile_totals) (see "How structs grow" in nettrace.h) */
    uint64_t events;          /**< events of the kind seen (contention: stops paired + open starts) */
    int64_t value;            /**< sum of the records' values (contention: closed waits only) */
    uint64_t records;         /**< records held */
    uint64_t open;            /**< contention: starts without a stop */
    uint64_t unpaired_stops;  /**< contention: stops with no start on their thread (not in a record) */
    uint64_t without_stack;   /**< events whose stack was absent or not defined (kept with an empty stack) */
} nt_profile_totals;

typedef struct nt_profile_options {
    uint32_t struct_size; /**< 0, or sizeof(nt_profile_options) (see "How structs grow" in nettrace.h) */
    const nt_trace_options *trace; /**< parser and trace limits, allocator, deadline, progress (NULL = defaults) */
    bool keep_events;              /**< one record per event, in stream order (memory grows with events) */
    bool events_only;              /**< keep no thread samples (the trace then has none): for the event
                                        profiles and the GC timeline alone, memory follows their stacks */
    /** Only events at or after from and before to count, each event on its own time (a merged record
     *  holds only the events inside): an allocation tick or a throw by its time, a contention wait by
     *  its start (a wait that starts inside counts whole, even when it stops after to; one that starts
     *  before from does not, and its stop is not an unpaired one).  Totals follow the window; the GC
     *  timeline, the span and the thread samples do not. */
    nt_time_bound from, to;
    bool exception_messages;       /**< exceptions: the message is part of a record's key (nt_profile_record
                                        .message), so throws merge by type and message */
} nt_profile_options;

typedef struct nt_profile nt_profile;
typedef struct nt_profile_builder nt_profile_builder;

/** Read a whole file (the same statuses and *out rule as nt_trace_from_file). */
NT_API nt_status nt_profile_from_file(const char *path, const nt_profile_options *opt, nt_profile **out,
                                      char *msg, size_t msg_size);
NT_API nt_status nt_profile_from_buffer(const void *data, size_t len, const nt_profile_options *opt,
                                        nt_profile **out, char *msg, size_t msg_size);

/* The builder, for callers that drive a parser (chain the callbacks). */
NT_API nt_profile_builder *nt_profile_builder_new(const nt_profile_options *opt, const nt_allocator *alloc);
NT_API void nt_profile_builder_callbacks(nt_callbacks *cb);
/** Resolves and hands over the profile; frees the builder whatever it returns. */
NT_API nt_status nt_profile_builder_finish(nt_profile_builder *b, const nt_parser *parser, nt_status stream_status,
                                           nt_profile **out);
NT_API void nt_profile_builder_free(nt_profile_builder *b);

/** Trace-clock ns of the first and last event or sample read (both 0 when none was). */
NT_API void nt_profile_span(const nt_profile *p, int64_t *first_ns, int64_t *last_ns);
/** The resolved trace inside (samples, stacks, names); owned by the profile. */
NT_API const nt_trace *nt_profile_trace(const nt_profile *p);
NT_API size_t nt_profile_record_count(const nt_profile *p);
/** Record i: grouped by kind (alloc, exceptions, contention), in stream order of first event within one. */
NT_API nt_profile_record nt_profile_record_at(const nt_profile *p, size_t i);
NT_API void nt_profile_totals_get(const nt_profile *p, nt_profile_kind k, nt_profile_totals *out);
/** The most bytes the profile held while it was built and since: its records, merge table, labels and GC
 *  timeline at their peak plus its trace's peak (nt_trace_stats.memory_peak), an upper bound.  Without
 *  keep_events it follows the distinct records and stacks, not the number of events. */
NT_API size_t nt_profile_memory_peak(const nt_profile *p);
NT_API size_t nt_profile_gc_count(const nt_profile *p);
/** GC i, in order of start time (stream order for ties). */
NT_API const nt_gc *nt_profile_gc_at(const nt_profile *p, size_t i);
NT_API void nt_profile_free(nt_profile *p);

/*
 * Windows of a live stream, as profiles: nt_trace_window (nettrace_trace.h)
 * with a profile builder in each window.  Feed the parser with
 * nt_profile_window_callbacks (user = the window: the trace window's
 * callbacks plus the events); each take hands over the
 * profile of the events since the previous take, resolved with the stream's
 * method records (the trace window's record store, bounded the same way),
 * and starts the next window.  A profile window keeps events only
 * (nt_profile_options.events_only): its profile's trace holds no thread
 * samples, which a trace window fed beside it takes.  Memory: the record store and one
 * window's records.  nt_trace_window_take refuses a profile window, and the
 * request windows and the recorder are the trace window's only.
 */
NT_API nt_trace_window *nt_profile_window_new(const nt_trace_window_config *cfg, const nt_allocator *alloc);
NT_API void nt_profile_window_callbacks(nt_callbacks *cb);
NT_API nt_status nt_profile_window_take(nt_trace_window *w, nt_profile **out);

/* ------------------------------------------------------------------------ */
/* Exporters of the event profiles (cpu and wall use nt_export_*)            */
/* ------------------------------------------------------------------------ */

/** Which records an export covers.  Zeroed = every record of the kind. */
typedef struct nt_profile_export_options {
    uint32_t struct_size; /**< 0, or sizeof(nt_profile_export_options) (see "How structs grow" in nettrace.h) */
    nt_profile_kind kind;     /**< ALLOC, EXCEPTIONS or CONTENTION */
    nt_sample_filter filter;  /**< only its thread: records merge events over time and hold no managed flag,
                                   so managed_only or a window is NT_ERR_INVALID_ARG (nt_profile_options
                                   .from / .to cut events before they merge) */
    bool by_count;            /**< folded / speedscope weight: event count instead of the value */
    bool with_label;          /**< folded / speedscope: the label (type, heap) as a root frame; without it an
                                   allocation's label "Type (heap)" is its leaf frame (the other kinds
                                   have no label frame) */
    const char *name;         /**< profile name (speedscope); NULL = "nettrace" */
    bool signatures;          /**< names carry the methods' parameter lists (NT_NAME_SIGNATURE) */
} nt_profile_export_options;

/** "root;...;leaf weight\n" merged and sorted, like nt_export_folded. */
NT_API nt_status nt_profile_export_folded(const nt_profile *p, const nt_profile_export_options *opt, nt_sink_fn w,
                                          void *user);
/** Speedscope: one sampled profile per thread (the busiest first), unit bytes / none / nanoseconds. */
NT_API nt_status nt_profile_export_speedscope(const nt_profile *p, const nt_profile_export_options *opt,
                                              nt_sink_fn w, void *user);
/** The HTML flame graph of nt_export_html over the kind's records (labels as with folded). */
NT_API nt_status nt_profile_export_html(const nt_profile *p, const nt_profile_export_options *opt, nt_sink_fn w,
                                        void *user);
/** pprof with the kind's sample types: alloc_space/bytes + alloc_objects/count, exceptions/count,
 *  contentions/count + delay/nanoseconds; labels thread_id, and type / heap / message where they apply. */
NT_API nt_status nt_profile_export_pprof(const nt_profile *p, const nt_profile_export_options *opt, nt_sink_fn w,
                                         void *user);

#ifdef __cplusplus
}
#endif

#endif /* NETTRACE_PROFILE_H */
