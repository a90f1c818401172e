/* The dominator tree as flame-graph input: folded stacks, speedscope and
 * pprof.  The tree is first folded into a tree of frames (a trie keyed by
 * parent frame node and type): a frame is the root kind at the top, then a
 * type; a run of dominators of one type is one frame; past max_depth an
 * object is counted in the frame at that depth.  Each trie node's weight is
 * the shallow bytes (or count) of the objects it holds, so a frame's total
 * is what it retains. */
#include "common/abi.h"
#include "export/export_pb.h"
#include "export/flame_html.h"
#include "heap/heap_internal.h"

#include <string.h>

/* Frame ids: root kinds first, then "[several roots]", then one per type (its canonical index). */
#define FRAME_SEVERAL NT_HEAP_ROOT_KIND_COUNT_
#define FRAME_TYPE0 (NT_HEAP_ROOT_KIND_COUNT_ + 1)

typedef struct fnode {
    uint32_t parent;   /* trie node; 0 is the top, above every root kind */
    uint32_t frame;
    uint32_t depth;
    uint64_t self;
} fnode;

typedef struct flame {
    cm_mem *mem;
    fnode *nodes;
    size_t count, cap;
    cm_map child;      /* (parent << 32 | frame) -> node */
    uint32_t nframes;
    uint32_t *ids;     /* room for one node's path, root first (node_path) */
    size_t idn;
    uint64_t total;    /* the weights of every node */
} flame;

static bool flame_child(flame *f, uint32_t parent, uint32_t frame, uint32_t *out)
{
    bool added;
    uint64_t *v = cm_map_put(f->mem, &f->child, ((uint64_t)parent << 32) | frame, &added);
    if (!v)
        return false;
    if (added) {
        if (!cm_mem_reserve(f->mem, (void **)&f->nodes, &f->cap, f->count + 1, sizeof *f->nodes))
            return false;
        f->nodes[f->count] = (fnode){ parent, frame, f->nodes[parent].depth + 1, 0 };
        *v = f->count++;
    }
    *out = (uint32_t)*v;
    return true;
}

/* The frame above an object the virtual root dominates. */
static uint32_t top_frame(const nt_heap *h, const uint8_t *kind, uint32_t obj)
{
    if (h->bfs_root[obj] == NT_HEAP_NONE)
        return NT_HEAP_ROOT_UNREACHABLE;
    return kind[obj] != 0xff ? kind[obj] : FRAME_SEVERAL;
}

/* Walk the dominator tree depth first, folding it into f. */
static bool flame_walk(nt_heap *h, flame *f, const nt_heap_export_options *opt, const uint8_t *kind,
                       const uint32_t *start, const uint32_t *child)
{
    typedef struct { uint32_t obj, pos, node; } frame;
    frame *stack = cm_mem_alloc(f->mem, ((size_t)h->n + 1) * sizeof *stack);
    if (!stack)
        return false;
    uint32_t max_depth = opt && opt->max_depth ? opt->max_depth : NT_HEAP_DEFAULT_MAX_DEPTH;
    bool ok = true;
    size_t top = 0;
    stack[top++] = (frame){ h->n, start[h->n], 0 };
    while (top && ok) {
        frame *fr = &stack[top - 1];
        if (fr->pos >= start[fr->obj + 1]) {
            top--;
            continue;
        }
        uint32_t c = child[fr->pos++], parent = fr->node, node;
        if (fr->obj == h->n)
            ok = flame_child(f, 0, top_frame(h, kind, c), &parent);
        uint32_t tf = FRAME_TYPE0 + h->types[h->type[c]].canon;
        if (!ok)
            break;
        if (f->nodes[parent].frame == tf || f->nodes[parent].depth >= max_depth)
            node = parent;
        else if (!flame_child(f, parent, tf, &node)) {
            ok = false;
            break;
        }
        f->nodes[node].self += opt && opt->by_count ? 1 : hp_size(h, c);
        stack[top++] = (frame){ c, start[c], node };
    }
    cm_mem_free(f->mem, stack, ((size_t)h->n + 1) * sizeof *stack);
    return ok;
}

/* Build the frame tree of h. */
static nt_status flame_build(nt_heap *h, const nt_heap_export_options *opt, flame *f)
{
    memset(f, 0, sizeof *f);
    f->mem = &h->mem;
    f->nframes = FRAME_TYPE0 + (uint32_t)h->ntypes;
    nt_status s = hp_bfs(h);
    uint32_t *start = NULL, *child = NULL;
    if (s == NT_OK)
        s = hp_dom_children(h, &start, &child);
    if (s != NT_OK)
        return s;
    size_t n = h->n ? h->n : 1;
    uint8_t *kind = cm_mem_alloc(f->mem, n);
    bool ok = kind && cm_mem_reserve(f->mem, (void **)&f->nodes, &f->cap, 1, sizeof *f->nodes);
    if (ok) {
        memset(kind, 0xff, n);
        for (size_t r = h->nroots; r-- > 0;) /* the first record of an object names its kind */
            kind[h->roots[r].obj] = (uint8_t)h->roots[r].kind;
        f->nodes[0] = (fnode){ 0, UINT32_MAX, 0, 0 };
        f->count = 1;
        ok = flame_walk(h, f, opt, kind, start, child);
    }
    cm_mem_free(f->mem, kind, n);
    cm_mem_free(&h->mem, start, ((size_t)h->n + 2) * sizeof *start);
    cm_mem_free(&h->mem, child, n * sizeof *child);
    return ok ? NT_OK : NT_ERR_NOMEM;
}


static const char *frame_name(const nt_heap *h, uint32_t frame)
{
    if (frame < NT_HEAP_ROOT_KIND_COUNT_)
        return nt_heap_root_kind_name((nt_heap_root_kind)frame);
    if (frame == FRAME_SEVERAL)
        return "[several roots]";
    return hp_name(h, h->types[frame - FRAME_TYPE0].name);
}

/* The frames of node k, root first, into ids (room for its depth). */
static uint32_t node_path(const flame *f, uint32_t k, uint32_t *ids)
{
    uint32_t d = f->nodes[k].depth;
    for (uint32_t i = d; i > 0; i--) {
        ids[i - 1] = f->nodes[k].frame;
        k = f->nodes[k].parent;
    }
    return d;
}

static uint32_t max_depth_of(const flame *f)
{
    uint32_t d = 0;
    for (size_t k = 0; k < f->count; k++)
        if (f->nodes[k].depth > d)
            d = f->nodes[k].depth;
    return d;
}

static void flame_free(flame *f)
{
    cm_mem_free(f->mem, f->ids, f->idn * sizeof *f->ids);
    cm_mem_free(f->mem, f->nodes, f->cap * sizeof *f->nodes);
    cm_map_free(f->mem, &f->child);
}

/* What every export of h starts with: its options read (eo), the frame
 * tree built, room for the deepest node's path and the total weight. */
static nt_status flame_open(nt_heap *h, const nt_heap_export_options *given, nt_sink_fn w,
                            nt_heap_export_options *eo, flame *f)
{
    memset(f, 0, sizeof *f);
    if (!h || !w || !ABI_IN(nt_heap_export_options, eo, given))
        return NT_ERR_INVALID_ARG;
    nt_status s = flame_build(h, eo, f);
    if (s == NT_OK) {
        f->idn = (size_t)max_depth_of(f) + 1;
        f->ids = cm_mem_alloc(f->mem, f->idn * sizeof *f->ids);
        if (!f->ids) {
            f->idn = 0;
            s = NT_ERR_NOMEM;
        }
    }
    if (s != NT_OK) {
        flame_free(f);
        return s;
    }
    for (size_t k = 1; k < f->count; k++)
        f->total += f->nodes[k].self;
    return NT_OK;
}

nt_status nt_heap_export_folded(nt_heap *h, const nt_heap_export_options *given, nt_sink_fn w, void *user)
{
    nt_heap_export_options eo;
    flame f;
    nt_status s = flame_open(h, given, w, &eo, &f);
    if (s != NT_OK)
        return s;
    uint32_t *ids = f.ids;
    ex_out o;
    ex_out_init(&o, w, user);
    for (size_t k = 1; k < f.count; k++) {
        if (!f.nodes[k].self)
            continue;
        uint32_t d = node_path(&f, (uint32_t)k, ids);
        for (uint32_t i = 0; i < d; i++) {
            if (i)
                ex_out_bytes(&o, ";", 1);
            ex_folded_frame(&o, frame_name(h, ids[i]));
        }
        ex_out_bytes(&o, " ", 1);
        ex_out_u64(&o, f.nodes[k].self);
        ex_out_bytes(&o, "\n", 1);
    }
    flame_free(&f);
    return ex_out_flush(&o);
}

nt_status nt_heap_export_speedscope(nt_heap *h, const nt_heap_export_options *given, nt_sink_fn w, void *user)
{
    nt_heap_export_options eo;
    flame f;
    nt_status s = flame_open(h, given, w, &eo, &f);
    if (s != NT_OK)
        return s;
    uint32_t *ids = f.ids;
    ex_out o;
    ex_out_init(&o, w, user);
    ex_out_str(&o, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n\"shared\":{\"frames\":[");
    for (uint32_t i = 0; i < f.nframes; i++) {
        ex_out_str(&o, i ? ",\n{\"name\":" : "\n{\"name\":");
        ex_out_json(&o, frame_name(h, i));
        ex_out_bytes(&o, "}", 1);
    }
    bool by_count = eo.by_count;
    ex_out_str(&o, "]},\n\"profiles\":[{\"type\":\"sampled\",\"name\":\"heap (dominator tree)\",\"unit\":\"");
    ex_out_str(&o, by_count ? "none" : "bytes");
    ex_out_str(&o, "\",\"startValue\":0,\"endValue\":");
    ex_out_u64(&o, f.total);
    ex_out_str(&o, ",\n\"samples\":[");
    bool first = true;
    for (size_t k = 1; k < f.count; k++) {
        if (!f.nodes[k].self)
            continue;
        uint32_t d = node_path(&f, (uint32_t)k, ids);
        ex_out_str(&o, first ? "\n[" : ",\n[");
        for (uint32_t i = 0; i < d; i++) {
            if (i)
                ex_out_bytes(&o, ",", 1);
            ex_out_u64(&o, ids[i]);
        }
        ex_out_bytes(&o, "]", 1);
        first = false;
    }
    ex_out_str(&o, "],\n\"weights\":[");
    first = true;
    for (size_t k = 1; k < f.count; k++) {
        if (!f.nodes[k].self)
            continue;
        if (!first)
            ex_out_bytes(&o, ",", 1);
        ex_out_u64(&o, f.nodes[k].self);
        first = false;
    }
    ex_out_str(&o, "]}],\n\"name\":\"heap\",\"activeProfileIndex\":0,\"exporter\":\"libnettrace ");
    ex_out_str(&o, NT_VERSION_STRING);
    ex_out_str(&o, "\"}\n");
    flame_free(&f);
    return ex_out_flush(&o);
}

/* pprof: one function and one location per frame (location id = frame + 1),
 * one sample per frame node with a weight, its locations leaf first. */
nt_status nt_heap_export_pprof(nt_heap *h, const nt_heap_export_options *given, nt_sink_fn w, void *user)
{
    nt_heap_export_options eo;
    flame f;
    nt_status s = flame_open(h, given, w, &eo, &f);
    if (s != NT_OK)
        return s;
    uint32_t *ids = f.ids;
    uint32_t *self = cm_mem_alloc(f.mem, (size_t)f.nframes * sizeof *self);
    if (!self) {
        flame_free(&f);
        return NT_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < f.nframes; i++)
        self[i] = i;
    ex_out o;
    ex_out_init(&o, w, user);
    ex_gzip g;
    nt_status st = ex_gzip_begin(&g, &o);
    if (st == NT_OK) {
        bool by_count = eo.by_count;
        /* strings: "", the sample type and unit, then the frame names from index 3 */
        pb_emit_string(&g, "", 0);
        const char *type = by_count ? "objects" : "retained_space", *unit = by_count ? "count" : "bytes";
        pb_emit_string(&g, type, strlen(type));
        pb_emit_string(&g, unit, strlen(unit));
        pb_emit_value_type(&g, 1, 1, 2);
        for (uint32_t i = 0; i < f.nframes; i++) {
            const char *name = frame_name(h, i);
            pb_emit_string(&g, name, strlen(name));
            pbuf fn = { .n = 0 }, loc = { .n = 0 }, line = { .n = 0 };
            pb_uint(&fn, 1, i + 1u);
            pb_uint(&fn, 2, i + 3u);
            pb_uint(&fn, 3, i + 3u);
            pb_emit_msg(&g, 5, &fn);
            pb_uint(&line, 1, i + 1u);
            pb_uint(&loc, 1, i + 1u);
            pb_bytes(&loc, 4, line.d, line.n);
            pb_emit_msg(&g, 4, &loc);
        }
        for (size_t k = 1; k < f.count; k++) {
            if (!f.nodes[k].self)
                continue;
            uint32_t d = node_path(&f, (uint32_t)k, ids);
            for (uint32_t i = 0; i < d / 2; i++) { /* leaf first */
                uint32_t x = ids[i];
                ids[i] = ids[d - 1 - i];
                ids[d - 1 - i] = x;
            }
            int64_t v = (int64_t)f.nodes[k].self;
            pb_emit_sample(&g, ids, self, d, &v, 1, NULL, 0);
        }
        st = ex_gzip_close(&g, NT_OK);
    }
    cm_mem_free(f.mem, self, (size_t)f.nframes * sizeof *self);
    flame_free(&f);
    return st;
}

/* The HTML page: the frames as names, one group, one stack per frame node with a weight. */
nt_status nt_heap_export_html(nt_heap *h, const nt_heap_export_options *given, nt_sink_fn w, void *user)
{
    nt_heap_export_options eo;
    flame f;
    nt_status s = flame_open(h, given, w, &eo, &f);
    if (s != NT_OK)
        return s;
    uint32_t *ids = f.ids;
    ex_out o;
    ex_out_init(&o, w, user);
    ex_flame_open(&o, "heap: what each type retains (dominator tree)", eo.by_count ? "objects" : "bytes");
    for (uint32_t i = 0; i < f.nframes; i++)
        ex_flame_name(&o, i == 0, frame_name(h, i));
    ex_flame_groups(&o);
    ex_flame_group(&o, true, "heap", (int64_t)f.total);
    ex_flame_stacks(&o);
    bool first = true;
    for (size_t k = 1; k < f.count; k++) {
        if (!f.nodes[k].self)
            continue;
        uint32_t d = node_path(&f, (uint32_t)k, ids);
        ex_flame_stack_begin(&o, first, 0, (int64_t)f.nodes[k].self);
        for (uint32_t i = 0; i < d; i++)
            ex_flame_stack_frame(&o, ids[i]);
        ex_flame_stack_end(&o);
        first = false;
    }
    ex_flame_close(&o);
    flame_free(&f);
    return ex_out_flush(&o);
}
