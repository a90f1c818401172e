/*
 * libnettrace — read .NET EventPipe NetTrace streams.
 *
 * This header is the stable core: version, status codes, allocator, limits and
 * the push parser with its typed callbacks.  The aggregator, the diagnostics
 * IPC session and the writer have headers of their own that include this one.
 *
 * Conventions
 *  - Every public name starts with nt_ / NT_.  There is no global state.
 *  - Pointers handed to a callback are valid only during that callback; copy
 *    what you keep.  Strings are UTF-8 and NUL-terminated (record names are
 *    also handed out as the stream holds them, nt_str16).
 *  - A callback returns 0 to continue, anything else to stop the parse
 *    (the parser then reports NT_ERR_STOPPED).
 *  - Status values only ever grow; their numbers are stable.
 *  - Every free function (nt_*_free, nt_port_close) takes NULL and does
 *    nothing.  Every query of a handle takes NULL and answers as for an empty
 *    object: 0, false, NULL, a zeroed struct, "" for a message, and
 *    NT_ERR_INVALID_ARG for a status; a call that acts on a NULL handle
 *    returns NT_ERR_INVALID_ARG (or NULL).
 *  - A message (nt_*_message, the msg buffers of the one-call entry points)
 *    describes a failure with its byte offset where there is one, and is ""
 *    when there is none.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NETTRACE_H
#define NETTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The compiler attributes of the public API, all here (the library's own are
 * in src/common/compiler.h).  NT_API: a symbol of the shared library,
 * everything else in it is hidden.  NT_DEPRECATED(msg): a name kept for
 * callers of an earlier release, warned about where it is used (doc/abi.md
 * says how long such names stay); NT_DEPRECATED_ENUMERATOR(msg) marks an
 * enumerator so. */
#if defined(_WIN32)
#define NT_API
#elif defined(__GNUC__)
#define NT_API __attribute__((visibility("default")))
#else
#define NT_API
#endif
#if defined(__GNUC__)
#define NT_DEPRECATED(msg) __attribute__((deprecated(msg)))
#elif defined(_MSC_VER)
#define NT_DEPRECATED(msg) __declspec(deprecated(msg))
#else
#define NT_DEPRECATED(msg)
#endif
/* The same on an enumerator (gcc 6 and clang; others take no mark there). */
#if defined(__GNUC__) && (defined(__clang__) || __GNUC__ >= 6)
#define NT_DEPRECATED_ENUMERATOR(msg) __attribute__((deprecated(msg)))
#else
#define NT_DEPRECATED_ENUMERATOR(msg)
#endif

#define NT_VERSION_MAJOR 0
#define NT_VERSION_MINOR 1
#define NT_VERSION_PATCH 0
#define NT_VERSION_STRING "0.1.0"
/** The version as one number, MAJOR * 10000 + MINOR * 100 + PATCH (0.1.0 is 100), for #if and for
 *  comparing with nt_version_number() at run time. */
#define NT_VERSION_NUMBER (NT_VERSION_MAJOR * 10000 + NT_VERSION_MINOR * 100 + NT_VERSION_PATCH)

/** The library's version string, e.g. "0.1.0" (may differ from the header's). */
NT_API const char *nt_version(void);
/** The library's NT_VERSION_NUMBER (may differ from the header's: the library loaded at run time). */
NT_API unsigned nt_version_number(void);

/*
 * How structs grow (doc/abi.md).  A struct the caller fills and hands to the
 * library (options, limits, callbacks, configurations) or hands to the
 * library to fill (stats, totals) begins with struct_size: the bytes of the
 * layout the caller was compiled with.  0 stands for the first layout of the
 * struct (the one of libnettrace.so.3), so a zeroed struct or a designated
 * initializer that leaves struct_size out means "every default" and keeps
 * meaning it.  To use a member added in a later release, set struct_size to
 * sizeof the struct (NT_STRUCT_INIT(type) does that).  The library reads only
 * the caller's bytes and treats the members it knows beyond them as zero
 * (their defaults); a struct longer than the library's layout is accepted
 * when the members it does not know are zero, and refused (NT_ERR_INVALID_ARG,
 * or NULL from a constructor) otherwise.  A struct the library fills (stats,
 * totals, the callbacks of a builder, the defaults of options) gets as many
 * bytes as its struct_size allows, never less than the first layout, and
 * struct_size becomes the bytes filled: zero it (or set it) before the call.
 */
#define NT_STRUCT_INIT(type) ((type){ .struct_size = (uint32_t)sizeof(type) })

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

/* X-macro: one table gives the enum, the short names and the descriptions. */
#define NT_STATUS_MAP(X)                                                                    \
    X(NT_OK, 0, "ok", "success")                                                            \
    X(NT_ERR_NOT_NETTRACE, 1, "not_nettrace", "not a NetTrace stream")                      \
    X(NT_ERR_UNSUPPORTED_VERSION, 2, "unsupported_version", "unsupported format version")   \
    X(NT_ERR_NO_EVENTS, 3, "no_events", "the stream holds no events")                       \
    X(NT_ERR_MALFORMED, 4, "malformed", "malformed stream")                                 \
    X(NT_ERR_TRUNCATED, 5, "truncated", "the stream ended early")                           \
    X(NT_ERR_LIMIT, 6, "limit_exceeded", "a configured limit was exceeded")                 \
    X(NT_ERR_NOMEM, 7, "out_of_memory", "out of memory")                                    \
    X(NT_ERR_STOPPED, 8, "stopped", "stopped by a callback")                                \
    X(NT_ERR_INVALID_ARG, 9, "invalid_argument", "invalid argument")                        \
    X(NT_ERR_IO, 10, "io_error", "input/output error")                                      \
    X(NT_ERR_NO_ENDPOINT, 20, "no_endpoint", "no diagnostics endpoint for the process")     \
    X(NT_ERR_REFUSED, 21, "refused", "the runtime refused the request")                     \
    X(NT_ERR_TIMEOUT, 22, "timeout", "the deadline passed")                                 \
    X(NT_ERR_CANCELLED, 23, "cancelled", "cancelled")                                       \
    X(NT_ERR_STREAM_CAP, 24, "stream_cap", "the stream exceeded its byte cap")              \
    X(NT_ERR_PROTOCOL, 25, "protocol_error", "the peer broke the diagnostics protocol")     \
    X(NT_ERR_STATE, 26, "bad_state", "the call is not valid in the object's current state")

typedef enum nt_status {
#define NT_STATUS_ENUM_(sym, num, name, desc) sym = num,
    NT_STATUS_MAP(NT_STATUS_ENUM_)
#undef NT_STATUS_ENUM_
} nt_status;

/** Short stable name ("truncated", "malformed", ...), or "unknown". */
NT_API const char *nt_status_name(nt_status s);
/** One-line human description of a status. */
NT_API const char *nt_status_describe(nt_status s);

/* ------------------------------------------------------------------------ */
/* Allocation                                                                */
/* ------------------------------------------------------------------------ */

/**
 * Optional allocator.  Pass NULL wherever one is taken to use malloc/realloc/free.
 * realloc(ctx, NULL, n) must behave as malloc; free(ctx, NULL) must be a no-op.
 */
typedef struct nt_allocator {
    void *(*realloc)(void *ctx, void *ptr, size_t size);
    void (*free)(void *ctx, void *ptr);
    void *ctx;
} nt_allocator;

/**
 * A byte sink, the one output type of the library: the writer
 * (nt_writer_new), the exporters (nt_export_*) and sessions
 * (nt_session_options.sink) hand it consecutive chunks in order.  Take all
 * len bytes and return 0; non-zero stops the caller, which then returns the
 * status its documentation names (NT_ERR_IO, or NT_ERR_STOPPED for a session).
 */
typedef int (*nt_sink_fn)(void *user, const void *data, size_t len);

/* ------------------------------------------------------------------------ */
/* Limits                                                                    */
/* ------------------------------------------------------------------------ */

/**
 * Every table and buffer the parser holds has a limit here.  A zero field
 * selects the default given beside it.  Exceeding a limit stops the parse with
 * NT_ERR_LIMIT and a message that names the limit and the byte offset.
 * Limits apply the same way however the input is chunked.
 */
typedef struct nt_limits {
    uint32_t struct_size;        /**< 0, or sizeof(nt_limits) (see "How structs grow") */
    uint32_t max_block_bytes;    /**< one block's content (default 16 MiB; the runtime writes ~100 KiB) */
    uint32_t max_metadata;       /**< metadata records held (default 65,536) */
    uint32_t max_metadata_bytes; /**< bytes of names and field descriptions held (default 16 MiB) */
    uint32_t max_fields;         /**< fields in one metadata record, nested included (default 1,024) */
    uint32_t max_stacks;         /**< stacks held between two sequence points (default 1,048,576) */
    uint32_t max_stack_frames;   /**< IPs held between two sequence points (default 8,388,608 = 64 MiB) */
    uint32_t max_threads;        /**< capture threads tracked for drop detection (default 65,536) */
    uint32_t max_array_elements; /**< elements in one decoded payload array (default 1,048,576); see nt_field_next */
    uint32_t max_field_depth;    /**< nesting of structs and arrays in a decoded payload (default 16, at most 32) */
} nt_limits;

#define NT_DEFAULT_MAX_BLOCK_BYTES (16u << 20)
#define NT_DEFAULT_MAX_METADATA 65536u
#define NT_DEFAULT_MAX_METADATA_BYTES (16u << 20)
#define NT_DEFAULT_MAX_FIELDS 1024u
#define NT_DEFAULT_MAX_STACKS (1u << 20)
#define NT_DEFAULT_MAX_STACK_FRAMES (8u << 20)
#define NT_DEFAULT_MAX_THREADS 65536u
#define NT_DEFAULT_MAX_ARRAY_ELEMENTS (1u << 20)
#define NT_DEFAULT_MAX_FIELD_DEPTH 16u
#define NT_FIELD_ITER_MAX_DEPTH 32u

/** Fill *lim with the defaults. */
NT_API void nt_limits_default(nt_limits *lim);

/* ------------------------------------------------------------------------ */
/* What the parser reports                                                   */
/* ------------------------------------------------------------------------ */

/** Windows SYSTEMTIME as written in the trace header (UTC). */
typedef struct nt_systemtime {
    uint16_t year, month, day_of_week, day, hour, minute, second, milliseconds;
} nt_systemtime;

/** The trace header: the Trace object (V4/V5) or Trace block (V6). */
typedef struct nt_trace_info {
    uint32_t format_major;          /**< 4 for NetTrace V4/V5, 6 for V6 */
    uint32_t format_minor;          /**< V6 minor version; 0 for V4/V5 */
    uint32_t object_version;        /**< V4/V5: Trace object version (4) */
    uint32_t min_reader_version;    /**< V4/V5: Trace object's minimum reader version */
    nt_systemtime sync_time_utc;    /**< wall clock when the trace started */
    int64_t sync_qpc;               /**< trace clock value at sync_time_utc */
    int64_t qpc_frequency;          /**< trace clock ticks per second */
    uint32_t pointer_size;          /**< 4 or 8: width of stack IPs */
    uint32_t process_id;
    uint32_t processor_count;
    uint32_t sampling_interval_ns;  /**< ExpectedCPUSamplingRate: sample profiler period in ns */
} nt_trace_info;

/** Metadata field type codes (System.TypeCode; V6 adds 20-26). */
typedef enum nt_type_code {
    NT_TYPE_OBJECT = 1, NT_TYPE_BOOLEAN32 = 3, NT_TYPE_CHAR = 4, NT_TYPE_SBYTE = 5,
    NT_TYPE_BYTE = 6, NT_TYPE_INT16 = 7, NT_TYPE_UINT16 = 8, NT_TYPE_INT32 = 9,
    NT_TYPE_UINT32 = 10, NT_TYPE_INT64 = 11, NT_TYPE_UINT64 = 12, NT_TYPE_SINGLE = 13,
    NT_TYPE_DOUBLE = 14, NT_TYPE_DECIMAL = 15, NT_TYPE_DATETIME = 16, NT_TYPE_GUID = 17,
    NT_TYPE_STRING = 18, NT_TYPE_ARRAY = 19, NT_TYPE_VARINT = 20, NT_TYPE_VARUINT = 21,
    NT_TYPE_FIXED_ARRAY = 22, NT_TYPE_UTF8_CHAR = 23, NT_TYPE_RELLOC = 24,
    NT_TYPE_DATALOC = 25, NT_TYPE_BOOLEAN8 = 26,
    /* Types of the built-in runtime event table only (never on the wire): */
    NT_TYPE_POINTER = 64,   /**< win:Pointer: an unsigned integer of the trace's pointer size */
    NT_TYPE_BINARY = 65,    /**< win:Binary: bytes whose length another field (or the layout) gives */
    NT_TYPE_ANSI_STRING = 66 /**< win:AnsiString: NUL-terminated bytes (decoded as ASCII, others as '?') */
} nt_type_code;

/** One field of an event description, in pre-order (nested fields follow their object). */
typedef struct nt_field {
    const char *name;
    uint32_t type;          /**< nt_type_code */
    uint32_t element_type;  /**< for arrays: the element's type code, else 0 */
    uint32_t depth;         /**< 0 for top-level fields, +1 per enclosing object */
} nt_field;

/** Events the parser decodes into typed callbacks. */
typedef enum nt_event_kind {
    NT_KIND_OTHER = 0,
    NT_KIND_THREAD_SAMPLE,          /**< SampleProfiler 0 */
    NT_KIND_METHOD_LOAD_VERBOSE,    /**< Runtime 143 */
    NT_KIND_METHOD_UNLOAD_VERBOSE,  /**< Runtime 144 */
    NT_KIND_METHOD_DC_START_VERBOSE,/**< Rundown 143 */
    NT_KIND_METHOD_DC_END_VERBOSE,  /**< Rundown 144 */
    NT_KIND_MODULE_LOAD,            /**< Runtime 152 */
    NT_KIND_MODULE_UNLOAD,          /**< Runtime 153 */
    NT_KIND_DOMAIN_MODULE_LOAD,     /**< Runtime 151 */
    NT_KIND_MODULE_DC_START,        /**< Rundown 153 */
    NT_KIND_MODULE_DC_END,          /**< Rundown 154 */
    NT_KIND_DOMAIN_MODULE_DC_START, /**< Rundown 151 */
    NT_KIND_DOMAIN_MODULE_DC_END,   /**< Rundown 152 */
    NT_KIND_ASSEMBLY_LOAD,          /**< Runtime 154 */
    NT_KIND_ASSEMBLY_UNLOAD,        /**< Runtime 155 */
    NT_KIND_ASSEMBLY_DC_START,      /**< Rundown 155 */
    NT_KIND_ASSEMBLY_DC_END,        /**< Rundown 156 */
    NT_KIND_COUNT_
} nt_event_kind;

#define NT_PROVIDER_SAMPLE_PROFILER "Microsoft-DotNETCore-SampleProfiler"
#define NT_PROVIDER_RUNTIME "Microsoft-Windows-DotNETRuntime"
#define NT_PROVIDER_RUNDOWN "Microsoft-Windows-DotNETRuntimeRundown"

/** An event description (one metadata record). */
typedef struct nt_event_desc {
    uint32_t metadata_id;
    const char *provider;     /**< provider name, e.g. "Microsoft-Windows-DotNETRuntime" */
    uint32_t event_id;
    const char *event_name;   /**< "" for runtime-native events */
    uint64_t keywords;
    uint32_t version;
    uint32_t level;
    uint32_t opcode;          /**< V5 OpCode tag / V6 optional metadata; 0 if absent */
    uint32_t field_count;
    const nt_field *fields;   /**< NULL when field_count is 0 */
    nt_event_kind kind;       /**< what the parser decodes it as */
    /* Names from the built-in runtime event table (see "Event fields" below).
     * Never NULL in descriptions the parser hands out; "" when unknown. */
    const char *name;         /**< event_name if the metadata has one, else the table's symbol ("GCStart_V2") */
    const char *task_name;    /**< the table's task ("GarbageCollection"), or "" */
    const char *opcode_name;  /**< the table's opcode ("Start", "GCAllocationTick"), or "" */
    const struct nt_schema *schema; /**< private: the table layout fields decode with (NULL: metadata fields) */
} nt_event_desc;

/**
 * A stack: IPs innermost first, widened to 64 bits for every pointer size.
 * Stack ids are scoped by sequence points (the ids restart after each one):
 * (interval, id) names one stack for the whole stream, so a consumer that
 * keeps stacks by id across sequence points keys them by both.
 */
typedef struct nt_stack {
    uint32_t id;
    uint32_t count;
    const uint64_t *ips;
    uint32_t interval;  /**< sequence points read before this stack's interval: 0, then +1 at each (wraps at 2^32) */
} nt_stack;

/** One event: header fields and raw payload. */
typedef struct nt_event {
    const nt_event_desc *desc;  /**< NULL if the metadata id was never defined */
    uint32_t metadata_id;
    uint32_t sequence_number;
    uint64_t thread_id;         /**< the thread the event is about (V6: the OS id from the thread table) */
    uint64_t capture_thread_id; /**< the thread that wrote it */
    uint32_t processor_number;
    uint32_t stack_id;          /**< 0 = no stack */
    const nt_stack *stack;      /**< NULL when stack_id is 0 or unknown in this interval */
    int64_t timestamp;          /**< ticks of the trace clock */
    uint8_t activity_id[16];
    uint8_t related_activity_id[16];
    bool is_sorted;
    uint32_t payload_size;
    const uint8_t *payload;
    uint64_t offset;            /**< byte offset of the event blob in the stream */
    struct nt_field_ctx *field_ctx; /**< private: what nt_event_fields_begin decodes with (set by the parser) */
} nt_event;

/** SampleProfiler sample types. */
typedef enum nt_sample_type {
    NT_SAMPLE_ERROR = 0,
    NT_SAMPLE_EXTERNAL = 1, /**< thread outside managed code (native, blocked, waiting) */
    NT_SAMPLE_MANAGED = 2   /**< thread running managed code */
} nt_sample_type;

/** A SampleProfiler thread sample. */
typedef struct nt_sample {
    int64_t timestamp;       /**< ticks of the trace clock */
    int64_t time_ns;         /**< floor(timestamp * 1e9 / qpc_frequency) */
    uint64_t thread_id;      /**< the sampled thread (64-bit) */
    uint32_t type;           /**< nt_sample_type; other values are passed through */
    uint32_t stack_id;
    const nt_stack *stack;   /**< NULL when the stack id is 0 or unknown */
    const nt_event *event;
} nt_sample;

/**
 * A string of a method, module or assembly record as the stream holds it:
 * UTF-16LE code units, not NUL-terminated, valid during the callback.
 * nt_str16_utf8 converts it.  Reading names this way costs nothing until a
 * name is wanted (see nt_parser_set_lazy_names).
 */
typedef struct nt_str16 {
    const uint8_t *units; /**< 2 * count bytes, little-endian */
    uint32_t count;       /**< code units */
} nt_str16;

/**
 * Convert s to UTF-8 (an unpaired surrogate becomes U+FFFD) into buf, which
 * holds size bytes, NUL-terminated whenever size > 0.  Returns the length of
 * the whole conversion (NUL excluded), as snprintf does: a result >= size
 * means buf holds a cut copy (never a cut character).  At most 3 bytes per
 * unit: 3 * s.count + 1 bytes always suffice.
 */
NT_API size_t nt_str16_utf8(nt_str16 s, char *buf, size_t size);

/** Which form of a method, module or assembly record an event was. */
typedef enum nt_record_event {
    NT_RECORD_LOAD = 0,     /**< *Load (methods: MethodLoadVerbose, the JIT) */
    NT_RECORD_UNLOAD,       /**< *Unload */
    NT_RECORD_DC_START,     /**< *DCStart: rundown at the session's start */
    NT_RECORD_DC_END        /**< *DCEnd: rundown at its stop */
} nt_record_event;

/* Deprecated: the names method records used before the two enums were one,
 * kept so that existing code builds (with a warning where it uses them) until
 * the next soname change (doc/abi.md "Deprecation").  Enumerators, not
 * macros, so that the compiler can mark each use. */
typedef nt_record_event nt_method_event NT_DEPRECATED("use nt_record_event");
enum {
    NT_METHOD_LOAD NT_DEPRECATED_ENUMERATOR("use NT_RECORD_LOAD") = NT_RECORD_LOAD,
    NT_METHOD_UNLOAD NT_DEPRECATED_ENUMERATOR("use NT_RECORD_UNLOAD") = NT_RECORD_UNLOAD,
    NT_METHOD_DC_START NT_DEPRECATED_ENUMERATOR("use NT_RECORD_DC_START") = NT_RECORD_DC_START,
    NT_METHOD_DC_END NT_DEPRECATED_ENUMERATOR("use NT_RECORD_DC_END") = NT_RECORD_DC_END
};

/** MethodFlags bits. */
#define NT_METHOD_FLAG_DYNAMIC 0x1u
#define NT_METHOD_FLAG_GENERIC 0x2u
#define NT_METHOD_FLAG_SHARED_GENERIC 0x4u
#define NT_METHOD_FLAG_JITTED 0x8u
#define NT_METHOD_FLAG_JIT_HELPER 0x10u
#define NT_METHOD_FLAG_COLD 0x10000000u
#define NT_METHOD_TIER(flags) (((flags) >> 7) & 7u)

/** A method record (any payload version; absent fields are 0). */
typedef struct nt_method {
    nt_record_event which;
    uint32_t version;          /**< payload version */
    uint64_t method_id;
    uint64_t module_id;
    uint64_t start_address;
    uint32_t size;
    uint32_t token;
    uint32_t flags;
    const char *declaring_type; /**< MethodNamespace: full declaring type name (NULL with lazy names) */
    const char *name;           /**< (NULL with lazy names) */
    const char *signature;      /**< (NULL with lazy names) */
    uint16_t clr_instance_id;  /**< V1+ */
    uint64_t rejit_id;         /**< V2 (ReJITID / NativeCodeId) */
    int64_t timestamp;
    const nt_event *event;
    nt_str16 declaring_type16, name16, signature16; /**< the same strings as the stream holds them */
} nt_method;

/** A module record: ModuleLoad/Unload/DCStart/DCEnd and their DomainModule forms. */
typedef struct nt_module {
    nt_record_event which;
    bool domain;               /**< a DomainModule* event (has app_domain_id) */
    uint32_t version;
    uint64_t module_id;
    uint64_t assembly_id;
    uint64_t app_domain_id;    /**< DomainModule* only */
    uint32_t flags;
    const char *il_path;       /**< (NULL with lazy names) */
    const char *native_path;   /**< (NULL with lazy names) */
    uint16_t clr_instance_id;
    int64_t timestamp;
    const nt_event *event;
    nt_str16 il_path16, native_path16;
} nt_module;

/** An assembly record: AssemblyLoad/Unload/DCStart/DCEnd. */
typedef struct nt_assembly {
    nt_record_event which;
    uint32_t version;
    uint64_t assembly_id;
    uint64_t app_domain_id;
    uint64_t binding_id;       /**< V1 */
    uint32_t flags;
    const char *name;          /**< fully qualified assembly name (NULL with lazy names) */
    uint16_t clr_instance_id;
    int64_t timestamp;
    const nt_event *event;
    nt_str16 name16;
} nt_assembly;

/** One thread's entry in a sequence point. */
typedef struct nt_sp_thread {
    uint64_t capture_thread_id;
    uint32_t sequence_number;
    uint32_t dropped;          /**< events of this thread lost since the previous sequence point */
} nt_sp_thread;

/** A sequence point: every event before it is older than timestamp; stack ids restart after it. */
typedef struct nt_sequence_point {
    int64_t timestamp;
    uint32_t flags;            /**< V6 flags (1 = thread flush, 2 = metadata flush); 0 for V4/V5 */
    uint32_t thread_count;
    const nt_sp_thread *threads;
} nt_sequence_point;

/** Where a gap in a thread's sequence numbers was found (nt_sequence_gap.found_at). */
enum {
    NT_GAP_AT_EVENT = 1,          /**< an event whose number skips: the events between never arrived */
    NT_GAP_AT_SEQUENCE_POINT = 2, /**< a sequence point's number for the thread is past its last event's */
    NT_GAP_AT_REMOVE_THREAD = 3   /**< V6: the same in a RemoveThread block */
};

/** Events one thread lost, found from its sequence numbers (the runtime numbers every event it tried
 *  to write per capture thread, so a skip is a loss: its buffer was full, the session fell behind). */
typedef struct nt_sequence_gap {
    uint64_t capture_thread_id;  /**< the OS thread id */
    uint32_t first;              /**< sequence number of the first event lost */
    uint32_t lost;               /**< events lost: first .. first + lost - 1 */
    int64_t timestamp;           /**< ticks of the event or sequence point where it was found; INT64_MIN at a
                                      RemoveThread (the block carries no time) */
    int64_t time_ns;             /**< the same in trace-clock ns (INT64_MIN with it) */
    uint64_t offset;             /**< stream byte offset of that event or block entry */
    uint32_t found_at;           /**< NT_GAP_AT_EVENT, _SEQUENCE_POINT or _REMOVE_THREAD */
} nt_sequence_gap;

/** Every callback may be NULL.  Return 0 to continue, non-zero to stop the parse. */
typedef struct nt_callbacks {
    uint32_t struct_size; /**< 0, or sizeof(nt_callbacks) (see "How structs grow") */
    int (*trace)(void *user, const nt_trace_info *info);
    int (*metadata)(void *user, const nt_event_desc *desc);
    int (*event)(void *user, const nt_event *ev);
    int (*stack)(void *user, const nt_stack *stack);
    int (*sample)(void *user, const nt_sample *sample);
    int (*method)(void *user, const nt_method *method);
    int (*module)(void *user, const nt_module *module);
    int (*assembly)(void *user, const nt_assembly *assembly);
    int (*sequence_point)(void *user, const nt_sequence_point *sp);
    /** Each gap in a thread's sequence numbers, as it is found (rare: one call per loss, not per event);
     *  the sequence point that follows still counts the thread's losses in nt_sp_thread.dropped. */
    int (*sequence_gap)(void *user, const nt_sequence_gap *gap);
} nt_callbacks;

/* ------------------------------------------------------------------------ */
/* The push parser                                                           */
/* ------------------------------------------------------------------------ */

typedef struct nt_parser nt_parser;

/**
 * Create a parser.  cb, lim and alloc may be NULL (no callbacks, default
 * limits, malloc).  The parser copies *cb and *lim.  Returns NULL only when
 * memory is short.
 */
NT_API nt_parser *nt_parser_new(const nt_callbacks *cb, void *user, const nt_limits *lim,
                         const nt_allocator *alloc);

/**
 * Feed the next len bytes of the stream (any chunking, len may be 0).
 * Callbacks run from inside this call.  Returns NT_OK while the stream is
 * good so far; an error is sticky: every later call returns it again.
 */
NT_API nt_status nt_parser_feed(nt_parser *p, const void *data, size_t len);

/**
 * Declare the end of input.  Returns NT_OK for a complete stream,
 * NT_ERR_TRUNCATED when it ended early (every complete block was delivered),
 * NT_ERR_NO_EVENTS when it held a header and no events, or the sticky error.
 */
NT_API nt_status nt_parser_finish(nt_parser *p);

/**
 * Lazy names: method, module and assembly records then carry their strings
 * only as nt_str16 spans (the const char * members are NULL) and the parser
 * converts nothing; a consumer converts just the names it keeps
 * (nt_str16_utf8).  Off by default: the UTF-8 members are filled whenever
 * the record's callback is set.  Either way the strings are checked
 * (terminated inside the payload) whatever callbacks are set.
 */
NT_API void nt_parser_set_lazy_names(nt_parser *p, bool lazy);

/** Current status (sticky error or NT_OK). */
NT_API nt_status nt_parser_status(const nt_parser *p);
/** Bytes consumed so far: progress, and where the next byte belongs. */
NT_API uint64_t nt_parser_offset(const nt_parser *p);
/** Byte offset an error refers to (for a truncated stream: where the incomplete unit began). */
NT_API uint64_t nt_parser_error_offset(const nt_parser *p);
/** Human-readable description of the current status, with the byte offset. */
NT_API const char *nt_parser_message(const nt_parser *p);
/** The trace header, or NULL before it was read. */
NT_API const nt_trace_info *nt_parser_trace_info(const nt_parser *p);
/**
 * The format version the stream's header declares, as soon as it is read,
 * also when the parser refuses that version: 3 for a NetPerf stream (whose
 * Trace object version 3 is read before the refusal), 4 for NetTrace V4/V5,
 * 6 (or the higher major refused) for V6.  0 before it is known.
 */
NT_API uint32_t nt_parser_format_version(const nt_parser *p);
/** Release the parser (NULL is fine). */
NT_API void nt_parser_free(nt_parser *p);

/** Running totals, for progress displays and tests. */
typedef struct nt_parser_stats {
    uint32_t struct_size;       /**< set before the call: 0, or sizeof(nt_parser_stats) (see "How structs grow") */
    uint64_t bytes;             /**< bytes consumed */
    uint64_t blocks;            /**< blocks of every type, Trace excluded */
    uint64_t event_blocks, metadata_blocks, stack_blocks, sp_blocks, unknown_blocks;
    uint64_t events;            /**< event blobs in event blocks */
    uint64_t metadata;          /**< metadata records */
    uint64_t stacks;            /**< stacks in stack blocks */
    uint64_t sequence_points;
    uint64_t samples, methods, modules, assemblies;
    uint64_t events_dropped;    /**< lost events detected from sequence numbers */
    uint64_t unknown_metadata_refs; /**< events whose metadata id was never defined */
    uint64_t unknown_stack_refs;    /**< events whose stack id is not in the current interval */
    size_t memory;              /**< bytes the parser holds now */
    size_t memory_peak;         /**< most bytes it has held at once */
} nt_parser_stats;

NT_API void nt_parser_stats_get(const nt_parser *p, nt_parser_stats *out);

/**
 * Convert trace-clock ticks to nanoseconds: floor(ticks * 1e9 / frequency),
 * exact (128-bit intermediate), saturating at INT64_MIN/INT64_MAX; 0 when
 * frequency <= 0.
 */
NT_API int64_t nt_ticks_to_ns(int64_t ticks, int64_t frequency);

/** Progress of a read: bytes consumed so far, and the input's size when known (a regular file) else 0. */
typedef void (*nt_progress_fn)(void *user, uint64_t done, uint64_t total);

/** Options of nt_parser_feed_fd; NULL or a zeroed struct selects every default. */
typedef struct nt_feed_options {
    uint32_t struct_size;    /**< 0, or sizeof(nt_feed_options) (see "How structs grow") */
    int64_t deadline_ns;     /**< CLOCK_MONOTONIC ns after which waiting for input gives up with NT_ERR_TIMEOUT;
                                  0 (or INT64_MAX) = no deadline */
    nt_progress_fn progress; /**< called after each chunk is fed; may be NULL */
    void *progress_user;
    size_t chunk_bytes;      /**< bytes per read (default 1 MiB) */
} nt_feed_options;

/**
 * Read fd to its end into the parser, then finish it (nt_parser_finish):
 * the one file- and pipe-feeding loop of the library and the tool.  Returns
 * the parser's status, or NT_ERR_IO when a read fails (the parser keeps its
 * state; *os_error, when os_error is not NULL, gets errno, else 0),
 * NT_ERR_TIMEOUT when the deadline passes first, NT_ERR_NOMEM when the read
 * buffer cannot be allocated.  A non-blocking fd is waited on with poll().
 * fd is not closed.  The read buffer comes from the parser's allocator and
 * is released before returning.
 */
NT_API nt_status nt_parser_feed_fd(nt_parser *p, int fd, const nt_feed_options *opt, int *os_error);

/**
 * The parser's conversion of trace-clock ticks to ns: the value nt_sample's
 * time_ns carries (exactly nt_ticks_to_ns with the trace's frequency, by a
 * faster route).  Consumers converting other timestamps of the same trace
 * (method records, sequence points) use it so that every time agrees.  0
 * before the trace header was read.
 */
NT_API int64_t nt_parser_time_ns(const nt_parser *p, int64_t ticks);

/** Convenience: feed a whole memory buffer and finish. */
NT_API nt_status nt_parse_buffer(const void *data, size_t len, const nt_callbacks *cb, void *user,
                          const nt_limits *lim, char *msg, size_t msg_size);

/* ------------------------------------------------------------------------ */
/* Event fields                                                              */
/* ------------------------------------------------------------------------ */

/*
 * Decoded payload fields, on demand.  Nothing is decoded unless a callback
 * asks: the parser's cost for callers that never call these is one pointer
 * store per event and one table lookup per metadata record.
 *
 * Layouts come from the event's metadata when it describes fields
 * (EventSource / TraceLogging events, V4 V1 lists, V5 V2Params, V6 field
 * descriptions) and otherwise from the built-in table generated from the
 * runtime's event manifest (Microsoft-Windows-DotNETRuntime, -Rundown,
 * -Private, Microsoft-DotNETCore-EventPipe, the sample profiler), keyed by
 * provider, event id and version.  A version newer than the table knows
 * decodes with the newest layout it knows: a longer payload gives its known
 * prefix and nt_field_iter.leftover says how many bytes were not decoded.
 *
 * Usage, inside an event callback (or a typed callback, through its event):
 *
 *     nt_field_iter it;
 *     nt_field_value v;
 *     nt_event_fields_begin(ev, &it);
 *     while (nt_field_next(&it, &v))
 *         ... v.name, v.kind, v.v.u / v.v.i / v.v.f / v.v.str ...
 *     if (it.status != NT_OK)
 *         ... it.message, it.error_offset (payload offset) ...
 *
 * Values come in payload order, in pre-order: a struct yields
 * NT_VALUE_STRUCT_BEGIN, its fields one level deeper, NT_VALUE_STRUCT_END;
 * an array yields NT_VALUE_ARRAY_BEGIN (count = elements), its elements one
 * level deeper (named like the array, index = element number) and
 * NT_VALUE_ARRAY_END.  Strings are UTF-8 (UTF-16 from the payload converted,
 * unpaired surrogates become U+FFFD) and NUL-terminated; they and binary
 * spans stay valid until the callback returns.  The event's payload is
 * never modified.
 *
 * A payload that does not fit its layout (too short, a string without its
 * terminator, a count beyond the payload or max_array_elements, nesting
 * deeper than max_field_depth) ends the iteration with it.status
 * NT_ERR_MALFORMED or NT_ERR_LIMIT and the payload offset: an error of that
 * event only; the parse goes on.  An event with no known layout yields
 * nothing, with status NT_OK and leftover = payload_size.
 *
 * These functions are valid only on events the parser hands to a callback,
 * during that callback (they use the parser's scratch memory); on any other
 * nt_event they return NT_ERR_STATE.  They are not thread-safe against the
 * parser's own thread.
 */

/** What a decoded value holds. */
typedef enum nt_value_kind {
    NT_VALUE_INT = 1,       /**< v.i: SByte, Int16/32/64, VarInt */
    NT_VALUE_UINT,          /**< v.u: Byte, UInt16/32/64, VarUInt, Pointer, Char (a UTF-16 code unit) */
    NT_VALUE_BOOL,          /**< v.u: 0 or 1 (Boolean32 values other than 0 read as 1) */
    NT_VALUE_FLOAT,         /**< v.f: Single (widened) or Double */
    NT_VALUE_GUID,          /**< v.guid: 16 bytes in the payload's (Windows GUID) layout */
    NT_VALUE_DATETIME,      /**< v.i: FILETIME, 100 ns ticks since 1601-01-01 UTC */
    NT_VALUE_STRING,        /**< v.str: UTF-8, NUL-terminated */
    NT_VALUE_BINARY,        /**< v.bin: raw bytes (Binary, Decimal's 16 bytes) */
    NT_VALUE_STRUCT_BEGIN,  /**< count = fields of the struct */
    NT_VALUE_STRUCT_END,
    NT_VALUE_ARRAY_BEGIN,   /**< count = elements */
    NT_VALUE_ARRAY_END
} nt_value_kind;

/** One decoded value. */
typedef struct nt_field_value {
    const char *name;       /**< the field's name ("" when the metadata gave none); elements: the array's */
    nt_value_kind kind;
    uint32_t type;          /**< nt_type_code of the field (arrays: NT_TYPE_ARRAY / FIXED_ARRAY) */
    uint32_t depth;         /**< 0 for top-level fields, +1 inside each struct or array */
    uint32_t index;         /**< position among its siblings (field number, or element number) */
    uint32_t count;         /**< *_BEGIN / *_END: fields or elements */
    bool in_array;          /**< an element of an array */
    uint32_t offset;        /**< payload offset where the value starts */
    union {
        int64_t i;
        uint64_t u;
        double f;
        uint8_t guid[16];
        struct { const char *ptr; size_t len; } str;
        struct { const uint8_t *ptr; size_t len; } bin;
    } v;
} nt_field_value;

/** An iteration over one event's fields.  Caller-allocated; fields marked private are not for callers. */
typedef struct nt_field_iter {
    nt_status status;        /**< NT_OK, or why the iteration stopped early */
    uint32_t error_offset;   /**< payload offset of the error */
    uint32_t leftover;       /**< after the end: payload bytes no field covered */
    const char *message;     /**< static description of the error, "" when none */
    /* private */
    const nt_event *ev_;
    const void *fields_;
    uint32_t nfields_, pos_, sp_, yielded_;
    bool done_, schema_;
    struct nt_field_frame_ {
        uint32_t first, end, cur, count, index, start, owner, kind;
    } stack_[NT_FIELD_ITER_MAX_DEPTH + 1];
    uint64_t ints_[32];      /* the first fields' integer values, for counts and lengths that refer back */
} nt_field_iter;

/**
 * Start iterating ev's fields.  Returns NT_OK, or NT_ERR_STATE when ev did not
 * come from a parser callback (it->status says the same).
 */
NT_API nt_status nt_event_fields_begin(const nt_event *ev, nt_field_iter *it);

/**
 * The next value: true with *out filled, false at the end (it->status NT_OK,
 * it->leftover set) or on an error (it->status, error_offset, message).
 */
NT_API bool nt_field_next(nt_field_iter *it, nt_field_value *out);

/**
 * Convenience: the first top-level field called name (exact match) into *out.
 * Returns NT_OK, NT_ERR_INVALID_ARG when the event has no such field, or the
 * decoding error met before reaching it.  For a struct or array field, *out
 * is its *_BEGIN value.  Cost: a decode of the payload up to that field.
 */
NT_API nt_status nt_event_field(const nt_event *ev, const char *name, nt_field_value *out);

/** What the stream says about the work an event (a sample: nt_sample.event) belongs to. */
typedef struct nt_event_labels {
    uint8_t activity_id[16];         /**< V4/V5 header or V6 LabelList ActivityId; zero when none */
    uint8_t related_activity_id[16]; /**< the same for RelatedActivityId */
    bool has_trace_id, has_span_id;  /**< V6 LabelList TraceId / SpanId present */
    uint8_t trace_id[16];            /**< W3C trace id, bytes as the stream holds them */
    uint8_t span_id[8];              /**< W3C span id, bytes as the stream holds them */
} nt_event_labels;
/** The labels of ev, during a parser callback (NT_ERR_STATE otherwise). */
NT_API nt_status nt_event_labels_get(const nt_event *ev, nt_event_labels *out);

/*
 * Payload-only decoding: an event's payload that arrived without a stream
 * (the CLR profiling API's EventPipeEventDelivered, an EventListener) walked
 * by the same layouts and iterator as a parsed event's, so its fields are
 * what `nettrace events` prints for that event in a trace: runtime events by
 * the runtime's table, well-known EventSources' by theirs, any EventSource's
 * by the metadata blob that came with it (nt_payload_describe).
 *
 *     nt_payload_decoder *d = nt_payload_decoder_new(NULL, NULL);
 *     nt_field_iter it;
 *     nt_field_value v;
 *     if (nt_payload_fields_begin(d, "Microsoft-Windows-DotNETRuntime", 1, 2, 8, bytes, n, &it) == NT_OK)
 *         while (nt_field_next(&it, &v))
 *             ...
 *
 * A decoder holds the string scratch and the event the iterator walks: one
 * iteration at a time per decoder (a begin ends the previous one), strings
 * valid until the next begin.  The caller owns the payload bytes and keeps
 * them while iterating.
 */
typedef struct nt_payload_decoder nt_payload_decoder;
/** limits (max_array_elements, max_field_depth) and alloc may be NULL (defaults). */
NT_API nt_payload_decoder *nt_payload_decoder_new(const nt_limits *limits, const nt_allocator *alloc);
/**
 * Start iterating the fields of a payload of event (provider, event_id, version) whose pointers are
 * pointer_size (4 or 8) bytes: a runtime event (the runtime's event table), or a well-known
 * EventSource's (TplEventSource, System.Diagnostics.Metrics: see nt_payload_fields_begin_named).
 * NT_OK; NT_ERR_INVALID_ARG when an argument is wrong or neither table has the event (other
 * EventSource events need their metadata: nt_payload_describe); NT_ERR_NOMEM.  A payload that does not fit its layout ends the iteration with it->status
 * and the payload offset, as for a parsed event.
 */
NT_API nt_status nt_payload_fields_begin(nt_payload_decoder *d, const char *provider, uint32_t event_id,
                                         uint32_t version, uint32_t pointer_size, const void *payload,
                                         uint32_t size, nt_field_iter *it);
/**
 * Describe an EventSource event by its metadata as EventPipe hands it out with the payload: the
 * metadata blob of the CLR profiling API's EventPipeEventDelivered (event id, UTF-16 name, keywords,
 * version, level, the field list, the V5 tags: opcode, V2Params), for provider.  The parser's own
 * metadata code reads it, as it reads a trace's metadata event.  *id_out gets the description's id,
 * valid for the decoder's life: nt_payload_fields_begin_described takes it.  NT_OK;
 * NT_ERR_MALFORMED (the blob does not hold a description; the decoder keeps its earlier ones);
 * NT_ERR_LIMIT past nt_limits.max_metadata descriptions or max_metadata_bytes; NT_ERR_INVALID_ARG;
 * NT_ERR_NOMEM.
 */
NT_API nt_status nt_payload_describe(nt_payload_decoder *d, const char *provider, const void *metadata,
                                     uint32_t size, uint32_t *id_out);
/** Start iterating a payload of the event nt_payload_describe described as id (NT_ERR_INVALID_ARG
 *  for an id it did not hand out).  As nt_payload_fields_begin otherwise. */
NT_API nt_status nt_payload_fields_begin_described(nt_payload_decoder *d, uint32_t id, uint32_t pointer_size,
                                                   const void *payload, uint32_t size, nt_field_iter *it);
/**
 * Start iterating a payload of a well-known EventSource event by its name, as an EventListener sees it
 * (EventWrittenEventArgs.EventName): System.Threading.Tasks.TplEventSource's task events and
 * System.Diagnostics.Metrics' events by provider and name; "EventCounters" of any provider (the
 * payload of an EventCounter or PollingCounter, whose CounterType is "Mean", or of an
 * IncrementingEventCounter or IncrementingPollingCounter, "Sum": the one whose layout the payload fits
 * exactly).  nt_payload_fields_begin finds the same TplEventSource and Metrics events by id and
 * version.  NT_ERR_INVALID_ARG when the table has no such event.
 */
NT_API nt_status nt_payload_fields_begin_named(nt_payload_decoder *d, const char *provider, const char *event_name,
                                               uint32_t pointer_size, const void *payload, uint32_t size,
                                               nt_field_iter *it);
/** The event the decoder's current iteration walks (its desc names the event: name, task_name, ...),
 *  for nt_event_field and the formatters that take an event. */
NT_API const nt_event *nt_payload_event(const nt_payload_decoder *d);
NT_API void nt_payload_decoder_free(nt_payload_decoder *d);

/** The event's name: desc->name, or "" when ev has no description. */
NT_API const char *nt_event_name(const nt_event *ev);

/**
 * Look up the built-in runtime table: the names of (provider, event_id,
 * version) as the parser would give them in nt_event_desc.  Returns false
 * when the table has no such event (then every out is "").  Any out may be NULL.
 */
NT_API bool nt_runtime_event_names(const char *provider, uint32_t event_id, uint32_t version, const char **name,
                                   const char **task_name, const char **opcode_name);

#ifdef __cplusplus
}
#endif

#endif /* NETTRACE_H */
