/*
 * libnettrace — the aggregator: a whole trace as a profiler needs it.
 *
 * nt_trace holds the content of the reference Go package's Trace: the clock
 * frequency, the pointer size, the thread samples in time order (each with a
 * 64-bit thread id, whether it ran managed code, and its frames innermost
 * first), the method records, assembly id -> fully qualified name and module
 * id -> assembly id.  It is built only from the parser's public callbacks.
 *
 * Frame resolution is by address and time: a frame's method is the record
 * whose code covered the frame's address at the sample's time, so tiered
 * re-JIT (one method, several code bodies), rundown records that arrive after
 * the samples, and code memory reused after an unload all resolve correctly.
 * Frames after the first are return addresses and are looked up at ip - 1.
 *
 * The trace keeps the method records frames can resolve to: every JIT load,
 * and the rundown and unload records whose code holds a sampled address (a
 * rundown lists every method ever compiled; copying them all cost more than
 * parsing).  A MethodDCEnd record is judged against the samples read before
 * it -- the runtime writes DCEnd rundown after the last sample -- so a sample
 * that follows a DCEnd record in the stream may not resolve to that record
 * (it does when an earlier sample lay within 256 bytes of its code).  DCStart
 * and unload records are judged against every sample.
 *
 * The exporters (folded, speedscope, pprof) stream their output through a
 * write callback and allocate only small tables; nt_top_build counts hot
 * methods.  nt_trace_window builds one trace per window of a live stream,
 * named by every record seen since the stream began: the live hot-method
 * view is nt_top_build over such a trace, the same code as for a file.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NETTRACE_TRACE_H
#define NETTRACE_TRACE_H

#include "nettrace.h"
#include "nettrace_parallel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nt_trace nt_trace;

/** No method record covers the frame. */
#define NT_TRACE_NO_METHOD UINT32_MAX

typedef struct nt_trace_method nt_trace_method;

/** A distinct frame of the trace: an address as recorded and the method record it resolved to.  Stacks
 *  hold frame ids (nt_trace_frame_at), so a frame is stored once however many stacks it is on; its names
 *  are those of the method record it points to. */
typedef struct nt_frame {
    uint64_t ip;              /**< instruction address as recorded (return address for frames >= 1) */
    const nt_trace_method *method; /**< the record the address resolved to (name, declaring_type, assembly,
                                        ...); never NULL: an unresolved frame points to a record whose
                                        strings are all "".  Valid as long as the trace. */
    uint32_t method_index;    /**< index for nt_trace_method_at, or NT_TRACE_NO_METHOD when unresolved */
} nt_frame;

/** A thread sample.  Samples on the same stack share one frame id array (same stack_index). */
typedef struct nt_trace_sample {
    int64_t timestamp;        /**< ticks of the trace clock */
    int64_t time_ns;          /**< floor(timestamp * 1e9 / frequency), exact */
    uint64_t thread_id;       /**< the sampled thread (64-bit) */
    uint32_t type;            /**< nt_sample_type (values above 254 read as 255) */
    uint32_t stack_index;     /**< index for nt_trace_stack_at */
    uint32_t frame_count;
    const uint32_t *frame_ids; /**< ids for nt_trace_frame_at, innermost first; NULL when frame_count is 0 */
    uint64_t count;           /**< samples this one stands for: 1, or with nt_trace_options.aggregate the
                                   samples of one stack, thread and type counted together (timestamp is
                                   then the first one's) */
} nt_trace_sample;

/** A method record sampled addresses resolve against (one code extent of one method). */
struct nt_trace_method {
    uint64_t start_address;
    uint64_t size;
    uint64_t method_id;
    uint64_t module_id;
    uint64_t rejit_id;
    const char *name;
    const char *declaring_type;
    const char *signature;
    const char *assembly;     /**< fully qualified assembly name via module -> assembly; "" unknown */
    int64_t timestamp;        /**< ticks of the record that created it */
    int64_t valid_from;       /**< ticks; INT64_MIN for rundown records (code loaded before the trace) */
    int64_t valid_until;      /**< ticks of the unload; INT64_MAX when never unloaded */
    uint32_t flags;           /**< MethodFlags (NT_METHOD_FLAG_*) */
    uint32_t token;
    nt_record_event source;   /**< the record that created it (load, or rundown) */
};

/** A distinct resolved stack. */
typedef struct nt_trace_stack {
    uint32_t frame_count;
    const uint32_t *frame_ids; /**< ids for nt_trace_frame_at, innermost first; NULL when frame_count is 0 */
} nt_trace_stack;

/** A module record's link to its assembly. */
typedef struct nt_trace_module {
    uint64_t module_id;
    uint64_t assembly_id;
    const char *il_path;
} nt_trace_module;

typedef struct nt_trace_assembly {
    uint64_t assembly_id;
    const char *name;         /**< fully qualified name */
} nt_trace_assembly;

/** What the build saw and how well frames resolved. */
typedef struct nt_trace_stats {
    uint32_t struct_size; /**< set before the call: 0, or sizeof(nt_trace_stats) (see "How structs grow" in nettrace.h) */
    nt_status status;           /**< how the stream read: NT_OK, NT_ERR_TRUNCATED, ... */
    uint64_t stream_bytes;      /**< bytes the parser consumed */
    uint64_t samples;
    uint64_t samples_unknown_stack; /**< samples whose stack id was not defined (kept with an empty stack) */
    uint64_t frames;            /**< frames over all samples */
    uint64_t resolved_frames;   /**< of those, frames a method record names */
    uint64_t stacks;            /**< distinct resolved stacks */
    uint64_t threads;
    uint64_t method_records;    /**< kept: JIT loads, and rundown/unload records covering a sampled address
                                     (duplicates of a live record are merged) */
    uint64_t jit_records;       /**< MethodLoadVerbose seen */
    uint64_t rundown_records;   /**< MethodDCStart/DCEndVerbose seen (kept or not) */
    uint64_t unload_records;    /**< MethodUnloadVerbose seen */
    uint64_t modules, assemblies;
    uint64_t events_dropped;    /**< lost events the parser detected (a window's trace: those of its window; a
                                     request window's or a cut's: those of its span on the threads it takes) */
    size_t memory;              /**< bytes the trace holds */
    size_t memory_peak;         /**< most bytes held while building it */
} nt_trace_stats;

/**
 * What a trace may hold; zero fields select the defaults, sized for real traces of many GB.  A breach ends
 * the build with NT_ERR_LIMIT (nt_trace_stats().status, the message names the limit) and the trace
 * still holds what was built: every sample read (for max_samples, max_frames while reading) or resolved
 * (max_variants, max_frames while resolving) before it, in time order.
 */
typedef struct nt_trace_limits {
    uint32_t struct_size; /**< 0, or sizeof(nt_trace_limits) (see "How structs grow" in nettrace.h) */
    uint64_t max_samples;   /**< samples held, 16 bytes each (default 1,073,741,824) */
    uint64_t max_frames;    /**< frame ids held: the IPs of the distinct stacks read, and the frames of
                                 resolved stacks that need their own ids (default 67,108,864; 4 bytes
                                 each -- a stack no frame of which resolves differently over time is
                                 its interned ids -- plus 24 bytes per distinct frame) */
    uint32_t max_variants;  /**< resolved forms of one stack: samples of one stack resolve differently only
                                 when code is unloaded and its memory reused (default 1,024) */
    uint8_t reserved_[4];   /**< the first layout's tail padding: zero */
    uint32_t max_threads;   /**< distinct threads held: sampled threads, and an event profile's threads in a GC
                                 suspension or a contention wait (default 1,048,576) */
    uint32_t max_gcs;       /**< GCs in an event profile's GC timeline, 160 bytes each (default 262,144) */
    uint32_t max_labels;    /**< distinct labels an event profile holds: allocated type names, exception
                                 types and messages (default 262,144) */
} nt_trace_limits;

#define NT_DEFAULT_MAX_SAMPLES ((uint64_t)1 << 30)
#define NT_DEFAULT_MAX_FRAMES ((uint64_t)1 << 26)
#define NT_DEFAULT_MAX_VARIANTS 1024u
#define NT_DEFAULT_MAX_TRACE_THREADS (1u << 20)
#define NT_DEFAULT_MAX_GCS (1u << 18)
#define NT_DEFAULT_MAX_LABELS (1u << 18)

/** Options for the one-call entry points; NULL or zeroed selects the defaults. */
typedef struct nt_trace_options {
    uint32_t struct_size; /**< 0, or sizeof(nt_trace_options) (see "How structs grow" in nettrace.h) */
    const nt_limits *limits;        /**< parser limits; NULL = defaults */
    const nt_trace_limits *trace_limits; /**< what the trace may hold; NULL = defaults */
    const nt_allocator *alloc;      /**< NULL = malloc */
    int64_t deadline_ns;            /**< CLOCK_MONOTONIC ns after which reading a file or fd gives up with
                                         NT_ERR_TIMEOUT; 0 = none */
    /** Called after each chunk a file or fd read (bytes consumed, total if known else 0); may be NULL. */
    void (*progress)(void *user, uint64_t done, uint64_t total);
    void *progress_user;
    /** Count samples per (stack, thread, type) while reading instead of keeping each one: memory then
     *  follows the distinct stacks, not the samples.  Such a trace serves nt_top_build,
     *  nt_export_folded and nt_export_pprof (by count or by time) with the same results; its samples
     *  are the counts (nt_trace_sample.count), and speedscope or a time window is NT_ERR_INVALID_ARG.
     *  When the counts cannot follow the clock exactly (samples delivered out of time order around a
     *  load or unload of their code), the input is read again sample by sample: a pipe is therefore
     *  read sample by sample from the start. */
    bool aggregate;
} nt_trace_options;

/*
 * The one-call entry points.  They return the parser's status.  *out is set
 * whenever the stream's header was read, also when the stream was truncated
 * or damaged later: the trace then holds every sample read before the fault
 * (nt_trace_stats().status says the same).  Otherwise *out is NULL.  msg (may
 * be NULL) receives a description with the byte offset.
 */
NT_API nt_status nt_trace_from_file(const char *path, const nt_trace_options *opt, nt_trace **out, char *msg,
                                    size_t msg_size);
NT_API nt_status nt_trace_from_fd(int fd, const nt_trace_options *opt, nt_trace **out, char *msg,
                                  size_t msg_size);
NT_API nt_status nt_trace_from_buffer(const void *data, size_t len, const nt_trace_options *opt, nt_trace **out,
                                      char *msg, size_t msg_size);

/*
 * The builder: for callers that drive a parser themselves (a live session,
 * their own callbacks chained in).  Fill cb with the builder's callbacks and
 * pass it with user = the builder to nt_parser_new; call the callbacks in the
 * parser's order.  The builder scopes stack ids by nt_stack.interval; its
 * sequence_point callback does nothing and is kept for callers that chain
 * every callback.  finish() resolves the frames and hands over the trace; the builder is freed
 * by finish() whatever it returns.  Set nt_parser_set_lazy_names(parser, true) as
 * nt_trace_from_file does: the builder converts only the names of the records it keeps (most
 * rundown records are dropped), and the trace is the same either way.
 */
typedef struct nt_trace_builder nt_trace_builder;

NT_API nt_trace_builder *nt_trace_builder_new(const nt_allocator *alloc);
NT_API void nt_trace_builder_callbacks(nt_callbacks *cb);
/** Count samples instead of keeping them, as nt_trace_options.aggregate (call before feeding); when
 *  nt_trace_counts_exact is then false for the finished trace, build it again without counting. */
NT_API void nt_trace_builder_count_samples(nt_trace_builder *b);
/** Keep each sample's labels (nt_event_labels_get of its event: ActivityId, RelatedActivityId, V6 TraceId
 *  and SpanId) for nt_trace_sample_labels and the pprof labels; call before feeding.  A counted trace
 *  (nt_trace_builder_count_samples) keeps none.  Memory: 4 bytes a sample once one has labels, and each
 *  distinct set once. */
NT_API void nt_trace_builder_keep_labels(nt_trace_builder *b);
/** The builder as a parallel parse's per-part consumer (nettrace_parallel.h, nt_parallel_options.consumer),
 *  with the builder's callbacks as the parse's callbacks: each part's stacks are interned and its threads
 *  numbered on the thread that parses it, and the parts are merged in order on the delivering thread, so
 *  that the trace is the one the sequential parse builds (the same ids, orders and output).  Memory: each
 *  part's distinct stacks, samples (24 bytes each) and records until it is merged.  A builder that keeps
 *  labels takes the replay instead. */
NT_API void nt_trace_builder_parallel(nt_trace_builder *b, nt_parallel_consumer *out);
/** Bounds on what the trace may hold (NULL or zero fields: the defaults); call before feeding. */
NT_API void nt_trace_builder_set_limits(nt_trace_builder *b, const nt_trace_limits *limits);
/** stream_status: the parser's final status (recorded in the stats); parser may be NULL. */
NT_API nt_status nt_trace_builder_finish(nt_trace_builder *b, const nt_parser *parser, nt_status stream_status,
                                         nt_trace **out);
NT_API void nt_trace_builder_free(nt_trace_builder *b);

/* Accessors.  Pointers stay valid until nt_trace_free. */
NT_API const nt_trace_info *nt_trace_header(const nt_trace *t);
NT_API int64_t nt_trace_frequency(const nt_trace *t);
NT_API uint32_t nt_trace_pointer_size(const nt_trace *t);
NT_API size_t nt_trace_sample_count(const nt_trace *t);
/** Sample i in time order (ties in stream order).  i must be < nt_trace_sample_count. */
NT_API nt_trace_sample nt_trace_sample_at(const nt_trace *t, size_t i);
NT_API size_t nt_trace_stack_count(const nt_trace *t);
NT_API nt_trace_stack nt_trace_stack_at(const nt_trace *t, size_t i);
/** The distinct frames: one per (ip as recorded, method record it resolved to) that a stack holds, ids
 *  0 .. count-1 (an ip sampled both innermost and as a return address, looked up at ip and ip - 1, may
 *  have one of each).  A frame id is a stable key for caches and a pprof location. */
NT_API size_t nt_trace_frame_count(const nt_trace *t);
/** Frame id (from nt_trace_sample.frame_ids or nt_trace_stack.frame_ids); id must be < nt_trace_frame_count. */
NT_API const nt_frame *nt_trace_frame_at(const nt_trace *t, uint32_t id);
NT_API size_t nt_trace_method_count(const nt_trace *t);
NT_API const nt_trace_method *nt_trace_method_at(const nt_trace *t, size_t i);
NT_API size_t nt_trace_module_count(const nt_trace *t);
NT_API const nt_trace_module *nt_trace_module_at(const nt_trace *t, size_t i);
NT_API size_t nt_trace_assembly_count(const nt_trace *t);
NT_API const nt_trace_assembly *nt_trace_assembly_at(const nt_trace *t, size_t i);
/** Fully qualified name of an assembly id, or NULL. */
NT_API const char *nt_trace_assembly_name(const nt_trace *t, uint64_t assembly_id);
/** Assembly id of a module id; false when the module is unknown. */
NT_API bool nt_trace_module_assembly(const nt_trace *t, uint64_t module_id, uint64_t *assembly_id);
NT_API size_t nt_trace_thread_count(const nt_trace *t);
NT_API uint64_t nt_trace_thread_id(const nt_trace *t, size_t i);
NT_API void nt_trace_stats_get(const nt_trace *t, nt_trace_stats *out);
/** Sample i's labels (kept with nt_trace_builder_keep_labels or nt_trace_window_config.sample_labels);
 *  false, *out zeroed, when it has none. */
NT_API bool nt_trace_sample_labels(const nt_trace *t, size_t i, nt_event_labels *out);
/** False when the trace counted its samples (aggregate) and the counts could not follow the clock exactly. */
NT_API bool nt_trace_counts_exact(const nt_trace *t);
/** The parser's message when the stream did not read cleanly ("" otherwise). */
NT_API const char *nt_trace_message(const nt_trace *t);
NT_API void nt_trace_free(nt_trace *t);

/* ------------------------------------------------------------------------ */
/* Exporters                                                                 */
/* ------------------------------------------------------------------------ */

/* The exporters write through an nt_sink_fn (nettrace.h): a non-zero return
 * stops the export with NT_ERR_IO. */

typedef enum nt_weight {
    NT_WEIGHT_SAMPLES = 0,  /**< each sample counts 1 */
    NT_WEIGHT_TIME          /**< ns to the same thread's next sample (the last one: the sampling interval) */
} nt_weight;

/** One end of a time window: trace-clock ns, or ns after the trace's start (its header's sync time, the
 *  moment the session began), which is known only once the header is read. */
typedef struct nt_time_bound {
    bool set;                 /**< false: this end is open */
    bool absolute;            /**< ns is on the trace clock; else ns after the trace's start */
    int64_t ns;
} nt_time_bound;

/** The trace-clock ns of b in the trace that info heads (saturating); 0 when b is not set. */
NT_API int64_t nt_time_bound_resolve(const nt_time_bound *b, const nt_trace_info *info);
/** Read a window end as the tool's --from / --to take it: relative to the trace's start with a unit
 *  ("2s", "+1.5ms", "250us", "40ns", "3m"; a bare number is refused), or '@' and trace-clock ns with an
 *  optional unit ("@864741168641", "@864741.168641s").  false (out untouched) for anything else. */
NT_API bool nt_time_bound_parse(const char *s, nt_time_bound *out);

/** Which samples count, the one filter of every export, table and profile export: a zeroed filter
 *  selects every sample.  The window is [from, to), each end resolved against the trace's header
 *  (nt_time_bound_resolve); a counted trace (nt_trace_options.aggregate) takes no window. */
typedef struct nt_sample_filter {
    bool managed_only;        /**< only samples taken in managed code (type Managed) */
    bool has_thread;          /**< only thread_id */
    uint64_t thread_id;
    nt_time_bound from, to;   /**< only samples at or after from and before to */
} nt_sample_filter;

/** Which samples an export covers, and how they weigh.  Zeroed = everything, by sample count. */
typedef struct nt_export_options {
    uint32_t struct_size; /**< 0, or sizeof(nt_export_options) (see "How structs grow" in nettrace.h) */
    nt_sample_filter filter;  /**< which samples */
    nt_weight weight;
    const char *name;         /**< profile name (speedscope); NULL = "nettrace" */
    bool signatures;          /**< names carry the methods' parameter lists (NT_NAME_SIGNATURE) */
} nt_export_options;

/** Folded stacks for flamegraph.pl: "root;...;leaf weight\n", identical stacks merged, sorted. */
NT_API nt_status nt_export_folded(const nt_trace *t, const nt_export_options *opt, nt_sink_fn w, void *user);
/** Speedscope JSON: one sampled profile per thread. */
NT_API nt_status nt_export_speedscope(const nt_trace *t, const nt_export_options *opt, nt_sink_fn w,
                                      void *user);
/** pprof: gzipped profile.proto with sample counts and wall time (ns); with NT_WEIGHT_TIME the wall time
 *  is also the profile's default sample type (the wall profile). */
NT_API nt_status nt_export_pprof(const nt_trace *t, const nt_export_options *opt, nt_sink_fn w, void *user);
/** One self-contained HTML file (no network, no server): an interactive flame graph / icicle of the selected
 *  samples with search, zoom and a thread selector; its "every thread" tree holds what nt_export_folded
 *  writes, weighted the same way (opt->weight); opt->name is its title. */
NT_API nt_status nt_export_html(const nt_trace *t, const nt_export_options *opt, nt_sink_fn w, void *user);

/** The wall profile's weights: out[i] (nt_trace_sample_count(t) entries) = sample i's weight by time, as
 *  NT_WEIGHT_TIME weighs it -- ns to the same thread's next sample (managed and external alike), the
 *  trace's sampling interval for a thread's last; a counted sample's is the sum over the samples it
 *  stands for.  NT_ERR_NOMEM when the thread index it may need cannot be made. */
NT_API nt_status nt_trace_wall_ns(const nt_trace *t, int64_t *out);

/**
 * A frame's display name: "<assembly simple name>!<type>.<method>" ("?" for an
 * unknown assembly), or "0x<hex ip>" when unresolved.  Writes at most size
 * bytes (NUL included); returns the length the full name needs.
 */
NT_API size_t nt_frame_name(const nt_frame *f, char *buf, size_t size);

/** nt_frame_name's flags: NT_NAME_SIGNATURE appends the method's parameter
 *  list from its signature ("asm!Type.Method(int32,class System.String)"), so
 *  overloads are told apart. */
#define NT_NAME_SIGNATURE 1u
/** nt_frame_name with flags (0 is nt_frame_name). */
NT_API size_t nt_frame_name_ex(const nt_frame *f, unsigned flags, char *buf, size_t size);

/* ------------------------------------------------------------------------ */
/* Hot methods                                                               */
/* ------------------------------------------------------------------------ */

/** Which samples the tables count and how they are laid out.  Zeroed = one table of every sample, by
 *  exclusive count, every row. */
typedef struct nt_top_options {
    uint32_t struct_size; /**< 0, or sizeof(nt_top_options) (see "How structs grow" in nettrace.h) */
    uint32_t rows;            /**< rows per table; 0 = all */
    bool by_inclusive;        /**< sort by inclusive samples (default: exclusive) */
    bool by_thread;           /**< one table per thread, threads in the order they first sampled */
    nt_sample_filter filter;  /**< which samples (no window on a counted trace) */
    bool signatures;          /**< names carry the methods' parameter lists (NT_NAME_SIGNATURE) */
    nt_weight weight;         /**< NT_WEIGHT_TIME: rows and totals in ns (nt_trace_wall_ns), not samples */
} nt_top_options;

/** A method by display name (nt_frame_name: code versions of one method share a row). */
typedef struct nt_top_row {
    const char *name;
    uint64_t exclusive;       /**< samples it was the innermost frame of */
    uint64_t inclusive;       /**< samples it was anywhere on the stack of (once per sample) */
} nt_top_row;

typedef struct nt_top_table {
    uint64_t thread_id;       /**< with by_thread: the thread; else 0 */
    uint64_t samples;         /**< samples counted: the shares' denominator */
    uint64_t empty;           /**< of those, samples with an empty stack */
    size_t row_count;
    const nt_top_row *rows;   /**< by exclusive (or inclusive) count, descending; then first seen */
} nt_top_table;

typedef struct nt_top {
    size_t table_count;       /**< 1, or one per thread with by_thread */
    const nt_top_table *tables;
} nt_top;

/** Count hot methods.  NT_OK, NT_ERR_INVALID_ARG or NT_ERR_NOMEM; *out is valid until nt_top_free and
 *  independent of the trace. */
NT_API nt_status nt_top_build(const nt_trace *t, const nt_top_options *opt, nt_top **out);
NT_API void nt_top_free(nt_top *top);

/* ------------------------------------------------------------------------ */
/* Windows of a live stream                                                  */
/* ------------------------------------------------------------------------ */

/*
 * A trace per window of a stream that does not end (a live session, for the
 * life of a service): the samples of the window, resolved by the same address
 * and time rules as a whole trace against the method, module and assembly
 * records the stream delivered (a rundown that arrived in the first window
 * names code sampled in the tenth).  Feed it with the callbacks from
 * nt_trace_window_callbacks (user = the window).
 *
 * The records are kept once, for all windows, in a store the windows query
 * by their sampled addresses: a window costs its own samples, never the
 * stream's age.  What the store holds is bounded:
 *  - a record whose code the stream says is gone (MethodUnload, its module's
 *    ModuleUnload, an AssemblyUnload of a collectible context) is dropped once
 *    no window can still hold a sample older than the unload;
 *  - record_budget bytes: past it, records no sample has hit are evicted
 *    first, oldest first, then sampled ones, least recently sampled first
 *    (nt_trace_window_stats counts both, so an unnamed frame is explained).
 * Besides the continuous windows (nt_trace_window_take), a window object
 * serves per-request windows (nt_trace_window_open / _close, many at once)
 * and, with recorder_ns set, a flight recorder that keeps the last samples
 * and cuts a window out of them after the fact (nt_trace_window_cut).  Every
 * window is an nt_trace: every exporter takes it.
 */
typedef struct nt_trace_window nt_trace_window;

typedef struct nt_trace_window_config {
    uint32_t struct_size; /**< 0, or sizeof(nt_trace_window_config) (see "How structs grow" in nettrace.h) */
    uint32_t max_records;     /**< method records held at most (default 1,048,576); past it the rule of
                                   record_budget evicts one */
    uint64_t record_budget;   /**< bytes the kept records (with their names and the address index) may
                                   hold (default 64 MiB) */
    uint64_t recorder_ns;     /**< flight recorder: keep the samples of the last recorder_ns ns of the
                                   trace clock (0 = no recorder) */
    uint64_t recorder_bytes;  /**< ... and at most this many bytes of them, oldest dropped first
                                   (default 16 MiB when recorder_ns is set) */
    bool no_continuous;       /**< samples feed only request windows and the recorder: no continuous
                                   window accumulates them for nt_trace_window_take */
    bool sample_labels;       /**< every window keeps its samples' labels (nt_trace_sample_labels, pprof
                                   labels trace_id / span_id / activity_id) */
} nt_trace_window_config;

/** cfg and alloc may be NULL (defaults). */
NT_API nt_trace_window *nt_trace_window_new(const nt_trace_window_config *cfg, const nt_allocator *alloc);
/** Clears cb, then fills the callbacks the window needs. */
NT_API void nt_trace_window_callbacks(nt_callbacks *cb);
/**
 * Hand over the samples since the last call as a trace (free it with nt_trace_free) and start a new
 * window.  Returns NT_OK; NT_ERR_NOMEM when memory ran short (in a callback or here: the samples of
 * this window are lost, names are kept); NT_ERR_LIMIT when records were evicted since the last take
 * (the trace is still delivered; nt_trace_window_stats says how many); NT_ERR_INVALID_ARG with
 * no_continuous.
 */
NT_API nt_status nt_trace_window_take(nt_trace_window *w, nt_trace **out);
NT_API void nt_trace_window_free(nt_trace_window *w);

/** Entries and bytes of one table. */
typedef struct nt_window_table {
    uint64_t entries;
    uint64_t bytes;
} nt_window_table;

/** What a window object holds, by table, and what its bound did. */
typedef struct nt_trace_window_stats {
    uint32_t struct_size;           /**< set before the call: 0, or sizeof(nt_trace_window_stats) (see "How structs
                                         grow" in nettrace.h) */
    nt_window_table records;        /**< method records kept (one code extent each) */
    nt_window_table strings;        /**< their names (entries: records) */
    nt_window_table address_index;  /**< the page index over their code (entries: page links) */
    nt_window_table modules;        /**< module and assembly records with their paths and names */
    nt_window_table stacks;         /**< the continuous window being built: its interned stacks, and the
                                         bytes it holds (samples included) */
    nt_window_table recorder;       /**< the flight recorder's samples */
    uint64_t record_budget;         /**< bytes records, strings, index and modules may hold */
    uint64_t records_seen;          /**< method records the stream delivered */
    uint64_t records_retired;       /**< dropped because their code was unloaded */
    uint64_t records_evicted;       /**< dropped by the budget: never sampled ... */
    uint64_t records_evicted_sampled; /**< ... and, of those, ones a sample had hit */
    uint64_t windows;               /**< traces handed out (takes, closes, cuts) */
    uint64_t open_windows;          /**< request windows open now */
    uint64_t last_window_work;      /**< index steps and records fed by the last window: its cost, counted
                                         (not timed) */
    uint64_t events_dropped;        /**< events the stream's sequence points reported lost, all windows */
    size_t memory;                  /**< bytes the window object holds now, everything included */
    size_t memory_peak;             /**< most bytes it ever held */
} nt_trace_window_stats;

NT_API void nt_trace_window_stats_get(const nt_trace_window *w, nt_trace_window_stats *out);

/** One thread's loss in a window: what its sequence numbers say never arrived. */
typedef struct nt_thread_loss {
    uint64_t thread_id;             /**< OS thread id (the capture thread) */
    uint64_t gaps;                  /**< gaps found in its sequence numbers (nt_sequence_gap) */
    uint64_t dropped;               /**< events those gaps lost */
} nt_thread_loss;

/** The loss of the window handed out last (nt_trace_window_take, _close or _cut), per thread. */
typedef struct nt_window_loss {
    uint32_t struct_size;           /**< set before the call: 0, or sizeof(nt_window_loss) (see "How structs grow"
                                         in nettrace.h) */
    uint64_t window;                /**< which: nt_trace_window_stats.windows just after it was handed out; 0 =
                                         none yet (then everything below is 0) */
    uint64_t gaps;                  /**< over all its threads */
    uint64_t dropped;
    uint64_t thread_count;          /**< threads that lost events in it: entries of threads */
    const nt_thread_loss *threads;  /**< by thread id; held by the window object until its next take, close,
                                         cut or free */
    uint64_t unplaced;              /**< request windows and cuts: gaps of the span the gap log no longer held
                                         (it keeps 65,536, oldest dropped first), so missing from the counts */
} nt_window_loss;

/**
 * The per-thread loss of the window handed out last.  A continuous window counts the gaps the parser
 * found while it was the current window (nt_callbacks.sequence_gap, which nt_trace_window_callbacks
 * sets when cb's struct_size covers it: NT_STRUCT_INIT(nt_callbacks)); a request window or a cut counts the gaps found at times in its span on the threads it
 * selects (a label or activity filter selects every thread: a lost event's labels are unknown).
 */
NT_API void nt_trace_window_loss_get(const nt_trace_window *w, nt_window_loss *out);

/** Which samples a request window or a cut takes.  Zeroed = every thread. */
typedef struct nt_window_filter {
    uint32_t struct_size;           /**< 0, or sizeof(nt_window_filter) (see "How structs grow" in nettrace.h) */
    const uint64_t *thread_ids;     /**< only these threads (copied); NULL = all */
    size_t thread_count;
    bool has_activity;              /**< only samples whose event carries this ActivityId */
    uint8_t activity_id[16];
    bool has_trace_id;              /**< only samples whose V6 label list carries this TraceId */
    uint8_t trace_id[16];
    bool has_span_id;               /**< only samples whose V6 label list carries this SpanId */
    uint8_t span_id[8];
} nt_window_filter;

/** A request window's handle: stays valid until it is closed, and a closed one's handle is refused
 *  (NT_ERR_INVALID_ARG), never taken for another window. */
typedef uint64_t nt_window_id;

/**
 * Open a request window at from_ns (trace-clock ns, as nt_trace_sample.time_ns): it takes the samples
 * the filter selects from then on, beside the continuous window and other request windows.  Up to
 * 4,096 open at once (then NT_ERR_LIMIT).  filter may be NULL (all threads).
 */
NT_API nt_status nt_trace_window_open(nt_trace_window *w, int64_t from_ns, const nt_window_filter *filter,
                                      nt_window_id *id);
/** Close a request window: its samples before to_ns as a trace (free it with nt_trace_free). */
NT_API nt_status nt_trace_window_close(nt_trace_window *w, nt_window_id id, int64_t to_ns, nt_trace **out);
/** The flight recorder's samples in [from_ns, to_ns) that filter selects, as a trace; the recorder keeps
 *  them (cut again at will).  NT_ERR_INVALID_ARG without recorder_ns; samples the recorder dropped (by
 *  time or bytes) are not in it: nt_trace_window_recorder_span says what it holds. */
NT_API nt_status nt_trace_window_cut(nt_trace_window *w, int64_t from_ns, int64_t to_ns,
                                     const nt_window_filter *filter, nt_trace **out);
/** The time span of the samples the recorder holds now, in trace-clock ns; false when it holds none. */
NT_API bool nt_trace_window_recorder_span(const nt_trace_window *w, int64_t *from_ns, int64_t *to_ns);

#ifdef __cplusplus
}
#endif

#endif /* NETTRACE_TRACE_H */
