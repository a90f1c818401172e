/* The heap graph's invariants (heap_checks.h says which). */
#include "heap_checks.h"
#include "fuzz.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>


static volatile size_t hole;

void fz_heap_check_graph(nt_heap *h)
{
    uint32_t n = (uint32_t)nt_heap_object_count(h);
    uint64_t edges = 0, bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        nt_heap_object o = nt_heap_object_at(h, i);
        uint32_t c;
        const uint32_t *e = nt_heap_edges(h, i, &c);
        if (c != o.edge_count)
            fz_fail("object %u: %u edges, accessor says %u", i, c, o.edge_count);
        for (uint32_t k = 0; k < c; k++)
            if (e[k] >= n)
                fz_fail("object %u references object %u of %u", i, e[k], n);
        if (o.type >= nt_heap_type_count(h))
            fz_fail("object %u: type %u of %zu", i, o.type, nt_heap_type_count(h));
        hole += strlen(nt_heap_type_name(h, o.type)) + strlen(nt_heap_type_module(h, o.type));
        uint32_t at;
        if (!nt_heap_find(h, o.address, &at) || nt_heap_object_at(h, at).address != o.address)
            fz_fail("object %u not found at its address", i);
        edges += c;
        bytes += o.size;
    }
    for (size_t r = 0; r < nt_heap_root_count(h); r++) {
        nt_heap_root rt = nt_heap_root_at(h, r);
        if (rt.object >= n || !rt.name || !*nt_heap_root_kind_name(rt.kind))
            fz_fail("root %zu: object %u of %u", r, rt.object, n);
        hole += strlen(rt.name);
    }
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    if (st.objects != n || st.edges != edges || st.total_bytes != bytes)
        fz_fail("stats disagree with the graph");
    hole += strlen(nt_heap_message(h));
}

void fz_heap_check_dominators(nt_heap *h)
{
    if (nt_heap_dominators(h) != NT_OK)
        return;
    uint32_t n = (uint32_t)nt_heap_object_count(h);
    uint64_t top = 0, bytes = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t d = nt_heap_idom(h, i);
        uint64_t r = nt_heap_retained(h, i), s = nt_heap_object_at(h, i).size;
        if (d != NT_HEAP_NONE && (d >= n || d == i))
            fz_fail("object %u: dominator %u", i, d);
        if (r < s)
            fz_fail("object %u retains %llu < its own %llu", i, (unsigned long long)r, (unsigned long long)s);
        if (d == NT_HEAP_NONE)
            top += r;
        bytes += s;
    }
    if (top != bytes)
        fz_fail("the virtual root's children retain %llu of %llu bytes", (unsigned long long)top,
                (unsigned long long)bytes);
    nt_heap_table *t;
    if (nt_heap_type_table(h, NT_HEAP_BY_RETAINED, &t) == NT_OK) {
        uint64_t count = 0, shallow = 0;
        for (size_t r = 0; r < t->count; r++) {
            count += t->rows[r].count;
            shallow += t->rows[r].shallow_bytes;
            if (t->rows[r].retained_bytes < t->rows[r].shallow_bytes || t->rows[r].retained_bytes > bytes)
                fz_fail("row %zu: retained out of range", r);
            if (r && t->rows[r].retained_bytes > t->rows[r - 1].retained_bytes)
                fz_fail("rows out of order at %zu", r);
        }
        if (count != n || shallow != bytes)
            fz_fail("the type table counts %llu of %u objects", (unsigned long long)count, n);
        nt_heap_diff *d;
        if (nt_heap_diff_tables(t, t, &d) == NT_OK) {
            for (size_t r = 0; r < d->count; r++)
                if (d->rows[r].count_delta || d->rows[r].bytes_delta)
                    fz_fail("a table differs from itself");
            nt_heap_diff_free(d);
        }
        if (t->count) {
            uint32_t objs[3];
            size_t got = nt_heap_objects_of_type(h, t->rows[0].name, objs, 3);
            for (size_t k = 0; k < got; k++)
                if (objs[k] >= n)
                    fz_fail("objects_of_type gave %u", objs[k]);
        }
        nt_heap_table_free(t);
    }
    uint32_t topn[4];
    size_t got = nt_heap_top_retainers(h, topn, 4);
    for (size_t k = 1; k < got; k++)
        if (nt_heap_retained(h, topn[k]) > nt_heap_retained(h, topn[k - 1]))
            fz_fail("top retainers out of order");
}

void fz_heap_check_paths(nt_heap *h, uint64_t hash)
{
    uint32_t n = (uint32_t)nt_heap_object_count(h);
    uint32_t path[64];
    for (int k = 0; k < 4 && n; k++) {
        uint32_t i = (uint32_t)(fz_next(&hash) % n);
        size_t len, root;
        nt_status s = nt_heap_path(h, i, path, 64, &len, &root);
        if (s != NT_OK)
            continue;
        if (len == 0 || path[len - 1] != i || nt_heap_root_at(h, root).object != path[0])
            fz_fail("path to %u does not start at its root", i);
        for (size_t j = 1; j < len; j++) {
            uint32_t c;
            const uint32_t *e = nt_heap_edges(h, path[j - 1], &c);
            bool found = false;
            for (uint32_t x = 0; x < c && !found; x++)
                found = e[x] == path[j];
            if (!found)
                fz_fail("path step %zu is no reference", j);
        }
    }
}

void fz_heap_check_exports(nt_heap *h, uint64_t hash)
{
    nt_heap_export_options o = { .max_depth = 1 + (uint32_t)(hash % 8), .by_count = (hash >> 3) & 1 };
    fz_sink f = { 0 }, s = { 0 }, p = { 0 };
    if (nt_heap_export_folded(h, &o, fz_sink_write, &f) == NT_OK) {
        size_t line = 0;
        for (size_t i = 0; i < f.n; i++) {
            if (f.d[i] != '\n')
                continue;
            size_t j = i;
            while (j > line && f.d[j - 1] >= '0' && f.d[j - 1] <= '9')
                j--;
            if (j == i || j == line || f.d[j - 1] != ' ')
                fz_fail("folded line at %zu does not end in \" <weight>\"", line);
            line = i + 1;
        }
    }
    if (nt_heap_export_speedscope(h, &o, fz_sink_write, &s) == NT_OK && (s.n < 2 || s.d[0] != '{'))
        fz_fail("speedscope output is not a JSON object");
    if (nt_heap_export_pprof(h, &o, fz_sink_write, &p) == NT_OK && (p.n < 18 || p.d[0] != 0x1f || p.d[1] != 0x8b))
        fz_fail("pprof output is not gzip");
    free(f.d);
    free(s.d);
    free(p.d);
}
