/* The runtime's heap-dump events, decoded from their payloads into the
 * builder.  Layouts (packed, little-endian; P is the trace's pointer size),
 * from the runtime's ClrEtwAll.man as src/parse/clr_event_table.c holds them
 * (dotnet/runtime 68813511) and as PerfView's DotNetHeapDumpGraphReader
 * (dotnet/diagnostics 3c9f99e) reads them:
 *
 *   GCStart (1) V1+    Count u32, Depth u32, Reason u32, Type u32, ...
 *   GCEnd (2) V1       Count u32, Depth u32, ...
 *   BulkType (15)      Count u32, ClrInstanceID u16, then Count times: TypeID u64, ModuleID u64,
 *                      TypeNameID u32, Flags u32, CorElementType u8, Name UTF-16z,
 *                      TypeParameterCount u32, TypeParameters u64[TypeParameterCount]
 *   GCBulkRootEdge (16)         Index u32, Count u32, ClrInstanceID u16, then Count times:
 *                               RootedNodeAddress P, GCRootKind u8, GCRootFlag u32, GCRootID P
 *   GCBulkRootConditionalWeakTableElementEdge (17)  Index, Count, ClrInstanceID, then: GCKeyNodeID P,
 *                               GCValueNodeID P, GCRootID P
 *   GCBulkNode (18)    Index u32, Count u32, ClrInstanceID u16, then: Address P, Size u64, TypeID u64,
 *                      EdgeCount u64
 *   GCBulkEdge (19)    Index u32, Count u32, ClrInstanceID u16, then: Value P, ReferencingFieldID u32
 *   GCBulkRootCCW (36) Count u32, ClrInstanceID u16, then: GCRootID u64, ObjectID u64, TypeID u64,
 *                      IUnknown u64, RefCount u32, PeggedRefCount u32, Flags u32
 *   GCBulkRCW (37)     Count u32, ClrInstanceID u16, then: ObjectID u64, TypeID u64, IUnknown u64,
 *                      VTable u64, RefCount u32, Flags u32
 *   GCBulkRootStaticVar (38)    Count u32, AppDomainID u64, ClrInstanceID u16, then: GCRootID u64,
 *                               ObjectID u64, TypeID u64, Flags u32, FieldName UTF-16z
 *
 * An object's EdgeCount references are the next ones of the GCBulkEdge
 * sequence.  A payload shorter than its Count says keeps the whole values
 * it holds and is counted as damaged. */
#include "heap/heap_build.h"
#include "common/cursor.h"
#include "common/utf16.h"

#include <string.h>

enum {
    EV_GC_START = 1, EV_GC_END = 2, EV_BULK_TYPE = 15, EV_ROOT_EDGE = 16, EV_ROOT_CWT = 17, EV_NODE = 18,
    EV_EDGE = 19, EV_ROOT_CCW = 36, EV_RCW = 37, EV_ROOT_STATIC = 38
};

/* GCRootKind, GCRootFlag and the static-variable flag, from the manifest's maps. */
enum { ROOT_KIND_STACK = 0, ROOT_KIND_FINALIZER = 1, ROOT_KIND_HANDLE = 2 };
enum { ROOT_FLAG_PINNING = 0x1, ROOT_FLAG_WEAK = 0x2, ROOT_FLAG_REFCOUNTED = 0x8 };
enum { STATIC_THREAD_LOCAL = 0x1 };
/* GCStart: Reason Induced, Type NonConcurrentGC. */
enum { GC_REASON_INDUCED = 1, GC_TYPE_NONCONCURRENT = 0 };

static bool read_ptr(cm_cursor *c, uint32_t ps, uint64_t *v)
{
    if (ps == 4) {
        uint32_t x;
        if (!cm_cur_u32(c, &x))
            return false;
        *v = x;
        return true;
    }
    return cm_cur_u64(c, v);
}

/* A UTF-16z string at c as UTF-8 in buf (room for cap bytes, at least 4 per unit + 1 is safe); false when unterminated. */
static bool read_name(cm_cursor *c, char *buf, size_t cap, size_t *len)
{
    const uint8_t *start;
    size_t units;
    if (!cm_utf16z_scan(c, &start, &units))
        return false;
    if (cm_utf8_bound(units) > cap)
        units = (cap - 1) / 3; /* a name over the scratch is cut, never overrun */
    *len = cm_utf16_to_utf8(start, units, buf);
    return true;
}

/* Index, Count and ClrInstanceID of the node, edge and root-edge events. */
static bool bulk_header(cm_cursor *c, uint32_t *index, uint32_t *count)
{
    uint16_t clr;
    return cm_cur_u32(c, index) && cm_cur_u32(c, count) && cm_cur_u16(c, &clr);
}

/* A gap in an Index sequence counts the events missing from it. */
static void check_sequence(nt_heap_builder *b, uint32_t *next, uint32_t index)
{
    if (index > *next)
        b->h->stats.bulk_gaps += index - *next;
    *next = index + 1;
}

static int on_nodes(nt_heap_builder *b, const nt_event *ev)
{
    cm_cursor c = cm_cursor_make(ev->payload, ev->payload_size);
    uint32_t index, count;
    if (!bulk_header(&c, &index, &count)) {
        hb_bad_event(b, ev->offset);
        return 0;
    }
    check_sequence(b, &b->next_node_block, index);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t addr, size, type, edges;
        if (!read_ptr(&c, b->ptr_size, &addr) || !cm_cur_u64(&c, &size) || !cm_cur_u64(&c, &type) ||
            !cm_cur_u64(&c, &edges)) {
            hb_bad_event(b, ev->offset);
            return 0;
        }
        if (hb_add_object(b, addr, size, type, edges, ev->offset))
            return 1;
    }
    return 0;
}

static int on_edges(nt_heap_builder *b, const nt_event *ev)
{
    cm_cursor c = cm_cursor_make(ev->payload, ev->payload_size);
    uint32_t index, count;
    if (!bulk_header(&c, &index, &count)) {
        hb_bad_event(b, ev->offset);
        return 0;
    }
    check_sequence(b, &b->next_edge_block, index);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t target;
        uint32_t field;
        if (!read_ptr(&c, b->ptr_size, &target) || !cm_cur_u32(&c, &field)) {
            hb_bad_event(b, ev->offset);
            return 0;
        }
        if (hb_add_edge(b, target, ev->offset))
            return 1;
    }
    return 0;
}

/* The group dotnet-gcdump files a root under, from its kind and flags. */
static nt_heap_root_kind root_kind(uint8_t kind, uint32_t flags)
{
    if (kind == ROOT_KIND_STACK)
        return NT_HEAP_ROOT_STACK;
    if (flags & ROOT_FLAG_REFCOUNTED)
        return NT_HEAP_ROOT_COM;
    if (kind == ROOT_KIND_FINALIZER)
        return NT_HEAP_ROOT_FINALIZER;
    if (kind == ROOT_KIND_HANDLE)
        return flags == ROOT_FLAG_PINNING ? NT_HEAP_ROOT_PINNING_HANDLE : NT_HEAP_ROOT_STRONG_HANDLE;
    return NT_HEAP_ROOT_OTHER_HANDLE;
}

static int on_root_edges(nt_heap_builder *b, const nt_event *ev)
{
    cm_cursor c = cm_cursor_make(ev->payload, ev->payload_size);
    uint32_t index, count;
    if (!bulk_header(&c, &index, &count)) {
        hb_bad_event(b, ev->offset);
        return 0;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint64_t addr, id;
        uint8_t kind;
        uint32_t flags;
        if (!read_ptr(&c, b->ptr_size, &addr) || !cm_cur_u8(&c, &kind) || !cm_cur_u32(&c, &flags) ||
            !read_ptr(&c, b->ptr_size, &id)) {
            hb_bad_event(b, ev->offset);
            return 0;
        }
        if (flags & ROOT_FLAG_WEAK) { /* a weak reference keeps nothing alive */
            b->h->stats.weak_roots++;
            continue;
        }
        if (hb_add_root(b, addr, root_kind(kind, flags), NT_HEAP_NONE, "", 0, ev->offset))
            return 1;
    }
    return 0;
}

static int on_cwt(nt_heap_builder *b, const nt_event *ev)
{
    cm_cursor c = cm_cursor_make(ev->payload, ev->payload_size);
    uint32_t index, count;
    if (!bulk_header(&c, &index, &count)) {
        hb_bad_event(b, ev->offset);
        return 0;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint64_t key, value, id;
        if (!read_ptr(&c, b->ptr_size, &key) || !read_ptr(&c, b->ptr_size, &value) ||
            !read_ptr(&c, b->ptr_size, &id)) {
            hb_bad_event(b, ev->offset);
            return 0;
        }
        /* The value lives while its key does; like dotnet-gcdump, a live key makes the value a root. */
        if (key != 0 && hb_add_root(b, value, NT_HEAP_ROOT_DEPENDENT_HANDLE, NT_HEAP_NONE, "", 0, ev->offset))
            return 1;
    }
    return 0;
}

static int on_statics(nt_heap_builder *b, const nt_event *ev)
{
    cm_cursor c = cm_cursor_make(ev->payload, ev->payload_size);
    uint32_t count;
    uint64_t domain;
    uint16_t clr;
    if (!cm_cur_u32(&c, &count) || !cm_cur_u64(&c, &domain) || !cm_cur_u16(&c, &clr)) {
        hb_bad_event(b, ev->offset);
        return 0;
    }
    char name[768];
    for (uint32_t i = 0; i < count; i++) {
        uint64_t id, obj, type_id;
        uint32_t flags, t;
        size_t len;
        if (!cm_cur_u64(&c, &id) || !cm_cur_u64(&c, &obj) || !cm_cur_u64(&c, &type_id) ||
            !cm_cur_u32(&c, &flags) || !read_name(&c, name, sizeof name, &len)) {
            hb_bad_event(b, ev->offset);
            return 0;
        }
        if (!hb_type_index(b, type_id, ev->offset, &t))
            return 1;
        nt_heap_root_kind k = (flags & STATIC_THREAD_LOCAL) ? NT_HEAP_ROOT_THREAD_STATIC : NT_HEAP_ROOT_STATIC;
        if (hb_add_root(b, obj, k, t, name, len, ev->offset))
            return 1;
    }
    return 0;
}

static int on_ccws(nt_heap_builder *b, const nt_event *ev)
{
    cm_cursor c = cm_cursor_make(ev->payload, ev->payload_size);
    uint32_t count;
    uint16_t clr;
    if (!cm_cur_u32(&c, &count) || !cm_cur_u16(&c, &clr)) {
        hb_bad_event(b, ev->offset);
        return 0;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint64_t id, obj, type_id, iunknown;
        uint32_t ref, pegged, flags;
        if (!cm_cur_u64(&c, &id) || !cm_cur_u64(&c, &obj) || !cm_cur_u64(&c, &type_id) ||
            !cm_cur_u64(&c, &iunknown) || !cm_cur_u32(&c, &ref) || !cm_cur_u32(&c, &pegged) ||
            !cm_cur_u32(&c, &flags)) {
            hb_bad_event(b, ev->offset);
            return 0;
        }
        if (iunknown != 0 && hb_add_root(b, obj, NT_HEAP_ROOT_CCW, NT_HEAP_NONE, "", 0, ev->offset))
            return 1;
    }
    return 0;
}

static int on_rcws(nt_heap_builder *b, const nt_event *ev)
{
    cm_cursor c = cm_cursor_make(ev->payload, ev->payload_size);
    uint32_t count;
    uint16_t clr;
    if (!cm_cur_u32(&c, &count) || !cm_cur_u16(&c, &clr)) {
        hb_bad_event(b, ev->offset);
        return 0;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint64_t obj, type_id, iunknown, vtable;
        uint32_t ref, flags;
        if (!cm_cur_u64(&c, &obj) || !cm_cur_u64(&c, &type_id) || !cm_cur_u64(&c, &iunknown) ||
            !cm_cur_u64(&c, &vtable) || !cm_cur_u32(&c, &ref) || !cm_cur_u32(&c, &flags)) {
            hb_bad_event(b, ev->offset);
            return 0;
        }
        if (hb_add_rcw(b, obj))
            return 1;
    }
    return 0;
}

static int on_types(nt_heap_builder *b, const nt_event *ev)
{
    cm_cursor c = cm_cursor_make(ev->payload, ev->payload_size);
    uint32_t count;
    uint16_t clr;
    if (!cm_cur_u32(&c, &count) || !cm_cur_u16(&c, &clr)) {
        hb_bad_event(b, ev->offset);
        return 0;
    }
    char name[3 * 1024 + 1];
    for (uint32_t i = 0; i < count; i++) {
        uint64_t type_id, module_id;
        uint32_t name_id, flags, params;
        uint8_t elem;
        size_t len;
        if (!cm_cur_u64(&c, &type_id) || !cm_cur_u64(&c, &module_id) || !cm_cur_u32(&c, &name_id) ||
            !cm_cur_u32(&c, &flags) || !cm_cur_u8(&c, &elem) || !read_name(&c, name, sizeof name, &len) ||
            !cm_cur_u32(&c, &params) || params > cm_cur_left(&c) / 8 || !cm_cur_skip(&c, (size_t)params * 8)) {
            hb_bad_event(b, ev->offset);
            return 0;
        }
        if (hb_add_type(b, type_id, module_id, name_id, flags, name, len, ev->offset))
            return 1;
    }
    return 0;
}

/* The heap dump's GC: the first induced, non-concurrent GC of depth 2 whose
 * end follows with heap data (a GC without nodes is passed over, as
 * dotnet-gcdump's reader does). */
static void on_gc_start(nt_heap_builder *b, const nt_event *ev)
{
    cm_cursor c = cm_cursor_make(ev->payload, ev->payload_size);
    uint32_t count, depth, reason, type;
    if (b->state != HB_WAIT || ev->desc->version < 1)
        return;
    if (!cm_cur_u32(&c, &count) || !cm_cur_u32(&c, &depth) || !cm_cur_u32(&c, &reason) || !cm_cur_u32(&c, &type)) {
        hb_bad_event(b, ev->offset);
        return;
    }
    if (depth < 2 || type != GC_TYPE_NONCONCURRENT || reason != GC_REASON_INDUCED)
        return;
    b->state = HB_IN;
    b->h->stats.gc_found = true;
    hb_gc_begin(b, count);
}

static void on_gc_end(nt_heap_builder *b, const nt_event *ev)
{
    cm_cursor c = cm_cursor_make(ev->payload, ev->payload_size);
    uint32_t count;
    if (b->state != HB_IN)
        return;
    if (!cm_cur_u32(&c, &count)) {
        hb_bad_event(b, ev->offset);
        return;
    }
    if (count != b->h->stats.gc_number)
        return;
    if (b->h->n == 0 && b->nedges == 0) { /* no heap walk in this GC: wait for the next */
        b->state = HB_WAIT;
        b->h->stats.gc_found = false;
        return;
    }
    b->state = HB_DONE;
}

static int on_event(void *user, const nt_event *ev)
{
    nt_heap_builder *b = user;
    if (!ev->desc || !ev->desc->provider || strcmp(ev->desc->provider, NT_PROVIDER_RUNTIME) != 0)
        return 0;
    uint32_t id = ev->desc->event_id;
    if (id == EV_BULK_TYPE) /* types are named whenever they come, also outside the GC */
        return on_types(b, ev);
    if (id == EV_GC_START)
        on_gc_start(b, ev);
    else if (id == EV_GC_END)
        on_gc_end(b, ev);
    if (b->state != HB_IN)
        return 0;
    switch (id) {
    case EV_NODE: return on_nodes(b, ev);
    case EV_EDGE: return on_edges(b, ev);
    case EV_ROOT_EDGE: return on_root_edges(b, ev);
    case EV_ROOT_CWT: return on_cwt(b, ev);
    case EV_ROOT_STATIC: return on_statics(b, ev);
    case EV_ROOT_CCW: return on_ccws(b, ev);
    case EV_RCW: return on_rcws(b, ev);
    default: return 0;
    }
}

static int on_trace(void *user, const nt_trace_info *info)
{
    nt_heap_builder *b = user;
    if (info->pointer_size == 4 || info->pointer_size == 8)
        b->ptr_size = info->pointer_size;
    return 0;
}

/* Modules name the types' modules by file name, as dotnet-gcdump report prints them. */
static int on_module(void *user, const nt_module *m)
{
    nt_heap_builder *b = user;
    if (cm_map_get(&b->module_names, m->module_id))
        return 0;
    char buf[3 * 1024 + 1];
    const char *path = m->il_path;
    if (!path) {
        nt_str16 s = m->il_path16;
        if (s.count > 1024)
            s.count = 1024;
        nt_str16_utf8(s, buf, sizeof buf);
        path = buf;
    }
    const char *base = path;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\')
            base = p + 1;
    uint32_t off;
    if (!hp_names_add(&b->h->mem, &b->h->names, base, strlen(base), b->lim.max_name_bytes, &off))
        return hb_fail(b, NT_ERR_LIMIT, "the heap's names passed max_name_bytes (%u bytes)", b->lim.max_name_bytes);
    if (!cm_map_set(&b->mem, &b->module_names, m->module_id, off))
        return hb_fail(b, NT_ERR_NOMEM, "out of memory building the heap");
    return 0;
}

void nt_heap_builder_callbacks(nt_callbacks *cb)
{
    memset(cb, 0, sizeof *cb);
    cb->trace = on_trace;
    cb->event = on_event;
    cb->module = on_module;
}
