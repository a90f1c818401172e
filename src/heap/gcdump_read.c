/* The .gcdump reader.  The file is PerfView's FastSerialization stream of a
 * GCHeapDump whose first member is a Graphs.MemoryGraph: a type table
 * (name, size, module path), a label per node into a blob where each node
 * is compressed integers (type and size, child count, children as deltas of
 * node indexes), then each node's address.  doc/gcdump-format.md gives the
 * layout and the sources it was read from.
 *
 * The graph mixes the heap's objects with pseudo-nodes that dotnet-gcdump
 * makes for the roots ("[.NET Roots]", "[static vars]", "[static var
 * T.F]", "[local vars]", "[strong Handles]", ...): those have address 0.
 * The objects (address set, node defined) go into the heap builder of
 * heap_build.c as a NetTrace heap dump's objects do; the pseudo-nodes are
 * walked once, breadth-first from the graph's root, and their object
 * children become root records of the kind their names say.  Names arrive
 * already as dotnet-gcdump prints them; their size-class suffix is taken
 * off, since the type tables add it back from each object's size by the
 * same rule.
 *
 * Every count is checked against what the file still holds before anything
 * is allocated for it, so the time and memory are linear in the file's
 * size, and a damaged node is skipped and counted (bad_events, with the
 * first one's byte offset). */
#include "heap/gcdump_read.h"
#include "heap/heap_build.h"
#include "common/cursor.h"
#include "common/format.h" /* FastSerialization's header and tags, shared with NetTrace V4/V5 */

#include <stdio.h>
#include <string.h>


typedef struct gd_str {
    const uint8_t *p;      /* NULL: the null string */
    uint32_t len;          /* bytes */
} gd_str;

typedef struct gd_type {
    gd_str name, module;
    int32_t size;          /* the size of the type's objects whose node gives none */
    bool added;            /* handed to the builder */
} gd_type;

typedef struct gd_reader {
    const uint8_t *base;
    cm_cursor c;
    cm_mem mem;            /* the reader's own arrays */
    nt_heap_builder *b;
    gd_type *types;
    uint32_t ntypes;
    int32_t root;
    uint64_t root_at;      /* the root field's byte offset */
    uint32_t nnodes;       /* labels present */
    const uint8_t *labels; /* nnodes Int32 offsets into blob */
    const uint8_t *blob;
    uint32_t blob_len;
    const uint8_t *addrs;  /* naddrs Int64 */
    uint32_t naddrs;
    gd_str last_module;    /* the module name pool offset of the previous type, kept to share it */
    uint32_t last_module_off;
} gd_reader;

bool hp_gcdump_magic(const void *data, size_t len)
{
    const uint8_t *p = data;
    return len >= HP_GCDUMP_MAGIC_BYTES && cm_le32(p) == CM_FMT_FS_HEADER_LEN &&
           memcmp(p + 4, CM_FMT_FS_HEADER, CM_FMT_FS_HEADER_LEN) == 0;
}

static uint64_t offset(const gd_reader *r) { return (uint64_t)(r->c.p - r->base); }

/* A failure stops the build with the builder's status and message (the first one stands); false for
 * the callers' chains. */
#define fail(r, ...) (hb_fail((r)->b, __VA_ARGS__), false)

static bool truncated(gd_reader *r, const char *what)
{
    return fail(r, NT_ERR_TRUNCATED, ".gcdump: the file ends inside %s at byte %llu", what,
                (unsigned long long)offset(r));
}

static bool read_i32(gd_reader *r, int32_t *v, const char *what)
{
    uint32_t u;
    if (!cm_cur_u32(&r->c, &u))
        return truncated(r, what);
    *v = (int32_t)u;
    return true;
}

/* A count: an Int32 from 0 to max, each item taking at least min_bytes of what the file still holds. */
static bool read_count(gd_reader *r, uint32_t *n, uint32_t max, size_t min_bytes, const char *what)
{
    uint64_t at = offset(r);
    int32_t v;
    if (!read_i32(r, &v, what))
        return false;
    if (v < 0)
        return fail(r, NT_ERR_MALFORMED, ".gcdump: %s count %d is negative at byte %llu", what, v,
                    (unsigned long long)at);
    if ((uint32_t)v > max)
        return fail(r, NT_ERR_LIMIT, ".gcdump: %s count %d passes the limit (%u) at byte %llu", what, v, max,
                    (unsigned long long)at);
    if ((uint64_t)(uint32_t)v * min_bytes > cm_cur_left(&r->c)) { /* the items cannot all be there */
        r->c.p = r->c.end;
        return truncated(r, what);
    }
    *n = (uint32_t)v;
    return true;
}

/* FastSerialization's string: an Int32 count of UTF-16 units (-1: null), each
 * written as 1, 2 or 3 bytes by its lead byte (the writer's own UTF-8, a
 * surrogate taking 3 bytes of its own). */
static bool read_string(gd_reader *r, gd_str *s, const char *what)
{
    uint64_t at = offset(r);
    int32_t n;
    if (!read_i32(r, &n, what))
        return false;
    s->p = NULL;
    s->len = 0;
    if (n == -1)
        return true;
    if (n < 0)
        return fail(r, NT_ERR_MALFORMED, ".gcdump: %s has length %d at byte %llu", what, n, (unsigned long long)at);
    const uint8_t *p = r->c.p;
    size_t left = cm_cur_left(&r->c), k = 0;
    for (int32_t i = 0; i < n; i++) {
        if (k >= left)
            return truncated(r, what);
        uint8_t lead = p[k];
        k += lead < 0x80 ? 1 : lead < 0xE0 ? 2 : 3;
    }
    if (k > left)
        return truncated(r, what);
    s->p = p;
    s->len = (uint32_t)k;
    r->c.p += k;
    return true;
}

static bool read_tag(gd_reader *r, uint8_t want, const char *what)
{
    uint64_t at = offset(r);
    uint8_t t;
    if (!cm_cur_u8(&r->c, &t))
        return truncated(r, what);
    if (t != want)
        return fail(r, NT_ERR_MALFORMED, ".gcdump: tag %u where %s (tag %u) belongs at byte %llu", t, what, want,
                    (unsigned long long)at);
    return true;
}

static bool str_is(gd_str s, const char *lit) { return s.p && s.len == strlen(lit) && memcmp(s.p, lit, s.len) == 0; }

/* The start of an object: BeginObject, then its SerializationType written in
 * place (BeginObject, NullReference, version, minimum reader version, full
 * name, EndObject).  The two objects read here are the stream's first, so
 * their types are never references to earlier ones. */
static bool read_object_start(gd_reader *r, const char *type_name, int32_t *min_reader)
{
    int32_t version;
    gd_str name;
    if (!read_tag(r, CM_TAG_BEGIN_OBJECT, "an object's start") || !read_tag(r, CM_TAG_BEGIN_OBJECT, "a type's start") ||
        !read_tag(r, CM_TAG_NULL_REFERENCE, "a type's type") || !read_i32(r, &version, "a type's version") ||
        !read_i32(r, min_reader, "a type's reader version") || !read_string(r, &name, "a type's name"))
        return false;
    if (!str_is(name, type_name))
        return fail(r, NT_ERR_MALFORMED, ".gcdump: the object of type %.*s where %s belongs at byte %llu",
                    name.p ? (int)(name.len > 80 ? 80 : name.len) : 0, name.p ? (const char *)name.p : "",
                    type_name, (unsigned long long)offset(r));
    return read_tag(r, CM_TAG_END_OBJECT, "a type's end");
}

static bool read_types(gd_reader *r, uint32_t max_types)
{
    /* a type takes at least 12 bytes: two string lengths and a size */
    if (!read_count(r, &r->ntypes, max_types, 12, "the type table"))
        return false;
    r->types = cm_mem_alloc(&r->mem, (size_t)(r->ntypes ? r->ntypes : 1) * sizeof *r->types);
    if (!r->types)
        return fail(r, NT_ERR_NOMEM, "out of memory for the .gcdump's %u types", r->ntypes);
    memset(r->types, 0, (size_t)(r->ntypes ? r->ntypes : 1) * sizeof *r->types);
    for (uint32_t i = 0; i < r->ntypes; i++) {
        gd_type *t = &r->types[i];
        if (!read_string(r, &t->name, "a type's name") || !read_i32(r, &t->size, "a type's size") ||
            !read_string(r, &t->module, "a type's module"))
            return false;
    }
    return true;
}

/* The graph up to its addresses; where the file ends early, as much as it holds. */
static bool read_graph(gd_reader *r, const nt_heap_limits *lim)
{
    int32_t min_reader;
    uint64_t total;
    if (!read_object_start(r, "GCHeapDump", &min_reader) || !read_object_start(r, "Graphs.MemoryGraph", &min_reader))
        return false;
    if (min_reader >= 1) /* only .NET Native's graphs carry it (types named by module and RVA) */
        return fail(r, NT_ERR_UNSUPPORTED_VERSION,
                    ".gcdump: the graph has deferred types (reader version %d, .NET Native): not supported, at byte %llu",
                    min_reader, (unsigned long long)offset(r));
    if (!cm_cur_u64(&r->c, &total))
        return truncated(r, "the graph's total size");
    r->root_at = offset(r);
    if (!read_i32(r, &r->root, "the graph's root") || !read_types(r, lim->max_types))
        return false;
    /* nodes: the heap's objects and the roots' pseudo-nodes, so max_objects bounds both */
    if (!read_count(r, &r->nnodes, lim->max_objects, 4, "the node table"))
        return false;
    r->labels = r->c.p;
    r->c.p += (size_t)r->nnodes * 4;
    if (!read_count(r, &r->blob_len, INT32_MAX, 1, "the node blob"))
        return false;
    r->blob = r->c.p;
    r->c.p += r->blob_len;
    uint64_t at = offset(r);
    uint32_t naddrs;
    if (!read_count(r, &naddrs, lim->max_objects, 0, "the node addresses"))
        return false;
    if (naddrs > r->nnodes)
        return fail(r, NT_ERR_MALFORMED, ".gcdump: %u addresses for %u nodes at byte %llu", naddrs, r->nnodes,
                    (unsigned long long)at);
    r->addrs = r->c.p;
    size_t fit = cm_cur_left(&r->c) / 8;
    r->naddrs = naddrs <= fit ? naddrs : (uint32_t)fit; /* what was read before the end still counts */
    r->c.p += (size_t)r->naddrs * 8;
    if (r->naddrs < naddrs)
        return truncated(r, "the node addresses");
    return true;
}

/* ---- nodes ---- */

/* PerfView's compressed Int32: big-endian groups of 7 bits, the first sign-extended, at most 5 bytes. */
static bool compressed_int(const gd_reader *r, uint32_t *pos, int32_t *v)
{
    uint32_t p = *pos;
    if (p >= r->blob_len)
        return false;
    uint8_t b = r->blob[p++];
    uint32_t x = (b & 0x40) ? (0xFFFFFF80u | (b & 0x7Fu)) : (b & 0x7Fu);
    for (int k = 1; (b & 0x80) && k < 5; k++) {
        if (p >= r->blob_len)
            return false;
        b = r->blob[p++];
        x = (x << 7) + (k < 4 ? (b & 0x7Fu) : b);
        if (k == 4 && (b & 0x80))
            return false;
    }
    *v = (int32_t)x;
    *pos = p;
    return true;
}

static uint32_t label(const gd_reader *r, uint32_t i) { return cm_le32(r->labels + (size_t)i * 4); }
static uint64_t address(const gd_reader *r, uint32_t i) { return i < r->naddrs ? cm_le64(r->addrs + (size_t)i * 8) : 0; }

/* Label 0 is the graph's "undefined" node: a node referenced but never given a definition. */
static bool defined(const gd_reader *r, uint32_t i) { return label(r, i) != 0 && label(r, i) < r->blob_len; }

/* An object of the heap: defined and with an address (the pseudo-nodes have none). */
static bool is_object(const gd_reader *r, uint32_t i) { return defined(r, i) && address(r, i) != 0; }

typedef struct gd_node {
    uint32_t type;
    uint64_t size;
    int32_t nchildren;
    uint32_t children;     /* blob position of the first child delta */
} gd_node;

static bool decode_node(const gd_reader *r, uint32_t i, gd_node *n)
{
    uint32_t pos = label(r, i);
    int32_t ts, size, count;
    if (!compressed_int(r, &pos, &ts) || ts < 0 || (uint32_t)(ts >> 1) >= r->ntypes)
        return false;
    n->type = (uint32_t)(ts >> 1);
    size = r->types[n->type].size;
    if ((ts & 1) && !compressed_int(r, &pos, &size))
        return false;
    if (size < 0 || !compressed_int(r, &pos, &count) || count < 0 || (uint32_t)count > r->blob_len - pos)
        return false;
    n->size = (uint64_t)size;
    n->nchildren = count;
    n->children = pos;
    return true;
}

/* The next child's node index, or UINT32_MAX when the delta is damaged or leads outside the graph. */
static uint32_t next_child(const gd_reader *r, uint32_t i, uint32_t *pos)
{
    int32_t d;
    if (!compressed_int(r, pos, &d))
        return UINT32_MAX;
    int64_t c = (int64_t)i + d;
    return c >= 0 && c < (int64_t)r->nnodes ? (uint32_t)c : UINT32_MAX;
}

/* ---- into the builder ---- */

/* The name without the size class dotnet-gcdump appended (the type tables add it back by size). */
static gd_str base_name(gd_str s)
{
    for (unsigned cls = 1; cls < 7; cls++) {
        const char *suf = hp_size_class_suffix(cls);
        size_t n = strlen(suf);
        if (s.p && s.len > n && memcmp(s.p + s.len - n, suf, n) == 0) {
            s.len -= (uint32_t)n;
            break;
        }
    }
    return s;
}

/* The module's file name from its path, as dotnet-gcdump report prints it. */
static gd_str file_name(gd_str s)
{
    for (uint32_t k = s.len; k > 0; k--)
        if (s.p[k - 1] == '/' || s.p[k - 1] == '\\') {
            s.p += k;
            s.len -= k;
            break;
        }
    return s;
}

/* Give type t to the builder at its first object: id t, module id t + 1. */
static int add_type(gd_reader *r, uint32_t t, uint64_t off)
{
    gd_type *ty = &r->types[t];
    nt_heap_builder *b = r->b;
    if (ty->added)
        return 0;
    ty->added = true;
    gd_str mod = file_name(ty->module);
    if (mod.len) {
        uint32_t moff = r->last_module_off;
        if (!(mod.len == r->last_module.len && memcmp(mod.p, r->last_module.p, mod.len) == 0)) {
            if (!hp_names_add(&b->h->mem, &b->h->names, (const char *)mod.p, mod.len, b->lim.max_name_bytes, &moff))
                return hb_fail(b, NT_ERR_LIMIT, "the heap's names passed max_name_bytes (%u bytes) at byte %llu",
                               b->lim.max_name_bytes, (unsigned long long)off);
            r->last_module = mod;
            r->last_module_off = moff;
        }
        if (!cm_map_set(&b->mem, &b->module_names, (uint64_t)t + 1, moff))
            return hb_fail(b, NT_ERR_NOMEM, "out of memory building the heap");
    }
    gd_str name = base_name(ty->name);
    return hb_add_type(b, t, mod.len ? (uint64_t)t + 1 : 0, 0, HP_TYPE_DISPLAY_NAME, name.p ? (const char *)name.p : "",
                       name.len, off);
}

/* Each object with its references, in node order.  A damaged node is skipped and counted.  Honest nodes
 * do not share bytes, so their children number at most the blob's bytes: more means labels that overlap
 * (a file that would cost time and memory out of proportion to its size), and the read stops there. */
static int add_objects(gd_reader *r)
{
    uint64_t blob_at = (uint64_t)(r->blob - r->base), budget = r->blob_len;
    for (uint32_t i = 0; i < r->nnodes; i++) {
        if (!is_object(r, i))
            continue;
        uint64_t off = blob_at + label(r, i);
        gd_node n;
        if (!decode_node(r, i, &n)) {
            hb_bad_event(r->b, off);
            continue;
        }
        if ((uint64_t)n.nchildren > budget)
            return hb_fail(r->b, NT_ERR_MALFORMED, ".gcdump: nodes share their bytes (more references than the blob "
                           "holds) at byte %llu", (unsigned long long)off);
        budget -= (uint64_t)n.nchildren;
        if (add_type(r, n.type, off) || hb_add_object(r->b, address(r, i), n.size, n.type, (uint64_t)n.nchildren, off))
            return 1;
        uint32_t pos = n.children;
        for (int32_t k = 0; k < n.nchildren; k++) {
            uint32_t c = next_child(r, i, &pos);
            /* address 0 names no object: the builder counts the reference unresolved */
            if (hb_add_edge(r->b, c == UINT32_MAX ? 0 : address(r, c), off))
                return 1;
        }
    }
    return 0;
}

/* ---- roots: the pseudo-nodes' tree ---- */

/* The pseudo-nodes dotnet-gcdump's reader names (DotNetHeapDumpGraphReader.cs), by the root kind their
 * object children get; a pseudo-node not listed ("[.NET Roots]", "[other roots]") passes its parent's on. */
static const struct {
    const char *name;
    nt_heap_root_kind kind;
} pseudo_kinds[] = {
    { "[local vars]", NT_HEAP_ROOT_STACK },
    { "[finalizer Handles]", NT_HEAP_ROOT_FINALIZER },
    { "[strong Handles]", NT_HEAP_ROOT_STRONG_HANDLE },
    { "[pinning Handles]", NT_HEAP_ROOT_PINNING_HANDLE },
    { "[other Handles]", NT_HEAP_ROOT_OTHER_HANDLE },
    { "[COM/WinRT Objects]", NT_HEAP_ROOT_COM },
    { "[Dependent Handles]", NT_HEAP_ROOT_DEPENDENT_HANDLE },
    { "[static vars]", NT_HEAP_ROOT_STATIC },
    { "[thread static vars]", NT_HEAP_ROOT_THREAD_STATIC },
};

static const char STATIC_VAR[] = "[static var ", CCW[] = "[CCW ";

static bool starts(gd_str s, const char *lit)
{
    size_t n = strlen(lit);
    return s.p && s.len >= n && memcmp(s.p, lit, n) == 0;
}

/* The kind a pseudo-node named name gives its objects, under a parent giving `parent`; a static
 * variable's node also names the root ("Type.Field"). */
static nt_heap_root_kind pseudo_kind(gd_str name, nt_heap_root_kind parent, gd_str *root_name)
{
    root_name->p = NULL;
    root_name->len = 0;
    for (size_t k = 0; k < sizeof pseudo_kinds / sizeof pseudo_kinds[0]; k++)
        if (str_is(name, pseudo_kinds[k].name))
            return pseudo_kinds[k].kind;
    if (starts(name, STATIC_VAR) && name.p[name.len - 1] == ']') {
        root_name->p = name.p + sizeof STATIC_VAR - 1;
        root_name->len = name.len - (uint32_t)(sizeof STATIC_VAR - 1) - 1;
        return parent == NT_HEAP_ROOT_THREAD_STATIC ? parent : NT_HEAP_ROOT_STATIC;
    }
    if (starts(name, CCW))
        return NT_HEAP_ROOT_CCW;
    return parent;
}

typedef struct gd_walk {
    uint32_t *queue;
    uint8_t *kind;         /* per queue entry: the kind its parent gives */
    uint8_t *seen;         /* a bit per node */
    uint32_t head, tail;
    uint64_t budget;       /* children the pseudo-nodes may still have (at most the blob's bytes) */
} gd_walk;

/* One pseudo-node's children: objects become roots, pseudo-nodes are queued. */
static int visit(gd_reader *r, gd_walk *w, uint32_t i, nt_heap_root_kind parent)
{
    uint64_t off = (uint64_t)(r->blob - r->base) + label(r, i);
    gd_node n;
    if (!decode_node(r, i, &n)) {
        hb_bad_event(r->b, off);
        return 0;
    }
    gd_str root_name;
    nt_heap_root_kind kind = pseudo_kind(r->types[n.type].name, parent, &root_name);
    if ((uint64_t)n.nchildren > w->budget)
        return hb_fail(r->b, NT_ERR_MALFORMED,
                       ".gcdump: nodes share their bytes (more references than the blob holds) at byte %llu",
                       (unsigned long long)off);
    w->budget -= (uint64_t)n.nchildren;
    uint32_t pos = n.children;
    for (int32_t k = 0; k < n.nchildren; k++) {
        uint32_t c = next_child(r, i, &pos);
        if (c == UINT32_MAX)
            continue;
        if (address(r, c) != 0) { /* an object, or one the dump never defined (the builder counts it unresolved) */
            if (hb_add_root(r->b, address(r, c), kind, NT_HEAP_NONE, root_name.p ? (const char *)root_name.p : "",
                            root_name.len, off))
                return 1;
        } else if (defined(r, c) && !(w->seen[c / 8] & (1u << (c % 8)))) {
            w->seen[c / 8] |= (uint8_t)(1u << (c % 8));
            w->queue[w->tail] = c;
            w->kind[w->tail++] = (uint8_t)kind;
        }
    }
    return 0;
}

/* Breadth-first from the graph's root over the pseudo-nodes, each once. */
static int add_roots(gd_reader *r)
{
    if (r->root < 0 || (uint32_t)r->root >= r->nnodes) {
        if (r->nnodes)
            return hb_fail(r->b, NT_ERR_MALFORMED, ".gcdump: the graph's root %d is not one of its %u nodes at byte %llu",
                           r->root, r->nnodes, (unsigned long long)r->root_at);
        return 0;
    }
    size_t n = r->nnodes;
    gd_walk w = { .budget = r->blob_len };
    w.queue = cm_mem_alloc(&r->mem, n * sizeof *w.queue);
    w.kind = cm_mem_alloc(&r->mem, n);
    w.seen = cm_mem_alloc(&r->mem, n / 8 + 1);
    int stop = 0;
    if (!w.queue || !w.kind || !w.seen) {
        stop = hb_fail(r->b, NT_ERR_NOMEM, "out of memory building the heap");
    } else {
        memset(w.seen, 0, n / 8 + 1);
        uint32_t root = (uint32_t)r->root;
        w.seen[root / 8] |= (uint8_t)(1u << (root % 8));
        if (is_object(r, root)) /* a graph whose root is an object: that object is the one root */
            stop = hb_add_root(r->b, address(r, root), NT_HEAP_ROOT_OTHER_HANDLE, NT_HEAP_NONE, "", 0, 0);
        else if (defined(r, root)) {
            w.queue[w.tail] = root;
            w.kind[w.tail++] = NT_HEAP_ROOT_OTHER_HANDLE;
        }
        while (!stop && w.head < w.tail) {
            uint32_t at = w.head++;
            stop = visit(r, &w, w.queue[at], (nt_heap_root_kind)w.kind[at]);
        }
    }
    cm_mem_free(&r->mem, w.queue, n * sizeof *w.queue);
    cm_mem_free(&r->mem, w.kind, n);
    cm_mem_free(&r->mem, w.seen, n / 8 + 1);
    return stop;
}

static void set_msg(char *msg, size_t size, const char *text)
{
    if (msg && size)
        snprintf(msg, size, "%s", text);
}

nt_status hp_gcdump_read(const void *data, size_t len, const nt_heap_limits *limits, const nt_allocator *alloc,
                         nt_heap **out, char *msg, size_t msg_size)
{
    *out = NULL;
    if (!hp_gcdump_magic(data, len)) {
        set_msg(msg, msg_size, "not a .gcdump: no \"!FastSerialization.1\" header at byte 0");
        return NT_ERR_NOT_NETTRACE;
    }
    gd_reader r = { .base = data, .c = cm_cursor_make(data, len) };
    cm_mem_init(&r.mem, alloc);
    r.b = nt_heap_builder_new(limits, alloc);
    if (!r.b) {
        set_msg(msg, msg_size, limits ? "out of memory, or nt_heap_limits has a member this library does not know"
                                      : "out of memory");
        return NT_ERR_NOMEM;
    }
    r.c.p += HP_GCDUMP_MAGIC_BYTES;
    read_graph(&r, &r.b->lim);
    /* what the file held before any damage still becomes the heap */
    if (!add_objects(&r))
        add_roots(&r);
    r.b->state = HB_DONE;
    r.b->h->stats.gc_found = true;
    cm_mem_free(&r.mem, r.types, (size_t)(r.ntypes ? r.ntypes : 1) * sizeof *r.types);
    nt_status s = nt_heap_builder_finish(r.b, NULL, NT_OK, out);
    if (s != NT_OK) {
        set_msg(msg, msg_size, "out of memory while building the heap");
        return s;
    }
    nt_heap *h = *out;
    h->stats.format = NT_HEAP_FROM_GCDUMP;
    h->stats.memory_peak += r.mem.peak;
    set_msg(msg, msg_size, h->message);
    return h->stats.status;
}
