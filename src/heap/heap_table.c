/* Type tables (count, shallow and retained bytes per type and size class)
 * and the diff of two of them. */
#include "heap/heap_internal.h"
#include "common/sort.h"

#include <stdio.h>
#include <string.h>

/* A table with what it owns: the public part first, so that the caller's pointer is this. */
typedef struct hp_table {
    nt_heap_table pub;
    cm_mem mem;
    size_t rows_cap;
    char *names;
    size_t names_len;
} hp_table;

typedef struct hp_diff {
    nt_heap_diff pub;
    cm_mem mem;
    size_t cap;
} hp_diff;

/* The rows' slots: row index + 1 by row key (8 slots a type, 32 bytes a
 * type; 0: none yet), so an object's row is found in one read (where a
 * map cost a probe and a hash per object) and no array per object is kept. */
static size_t row_slots(const nt_heap *h) { return (h->ntypes ? h->ntypes : 1) * 8; }
static uint32_t row_of(const nt_heap *h, const uint32_t *slot, uint32_t i) { return slot[hp_row_key(h, i)] - 1; }

/* Each object's row, the rows' names and counts; rows in first-seen order.
 * A row is a type and a size class. */
static bool make_rows(nt_heap *h, hp_table *t, uint32_t *slot)
{
    size_t slots = row_slots(h);
    memset(slot, 0, slots * sizeof *slot);
    bool ok = true;
    for (uint32_t i = 0; i < h->n; i++) {
        uint32_t *v = &slot[hp_row_key(h, i)];
        if (*v == 0) {
            size_t r = t->pub.count;
            if (!cm_mem_reserve(&t->mem, (void **)&t->pub.rows, &t->rows_cap, r + 1, sizeof *t->pub.rows)) {
                ok = false;
                break;
            }
            *v = (uint32_t)r + 1;
            nt_heap_type_row *row = &t->pub.rows[r];
            memset(row, 0, sizeof *row);
            row->type = h->types[h->type[i]].canon;
            t->pub.count++;
        }
        nt_heap_type_row *row = &t->pub.rows[*v - 1];
        row->count++;
        uint64_t size = hp_size(h, i);
        row->shallow_bytes += size;
        /* Keep the size class with the row until the names are made. */
        row->name = (const char *)(uintptr_t)hp_size_class(size);
    }
    return ok;
}

static bool name_rows(nt_heap *h, hp_table *t)
{
    size_t total = 0;
    for (size_t r = 0; r < t->pub.count; r++)
        total += strlen(nt_heap_type_name(h, t->pub.rows[r].type)) + 20;
    t->names = cm_mem_alloc(&t->mem, total ? total : 1);
    if (!t->names)
        return false;
    t->names_len = total ? total : 1;
    size_t at = 0;
    for (size_t r = 0; r < t->pub.count; r++) {
        nt_heap_type_row *row = &t->pub.rows[r];
        unsigned cls = (unsigned)(uintptr_t)row->name;
        int len = snprintf(t->names + at, total - at, "%s%s", nt_heap_type_name(h, row->type),
                           hp_size_class_suffix(cls));
        row->name = t->names + at;
        row->module = nt_heap_type_module(h, row->type);
        at += (size_t)len + 1;
        t->pub.objects += row->count;
        t->pub.total_bytes += row->shallow_bytes;
    }
    return true;
}

/* A row's retained bytes: those of its objects with no dominator of the
 * same row, found by one walk of the dominator tree that counts, per row,
 * the objects of that row on the current path. */
static bool retained_rows(nt_heap *h, hp_table *t, const uint32_t *slot)
{
    uint32_t *start, *child;
    if (hp_dom_children(h, &start, &child) != NT_OK)
        return false;
    size_t n = h->n;
    typedef struct { uint32_t node, pos; } frame;
    frame *stack = cm_mem_alloc(&t->mem, (n + 1) * sizeof *stack);
    uint32_t *open = cm_mem_alloc(&t->mem, (t->pub.count ? t->pub.count : 1) * sizeof *open);
    bool ok = stack && open;
    if (ok) {
        memset(open, 0, (t->pub.count ? t->pub.count : 1) * sizeof *open);
        size_t top = 0;
        stack[top++] = (frame){ h->n, start[h->n] };
        while (top) {
            frame *f = &stack[top - 1];
            uint32_t end = start[f->node + 1];
            if (f->node == h->n)
                end = start[h->n + 1];
            if (f->pos >= end) {
                if (f->node != h->n)
                    open[row_of(h, slot, f->node)]--;
                top--;
                continue;
            }
            uint32_t c = child[f->pos++];
            uint32_t r = row_of(h, slot, c);
            if (open[r]++ == 0)
                t->pub.rows[r].retained_bytes += h->retained[c];
            stack[top++] = (frame){ c, start[c] };
        }
    }
    cm_mem_free(&t->mem, stack, (n + 1) * sizeof *stack);
    cm_mem_free(&t->mem, open, (t->pub.count ? t->pub.count : 1) * sizeof *open);
    cm_mem_free(&h->mem, start, (n + 2) * sizeof *start);
    cm_mem_free(&h->mem, child, (n ? n : 1) * sizeof *child);
    return ok;
}

static int row_cmp(const void *a, const void *b, void *ctx)
{
    const nt_heap_type_row *x = a, *y = b;
    nt_heap_order order = *(const nt_heap_order *)ctx;
    uint64_t kx, ky, k2x = 0, k2y = 0;
    switch (order) {
    case NT_HEAP_BY_RETAINED: kx = x->retained_bytes, ky = y->retained_bytes; break;
    case NT_HEAP_BY_COUNT: kx = x->count, ky = y->count, k2x = x->shallow_bytes, k2y = y->shallow_bytes; break;
    default: kx = x->shallow_bytes, ky = y->shallow_bytes, k2x = x->count, k2y = y->count; break;
    }
    if (kx != ky)
        return kx > ky ? -1 : 1;
    if (k2x != k2y)
        return k2x > k2y ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->module, y->module);
}

static void sort_rows(hp_table *t, nt_heap_order order)
{
    nt_heap_type_row *tmp = cm_mem_alloc(&t->mem, (t->pub.count ? t->pub.count : 1) * sizeof *tmp);
    if (tmp) /* without room to sort, first-seen order stands */
        cm_merge_sort(t->pub.rows, tmp, t->pub.count, sizeof *tmp, row_cmp, &order);
    cm_mem_free(&t->mem, tmp, (t->pub.count ? t->pub.count : 1) * sizeof *tmp);
}

void nt_heap_table_free(nt_heap_table *pub)
{
    if (!pub)
        return;
    hp_table *t = (hp_table *)pub;
    cm_mem_free(&t->mem, t->pub.rows, t->rows_cap * sizeof *t->pub.rows);
    cm_mem_free(&t->mem, t->names, t->names_len);
    CM_MEM_DELETE(hp_table, t);
}

nt_status nt_heap_type_table(nt_heap *h, nt_heap_order order, nt_heap_table **out)
{
    if (!h || !out)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    hp_table *t = CM_MEM_NEW(hp_table, &h->mem.a);
    if (!t)
        return NT_ERR_NOMEM;
    uint32_t *slot = cm_mem_alloc(&t->mem, row_slots(h) * sizeof *slot);
    bool ok = slot && make_rows(h, t, slot) && name_rows(h, t) && retained_rows(h, t, slot);
    cm_mem_free(&t->mem, slot, row_slots(h) * sizeof *slot);
    if (!ok) {
        /* the names of rows made before a failure are size classes, not pointers */
        for (size_t r = 0; r < t->pub.count; r++)
            t->pub.rows[r].name = "";
        nt_heap_table_free(&t->pub);
        return NT_ERR_NOMEM;
    }
    sort_rows(t, order);
    *out = &t->pub;
    return NT_OK;
}

/* ---- diff ---- */

static int name_cmp(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const nt_heap_type_row *x = *(const nt_heap_type_row *const *)a, *y = *(const nt_heap_type_row *const *)b;
    return strcmp(x->name, y->name);
}

static int growth_cmp(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    const nt_heap_diff_row *x = a, *y = b;
    if (x->bytes_delta != y->bytes_delta)
        return x->bytes_delta > y->bytes_delta ? -1 : 1;
    if (x->count_delta != y->count_delta)
        return x->count_delta > y->count_delta ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Rows of t by name (rows of one name in two modules are merged in the diff). */
static const nt_heap_type_row **by_name(cm_mem *m, const nt_heap_table *t)
{
    size_t n = t->count ? t->count : 1;
    const nt_heap_type_row **v = cm_mem_alloc(m, n * sizeof *v), **tmp = cm_mem_alloc(m, n * sizeof *tmp);
    if (v && tmp) {
        for (size_t i = 0; i < t->count; i++)
            v[i] = &t->rows[i];
        cm_merge_sort(v, tmp, t->count, sizeof *v, name_cmp, NULL);
    } else {
        cm_mem_free(m, v, n * sizeof *v);
        v = NULL;
    }
    cm_mem_free(m, tmp, n * sizeof *tmp);
    return v;
}

static nt_heap_diff_row *diff_row(hp_diff *d, const char *name)
{
    if (d->pub.count && strcmp(d->pub.rows[d->pub.count - 1].name, name) == 0)
        return &d->pub.rows[d->pub.count - 1];
    if (!cm_mem_reserve(&d->mem, (void **)&d->pub.rows, &d->cap, d->pub.count + 1, sizeof *d->pub.rows))
        return NULL;
    nt_heap_diff_row *r = &d->pub.rows[d->pub.count++];
    memset(r, 0, sizeof *r);
    r->name = name;
    return r;
}

void nt_heap_diff_free(nt_heap_diff *pub)
{
    if (!pub)
        return;
    hp_diff *d = (hp_diff *)pub;
    cm_mem_free(&d->mem, d->pub.rows, d->cap * sizeof *d->pub.rows);
    CM_MEM_DELETE(hp_diff, d);
}

nt_status nt_heap_diff_tables(const nt_heap_table *before, const nt_heap_table *after, nt_heap_diff **out)
{
    if (!before || !after || !out)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    hp_diff *d = CM_MEM_NEW(hp_diff, NULL);
    if (!d)
        return NT_ERR_NOMEM;
    const nt_heap_type_row **a = by_name(&d->mem, before), **b = by_name(&d->mem, after);
    bool ok = a && b;
    size_t i = 0, j = 0;
    while (ok && (i < before->count || j < after->count)) {
        int c = i >= before->count ? 1 : j >= after->count ? -1 : strcmp(a[i]->name, b[j]->name);
        nt_heap_diff_row *r = diff_row(d, c <= 0 ? a[i]->name : b[j]->name);
        if (!r) {
            ok = false;
            break;
        }
        if (c <= 0) {
            r->count_before += a[i]->count;
            r->bytes_before += a[i]->shallow_bytes;
            r->retained_before += a[i]->retained_bytes;
            i++;
        }
        if (c >= 0) {
            r->count_after += b[j]->count;
            r->bytes_after += b[j]->shallow_bytes;
            r->retained_after += b[j]->retained_bytes;
            j++;
        }
    }
    cm_mem_free(&d->mem, a, (before->count ? before->count : 1) * sizeof *a);
    cm_mem_free(&d->mem, b, (after->count ? after->count : 1) * sizeof *b);
    if (ok) {
        for (size_t k = 0; k < d->pub.count; k++) {
            nt_heap_diff_row *r = &d->pub.rows[k];
            r->count_delta = (int64_t)(r->count_after - r->count_before);
            r->bytes_delta = (int64_t)(r->bytes_after - r->bytes_before);
        }
        nt_heap_diff_row *tmp = cm_mem_alloc(&d->mem, (d->pub.count ? d->pub.count : 1) * sizeof *tmp);
        if (tmp)
            cm_merge_sort(d->pub.rows, tmp, d->pub.count, sizeof *tmp, growth_cmp, NULL);
        cm_mem_free(&d->mem, tmp, (d->pub.count ? d->pub.count : 1) * sizeof *tmp);
        ok = tmp != NULL;
    }
    if (!ok) {
        nt_heap_diff_free(&d->pub);
        return NT_ERR_NOMEM;
    }
    *out = &d->pub;
    return NT_OK;
}
