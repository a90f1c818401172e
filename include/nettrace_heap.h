/*
 * libnettrace — heap snapshots: the object graph the runtime walks during a
 * heap dump, read from a NetTrace stream, and what it retains.
 *
 * A heap snapshot travels in EventPipe: Microsoft-Windows-DotNETRuntime at
 * Verbose with keywords GC | Type | GCHeapDump | GCHeapCollect |
 * GCHeapAndTypeNames (NT_HEAP_KEYWORDS, 0x1980001) makes the runtime run a
 * blocking gen-2 GC and, during it, emit the objects (GCBulkNode), their
 * references (GCBulkEdge), the roots (GCBulkRootEdge, -StaticVar, -CCW,
 * -ConditionalWeakTableElementEdge), the RCWs and the type names (BulkType).
 * nt_heap is built only from the parser's public callbacks (like nt_trace)
 * from the first induced, non-concurrent gen-2 GC whose start and end the
 * stream holds and that carried nodes (the rule dotnet-gcdump's reader uses).
 *
 * Storage: an object costs 20 bytes (address 8, size 4 -- an object of
 * 4 GiB or more keeps its size in a side list --, type 4, first edge 4),
 * and 4 more (the address index) when the runtime did not walk the heap in
 * address order; an edge 4 bytes (the target's object index); reading
 * holds an edge as its 8-byte address until the end, when the edges are
 * resolved in place.  nt_heap_dominators adds 12 bytes per object (immediate
 * dominator, retained size) and uses at most 20 bytes per object and 4 per
 * edge the search did not take while it runs.
 *
 * An incomplete graph is said to be one (nt_heap_stats.complete false, with
 * the counts of what was missing): lost events, bulk events missing from the
 * Index sequence, nodes announcing edges that never came, references to
 * addresses no node has (dropped and counted).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NETTRACE_HEAP_H
#define NETTRACE_HEAP_H

#include "nettrace.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The runtime keywords of a heap snapshot session: GC | Type | GCHeapDump | GCHeapCollect | GCHeapAndTypeNames. */
#define NT_HEAP_KEYWORDS 0x1980001ull

typedef struct nt_heap nt_heap;

/** "No object": the virtual root's dominator, an object no root reaches in a path query. */
#define NT_HEAP_NONE UINT32_MAX

/** What holds a root (the groups dotnet-gcdump and PerfView show under "[.NET Roots]"). */
typedef enum nt_heap_root_kind {
    NT_HEAP_ROOT_STACK = 0,        /**< a local variable ("[local vars]") */
    NT_HEAP_ROOT_FINALIZER,        /**< the finalization queue */
    NT_HEAP_ROOT_STRONG_HANDLE,    /**< a strong GC handle */
    NT_HEAP_ROOT_PINNING_HANDLE,   /**< a pinning GC handle */
    NT_HEAP_ROOT_OTHER_HANDLE,     /**< another handle kind (sized-ref, older generation, overflow) */
    NT_HEAP_ROOT_COM,              /**< a ref-counted handle (COM / WinRT) */
    NT_HEAP_ROOT_STATIC,           /**< a static field (GCBulkRootStaticVar) */
    NT_HEAP_ROOT_THREAD_STATIC,    /**< a thread-static field */
    NT_HEAP_ROOT_DEPENDENT_HANDLE, /**< a ConditionalWeakTable value whose key is alive */
    NT_HEAP_ROOT_CCW,              /**< a COM-callable wrapper's target */
    NT_HEAP_ROOT_UNREACHABLE,      /**< no root reaches it: attached to the virtual root so that it is counted */
    NT_HEAP_ROOT_KIND_COUNT_
} nt_heap_root_kind;

/** The kind's name as a frame or a path shows it ("[static vars]", ...); "" past the end. */
NT_API const char *nt_heap_root_kind_name(nt_heap_root_kind kind);

/**
 * What a heap may hold; zero fields select the defaults.  A breach ends the
 * build with NT_ERR_LIMIT (the message names the limit and the byte offset)
 * and the heap keeps what was read before it.
 */
typedef struct nt_heap_limits {
    uint32_t struct_size;    /**< sizeof(nt_heap_limits) or 0 (doc/abi.md) */
    uint32_t max_objects;    /**< objects (default 268,435,456; 20 bytes each; at most 2,147,483,646) */
    uint32_t max_edges;      /**< references announced by the objects (default 1,073,741,824; 4 bytes each, 8 while reading) */
    uint32_t max_roots;      /**< root records (default 67,108,864; 16 bytes each) */
    uint32_t max_types;      /**< distinct type ids (default 4,194,304) */
    uint32_t max_name_bytes; /**< bytes of type, module and static-field names (default 256 MiB) */
} nt_heap_limits;

#define NT_HEAP_DEFAULT_MAX_OBJECTS (1u << 28)
/** The largest object size taken as real (64 GiB, the bound dotnet-gcdump asserts); a larger one is damage:
 *  the object is kept with size 0 and counted in nt_heap_stats.bad_events.  So no sum of sizes overflows. */
#define NT_HEAP_MAX_OBJECT_BYTES (1ull << 36)
#define NT_HEAP_DEFAULT_MAX_EDGES (1u << 30)
#define NT_HEAP_DEFAULT_MAX_ROOTS (1u << 26)
#define NT_HEAP_DEFAULT_MAX_TYPES (1u << 22)
#define NT_HEAP_DEFAULT_MAX_NAME_BYTES (256u << 20)

/** Options of the one-call entry points; NULL or zeroed selects every default. */
typedef struct nt_heap_options {
    uint32_t struct_size;             /**< sizeof(nt_heap_options) or 0 (doc/abi.md) */
    const nt_limits *limits;          /**< parser limits; NULL = defaults */
    const nt_heap_limits *heap_limits;/**< NULL = defaults */
    const nt_allocator *alloc;        /**< NULL = malloc */
    int64_t deadline_ns;              /**< CLOCK_MONOTONIC ns after which reading gives up (NT_ERR_TIMEOUT); 0 = none */
    void (*progress)(void *user, uint64_t done, uint64_t total); /**< after each chunk read; may be NULL */
    void *progress_user;
} nt_heap_options;

/** What a heap was read from. */
typedef enum nt_heap_format {
    NT_HEAP_FROM_NETTRACE = 0, /**< a NetTrace stream holding a heap dump's GC */
    NT_HEAP_FROM_GCDUMP        /**< a .gcdump file (PerfView's serialized MemoryGraph: dotnet-gcdump, dotnet-monitor) */
} nt_heap_format;

/** What the build saw.  complete is true only when nothing below says otherwise. */
typedef struct nt_heap_stats {
    uint32_t struct_size;        /**< set by the caller (0 or sizeof), then the bytes filled (doc/abi.md) */
    nt_status status;            /**< how the stream read and the build ended */
    uint64_t objects;            /**< GCBulkNode objects kept */
    uint64_t edges;              /**< references kept (resolved to an object) */
    uint64_t roots;              /**< root records kept (resolved to an object) */
    uint64_t types;              /**< distinct type ids */
    uint64_t total_bytes;        /**< shallow bytes of every object */
    bool gc_found;               /**< an induced non-concurrent gen-2 GC start with heap data was seen */
    bool gc_ended;               /**< and its end */
    bool complete;               /**< the whole graph: its GC ended and nothing was lost, missing or damaged */
    uint32_t gc_number;          /**< that GC's Count (0 from a .gcdump, which does not keep it) */
    uint64_t events_dropped;     /**< events the parser found lost (sequence numbers) */
    uint64_t bulk_gaps;          /**< GCBulkNode / GCBulkEdge events missing by their Index */
    uint64_t edges_missing;      /**< references the objects announced that no GCBulkEdge brought */
    uint64_t edges_extra;        /**< GCBulkEdge references beyond what the objects announced (dropped) */
    uint64_t edges_unresolved;   /**< references to an address no object has (dropped) */
    uint64_t roots_unresolved;   /**< roots of an address no object has (dropped) */
    uint64_t weak_roots;         /**< weak-reference roots (not roots: skipped, as dotnet-gcdump does) */
    uint64_t duplicate_objects;  /**< a second object at an address already seen (kept, never referenced) */
    uint64_t bad_events;         /**< heap events whose payload does not fit its layout (skipped) */
    uint64_t first_bad_offset;   /**< byte offset of the first of them */
    uint64_t unreachable;        /**< objects no root reaches (after nt_heap_dominators) */
    size_t memory;               /**< bytes the heap holds */
    size_t memory_peak;          /**< most bytes held while building it */
    nt_heap_format format;       /**< what it was read from */
} nt_heap_stats;

/*
 * The one-call entry points return the parser's status (or the limit's).
 * *out is set whenever the stream's header was read, also when it was
 * damaged later: the heap then holds the objects read before the fault.
 * msg (may be NULL) receives a description with the byte offset.  A stream
 * without heap data gives an empty heap (stats.gc_found false).  A .gcdump
 * (doc/gcdump-format.md) is told from a NetTrace stream by its first 24
 * bytes, by nt_heap_from_fd only in a regular file (a pipe is read as
 * NetTrace); stats.format says which was read.
 */
NT_API nt_status nt_heap_from_file(const char *path, const nt_heap_options *opt, nt_heap **out, char *msg,
                                   size_t msg_size);
NT_API nt_status nt_heap_from_fd(int fd, const nt_heap_options *opt, nt_heap **out, char *msg, size_t msg_size);
NT_API nt_status nt_heap_from_buffer(const void *data, size_t len, const nt_heap_options *opt, nt_heap **out,
                                     char *msg, size_t msg_size);

/*
 * The builder, for callers that drive a parser themselves (nettrace gcdump
 * reads the live stream with it).  Pass nt_heap_builder_callbacks' callbacks
 * with user = the builder to nt_parser_new.  finish() frees the builder
 * whatever it returns.
 */
typedef struct nt_heap_builder nt_heap_builder;

NT_API nt_heap_builder *nt_heap_builder_new(const nt_heap_limits *limits, const nt_allocator *alloc);
NT_API void nt_heap_builder_callbacks(nt_callbacks *cb);
/** True once the chosen GC's end was read: the snapshot is whole and the session may stop. */
NT_API bool nt_heap_builder_done(const nt_heap_builder *b);
/** Objects and references read so far (for progress). */
NT_API void nt_heap_builder_progress(const nt_heap_builder *b, uint64_t *objects, uint64_t *edges);
/** stream_status: the parser's final status; parser (may be NULL) gives the lost-event count. */
NT_API nt_status nt_heap_builder_finish(nt_heap_builder *b, const nt_parser *parser, nt_status stream_status,
                                        nt_heap **out);
NT_API void nt_heap_builder_free(nt_heap_builder *b);

/* Accessors.  Object indexes run from 0 to nt_heap_object_count() - 1 in the order the runtime walked them. */

/** One object. */
typedef struct nt_heap_object {
    uint64_t address;
    uint64_t size;       /**< shallow bytes */
    uint32_t type;       /**< type index (nt_heap_type_name) */
    uint32_t edge_count; /**< references kept (nt_heap_edges) */
} nt_heap_object;

/** One root record. */
typedef struct nt_heap_root {
    uint32_t object;         /**< the object it holds */
    nt_heap_root_kind kind;
    const char *name;        /**< static fields: "Type.Field"; else "" */
} nt_heap_root;

NT_API size_t nt_heap_object_count(const nt_heap *h);
NT_API nt_heap_object nt_heap_object_at(const nt_heap *h, uint32_t i);
/** The objects i references (*count of them); valid until nt_heap_free. */
NT_API const uint32_t *nt_heap_edges(const nt_heap *h, uint32_t i, uint32_t *count);
/** The object at address; false when none. */
NT_API bool nt_heap_find(const nt_heap *h, uint64_t address, uint32_t *index);
NT_API size_t nt_heap_root_count(const nt_heap *h);
NT_API nt_heap_root nt_heap_root_at(const nt_heap *h, size_t i);
NT_API size_t nt_heap_type_count(const nt_heap *h);
/** The type's name as dotnet-gcdump prints it ("System.Collections.Generic.List<System.String>"), never NULL. */
NT_API const char *nt_heap_type_name(const nt_heap *h, uint32_t type);
/** The file name of the type's module ("System.Private.CoreLib.dll"), or "" when unknown. */
NT_API const char *nt_heap_type_module(const nt_heap *h, uint32_t type);
NT_API void nt_heap_stats_get(const nt_heap *h, nt_heap_stats *out);
/** Why the heap is incomplete or the build stopped, "" when it is whole. */
NT_API const char *nt_heap_message(const nt_heap *h);
NT_API void nt_heap_free(nt_heap *h);

/* ------------------------------------------------------------------------ */
/* Analyses                                                                  */
/* ------------------------------------------------------------------------ */

/**
 * Compute the dominator tree from a virtual root above every root (and above
 * each object no root reaches, so that every byte is counted once), and each
 * object's retained size: the bytes that would be freed with it.  The
 * algorithm is semi-NCA (Lengauer–Tarjan's semidominators with path
 * compression, then each immediate dominator by climbing the dominator
 * tree), with its climbs bounded by 8 per object and reference: past the
 * bound, Lengauer–Tarjan's buckets (the "simple" form), so O(E log N) time
 * whatever the graph, linear memory, over an iterative depth-first search.
 * Idempotent; the analyses below call it.  NT_ERR_NOMEM when memory is short.
 */
NT_API nt_status nt_heap_dominators(nt_heap *h);
/** The object's immediate dominator, NT_HEAP_NONE for the virtual root (or before nt_heap_dominators). */
NT_API uint32_t nt_heap_idom(const nt_heap *h, uint32_t i);
/** Retained bytes of the object (0 before nt_heap_dominators). */
NT_API uint64_t nt_heap_retained(const nt_heap *h, uint32_t i);

/** How a type table is sorted (ties by name). */
typedef enum nt_heap_order {
    NT_HEAP_BY_SHALLOW = 0, /**< shallow bytes, then count (dotnet-gcdump report's order) */
    NT_HEAP_BY_RETAINED,    /**< retained bytes */
    NT_HEAP_BY_COUNT        /**< objects */
} nt_heap_order;

/**
 * One row of a type table.  Objects over 1,000 bytes are counted under their
 * size class, as dotnet-gcdump does ("System.Byte[] (Bytes > 100K)").  A
 * type's retained bytes are those of its objects that no other object of the
 * same row dominates (so nothing is counted twice).
 */
typedef struct nt_heap_type_row {
    const char *name;        /**< the name with its size class, as dotnet-gcdump report prints it */
    const char *module;      /**< module file name, or "" */
    uint32_t type;           /**< type index */
    uint64_t count;
    uint64_t shallow_bytes;
    uint64_t retained_bytes;
} nt_heap_type_row;

typedef struct nt_heap_table {
    size_t count;
    nt_heap_type_row *rows;
    uint64_t objects, total_bytes; /**< over every row */
} nt_heap_table;

/** Build the type table (computes the dominators).  *out is freed with nt_heap_table_free. */
NT_API nt_status nt_heap_type_table(nt_heap *h, nt_heap_order order, nt_heap_table **out);
NT_API void nt_heap_table_free(nt_heap_table *t);

/**
 * The n objects of largest retained size, largest first (ties by index),
 * into out (room for n); returns how many were written (fewer when the heap
 * has fewer objects).  Computes the dominators; 0 when memory is short.
 */
NT_API size_t nt_heap_top_retainers(nt_heap *h, uint32_t *out, size_t n);

/**
 * The shortest reference path from a root to object i (breadth-first from
 * every root at once, computed once per heap): path[0] is the root object,
 * path[*len - 1] is i.  *root (may be NULL) gets the index of the root record
 * it starts from.  Returns NT_OK; NT_ERR_INVALID_ARG when no root reaches i
 * (*len = 0); NT_ERR_LIMIT when the path holds more than cap objects (*len
 * is then its length, path holds nothing); NT_ERR_NOMEM.
 */
NT_API nt_status nt_heap_path(nt_heap *h, uint32_t i, uint32_t *path, size_t cap, size_t *len, size_t *root);

/**
 * Up to n objects of the type table row named name (as nt_heap_type_row.name
 * spells it, or the type's name without size class) closest to a root,
 * closest first; returns how many.  0 when none or memory is short.
 */
NT_API size_t nt_heap_objects_of_type(nt_heap *h, const char *name, uint32_t *out, size_t n);

/** One row of a diff: a type in either snapshot. */
typedef struct nt_heap_diff_row {
    const char *name;
    uint64_t count_before, count_after;
    uint64_t bytes_before, bytes_after;     /**< shallow */
    uint64_t retained_before, retained_after;
    int64_t count_delta, bytes_delta;       /**< after - before */
} nt_heap_diff_row;

typedef struct nt_heap_diff {
    size_t count;
    nt_heap_diff_row *rows;                 /**< by bytes_delta, largest growth first, then by name */
} nt_heap_diff;

/** Compare two type tables by row name.  The names point into the tables: keep them until nt_heap_diff_free. */
NT_API nt_status nt_heap_diff_tables(const nt_heap_table *before, const nt_heap_table *after, nt_heap_diff **out);
NT_API void nt_heap_diff_free(nt_heap_diff *d);

/* ------------------------------------------------------------------------ */
/* The dominator tree as a flame graph                                      */
/* ------------------------------------------------------------------------ */

/*
 * A frame is a type; an object's stack is the root kind, then the types of
 * its dominators from the outermost down, then its own; its weight is its
 * shallow bytes, so a frame's total is what it retains.  Consecutive frames
 * of one type are one frame (a linked list is one frame, not a stack as deep
 * as the list), and frames below max_depth are folded into the frame at that
 * depth.
 */
typedef struct nt_heap_export_options {
    uint32_t struct_size;    /**< sizeof(nt_heap_export_options) or 0 (doc/abi.md) */
    uint32_t max_depth;      /**< frames per stack (default 256) */
    bool by_count;           /**< weigh by objects instead of bytes */
} nt_heap_export_options;

#define NT_HEAP_DEFAULT_MAX_DEPTH 256u

NT_API nt_status nt_heap_export_folded(nt_heap *h, const nt_heap_export_options *opt, nt_sink_fn w, void *user);
NT_API nt_status nt_heap_export_speedscope(nt_heap *h, const nt_heap_export_options *opt, nt_sink_fn w,
                                           void *user);
NT_API nt_status nt_heap_export_pprof(nt_heap *h, const nt_heap_export_options *opt, nt_sink_fn w, void *user);
/** One self-contained HTML page (no network, no server): the dominator tree as an interactive flame graph. */
NT_API nt_status nt_heap_export_html(nt_heap *h, const nt_heap_export_options *opt, nt_sink_fn w, void *user);

#ifdef __cplusplus
}
#endif

#endif /* NETTRACE_HEAP_H */
