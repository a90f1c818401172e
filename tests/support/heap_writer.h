/* Heap-dump streams for tests, benchmarks and fuzz seeds: the runtime's
 * GCStart/GCEnd, BulkType, GCBulkNode/Edge and root events written with
 * nt_writer, in the payload layouts src/heap/heap_events.c reads. */
#ifndef TEST_HEAP_WRITER_H
#define TEST_HEAP_WRITER_H

#include "nettrace_writer.h"

typedef struct hw_node {
    uint64_t addr, size, type;
    uint32_t first, count;     /* its references: hw_graph.targets[first .. first + count) */
} hw_node;

typedef struct hw_root {
    uint64_t addr;
    uint8_t kind;              /* GCRootKind: 0 stack, 1 finalizer, 2 handle, ... */
    uint32_t flags;            /* GCRootFlag: 1 pinning, 2 weak, 8 ref-counted */
} hw_root;

typedef struct hw_type {
    uint64_t id, module;
    uint32_t flags;
    const char *name;          /* UTF-8 (ASCII in practice) */
} hw_type;

typedef struct hw {
    nt_writer *w;
    nt_membuf out;
    uint32_t ptr;              /* pointer size */
    uint32_t md[64][4];        /* metadata ids by event id and version */
    int64_t ts;
    uint32_t node_index, edge_index, root_index;
    unsigned char *buf;        /* payload scratch */
    size_t cap;
} hw;

/* Start a V4 (format 4) or V6 (format 6) stream with this pointer size; false when memory is short. */
bool hw_begin(hw *h, uint32_t format, uint32_t ptr);
/* GCStart_V2 (depth, reason 1 = induced, type 0 = non-concurrent) and GCEnd_V1 of GC number count. */
void hw_gc_start(hw *h, uint32_t count, uint32_t depth, uint32_t reason, uint32_t type);
void hw_gc_end(hw *h, uint32_t count);
void hw_types(hw *h, const hw_type *t, size_t n);
/* GCBulkNode events of at most per_event nodes each (Index counting from h->node_index). */
void hw_nodes(hw *h, const hw_node *n, size_t count, size_t per_event);
void hw_edges(hw *h, const uint64_t *targets, size_t count, size_t per_event);
void hw_roots(hw *h, const hw_root *r, size_t count);
/* One GCBulkRootStaticVar of one field. */
void hw_static(hw *h, uint64_t obj, uint64_t type, uint32_t flags, const char *field);
/* One GCBulkRootConditionalWeakTableElementEdge of one key/value. */
void hw_cwt(hw *h, uint64_t key, uint64_t value);
/* A ModuleLoad naming module id's IL path. */
void hw_module(hw *h, uint64_t id, const char *path);
/* A runtime event with a raw payload. */
void hw_raw(hw *h, uint32_t event_id, uint32_t version, const void *payload, size_t len);
/* Finish the stream: h->out.data / h->out.len hold it; NT_OK or the writer's error. */
nt_status hw_finish(hw *h);
void hw_free(hw *h);

/* A whole snapshot: types, the nodes and their references (addresses),
 * the roots, in one induced gen-2 GC numbered 1, per_event values per bulk event. */
typedef struct hw_graph {
    const hw_type *types;
    size_t ntypes;
    const hw_node *nodes;
    size_t nnodes;
    const uint64_t *targets;
    size_t ntargets;
    const hw_root *roots;
    size_t nroots;
} hw_graph;

void hw_snapshot(hw *h, const hw_graph *g, size_t per_event);

#endif
