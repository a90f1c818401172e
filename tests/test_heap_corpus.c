/* The heap snapshots of corpus/ (recorded from tests/workloads/HeapShape by
 * corpus/record.sh with `nettrace gcdump`, in corpus/heap/, apart from the traces every
 * other test iterates): the counts, shallow and retained
 * bytes the workload fixes, exactly, and every object's dominator and
 * retained size equal to the independent reference (heap_ref.c) on every
 * snapshot of corpus/heap/ and every trace of ../shared/corpus that holds
 * a heap dump. */
#include "heap/heap_internal.h" /* hp_dominators_bounded */
#include "heap_ref.h"
#include "support.h"

#include "ltest.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static nt_heap *load(const char *name)
{
    nt_heap *h = NULL;
    char msg[256];
    nt_status s = nt_heap_from_file(ts_path(ts_own_corpus(), name), NULL, &h, msg, sizeof msg);
    cr_assert_eq(s, NT_OK, "%s: %s", name, msg);
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    cr_assert(st.complete, "%s: %s", name, nt_heap_message(h));
    return h;
}

static const nt_heap_type_row *row(const nt_heap_table *t, const char *name)
{
    for (size_t i = 0; i < t->count; i++)
        if (strcmp(t->rows[i].name, name) == 0)
            return &t->rows[i];
    cr_assert_fail("no type %s", name);
    return NULL;
}

static void expect(const nt_heap_table *t, const char *name, uint64_t count, uint64_t shallow, uint64_t retained)
{
    const nt_heap_type_row *r = row(t, name);
    cr_assert_eq(r->count, count, "%s: count %llu", name, (unsigned long long)r->count);
    cr_assert_eq(r->shallow_bytes, shallow, "%s: shallow %llu", name, (unsigned long long)r->shallow_bytes);
    cr_assert_eq(r->retained_bytes, retained, "%s: retained %llu", name, (unsigned long long)r->retained_bytes);
}

/* What HeapShape SCALE holds (x64: an object's header and method table take 16 bytes, an array's 24). */
static void check_shape(const char *file, unsigned scale, const char *items_row)
{
    nt_heap *h = load(file);
    nt_heap_table *t;
    cr_assert_eq(nt_heap_type_table(h, NT_HEAP_BY_RETAINED, &t), NT_OK);
    uint64_t items = 1000ull * scale, nodes = 500ull * scale;
    expect(t, "HeapShape.Item", items, 24 * items, 24 * items);
    expect(t, items_row, 1, 24 + 8 * items, 24 + 8 * items + 24 * items);
    expect(t, "HeapShape.ListNode", nodes, 32 * nodes, 32 * nodes);
    expect(t, "HeapShape.CycleA", 1, 24, 48);
    expect(t, "HeapShape.CycleB", 1, 24, 24);
    expect(t, "HeapShape.CwtKey", 1, 24, 24);
    expect(t, "HeapShape.CwtValue", 1, 32, 32);
    expect(t, "System.Byte[] (Bytes > 100K)", 1, 100024, 100024);
    /* The value is held only by the table's dependent handle; the list's head by a static. */
    uint32_t v, path[4];
    size_t len, root;
    cr_assert_eq(nt_heap_objects_of_type(h, "HeapShape.CwtValue", &v, 1), 1);
    cr_assert_eq(nt_heap_path(h, v, path, 4, &len, &root), NT_OK);
    cr_assert_eq(len, 1);
    cr_assert_eq(nt_heap_root_at(h, root).kind, NT_HEAP_ROOT_DEPENDENT_HANDLE);
    uint32_t head;
    cr_assert_eq(nt_heap_objects_of_type(h, "HeapShape.ListNode", &head, 1), 1);
    cr_assert_eq(nt_heap_retained(h, head), 32 * nodes, "the head retains the whole list");
    nt_heap_table_free(t);
    nt_heap_free(h);
}

LTest(heap_corpus, heap_shape_exact)
{
    check_shape("heap/shape.nettrace", 1, "HeapShape.Item[] (Bytes > 1K)");
}

LTest(heap_corpus, heap_shape_grown_exact)
{
    check_shape("heap/shape-grown.nettrace", 2, "HeapShape.Item[] (Bytes > 10K)");
}

/* The same workload as dotnet-gcdump 10.0.750501 wrote it (corpus/record.sh heap-shape-gcdump): the
 * .gcdump reader gives the same exact figures, the dependent-handle root and the list's retained size. */
LTest(heap_corpus, gcdump_shape_exact)
{
    check_shape("heap/shape.gcdump", 1, "HeapShape.Item[] (Bytes > 1K)");
}

LTest(heap_corpus, gcdump_shape_grown_exact)
{
    check_shape("heap/shape-grown.gcdump", 2, "HeapShape.Item[] (Bytes > 10K)");
}

/* What the .gcdump holds beyond the workload's types, as dotnet-gcdump report printed it for this file:
 * "GC Heap bytes" 206,694 (its node count, 1,846, counts the 70 root pseudo-nodes and the undefined node
 * too: 1,775 objects), and a static root named as the report's "[static var ...]" node names it. */
LTest(heap_corpus, gcdump_totals_and_roots)
{
    nt_heap *h = load("heap/shape.gcdump");
    nt_heap_stats st = { .struct_size = sizeof st };
    nt_heap_stats_get(h, &st);
    cr_assert_eq(st.total_bytes, 206694, "total %llu", (unsigned long long)st.total_bytes);
    cr_assert_eq(st.objects, 1775, "objects %llu", (unsigned long long)st.objects);
    cr_assert_eq(st.format, NT_HEAP_FROM_GCDUMP);
    bool items = false, stack = false;
    for (size_t i = 0; i < nt_heap_root_count(h); i++) {
        nt_heap_root r = nt_heap_root_at(h, i);
        if (r.kind == NT_HEAP_ROOT_STATIC && strcmp(r.name, "HeapShape.Item[].Items") == 0)
            items = strcmp(nt_heap_type_name(h, nt_heap_object_at(h, r.object).type), "HeapShape.Item[]") == 0;
        stack = stack || r.kind == NT_HEAP_ROOT_STACK;
    }
    cr_assert(items, "no static root HeapShape.Item[].Items (the runtime names a static by its value's type) holding the Item[]");
    cr_assert(stack, "no stack root");
    nt_heap_free(h);
}

/* The diff from HeapShape 1 to HeapShape 2: the items grew most, by 1,000 objects of 24 bytes. */
static void check_growth(const char *before, const char *after)
{
    nt_heap *a = load(before), *b = load(after);
    nt_heap_table *ta, *tb;
    nt_heap_diff *d;
    cr_assert_eq(nt_heap_type_table(a, NT_HEAP_BY_SHALLOW, &ta), NT_OK);
    cr_assert_eq(nt_heap_type_table(b, NT_HEAP_BY_SHALLOW, &tb), NT_OK);
    cr_assert_eq(nt_heap_diff_tables(ta, tb, &d), NT_OK);
    cr_assert_str_eq(d->rows[0].name, "HeapShape.Item");
    cr_assert_eq(d->rows[0].count_delta, 1000);
    cr_assert_eq(d->rows[0].bytes_delta, 24000);
    nt_heap_diff_free(d);
    nt_heap_table_free(ta);
    nt_heap_table_free(tb);
    nt_heap_free(a);
    nt_heap_free(b);
}

/* A diff across the two kinds: the NetTrace snapshot before, the .gcdump after. */
LTest(heap_corpus, diff_nettrace_to_gcdump)
{
    check_growth("heap/shape.nettrace", "heap/shape-grown.gcdump");
}

LTest(heap_corpus, diff_of_the_two)
{
    check_growth("heap/shape.nettrace", "heap/shape-grown.nettrace");
}

/* Semi-NCA (the default bound) and Lengauer–Tarjan's buckets (bound 0) both equal the reference. */
static void check_reference_bounded(const char *path, uint64_t max_climbs)
{
    nt_heap *h = NULL;
    char msg[256];
    nt_heap_from_file(path, NULL, &h, msg, sizeof msg);
    if (!h)
        return;
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    if (st.gc_found) {
        cr_assert_eq(max_climbs == UINT64_MAX ? nt_heap_dominators(h) : hp_dominators_bounded(h, max_climbs), NT_OK);
        uint32_t *idom;
        uint64_t *ret;
        cr_assert(heap_ref_dominators(h, &idom, &ret));
        for (uint32_t i = 0; i < nt_heap_object_count(h); i++) {
            cr_assert_eq(nt_heap_idom(h, i), idom[i], "%s: object %u", path, i);
            cr_assert_eq(nt_heap_retained(h, i), ret[i], "%s: object %u", path, i);
        }
        free(idom);
        free(ret);
    }
    nt_heap_free(h);
}

static void check_reference(const char *path)
{
    check_reference_bounded(path, UINT64_MAX);
    check_reference_bounded(path, 0);
}

LTest(heap_corpus, every_snapshot_matches_the_reference)
{
    char own[4096];
    snprintf(own, sizeof own, "%s/heap", ts_own_corpus());
    const char *dirs[2] = { own, ts_shared_corpus() };
    int checked = 0;
    for (int k = 0; k < 2; k++) {
        if (!dirs[k])
            continue; /* the shared corpus is optional: its traces hold no heap dump so far */
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", dirs[k]);
        DIR *d = opendir(dir);
        cr_assert_not_null(d, "%s", dir);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            size_t n = strlen(e->d_name);
            bool gcdump = n > 7 && strcmp(e->d_name + n - 7, ".gcdump") == 0;
            if (!gcdump && (n < 9 || strcmp(e->d_name + n - 9, ".nettrace") != 0))
                continue;
            check_reference(ts_path(dir, e->d_name));
            checked++;
        }
        closedir(d);
    }
    cr_assert(checked >= 4, "corpus/heap/*.nettrace or *.gcdump missing");
}
