/* The heap builder's storage: objects, references as addresses, roots and
 * types while reading; at the end, the references and roots resolved to
 * object indexes through the address order. */
#include "heap/heap_build.h"
#include "common/abi.h"
#include "common/sort.h"
#include "heap/heap_addr_sort.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static uint32_t pick(uint32_t given, uint32_t dflt) { return given ? given : dflt; }

nt_heap_builder *nt_heap_builder_new(const nt_heap_limits *limits, const nt_allocator *alloc)
{
    nt_heap_limits l;
    if (!ABI_IN(nt_heap_limits, &l, limits))
        return NULL;
    nt_heap_builder *b = CM_MEM_NEW(nt_heap_builder, alloc);
    if (!b)
        return NULL;
    b->h = CM_MEM_NEW(nt_heap, alloc);
    if (!b->h) {
        CM_MEM_DELETE(nt_heap_builder, b);
        return NULL;
    }
    b->lim.max_objects = pick(l.max_objects, NT_HEAP_DEFAULT_MAX_OBJECTS);
    if (b->lim.max_objects > HP_MAX_OBJECTS)
        b->lim.max_objects = HP_MAX_OBJECTS;
    b->lim.max_edges = pick(l.max_edges, NT_HEAP_DEFAULT_MAX_EDGES);
    b->lim.max_roots = pick(l.max_roots, NT_HEAP_DEFAULT_MAX_ROOTS);
    b->lim.max_types = pick(l.max_types, NT_HEAP_DEFAULT_MAX_TYPES);
    b->lim.max_name_bytes = pick(l.max_name_bytes, NT_HEAP_DEFAULT_MAX_NAME_BYTES);
    b->ptr_size = 8;
    b->h->stats.gc_number = 0;
    return b;
}

void nt_heap_free(nt_heap *h)
{
    if (!h)
        return;
    cm_mem *m = &h->mem;
    size_t n = h->n;
    cm_mem_free(m, h->addr, n * sizeof *h->addr);
    cm_mem_free(m, h->size, n * sizeof *h->size);
    cm_mem_free(m, h->big, h->cap_big * sizeof *h->big);
    cm_mem_free(m, h->type, n * sizeof *h->type);
    cm_mem_free(m, h->edge_start, (n + 1) * sizeof *h->edge_start);
    cm_mem_free(m, h->edges, h->stats.edges * sizeof *h->edges);
    cm_mem_free(m, h->by_addr, n * sizeof *h->by_addr);
    cm_mem_free(m, h->roots, h->nroots * sizeof *h->roots);
    cm_mem_free(m, h->types, h->ntypes * sizeof *h->types);
    cm_mem_free(m, h->names.p, h->names.cap);
    cm_mem_free(m, h->idom, n * sizeof *h->idom);
    cm_mem_free(m, h->retained, n * sizeof *h->retained);
    cm_mem_free(m, h->bfs_parent, n * sizeof *h->bfs_parent);
    cm_mem_free(m, h->bfs_root, n * sizeof *h->bfs_root);
    cm_mem_free(m, h->bfs_rank, n * sizeof *h->bfs_rank);
    CM_MEM_DELETE(nt_heap, h);
}

/* The builder's arrays at their capacities (the heap's own sizes are set only at finish). */
static void free_building(nt_heap_builder *b)
{
    nt_heap *h = b->h;
    cm_mem *m = &h->mem;
    cm_mem_free(m, h->addr, b->cap_addr * sizeof *h->addr);
    cm_mem_free(m, h->size, b->cap_size * sizeof *h->size);
    cm_mem_free(m, h->big, h->cap_big * sizeof *h->big);
    cm_mem_free(m, h->type, b->cap_type * sizeof *h->type);
    cm_mem_free(m, h->edge_start, b->cap_start * sizeof *h->edge_start);
    cm_mem_free(m, b->edge_addr, b->cap_e * sizeof *b->edge_addr);
    cm_mem_free(m, h->roots, b->cap_r * sizeof *h->roots);
    cm_mem_free(m, h->types, b->cap_t * sizeof *h->types);
    cm_mem_free(m, h->names.p, h->names.cap);
    CM_MEM_DELETE(nt_heap, h);
}

void nt_heap_builder_free(nt_heap_builder *b)
{
    if (!b)
        return;
    if (b->h)
        free_building(b);
    cm_map_free(&b->mem, &b->type_map);
    cm_map_free(&b->mem, &b->module_names);
    cm_map_free(&b->mem, &b->rcw);
    CM_MEM_DELETE(nt_heap_builder, b);
}

bool nt_heap_builder_done(const nt_heap_builder *b) { return b && b->state == HB_DONE; }

void nt_heap_builder_progress(const nt_heap_builder *b, uint64_t *objects, uint64_t *edges)
{
    if (objects)
        *objects = b ? b->h->n : 0;
    if (edges)
        *edges = b ? b->nedges : 0;
}

int hb_fail(nt_heap_builder *b, nt_status s, const char *fmt, ...)
{
    if (b->status == NT_OK) {
        b->status = s;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(b->message, sizeof b->message, fmt, ap);
        va_end(ap);
    }
    return 1;
}

void hb_bad_event(nt_heap_builder *b, uint64_t off)
{
    if (b->h->stats.bad_events++ == 0)
        b->h->stats.first_bad_offset = off;
}

void hb_gc_begin(nt_heap_builder *b, uint32_t gc_number)
{
    b->h->stats.gc_number = gc_number;
    b->next_node_block = b->next_edge_block = 0;
}

static int short_of_memory(nt_heap_builder *b) { return hb_fail(b, NT_ERR_NOMEM, "out of memory building the heap"); }

/* Object i's size of 4 GiB or more into the big list, kept in index order
 * (at its end while reading; an RCW's estimate may make one big later). */
static bool big_size(nt_heap *h, uint32_t i, uint64_t size)
{
    size_t at = h->nbig;
    while (at > 0 && h->big[at - 1].obj >= i)
        at--;
    if (at < h->nbig && h->big[at].obj == i) {
        h->big[at].size = size;
        return true;
    }
    if (!cm_mem_reserve(&h->mem, (void **)&h->big, &h->cap_big, h->nbig + 1, sizeof *h->big))
        return false;
    memmove(h->big + at + 1, h->big + at, (h->nbig - at) * sizeof *h->big);
    h->big[at] = (hp_big_size){ i, size };
    h->nbig++;
    return true;
}

int hb_add_object(nt_heap_builder *b, uint64_t addr, uint64_t size, uint64_t type_id, uint64_t edge_count,
                  uint64_t off)
{
    nt_heap *h = b->h;
    if (h->n >= b->lim.max_objects)
        return hb_fail(b, NT_ERR_LIMIT, "the heap passed max_objects (%u objects) at byte %llu", b->lim.max_objects,
                       (unsigned long long)off);
    if (edge_count > b->lim.max_edges - b->edge_need)
        return hb_fail(b, NT_ERR_LIMIT, "the heap's objects announce more than max_edges (%u references) at byte %llu",
                       b->lim.max_edges, (unsigned long long)off);
    uint32_t t;
    if (!hb_type_index(b, type_id, off, &t))
        return 1;
    if (size > NT_HEAP_MAX_OBJECT_BYTES) { /* no object is this large: a damaged value, kept as 0 so the references still line up */
        hb_bad_event(b, off);
        size = 0;
    }
    size_t need = (size_t)h->n + 1;
    /* The four arrays grow together; the common case (room in all) tests the capacities here, not in four calls. */
    bool room = need <= b->cap_addr && need <= b->cap_size && need <= b->cap_type && need + 1 <= b->cap_start;
    if (!room && (!cm_mem_reserve(&h->mem, (void **)&h->addr, &b->cap_addr, need, sizeof *h->addr) ||
        !cm_mem_reserve(&h->mem, (void **)&h->size, &b->cap_size, need, sizeof *h->size) ||
        !cm_mem_reserve(&h->mem, (void **)&h->type, &b->cap_type, need, sizeof *h->type) ||
        !cm_mem_reserve(&h->mem, (void **)&h->edge_start, &b->cap_start, need + 1, sizeof *h->edge_start)))
        return short_of_memory(b);
    if (size >= HP_SIZE_BIG && !big_size(h, h->n, size))
        return short_of_memory(b);
    h->addr[h->n] = addr;
    h->size[h->n] = size < HP_SIZE_BIG ? (uint32_t)size : HP_SIZE_BIG;
    h->type[h->n] = t;
    h->edge_start[h->n] = (uint32_t)b->edge_need;
    b->edge_need += edge_count;
    h->edge_start[h->n + 1] = (uint32_t)b->edge_need;
    h->n++;
    return 0;
}

int hb_add_edge(nt_heap_builder *b, uint64_t target, uint64_t off)
{
    if (b->nedges >= b->lim.max_edges)
        return hb_fail(b, NT_ERR_LIMIT, "the heap passed max_edges (%u references) at byte %llu", b->lim.max_edges,
                       (unsigned long long)off);
    if (b->nedges >= b->cap_e &&
        !cm_mem_reserve(&b->h->mem, (void **)&b->edge_addr, &b->cap_e, b->nedges + 1, sizeof *b->edge_addr))
        return short_of_memory(b);
    b->edge_addr[b->nedges++] = target;
    return 0;
}

int hb_add_root(nt_heap_builder *b, uint64_t addr, nt_heap_root_kind kind, uint32_t type, const char *name,
                size_t name_len, uint64_t off)
{
    nt_heap *h = b->h;
    if (addr == 0) /* an empty slot holds nothing */
        return 0;
    if (h->nroots >= b->lim.max_roots)
        return hb_fail(b, NT_ERR_LIMIT, "the heap passed max_roots (%u roots) at byte %llu", b->lim.max_roots,
                       (unsigned long long)off);
    uint32_t name_off = 0;
    if (!hp_names_add(&h->mem, &h->names, name, name_len, b->lim.max_name_bytes, &name_off))
        return hb_fail(b, NT_ERR_LIMIT, "the heap's names passed max_name_bytes (%u bytes) at byte %llu",
                       b->lim.max_name_bytes, (unsigned long long)off);
    if (!cm_mem_reserve(&h->mem, (void **)&h->roots, &b->cap_r, h->nroots + 1, sizeof *h->roots))
        return short_of_memory(b);
    hp_root *r = &h->roots[h->nroots++];
    r->obj = addr;
    r->kind = (uint32_t)kind;
    r->name = name_off;
    r->type = type;
    return 0;
}

bool hb_type_index(nt_heap_builder *b, uint64_t type_id, uint64_t off, uint32_t *index)
{
    nt_heap *h = b->h;
    /* A small direct-mapped cache before the map: a heap has few types and
     * every object names one (a miss costs only the map's lookup).  The slot
     * from the id's top bits after a multiplicative mix: ids close together
     * (0x1000, 0x1008, ...) land in different slots, where id >> 3 put
     * 64 such types in 8. */
    hb_type_slot *slot = &b->type_cache[(type_id * 0x9E3779B97F4A7C15ull) >> (64 - HB_TYPE_CACHE_BITS)];
    if (slot->index1 && slot->type_id == type_id) {
        *index = slot->index1 - 1;
        return true;
    }
    uint64_t *v = cm_map_get(&b->type_map, type_id);
    if (v) {
        *index = (uint32_t)(*v - 1);
        *slot = (hb_type_slot){ type_id, (uint32_t)*v };
        return true;
    }
    if (h->ntypes >= b->lim.max_types) {
        hb_fail(b, NT_ERR_LIMIT, "the heap passed max_types (%u types) at byte %llu", b->lim.max_types,
                (unsigned long long)off);
        return false;
    }
    if (!cm_mem_reserve(&h->mem, (void **)&h->types, &b->cap_t, h->ntypes + 1, sizeof *h->types) ||
        !cm_map_set(&b->mem, &b->type_map, type_id, h->ntypes + 1)) {
        short_of_memory(b);
        return false;
    }
    hp_type *t = &h->types[h->ntypes];
    memset(t, 0, sizeof *t);
    t->type_id = type_id;
    *index = (uint32_t)h->ntypes++;
    return true;
}

int hb_add_type(nt_heap_builder *b, uint64_t type_id, uint64_t module_id, uint32_t name_id, uint32_t flags,
                const char *name, size_t name_len, uint64_t off)
{
    uint32_t t;
    if (!hb_type_index(b, type_id, off, &t))
        return 1;
    hp_type *ty = &b->h->types[t];
    if (ty->defined) /* the runtime repeats types across events: the first naming stands */
        return 0;
    uint32_t name_off;
    if (!hp_names_add(&b->h->mem, &b->h->names, name, name_len, b->lim.max_name_bytes, &name_off))
        return hb_fail(b, NT_ERR_LIMIT, "the heap's names passed max_name_bytes (%u bytes) at byte %llu",
                       b->lim.max_name_bytes, (unsigned long long)off);
    ty = &b->h->types[t];
    ty->defined = true;
    ty->module_id = module_id;
    ty->name_id = name_id;
    ty->flags = flags;
    ty->name = name_off;
    return 0;
}

int hb_add_rcw(nt_heap_builder *b, uint64_t addr)
{
    return cm_map_set(&b->mem, &b->rcw, addr, 1) ? 0 : short_of_memory(b);
}

/* ---- finish: resolve addresses to object indexes ---- */

static int by_address(const void *a, const void *b, void *ctx)
{
    const uint64_t *addr = ctx;
    uint64_t x = addr[*(const uint32_t *)a], y = addr[*(const uint32_t *)b];
    return x < y ? -1 : x > y;
}

/* The sorted addresses with a directory over their range: bucket k of
 * (address - lowest) >> shift starts at dir[k], about four addresses a
 * bucket when they are spread evenly (2 bytes per object at most).  A lookup
 * is one directory read and a binary search of its bucket: a few steps
 * where addresses are spread, O(log n) however they cluster. */
typedef struct addr_index {
    const uint64_t *sorted;
    const uint32_t *order;     /* sorted position -> object index; NULL: the same */
    uint32_t n;
    uint64_t lo, hi;           /* the lowest and highest address */
    unsigned shift;
    size_t nb;                 /* buckets */
    uint32_t *dir;             /* nb + 1 */
} addr_index;

static bool index_make(cm_mem *m, addr_index *x, const uint64_t *sorted, const uint32_t *order, uint32_t n)
{
    *x = (addr_index){ sorted, order, n, 0, 0, 0, 2, NULL }; /* two buckets at least: shift stays below 64 */
    if (n) {
        x->lo = sorted[0];
        x->hi = sorted[n - 1];
    }
    while (x->nb < n / 4 && x->nb < ((size_t)1 << 30))
        x->nb *= 2;
    while (((x->hi - x->lo) >> x->shift) >= x->nb)
        x->shift++;
    x->dir = cm_mem_alloc(m, (x->nb + 1) * sizeof *x->dir);
    if (!x->dir)
        return false;
    size_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t b = (size_t)((sorted[i] - x->lo) >> x->shift);
        while (k <= b)
            x->dir[k++] = i;
    }
    while (k <= x->nb)
        x->dir[k++] = n;
    return true;
}

static void index_free(cm_mem *m, addr_index *x)
{
    if (x->dir)
        cm_mem_free(m, x->dir, (x->nb + 1) * sizeof *x->dir);
}

/* The first object (in walk order) at address a, or NT_HEAP_NONE. */
static uint32_t lookup(const addr_index *x, uint64_t a)
{
    if (x->n == 0 || a < x->lo || a > x->hi)
        return NT_HEAP_NONE;
    size_t b = (size_t)((a - x->lo) >> x->shift);
    uint32_t base = x->dir[b], end = x->dir[b + 1];
    while (base < end) { /* the first address >= a */
        uint32_t mid = base + (end - base) / 2;
        if (x->sorted[mid] < a)
            base = mid + 1;
        else
            end = mid;
    }
    if (base >= x->n || x->sorted[base] != a)
        return NT_HEAP_NONE;
    return x->order ? x->order[base] : base;
}

/* Objects in walk order are already in address order when the runtime
 * walked its heap upwards (one segment or region after the next, as the
 * runtime does): then the address array is its own sorted copy and
 * by_addr stays NULL (identity), with no sort and no copy. */
static bool in_address_order(nt_heap *h)
{
    for (uint32_t i = 1; i < h->n; i++)
        if (h->addr[i] < h->addr[i - 1])
            return false;
    for (uint32_t i = 1; i < h->n; i++)
        if (h->addr[i] == h->addr[i - 1])
            h->stats.duplicate_objects++; /* the lookup finds the first, as after a stable sort */
    return true;
}

/* by_addr and *sorted by the merge sort, for addresses too spread for the radix sort. */
static bool merge_sort_addresses(nt_heap *h, uint64_t **sorted)
{
    uint32_t n = h->n;
    uint32_t *tmp = cm_mem_alloc(&h->mem, (size_t)n * sizeof *tmp);
    h->by_addr = cm_mem_alloc(&h->mem, (size_t)n * sizeof *h->by_addr);
    *sorted = cm_mem_alloc(&h->mem, (size_t)n * sizeof **sorted);
    if (!tmp || !h->by_addr || !*sorted) {
        cm_mem_free(&h->mem, tmp, (size_t)n * sizeof *tmp);
        return false;
    }
    for (uint32_t i = 0; i < n; i++)
        h->by_addr[i] = i;
    cm_merge_sort(h->by_addr, tmp, n, sizeof *h->by_addr, by_address, h->addr);
    cm_mem_free(&h->mem, tmp, (size_t)n * sizeof *tmp);
    for (uint32_t i = 0; i < n; i++)
        (*sorted)[i] = h->addr[h->by_addr[i]];
    return true;
}

/* by_addr and a transient copy of the sorted addresses (*sorted, freed by
 * the caller); neither when the walk was in address order (*sorted is then
 * h->addr itself, not to be freed). */
static bool sort_addresses(nt_heap *h, uint64_t **sorted)
{
    if (in_address_order(h)) {
        *sorted = h->addr;
        return true;
    }
    bool fits;
    if (!hp_addr_radix_sort(&h->mem, h->addr, h->n, sorted, &h->by_addr, &fits) &&
        (fits || !merge_sort_addresses(h, sorted)))
        return false;
    for (uint32_t i = 1; i < h->n; i++)
        if ((*sorted)[i] == (*sorted)[i - 1])
            h->stats.duplicate_objects++; /* the lookup finds the first in walk order (the sort is stable) */
    return true;
}

/* Each object's references from addresses to indexes, written over the
 * address array (4 bytes per reference where 8 were), then the array cut
 * to what was kept. */
static bool resolve_edges(nt_heap_builder *b, const addr_index *x)
{
    nt_heap *h = b->h;
    uint64_t got = b->nedges, need = b->edge_need;
    if (got < need)
        h->stats.edges_missing = need - got;
    else
        h->stats.edges_extra = got - need;
    unsigned char *raw = (unsigned char *)b->edge_addr;
    uint32_t w = 0;
    uint32_t next = h->n ? h->edge_start[0] : 0;
    for (uint32_t i = 0; i < h->n; i++) {
        uint64_t s = next, e = h->edge_start[i + 1];
        next = (uint32_t)e;
        if (e > got)
            e = got;
        h->edge_start[i] = w;
        for (uint64_t k = s; k < e; k++) {
            uint64_t a;
            memcpy(&a, raw + k * 8, 8);
            uint32_t t = lookup(x, a);
            if (t == NT_HEAP_NONE) {
                h->stats.edges_unresolved++;
                continue;
            }
            memcpy(raw + (size_t)w * 4, &t, 4);
            w++;
        }
    }
    if (h->edge_start)
        h->edge_start[h->n] = w;
    h->stats.edges = w;
    void *p = b->edge_addr;
    if (w == 0) {
        cm_mem_free(&h->mem, p, b->cap_e * 8);
        p = NULL;
    } else if (!cm_mem_resize(&h->mem, &p, b->cap_e * 8, (size_t)w * 4)) {
        return false;
    }
    h->edges = p;
    b->edge_addr = NULL;
    b->cap_e = 0;
    return true;
}

static void resolve_roots(nt_heap *h, const addr_index *x)
{
    size_t w = 0;
    for (size_t i = 0; i < h->nroots; i++) {
        hp_root r = h->roots[i];
        uint32_t t = lookup(x, r.obj);
        if (t == NT_HEAP_NONE) {
            h->stats.roots_unresolved++;
            continue;
        }
        r.obj = t;
        h->roots[w++] = r;
    }
    h->nroots = w;
}

/* Static roots' names become "Type.Field" once the types are named. */
static bool name_static_roots(nt_heap_builder *b)
{
    nt_heap *h = b->h;
    for (size_t i = 0; i < h->nroots; i++) {
        hp_root *r = &h->roots[i];
        if (r->type == NT_HEAP_NONE)
            continue;
        const char *tn = hp_name(h, h->types[r->type].name), *fn = hp_name(h, r->name);
        size_t tl = strlen(tn), fl = strlen(fn);
        char *buf = cm_mem_alloc(&h->mem, tl + fl + 2);
        if (!buf)
            return false;
        memcpy(buf, tn, tl);
        buf[tl] = '.';
        memcpy(buf + tl + 1, fn, fl);
        uint32_t off;
        bool ok = hp_names_add(&h->mem, &h->names, buf, tl + fl + 1, b->lim.max_name_bytes, &off);
        cm_mem_free(&h->mem, buf, tl + fl + 2);
        if (!ok)
            return false;
        r->name = off;
    }
    return true;
}

/* Arrays cut from their capacities to their sizes, so that nt_heap_free
 * and the memory figures agree with what the heap holds. */
static bool trim(nt_heap_builder *b)
{
    nt_heap *h = b->h;
    size_t n = h->n;
    struct { void **p; size_t *cap; size_t elem, count; } a[] = {
        { (void **)&h->addr, &b->cap_addr, sizeof *h->addr, n },
        { (void **)&h->size, &b->cap_size, sizeof *h->size, n },
        { (void **)&h->type, &b->cap_type, sizeof *h->type, n },
        { (void **)&h->edge_start, &b->cap_start, sizeof *h->edge_start, n + 1 },
        { (void **)&h->roots, &b->cap_r, sizeof *h->roots, h->nroots },
        { (void **)&h->types, &b->cap_t, sizeof *h->types, h->ntypes },
    };
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        size_t want = a[i].count * a[i].elem, have = *a[i].cap * a[i].elem;
        if (!*a[i].p && a[i].count) { /* edge_start of an empty heap: one zero entry */
            *a[i].p = cm_mem_alloc(&h->mem, want);
            if (!*a[i].p)
                return false;
            memset(*a[i].p, 0, want);
        } else if (want != have && !cm_mem_resize(&h->mem, a[i].p, have, want ? want : 0)) {
            return false;
        }
        *a[i].cap = a[i].count;
    }
    return true;
}

static bool add_rcw_overhead(nt_heap_builder *b)
{
    nt_heap *h = b->h;
    if (b->rcw.count == 0)
        return true;
    for (uint32_t i = 0; i < h->n; i++) {
        if (!cm_map_get(&b->rcw, h->addr[i]))
            continue;
        uint64_t size = hp_size(h, i) + 1000; /* dotnet-gcdump's estimate of the RCW's memory off the GC heap */
        if (size < HP_SIZE_BIG)
            h->size[i] = (uint32_t)size;
        else if (big_size(h, i, size))
            h->size[i] = HP_SIZE_BIG;
        else
            return false;
    }
    return true;
}

static void set_complete(nt_heap *h, nt_status status)
{
    nt_heap_stats *s = &h->stats;
    s->objects = h->n;
    s->roots = h->nroots;
    s->types = h->ntypes;
    s->total_bytes = 0;
    for (uint32_t i = 0; i < h->n; i++)
        s->total_bytes += hp_size(h, i);
    s->status = status;
    s->complete = status == NT_OK && s->gc_ended && s->events_dropped == 0 && s->bulk_gaps == 0 &&
                  s->edges_missing == 0 && s->edges_extra == 0 && s->bad_events == 0;
    if (status == NT_OK && !s->gc_found)
        snprintf(h->message, sizeof h->message, "the stream holds no heap dump (no induced gen-2 GC with heap data)");
    else if (status == NT_OK && !s->gc_ended)
        snprintf(h->message, sizeof h->message, "the stream ends inside the heap dump's GC: the graph is incomplete");
    else if (status == NT_OK && !s->complete)
        snprintf(h->message, sizeof h->message,
                 "the graph is incomplete: %llu events lost, %llu bulk events missing, %llu references missing, "
                 "%llu extra, %llu damaged events",
                 (unsigned long long)s->events_dropped, (unsigned long long)s->bulk_gaps,
                 (unsigned long long)s->edges_missing, (unsigned long long)s->edges_extra,
                 (unsigned long long)s->bad_events);
}

nt_status nt_heap_builder_finish(nt_heap_builder *b, const nt_parser *parser, nt_status stream_status,
                                 nt_heap **out)
{
    if (!b || !out) {
        nt_heap_builder_free(b);
        return NT_ERR_INVALID_ARG;
    }
    *out = NULL;
    nt_heap *h = b->h;
    if (parser) {
        nt_parser_stats ps;
        nt_parser_stats_get(parser, &ps);
        h->stats.events_dropped = ps.events_dropped;
    }
    h->stats.gc_ended = b->state == HB_DONE;
    nt_status status = b->status != NT_OK ? b->status : stream_status;
    if (b->status == NT_ERR_NOMEM) {
        nt_heap_builder_free(b);
        return NT_ERR_NOMEM;
    }
    uint64_t *sorted = NULL;
    addr_index x = { 0 };
    bool ok = sort_addresses(h, &sorted) && index_make(&h->mem, &x, sorted, h->by_addr, h->n) && resolve_edges(b, &x);
    if (ok)
        resolve_roots(h, &x);
    index_free(&h->mem, &x);
    if (sorted != h->addr)
        cm_mem_free(&h->mem, sorted, (size_t)h->n * sizeof *sorted);
    ok = ok && hp_types_finish(h, &b->module_names, b->lim.max_name_bytes) && name_static_roots(b) && trim(b) &&
         add_rcw_overhead(b);
    if (!ok) {
        cm_mem_free(&h->mem, h->by_addr, (size_t)h->n * sizeof *h->by_addr);
        cm_mem_free(&h->mem, h->edges, (size_t)h->stats.edges * sizeof *h->edges);
        h->by_addr = NULL;
        h->edges = NULL;
        nt_heap_builder_free(b);
        return NT_ERR_NOMEM;
    }
    if (b->status != NT_OK)
        snprintf(h->message, sizeof h->message, "%s", b->message);
    set_complete(h, status);
    h->stats.memory = h->mem.used;
    h->stats.memory_peak = h->mem.peak + b->mem.peak;
    b->h = NULL;
    nt_heap_builder_free(b);
    *out = h;
    return NT_OK;
}
