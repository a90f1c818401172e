/* corpus/fuzz/heap: small heap snapshots for the heap graph's fuzzer, one
 * shape each (tests/support/heap_writer.c writes them). */
#include "heap_writer.h"
#include "seeds.h"

#include <stdio.h>
#include <string.h>

static const hw_type seed_types[] = {
    { 0x100, 0x10, 0, "App.Node" },
    { 0x200, 0x10, 0, "System.Collections.Generic.List`1[System.String]" },
    { 0x300, 0x20, 8, "System.Int32[]" },
};

static void save(const char *dir, const char *name, hw *w)
{
    if (hw_finish(w) != NT_OK) {
        fprintf(stderr, "make_seeds heap: %s: the writer failed\n", name);
        return;
    }
    seeds_save_file(dir, name, w->out.data, w->out.len, NULL);
    hw_free(w);
}

static void start(hw *w, uint32_t format, uint32_t ptr)
{
    hw_begin(w, format, ptr);
    hw_module(w, 0x10, "/app/App.dll");
    hw_module(w, 0x20, "/dotnet/System.Private.CoreLib.dll");
}

int seeds_heap(const char *dir)
{
    hw w;
    /* a root, a cycle, a self reference, an unreachable object, a reference to no object */
    hw_node nd[] = { { 0x1000, 24, 0x100, 0, 2 }, { 0x2000, 32, 0x100, 2, 1 }, { 0x3000, 40, 0x200, 3, 1 },
                     { 0x4000, 2000, 0x300, 4, 2 } };
    uint64_t tg[] = { 0x2000, 0x3000, 0x1000, 0x2000, 0x4000, 0x9999 };
    hw_root rt[] = { { 0x1000, 0, 0 }, { 0x3000, 2, 1 }, { 0x2000, 2, 2 } };
    hw_graph g = { seed_types, 3, nd, 4, tg, 6, rt, 3 };
    start(&w, 4, 8);
    hw_snapshot(&w, &g, 2);
    save(dir, "graph-v4", &w);
    start(&w, 6, 8);
    hw_snapshot(&w, &g, 3);
    save(dir, "graph-v6", &w);
    /* 4-byte pointers */
    hw_node n4[] = { { 0x1000, 12, 0x100, 0, 1 }, { 0x2000, 12, 0x200, 1, 0 } };
    uint64_t t4[] = { 0x2000 };
    hw_root r4 = { 0x1000, 1, 0 };
    hw_graph g4 = { seed_types, 2, n4, 2, t4, 1, &r4, 1 };
    start(&w, 4, 4);
    hw_snapshot(&w, &g4, 1);
    save(dir, "graph-ptr4", &w);
    /* a list of 64 */
    hw_node nl[64];
    uint64_t tl[64];
    for (uint32_t i = 0; i < 64; i++) {
        nl[i] = (hw_node){ 0x10000 + 32ull * i, 32, 0x100, i, i + 1 < 64 };
        tl[i] = 0x10000 + 32ull * (i + 1);
    }
    hw_root rl = { 0x10000, 2, 0 };
    hw_graph gl = { seed_types, 1, nl, 64, tl, 63, &rl, 1 };
    start(&w, 4, 8);
    hw_snapshot(&w, &gl, 16);
    save(dir, "list", &w);
    /* statics, a ConditionalWeakTable value, two GCs of which the second is the dump */
    start(&w, 4, 8);
    hw_types(&w, seed_types, 3);
    hw_gc_start(&w, 1, 1, 0, 0);
    hw_gc_end(&w, 1);
    hw_gc_start(&w, 2, 2, 1, 0);
    hw_nodes(&w, nd, 4, 4);
    hw_edges(&w, tg, 5, 5);
    hw_static(&w, 0x1000, 0x200, 0, "Cache");
    hw_cwt(&w, 0x1000, 0x4000);
    hw_gc_end(&w, 2);
    save(dir, "roots", &w);
    /* damage: a lost node event, fewer references than announced, no GC end */
    start(&w, 4, 8);
    hw_gc_start(&w, 1, 2, 1, 0);
    hw_nodes(&w, nd, 2, 1);
    w.node_index++;
    hw_nodes(&w, nd + 2, 2, 1);
    hw_edges(&w, tg, 2, 1);
    save(dir, "damaged", &w);
    return 0;
}
