/* nt_heap: the graph from the runtime's heap-dump events, the GC it is
 * taken from, type names as dotnet-gcdump prints them, dominators and
 * retained sizes (against an independent algorithm), paths, diffs, the
 * flame-graph exports, and hostile input: edges to unknown objects, cycles,
 * self edges, missing and extra references, gaps, enormous counts, limits. */
#include "heap/heap_internal.h" /* hp_dominators_bounded */
#include "heap_ref.h"
#include "heap_writer.h"
#include "support.h"

#include "ltest.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hw_type types[] = {
    { 0x100, 0x10, 0, "App.Node" },
    { 0x200, 0x10, 0, "System.Collections.Generic.List`1[System.String]" },
    { 0x300, 0x20, 8, "System.Int32[]" },
    { 0x400, 0x20, 8, "" },
    { 0x500, 0x10, 0, "System.Collections.Generic.Dictionary`2[System.String,System.Int32[]]" },
};

static nt_heap *read_heap(hw *w, const nt_heap_limits *lim, nt_status *status, char *msg, size_t msg_size)
{
    cr_assert_eq(hw_finish(w), NT_OK);
    nt_heap_options o = { 0 };
    o.heap_limits = lim;
    nt_heap *h = NULL;
    *status = nt_heap_from_buffer(w->out.data, w->out.len, &o, &h, msg, msg_size);
    hw_free(w);
    cr_assert_not_null(h, "no heap: %s", msg);
    return h;
}

static nt_heap *heap_of(const hw_graph *g, size_t per, uint32_t ptr)
{
    hw w;
    cr_assert(hw_begin(&w, 4, ptr));
    hw_module(&w, 0x10, "/app/App.dll");
    hw_module(&w, 0x20, "/usr/share/dotnet/System.Private.CoreLib.dll");
    hw_snapshot(&w, g, per);
    char msg[256];
    nt_status s;
    nt_heap *h = read_heap(&w, NULL, &s, msg, sizeof msg);
    cr_assert_eq(s, NT_OK, "%s", msg);
    return h;
}

static uint32_t at(const nt_heap *h, uint64_t addr)
{
    uint32_t i;
    cr_assert(nt_heap_find(h, addr, &i), "no object at 0x%llx", (unsigned long long)addr);
    return i;
}

/* Every object's dominator and retained size equal the reference algorithm's. */
static void check_against_reference(nt_heap *h)
{
    cr_assert_eq(nt_heap_dominators(h), NT_OK);
    uint32_t *idom;
    uint64_t *ret;
    cr_assert(heap_ref_dominators(h, &idom, &ret));
    for (uint32_t i = 0; i < nt_heap_object_count(h); i++) {
        cr_assert_eq(nt_heap_idom(h, i), idom[i], "object %u: idom %u, reference %u", i, nt_heap_idom(h, i), idom[i]);
        cr_assert_eq(nt_heap_retained(h, i), ret[i], "object %u: retained %llu, reference %llu", i,
                     (unsigned long long)nt_heap_retained(h, i), (unsigned long long)ret[i]);
    }
    free(idom);
    free(ret);
}

/*   root(stack) -> A(0x1000) -> B, C;  C -> B;  B -> A (a cycle);  D unreachable, D -> D (self edge);
 *   E: static root -> E -> F.  Sizes: A 24, B 32, C 40, D 2000 (a size class), E 16, F 48. */
static const hw_node small_nodes[] = {
    { 0x1000, 24, 0x100, 0, 2 }, { 0x2000, 32, 0x100, 2, 1 }, { 0x3000, 40, 0x200, 3, 1 },
    { 0x4000, 2000, 0x300, 4, 1 }, { 0x5000, 16, 0x500, 5, 1 }, { 0x6000, 48, 0x400, 6, 0 },
};
static const uint64_t small_targets[] = { 0x2000, 0x3000, 0x1000, 0x2000, 0x4000, 0x6000 };
static const hw_root small_roots[] = { { 0x1000, 0, 0 }, { 0x6000, 2, 2 } /* weak: not a root */ };

static nt_heap *small_heap(void)
{
    hw_graph g = { types, 5, small_nodes, 6, small_targets, 6, small_roots, 2 };
    return heap_of(&g, 2, 8);
}

LTest(heap, small_graph_counts_and_dominators)
{
    nt_heap *h = small_heap();
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    cr_assert(st.gc_found && st.gc_ended && st.complete, "%s", nt_heap_message(h));
    cr_assert_eq(st.objects, 6);
    cr_assert_eq(st.edges, 6);
    cr_assert_eq(st.total_bytes, 24 + 32 + 40 + 2000 + 16 + 48);
    cr_assert_eq(st.weak_roots, 1);
    cr_assert_eq(nt_heap_root_count(h), 1);
    cr_assert_eq(st.gc_number, 1);
    uint32_t a = at(h, 0x1000), b = at(h, 0x2000), c = at(h, 0x3000), d = at(h, 0x4000), e = at(h, 0x5000),
             f = at(h, 0x6000);
    cr_assert_eq(nt_heap_dominators(h), NT_OK);
    cr_assert_eq(nt_heap_idom(h, a), NT_HEAP_NONE);
    cr_assert_eq(nt_heap_idom(h, b), a);
    cr_assert_eq(nt_heap_idom(h, c), a);
    cr_assert_eq(nt_heap_retained(h, a), 24 + 32 + 40);
    cr_assert_eq(nt_heap_retained(h, b), 32);
    /* D and E are reached by no root: each starts its own tree under the virtual root */
    cr_assert_eq(nt_heap_idom(h, d), NT_HEAP_NONE);
    cr_assert_eq(nt_heap_idom(h, e), NT_HEAP_NONE);
    cr_assert_eq(nt_heap_idom(h, f), e);
    cr_assert_eq(nt_heap_retained(h, e), 16 + 48);
    nt_heap_stats_get(h, &st);
    cr_assert_eq(st.unreachable, 3);
    check_against_reference(h);
    nt_heap_free(h);
}

/* A root to an object an earlier root already reached, then an object no
 * root reaches: the unreachable count starts after the last root, however
 * that root was met (it once started at the first object numbered past it). */
LTest(heap, unreachable_counted_after_a_root_already_reached)
{
    static const hw_node nodes[] = { { 0x1000, 24, 0x100, 0, 1 }, { 0x2000, 32, 0x100, 1, 0 },
                                     { 0x3000, 40, 0x100, 1, 0 } };
    static const uint64_t targets[] = { 0x2000 };
    static const hw_root roots[] = { { 0x1000, 0, 0 }, { 0x2000, 0, 0 } };
    hw_graph g = { types, 5, nodes, 3, targets, 1, roots, 2 };
    nt_heap *h = heap_of(&g, 2, 8);
    cr_assert_eq(nt_heap_dominators(h), NT_OK);
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    cr_assert_eq(st.unreachable, 1, "unreachable %llu, want 1 (0x3000)", (unsigned long long)st.unreachable);
    cr_assert_eq(nt_heap_idom(h, at(h, 0x2000)), NT_HEAP_NONE); /* a root of its own */
    check_against_reference(h);
    nt_heap_free(h);
}

static const nt_heap_type_row *row(const nt_heap_table *t, const char *name)
{
    for (size_t i = 0; i < t->count; i++)
        if (strcmp(t->rows[i].name, name) == 0)
            return &t->rows[i];
    cr_assert_fail("no row %s", name);
    return NULL;
}

LTest(heap, type_table_names_as_dotnet_gcdump)
{
    nt_heap *h = small_heap();
    nt_heap_table *t;
    cr_assert_eq(nt_heap_type_table(h, NT_HEAP_BY_SHALLOW, &t), NT_OK);
    cr_assert_eq(t->count, 5);
    cr_assert_str_eq(t->rows[0].name, "System.Int32[] (Bytes > 1K)"); /* largest shallow first */
    cr_assert_str_eq(t->rows[0].module, "System.Private.CoreLib.dll");
    const nt_heap_type_row *node = row(t, "App.Node");
    cr_assert_eq(node->count, 2);
    cr_assert_eq(node->shallow_bytes, 56);
    cr_assert_eq(node->retained_bytes, 96); /* A retains B: B is not counted again */
    cr_assert_str_eq(node->module, "App.dll");
    cr_assert_eq(row(t, "System.Collections.Generic.List<System.String>")->retained_bytes, 40);
    cr_assert_eq(row(t, "ArrayType(0x400)")->count, 1);
    cr_assert_eq(row(t, "System.Collections.Generic.Dictionary<System.String,System.Int32[]>")->retained_bytes,
                 64);
    cr_assert_eq(t->objects, 6);
    nt_heap_table_free(t);
    cr_assert_eq(nt_heap_type_table(h, NT_HEAP_BY_RETAINED, &t), NT_OK);
    cr_assert_str_eq(t->rows[0].name, "System.Int32[] (Bytes > 1K)");
    cr_assert_str_eq(t->rows[1].name, "App.Node");
    nt_heap_table_free(t);
    nt_heap_free(h);
}

LTest(heap, paths_from_roots)
{
    nt_heap *h = small_heap();
    uint32_t path[8];
    size_t len, root;
    uint32_t b = at(h, 0x2000);
    cr_assert_eq(nt_heap_path(h, b, path, 8, &len, &root), NT_OK);
    cr_assert_eq(len, 2);
    cr_assert_eq(path[0], at(h, 0x1000));
    cr_assert_eq(path[1], b);
    cr_assert_eq(nt_heap_root_at(h, root).kind, NT_HEAP_ROOT_STACK);
    cr_assert_eq(nt_heap_path(h, b, path, 1, &len, &root), NT_ERR_LIMIT);
    cr_assert_eq(len, 2);
    cr_assert_eq(nt_heap_path(h, at(h, 0x4000), path, 8, &len, &root), NT_ERR_INVALID_ARG);
    cr_assert_eq(len, 0);
    uint32_t objs[4];
    cr_assert_eq(nt_heap_objects_of_type(h, "App.Node", objs, 4), 2);
    cr_assert_eq(objs[0], at(h, 0x1000)); /* closest to a root first */
    cr_assert_eq(nt_heap_objects_of_type(h, "System.Int32[] (Bytes > 1K)", objs, 4), 1);
    cr_assert_eq(nt_heap_objects_of_type(h, "System.Int32", objs, 4), 0);
    uint32_t top[3];
    cr_assert_eq(nt_heap_top_retainers(h, top, 3), 3);
    cr_assert_eq(top[0], at(h, 0x4000));
    cr_assert_eq(top[1], at(h, 0x1000));
    cr_assert_eq(top[2], at(h, 0x5000));
    nt_heap_free(h);
}

/* A linked list of 200,000 objects: as deep a search; retained of the head is everything. */
LTest(heap, deep_list_and_folded_export)
{
    enum { N = 200000 };
    hw_node *nd = calloc(N, sizeof *nd);
    uint64_t *tg = calloc(N, sizeof *tg);
    for (uint32_t i = 0; i < N; i++) {
        nd[i] = (hw_node){ 0x10000 + 32ull * i, 32, 0x100, i, i + 1 < N };
        tg[i] = 0x10000 + 32ull * (i + 1);
    }
    hw_root r = { 0x10000, 2, 0 };
    hw_graph g = { types, 5, nd, N, tg, N - 1, &r, 1 };
    nt_heap *h = heap_of(&g, 1000, 8);
    free(nd);
    free(tg);
    cr_assert_eq(nt_heap_dominators(h), NT_OK);
    cr_assert_eq(nt_heap_retained(h, at(h, 0x10000)), 32ull * N);
    cr_assert_eq(nt_heap_retained(h, at(h, 0x10000 + 32ull * (N - 1))), 32);
    check_against_reference(h);
    nt_membuf out = { 0 };
    cr_assert_eq(nt_heap_export_folded(h, NULL, nt_membuf_write, &out), NT_OK);
    char want[64];
    snprintf(want, sizeof want, "[strong Handles];App.Node %u\n", 32u * N);
    cr_assert_eq(out.len, strlen(want));
    cr_assert(memcmp(out.data, want, out.len) == 0, "folded: %.*s", (int)out.len, (char *)out.data);
    nt_membuf_free(&out);
    nt_heap_free(h);
}

LTest(heap, random_graphs_match_the_reference)
{
    srand(7);
    for (int round = 0; round < 20; round++) {
        uint32_t n = 50 + (uint32_t)(rand() % 400), m = n * (uint32_t)(rand() % 4);
        hw_node *nd = calloc(n, sizeof *nd);
        uint64_t *tg = calloc(m + 1, sizeof *tg);
        uint32_t e = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t k = i + 1 == n ? m - e : (uint32_t)(rand() % 5);
            if (e + k > m)
                k = m - e;
            nd[i] = (hw_node){ 0x100000 + 64ull * (uint64_t)(rand() % 100000) * 0 + 64ull * i, 8 + (uint64_t)(rand() % 90),
                               types[rand() % 5].id, e, k };
            for (uint32_t j = 0; j < k; j++)
                tg[e + j] = 0x100000 + 64ull * (uint64_t)(rand() % (int)n);
            e += k;
        }
        hw_root roots[5];
        for (int r = 0; r < 5; r++)
            roots[r] = (hw_root){ 0x100000 + 64ull * (uint64_t)(rand() % (int)n), (uint8_t)(r % 3), 0 };
        hw_graph g = { types, 5, nd, n, tg, e, roots, 1 + (size_t)(rand() % 5) };
        nt_heap *h = heap_of(&g, 37, round % 2 ? 4 : 8);
        /* Semi-NCA's climbs, Lengauer–Tarjan's buckets at once (bound 0) and past a bound met midway. */
        if (round % 3)
            cr_assert_eq(hp_dominators_bounded(h, round % 3 == 1 ? 0 : n / 4), NT_OK);
        check_against_reference(h);
        nt_heap_table *t;
        cr_assert_eq(nt_heap_type_table(h, NT_HEAP_BY_RETAINED, &t), NT_OK);
        uint64_t top_level = 0, total = 0;
        for (uint32_t i = 0; i < n; i++)
            if (nt_heap_idom(h, i) == NT_HEAP_NONE)
                top_level += nt_heap_retained(h, i);
        for (size_t r = 0; r < t->count; r++)
            total += t->rows[r].shallow_bytes;
        cr_assert_eq(top_level, total, "the virtual root's children retain every byte once");
        nt_heap_table_free(t);
        nt_heap_free(h);
        free(nd);
        free(tg);
    }
}

/* A walk out of address order (server GC's heaps one after another, or
 * regions) is sorted at the end; one in address order is not, and its
 * objects keep their walk positions.  Both give every object a root
 * reaches, found by its address, the same dominator and retained size, and
 * every object the reference's (the unreachable ones start their trees in
 * walk order, so theirs may differ between the two). */
LTest(heap, walk_order_out_of_address_order)
{
    srand(11);
    uint32_t n = 300, m = 0;
    hw_node *nd = calloc(n, sizeof *nd), *rev = calloc(n, sizeof *rev);
    uint64_t *tg = calloc(4 * n, sizeof *tg), *rtg = calloc(4 * n, sizeof *rtg);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = (uint32_t)(rand() % 4);
        nd[i] = (hw_node){ 0x100000 + 64ull * i, 8 + (uint64_t)(rand() % 90), types[rand() % 5].id, m, k };
        for (uint32_t j = 0; j < k; j++)
            tg[m++] = 0x100000 + 64ull * (uint64_t)(rand() % (int)n);
    }
    /* The same graph walked from the highest address down: the nodes reversed, each with its own references. */
    for (uint32_t i = 0, e = 0; i < n; i++) {
        const hw_node *o = &nd[n - 1 - i];
        rev[i] = (hw_node){ o->addr, o->size, o->type, e, o->count };
        memcpy(rtg + e, tg + o->first, o->count * sizeof *tg);
        e += o->count;
    }
    hw_root roots[3] = { { 0x100000, 0, 0 }, { 0x100000 + 64 * 77, 1, 0 }, { 0x100000 + 64 * 150, 2, 0 } };
    hw_graph g = { types, 5, nd, n, tg, m, roots, 3 }, gr = { types, 5, rev, n, rtg, m, roots, 3 };
    nt_heap *up = heap_of(&g, 37, 8), *down = heap_of(&gr, 37, 8);
    check_against_reference(up);
    check_against_reference(down);
    uint32_t reached = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t a = at(up, nd[i].addr), b = at(down, nd[i].addr);
        cr_assert_eq(a, i, "in address order, object %u keeps its walk position (found %u)", i, a);
        cr_assert_eq(b, n - 1 - i, "walked downwards, object %u is at walk position %u (found %u)", i, n - 1 - i, b);
        size_t len;
        nt_status pa = nt_heap_path(up, a, NULL, 0, &len, NULL), pb = nt_heap_path(down, b, NULL, 0, &len, NULL);
        cr_assert_eq(pa, pb, "0x%llx: reached from a root in one walk only", (unsigned long long)nd[i].addr);
        if (pa == NT_ERR_INVALID_ARG) /* no root reaches it */
            continue;
        reached++;
        cr_assert_eq(nt_heap_retained(up, a), nt_heap_retained(down, b), "retained bytes of 0x%llx",
                     (unsigned long long)nd[i].addr);
        uint32_t da = nt_heap_idom(up, a), db = nt_heap_idom(down, b);
        cr_assert_eq(da == NT_HEAP_NONE, db == NT_HEAP_NONE);
        if (da != NT_HEAP_NONE)
            cr_assert_eq(nt_heap_object_at(up, da).address, nt_heap_object_at(down, db).address);
    }
    cr_assert_gt(reached, n / 4, "the roots reach a good part of the graph (%u objects)", reached);
    cr_assert(!nt_heap_find(up, 0x100000 + 8, NULL), "no object between two addresses");
    cr_assert(!nt_heap_find(down, 0x100000 + 64ull * n, NULL), "no object past the last");
    nt_heap_free(up);
    nt_heap_free(down);
    free(nd);
    free(rev);
    free(tg);
    free(rtg);
}

/* A walk in shuffled order, every tenth object a duplicate of an earlier
 * address, spread so each address sort runs: near (the radix sort, keys of
 * more than one digit) and with half the objects 2^40 bytes up (the merge
 * sort).  Each address is found at its first walk position, the duplicates
 * counted, the dominators the reference's. */
static void check_shuffled_walk(uint64_t far)
{
    uint32_t n = 5000, m = 0, dups = 0;
    hw_node *nd = calloc(n, sizeof *nd);
    uint64_t *tg = calloc(2 * n, sizeof *tg), *addr = calloc(n, sizeof *addr);
    for (uint32_t i = 0; i < n; i++)
        addr[i] = 0x100000 + 32ull * i + (i % 2 ? far : 0);
    for (uint32_t i = n - 1; i > 0; i--) { /* Fisher–Yates */
        uint32_t j = (uint32_t)rand() % (i + 1);
        uint64_t t = addr[i];
        addr[i] = addr[j];
        addr[j] = t;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (i % 10 == 9) {
            addr[i] = addr[i / 2];
            dups++;
        }
        uint32_t k = (uint32_t)(rand() % 3);
        nd[i] = (hw_node){ addr[i], 24, types[rand() % 5].id, m, k };
        for (uint32_t j = 0; j < k; j++)
            tg[m++] = addr[rand() % (int)n];
    }
    hw_root roots[2] = { { addr[0], 0, 0 }, { addr[n / 3], 1, 0 } };
    hw_graph g = { types, 5, nd, n, tg, m, roots, 2 };
    nt_heap *h = heap_of(&g, 37, 8);
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    cr_assert_eq(st.duplicate_objects, dups);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t first = i % 10 == 9 ? i / 2 : i;
        while (first % 10 == 9) /* a duplicate of a duplicate: its first is further back */
            first /= 2;
        cr_assert_eq(at(h, addr[i]), first, "walk position %u's address is first at %u", i, first);
    }
    check_against_reference(h);
    nt_heap_free(h);
    free(nd);
    free(tg);
    free(addr);
}

LTest(heap, shuffled_walk_near_and_spread_addresses)
{
    srand(26);
    check_shuffled_walk(0);
    check_shuffled_walk(1ull << 40);
}

LTest(heap, roots_by_kind_statics_and_cwt)
{
    hw w;
    cr_assert(hw_begin(&w, 6, 8));
    hw_types(&w, types, 5);
    hw_gc_start(&w, 3, 2, 1, 0);
    hw_node nd[] = { { 0xa000, 24, 0x100, 0, 0 }, { 0xb000, 24, 0x100, 0, 0 }, { 0xc000, 24, 0x100, 0, 0 },
                     { 0xd000, 24, 0x100, 0, 0 } };
    hw_nodes(&w, nd, 4, 10);
    hw_static(&w, 0xa000, 0x500, 0, "Cache");
    hw_static(&w, 0xb000, 0x500, 1, "PerThread");
    hw_cwt(&w, 0xa000, 0xc000);
    hw_cwt(&w, 0, 0xd000); /* a dead key keeps nothing */
    hw_root pin = { 0xd000, 2, 1 };
    hw_roots(&w, &pin, 1);
    hw_gc_end(&w, 3);
    char msg[256];
    nt_status s;
    nt_heap *h = read_heap(&w, NULL, &s, msg, sizeof msg);
    cr_assert_eq(s, NT_OK, "%s", msg);
    cr_assert_eq(nt_heap_root_count(h), 4);
    nt_heap_root r = nt_heap_root_at(h, 0);
    cr_assert_eq(r.kind, NT_HEAP_ROOT_STATIC);
    cr_assert_str_eq(r.name, "System.Collections.Generic.Dictionary<System.String,System.Int32[]>.Cache");
    cr_assert_eq(nt_heap_root_at(h, 1).kind, NT_HEAP_ROOT_THREAD_STATIC);
    cr_assert_eq(nt_heap_root_at(h, 2).kind, NT_HEAP_ROOT_DEPENDENT_HANDLE);
    cr_assert_eq(nt_heap_root_at(h, 2).object, at(h, 0xc000));
    cr_assert_eq(nt_heap_root_at(h, 3).kind, NT_HEAP_ROOT_PINNING_HANDLE);
    cr_assert_str_eq(nt_heap_root_kind_name(NT_HEAP_ROOT_STATIC), "[static vars]");
    nt_heap_free(h);
}

/* Only an induced, non-concurrent gen-2 GC with heap data is the snapshot. */
LTest(heap, the_gc_chosen)
{
    hw w;
    cr_assert(hw_begin(&w, 4, 8));
    hw_types(&w, types, 1);
    hw_node a = { 0x1000, 24, 0x100, 0, 0 }, b = { 0x2000, 24, 0x100, 0, 0 }, c = { 0x3000, 24, 0x100, 0, 0 };
    hw_gc_start(&w, 1, 2, 0, 0); /* not induced */
    hw_nodes(&w, &a, 1, 1);
    hw_gc_end(&w, 1);
    hw_gc_start(&w, 2, 2, 1, 1); /* background */
    hw_nodes(&w, &a, 1, 1);
    hw_gc_end(&w, 2);
    hw_gc_start(&w, 3, 2, 1, 0); /* induced, but no heap walk in it */
    hw_gc_end(&w, 3);
    hw_gc_start(&w, 4, 2, 1, 0);
    hw_nodes(&w, &b, 1, 1);
    hw_gc_end(&w, 4);
    hw_gc_start(&w, 5, 2, 1, 0); /* a later dump is not merged */
    hw_nodes(&w, &c, 1, 1);
    hw_gc_end(&w, 5);
    char msg[256];
    nt_status s;
    nt_heap *h = read_heap(&w, NULL, &s, msg, sizeof msg);
    cr_assert_eq(s, NT_OK);
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    cr_assert_eq(st.gc_number, 4);
    cr_assert_eq(st.objects, 1);
    cr_assert_eq(nt_heap_object_at(h, 0).address, 0x2000);
    nt_heap_free(h);
}

LTest(heap, no_heap_dump_is_said)
{
    hw w;
    cr_assert(hw_begin(&w, 4, 8));
    hw_types(&w, types, 1);
    char msg[256];
    nt_status s;
    nt_heap *h = read_heap(&w, NULL, &s, msg, sizeof msg);
    cr_assert_eq(s, NT_OK);
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    cr_assert(!st.gc_found && !st.complete);
    cr_assert(strstr(nt_heap_message(h), "no heap dump"), "%s", nt_heap_message(h));
    nt_heap_free(h);
}

/* Damage is counted, the graph is said to be incomplete, and what was read stays. */
LTest(heap, incomplete_graphs_are_reported)
{
    hw w;
    cr_assert(hw_begin(&w, 4, 8));
    hw_types(&w, types, 1);
    hw_gc_start(&w, 1, 2, 1, 0);
    hw_node nd[] = { { 0x1000, 24, 0x100, 0, 5 }, { 0x2000, 24, 0x100, 0, 0 } };
    hw_nodes(&w, nd, 2, 1);
    w.edge_index = 1; /* GCBulkEdge 0 lost */
    uint64_t t[] = { 0x2000, 0x9999, 0x1000 }; /* one to no object, one self edge */
    hw_edges(&w, t, 3, 3);
    hw_gc_end(&w, 1);
    char msg[256];
    nt_status s;
    nt_heap *h = read_heap(&w, NULL, &s, msg, sizeof msg);
    cr_assert_eq(s, NT_OK);
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    cr_assert(!st.complete);
    cr_assert_eq(st.bulk_gaps, 1);
    cr_assert_eq(st.edges_missing, 2);
    cr_assert_eq(st.edges_unresolved, 1);
    cr_assert_eq(st.edges, 2);
    cr_assert(strstr(nt_heap_message(h), "incomplete"), "%s", nt_heap_message(h));
    check_against_reference(h);
    nt_heap_free(h);
}

LTest(heap, the_gc_never_ends)
{
    hw w;
    cr_assert(hw_begin(&w, 4, 8));
    hw_gc_start(&w, 1, 2, 1, 0);
    hw_node a = { 0x1000, 24, 0x777, 0, 0 };
    hw_nodes(&w, &a, 1, 1);
    char msg[256];
    nt_status s;
    nt_heap *h = read_heap(&w, NULL, &s, msg, sizeof msg);
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    cr_assert(st.gc_found && !st.gc_ended && !st.complete);
    cr_assert_eq(st.objects, 1);
    cr_assert_str_eq(nt_heap_type_name(h, nt_heap_object_at(h, 0).type), "UNKNOWN 0x777");
    nt_heap_free(h);
}

/* Counts larger than the payload, and an object announcing 2^60 references. */
LTest(heap, enormous_counts)
{
    hw w;
    cr_assert(hw_begin(&w, 4, 8));
    hw_gc_start(&w, 1, 2, 1, 0);
    unsigned char p[10 + 32] = { 0 };
    uint32_t count = 0xffffffffu;
    memcpy(p + 4, &count, 4);
    uint64_t addr = 0x1000, size = 24;
    memcpy(p + 10, &addr, 8);
    memcpy(p + 18, &size, 8);
    hw_raw(&w, 18, 0, p, sizeof p); /* one whole node, then nothing of the other 4 billion */
    unsigned char bt[7] = { 1, 0, 0, 0, 0, 0, 0x42 };
    hw_raw(&w, 15, 0, bt, sizeof bt); /* a BulkType of one type, cut inside it */
    hw_gc_end(&w, 1);
    char msg[256];
    nt_status s;
    nt_heap *h = read_heap(&w, NULL, &s, msg, sizeof msg);
    cr_assert_eq(s, NT_OK);
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    cr_assert_eq(st.objects, 1);
    cr_assert_eq(st.bad_events, 2);
    cr_assert(st.first_bad_offset > 0);
    cr_assert(!st.complete);
    nt_heap_free(h);

    cr_assert(hw_begin(&w, 4, 8));
    hw_gc_start(&w, 1, 2, 1, 0);
    hw_node big = { 0x1000, 24, 0x100, 0, 0 };
    hw_nodes(&w, &big, 1, 1);
    unsigned char q[10 + 32] = { 0 };
    count = 1;
    memcpy(q, &count, 4); /* Index 1 */
    memcpy(q + 4, &count, 4);
    uint64_t edges = 1ull << 60;
    addr = 0x2000;
    memcpy(q + 10, &addr, 8);
    memcpy(q + 34, &edges, 8);
    hw_raw(&w, 18, 0, q, sizeof q);
    hw_gc_end(&w, 1);
    h = read_heap(&w, NULL, &s, msg, sizeof msg);
    cr_assert_eq(s, NT_ERR_LIMIT);
    cr_assert(strstr(msg, "max_edges") && strstr(msg, "at byte"), "%s", msg);
    nt_heap_stats_get(h, &st);
    cr_assert_eq(st.objects, 1, "what was read before the limit stays");
    nt_heap_free(h);
}

/* Sizes beyond any real object (their sum would wrap) are damage: kept as 0 and counted. */
/* Sizes are kept in 4 bytes, those of 4 GiB and more (up to the 64 GiB an
 * object may have) beside them: every one reads back whole, in the
 * retained sizes and the type table too. */
LTest(heap, sizes_past_four_gib)
{
    const uint64_t big[] = { 0xFFFFFFFFull, 1ull << 32, 5ull << 30, 24, (1ull << 36) - 8, 0xFFFFFFFEull };
    hw_node nd[6];
    uint64_t tg[5];
    for (uint32_t i = 0; i < 6; i++) {
        nd[i] = (hw_node){ 0x1000 + 0x100ull * i, big[i], 0x100, i, i < 5 };
        if (i < 5)
            tg[i] = 0x1000 + 0x100ull * (i + 1); /* a list: each object retains those after it */
    }
    hw_root r = { 0x1000, 0, 0 };
    hw_graph g = { types, 1, nd, 6, tg, 5, &r, 1 };
    nt_heap *h = heap_of(&g, 4, 8);
    uint64_t total = 0;
    for (uint32_t i = 0; i < 6; i++) {
        cr_assert_eq(nt_heap_object_at(h, i).size, big[i], "object %u: %llu bytes", i,
                     (unsigned long long)nt_heap_object_at(h, i).size);
        total += big[i];
    }
    check_against_reference(h);
    cr_assert_eq(nt_heap_retained(h, 0), total);
    cr_assert_eq(nt_heap_retained(h, 4), big[4] + big[5]);
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    cr_assert_eq(st.total_bytes, total);
    nt_heap_table *t;
    cr_assert_eq(nt_heap_type_table(h, NT_HEAP_BY_SHALLOW, &t), NT_OK);
    cr_assert_eq(t->total_bytes, total);
    nt_heap_table_free(t);
    nt_heap_free(h);
}

LTest(heap, impossible_sizes)
{
    hw_node nd[] = { { 0x1000, 1ull << 63, 0x100, 0, 0 }, { 0x2000, 1ull << 63, 0x100, 0, 0 }, { 0x3000, 24, 0x100, 0, 0 } };
    hw_graph g = { types, 1, nd, 3, NULL, 0, NULL, 0 };
    hw w;
    cr_assert(hw_begin(&w, 4, 8));
    hw_snapshot(&w, &g, 10);
    char msg[256];
    nt_status s;
    nt_heap *h = read_heap(&w, NULL, &s, msg, sizeof msg);
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    cr_assert_eq(st.bad_events, 2);
    cr_assert_eq(st.total_bytes, 24);
    cr_assert(!st.complete);
    check_against_reference(h);
    nt_heap_free(h);
}

LTest(heap, object_limit)
{
    hw_node nd[20];
    for (uint32_t i = 0; i < 20; i++)
        nd[i] = (hw_node){ 0x1000 + 32ull * i, 32, 0x100, 0, 0 };
    hw w;
    cr_assert(hw_begin(&w, 4, 8));
    hw_gc_start(&w, 1, 2, 1, 0);
    hw_nodes(&w, nd, 20, 4);
    hw_gc_end(&w, 1);
    nt_heap_limits lim = { 0 };
    lim.max_objects = 10;
    char msg[256];
    nt_status s;
    nt_heap *h = read_heap(&w, &lim, &s, msg, sizeof msg);
    cr_assert_eq(s, NT_ERR_LIMIT);
    cr_assert(strstr(msg, "max_objects (10 objects)"), "%s", msg);
    cr_assert_eq(nt_heap_object_count(h), 10);
    nt_heap_free(h);
}

LTest(heap, duplicate_objects_are_counted)
{
    hw_node nd[] = { { 0x1000, 24, 0x100, 0, 1 }, { 0x1000, 24, 0x100, 1, 0 } };
    uint64_t t[] = { 0x1000 };
    hw_root r = { 0x1000, 0, 0 };
    hw_graph g = { types, 1, nd, 2, t, 1, &r, 1 };
    nt_heap *h = heap_of(&g, 10, 8);
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    cr_assert_eq(st.duplicate_objects, 1);
    cr_assert_eq(at(h, 0x1000), 0);
    check_against_reference(h);
    nt_heap_free(h);
}

LTest(heap, diff_by_growth)
{
    nt_heap *a = small_heap();
    hw_node nd[] = { { 0x1000, 24, 0x100, 0, 0 }, { 0x2000, 24, 0x100, 0, 0 }, { 0x3000, 24, 0x100, 0, 0 },
                     { 0x4000, 40, 0x200, 0, 0 } };
    hw_graph g = { types, 5, nd, 4, NULL, 0, NULL, 0 };
    nt_heap *b = heap_of(&g, 10, 8);
    nt_heap_table *ta, *tb;
    cr_assert_eq(nt_heap_type_table(a, NT_HEAP_BY_SHALLOW, &ta), NT_OK);
    cr_assert_eq(nt_heap_type_table(b, NT_HEAP_BY_SHALLOW, &tb), NT_OK);
    nt_heap_diff *d;
    cr_assert_eq(nt_heap_diff_tables(ta, tb, &d), NT_OK);
    cr_assert_eq(d->count, 5);
    cr_assert_str_eq(d->rows[0].name, "App.Node");
    cr_assert_eq(d->rows[0].count_before, 2);
    cr_assert_eq(d->rows[0].count_after, 3);
    cr_assert_eq(d->rows[0].bytes_delta, 72 - 56);
    cr_assert_str_eq(d->rows[4].name, "System.Int32[] (Bytes > 1K)");
    cr_assert_eq(d->rows[4].bytes_delta, -2000);
    nt_heap_diff_free(d);
    nt_heap_table_free(ta);
    nt_heap_table_free(tb);
    nt_heap_free(a);
    nt_heap_free(b);
}

LTest(heap, speedscope_and_pprof_exports)
{
    nt_heap *h = small_heap();
    nt_membuf out = { 0 };
    cr_assert_eq(nt_heap_export_speedscope(h, NULL, nt_membuf_write, &out), NT_OK);
    cr_assert(out.len > 0);
    cr_assert(memmem(out.data, out.len, "\"unit\":\"bytes\"", 14));
    cr_assert(memmem(out.data, out.len, "\"endValue\":2160", 15), "%.*s", (int)out.len, (char *)out.data);
    nt_membuf_free(&out);
    cr_assert_eq(nt_heap_export_pprof(h, NULL, nt_membuf_write, &out), NT_OK);
    cr_assert(out.len > 2 && out.data[0] == 0x1f && out.data[1] == 0x8b, "gzip");
    nt_membuf_free(&out);
    nt_heap_export_options o = { .by_count = true };
    cr_assert_eq(nt_heap_export_folded(h, &o, nt_membuf_write, &out), NT_OK);
    cr_assert(memmem(out.data, out.len, "[local vars];App.Node 2\n", 24), "%.*s", (int)out.len, (char *)out.data);
    nt_membuf_free(&out);
    nt_heap_free(h);
}

/* The sized structs follow doc/abi.md: a longer caller struct with a zero tail is taken, a
 * non-zero tail refused, stats fill no more than the caller's struct_size. */
LTest(heap, sized_structs)
{
    hw w;
    cr_assert(hw_begin(&w, 4, 8));
    hw_graph g = { types, 1, small_nodes, 1, NULL, 0, NULL, 0 };
    hw_snapshot(&w, &g, 10);
    cr_assert_eq(hw_finish(&w), NT_OK);
    struct { nt_heap_options o; uint64_t tail; } longer = { .o = { .struct_size = sizeof longer }, .tail = 0 };
    nt_heap *h = NULL;
    cr_assert_eq(nt_heap_from_buffer(w.out.data, w.out.len, &longer.o, &h, NULL, 0), NT_OK);
    struct { nt_heap_stats s; uint64_t canary; } st = { .s = { .struct_size = 0 }, .canary = 0x5a5a5a5a5a5a5a5aull };
    nt_heap_stats_get(h, &st.s);
    cr_assert_eq(st.s.objects, 1);
    cr_assert_eq(st.canary, 0x5a5a5a5a5a5a5a5aull, "stats wrote past the caller's struct");
    nt_heap_free(h);
    longer.tail = 1;
    h = NULL;
    cr_assert_eq(nt_heap_from_buffer(w.out.data, w.out.len, &longer.o, &h, NULL, 0), NT_ERR_INVALID_ARG);
    cr_assert_null(h);
    struct { nt_heap_limits l; uint32_t tail; } lim = { .l = { .struct_size = sizeof lim }, .tail = 7 };
    cr_assert_null(nt_heap_builder_new(&lim.l, NULL));
    hw_free(&w);
}
