/* The heap builder's state: heap_events.c decodes the runtime's heap-dump
 * payloads into it, heap_build.c stores and finishes the graph. */
#ifndef HP_BUILD_H
#define HP_BUILD_H

#include "heap/heap_internal.h"

/* Where the builder is in the stream: before the heap dump's GC, inside it, after it. */
enum { HB_WAIT = 0, HB_IN, HB_DONE };

#define HB_TYPE_CACHE_BITS 8
#define HB_TYPE_CACHE (1u << HB_TYPE_CACHE_BITS)
typedef struct hb_type_slot {
    uint64_t type_id;
    uint32_t index1;           /* type index + 1; 0 = empty */
} hb_type_slot;

struct nt_heap_builder {
    cm_mem mem;
    nt_heap *h;                /* what is built; its arrays grow through h->mem */
    nt_heap_limits lim;
    uint32_t ptr_size;         /* from the trace header: width of Pointer fields */
    int state;
    size_t cap_addr, cap_size, cap_type, cap_start; /* capacities of h->addr, size, type, edge_start */
    uint64_t edge_need;        /* references the objects announced */
    uint64_t *edge_addr;       /* references as addresses, in arrival order */
    size_t nedges, cap_e;
    size_t cap_r, cap_t;
    cm_map type_map;           /* type id -> type index + 1 */
    hb_type_slot type_cache[HB_TYPE_CACHE];
    cm_map module_names;       /* module id -> pool offset of the module's file name */
    cm_map rcw;                /* addresses of objects an RCW wraps */
    uint32_t next_node_block, next_edge_block; /* the Index the next GCBulkNode / GCBulkEdge should carry */
    nt_status status;          /* a limit reached or memory short: the build stops */
    char message[200];
};

/* Stop the build with s and a message (printf-style); returns 1, the
 * callbacks' "stop". */
int hb_fail(nt_heap_builder *b, nt_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Count a payload that does not fit its layout, at byte offset off. */
void hb_bad_event(nt_heap_builder *b, uint64_t off);

/* The storage calls return 0 to go on, 1 when the build stopped. */
int hb_add_object(nt_heap_builder *b, uint64_t addr, uint64_t size, uint64_t type_id, uint64_t edge_count,
                  uint64_t off);
int hb_add_edge(nt_heap_builder *b, uint64_t target, uint64_t off);
int hb_add_root(nt_heap_builder *b, uint64_t addr, nt_heap_root_kind kind, uint32_t type, const char *name,
                size_t name_len, uint64_t off);
/* Name type_id (raw BulkType name, UTF-8). */
int hb_add_type(nt_heap_builder *b, uint64_t type_id, uint64_t module_id, uint32_t name_id, uint32_t flags,
                const char *name, size_t name_len, uint64_t off);
/* The type index of type_id, made when new; false when the build stopped. */
bool hb_type_index(nt_heap_builder *b, uint64_t type_id, uint64_t off, uint32_t *index);
int hb_add_rcw(nt_heap_builder *b, uint64_t addr);
/* A new heap dump GC began: forget the bulk-event sequence. */
void hb_gc_begin(nt_heap_builder *b, uint32_t gc_number);

#endif
