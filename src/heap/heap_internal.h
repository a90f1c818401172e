/* The heap graph's storage, shared by the units of src/heap/ (the builder
 * fills it, the analyses read it) and the flame-graph exporters. */
#ifndef HP_INTERNAL_H
#define HP_INTERNAL_H

#include "nettrace_heap.h"
#include "common/alloc.h"
#include "common/map.h"

/* A type as BulkType names it.  name and module are offsets into the name
 * pool (0 is ""). */
typedef struct hp_type {
    uint64_t type_id;
    uint64_t module_id;
    uint32_t name;       /* while reading: the raw BulkType name; after: the display name */
    uint32_t module;     /* after reading: the module's file name */
    uint32_t flags;      /* BulkType Flags (0x4 RCW, 0x8 array), or HP_TYPE_DISPLAY_NAME */
    uint32_t name_id;    /* TypeNameID, for unnamed types */
    uint32_t canon;      /* after reading: the first type of the same name and module */
    bool defined;        /* a BulkType record named it */
} hp_type;

/* hp_type.flags: the name is already as dotnet-gcdump prints it (a .gcdump's), kept as it is. */
#define HP_TYPE_DISPLAY_NAME 0x80000000u

/* A root record: while reading, obj holds the address; after, the object index. */
typedef struct hp_root {
    uint64_t obj;
    uint32_t name;       /* static fields: the field's name while reading, then "Type.Field" */
    uint32_t kind;       /* nt_heap_root_kind */
    uint32_t type;       /* static fields: the declaring type's index; else NT_HEAP_NONE */
} hp_root;

/* The most objects a heap takes, whatever max_objects says: the dominators
 * number the nodes (objects and the virtual root) in 31 bits. */
#define HP_MAX_OBJECTS 0x7FFFFFFEu

/* Sizes take 4 bytes an object; the rare object of 4 GiB or more keeps
 * its size here, the list in index order. */
#define HP_SIZE_BIG UINT32_MAX
typedef struct hp_big_size {
    uint32_t obj;
    uint64_t size;
} hp_big_size;

/* A growable pool of NUL-terminated names; offset 0 is "". */
typedef struct hp_names {
    char *p;
    size_t len, cap;
} hp_names;

struct nt_heap {
    cm_mem mem;
    uint32_t n;                /* objects */
    uint64_t *addr;            /* n */
    uint32_t *size;            /* n: the size, or HP_SIZE_BIG: the size is in big (hp_size) */
    hp_big_size *big;          /* the objects of HP_SIZE_BIG bytes or more, by index */
    size_t nbig, cap_big;
    uint32_t *type;            /* n: type index */
    uint32_t *edge_start;      /* n + 1: object i's edges are edges[edge_start[i] .. edge_start[i + 1]) */
    uint32_t *edges;           /* target object indexes */
    uint32_t *by_addr;         /* n: object indexes in address order; NULL when the walk was in address order */
    hp_root *roots;
    size_t nroots;
    hp_type *types;
    size_t ntypes;
    hp_names names;
    nt_heap_stats stats;
    char message[256];
    /* The analyses' results, made at first need. */
    uint32_t *idom;            /* n: NT_HEAP_NONE = the virtual root */
    uint64_t *retained;        /* n */
    uint32_t *bfs_parent;      /* n: predecessor on a shortest path from a root, NT_HEAP_NONE at a root */
    uint32_t *bfs_root;        /* n: the root record a shortest path starts from; NT_HEAP_NONE: unreached */
    uint32_t *bfs_rank;        /* n: order of discovery (closer to a root first) */
};

/* The name at offset off. */
static inline const char *hp_name(const nt_heap *h, uint32_t off) { return h->names.p ? h->names.p + off : ""; }

/* Append s (len bytes) and a NUL to the pool; *off its offset.  False when
 * memory is short or the pool would pass max bytes. */
bool hp_names_add(cm_mem *mem, hp_names *pool, const char *s, size_t len, size_t max, uint32_t *off);

/* The size of object i (of an object in big: found by binary search). */
uint64_t hp_big_size_of(const nt_heap *h, uint32_t i);
static inline uint64_t hp_size(const nt_heap *h, uint32_t i)
{
    uint32_t s = h->size[i];
    return s != HP_SIZE_BIG ? s : hp_big_size_of(h, i);
}

/* dotnet-gcdump's size classes: 0 for objects up to 1,000 bytes, then
 * 1 (" (Bytes > 1K)") to 6 (" (Bytes > 100M)"). */
unsigned hp_size_class(uint64_t size);
const char *hp_size_class_suffix(unsigned cls);

/* Name every type as dotnet-gcdump does, from the raw BulkType names and
 * the module records (module_names: module id -> pool offset of the file
 * name), and group the types of one name and module (canon).  False when
 * memory is short or max_name_bytes is reached. */
bool hp_types_finish(nt_heap *h, const cm_map *module_names, size_t max_name_bytes);

/* nt_heap_dominators with the climbs of semi-NCA bounded by max_climbs
 * (past it, Lengauer–Tarjan's buckets; 0 takes them at once), so tests
 * reach both. */
nt_status hp_dominators_bounded(nt_heap *h, uint64_t max_climbs);

/* Breadth-first search from every root at once, for paths (bfs_*). */
nt_status hp_bfs(nt_heap *h);

/* The dominator tree's children, as a CSR array: the children of the
 * virtual root first (start[n] .. start[n + 1]), then of each object
 * (start[i] .. start[i + 1]).  The caller frees *start (n + 2 entries) and
 * *child (n entries) with h->mem. */
nt_status hp_dom_children(nt_heap *h, uint32_t **start, uint32_t **child);

/* Row of object i in the type tables: its canonical type and size class. */
static inline uint64_t hp_row_key(const nt_heap *h, uint32_t i)
{
    return ((uint64_t)h->types[h->type[i]].canon << 3) | hp_size_class(hp_size(h, i));
}

#endif
