/* Hot methods (nt_top_build): samples counted per display name, exclusive
 * (the innermost frame) and inclusive (anywhere on the stack, once per
 * sample), overall or per thread.  The file command and the live view both
 * print these tables; names come from ex_names, as in the exporters. */
#include "export/export_internal.h"
#include "common/abi.h"
#include "common/sort.h"

#include <string.h>

typedef struct top_row {
    uint32_t id;           /* name index (first seen first) */
    uint64_t excl, incl;
} top_row;

typedef struct top_impl {
    nt_top pub;
    cm_mem mem;
    nt_top_table *tables;
    size_t ntables;
    nt_top_row *rows;
    size_t nrows, rows_cap;
    char *names;           /* the rows' names, NUL-terminated one after another */
    size_t names_len, names_cap;
} top_impl;

/* What one table's count needs. */
typedef struct top_work {
    const nt_trace *t;
    const nt_top_options *opt;
    ex_names nm;
    ex_selection sel;      /* which samples count (the exporters' rule) */
    int64_t *wall;         /* per sample, its weight by time; NULL: weigh by count */
    uint64_t *stack_w;     /* selected samples (or their ns) per resolved stack */
    uint32_t *seen;        /* name index -> stack + 1 that last counted it inclusively */
    top_row *rows;
} top_work;

typedef struct row_order {
    bool by_incl;
    const ex_names *nm;
} row_order;

/* Equal counts go by name, then by name index: the order is the trace's
 * content, not the order in which a read met the names (a windowed read
 * meets fewer of them). */
static int cmp_names(const top_row *x, const top_row *y, const ex_names *nm)
{
    char a[256], b[256];
    nt_frame_name_ex(nm->rep[x->id], nm->flags, a, sizeof a);
    nt_frame_name_ex(nm->rep[y->id], nm->flags, b, sizeof b);
    int c = strcmp(a, b);
    return c ? c : x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
    const top_row *x = a, *y = b;
    const row_order *ro = ctx;
    const bool by_incl = ro->by_incl;
    if (by_incl && x->incl != y->incl)
        return x->incl > y->incl ? -1 : 1;
    if (x->excl != y->excl)
        return x->excl > y->excl ? -1 : 1;
    if (x->incl != y->incl)
        return x->incl > y->incl ? -1 : 1;
    return cmp_names(x, y, ro->nm);
}

/* Sums saturate: weights by time come from the file's clock, which may be hostile. */
static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/* Index of name id's text in the names arena, or SIZE_MAX when memory is short. */
static size_t store_name(top_impl *ti, const nt_frame *f, unsigned flags)
{
    size_t len = nt_frame_name_ex(f, flags, NULL, 0) + 1;
    if (!cm_mem_reserve(&ti->mem, (void **)&ti->names, &ti->names_cap, ti->names_len + len, 1))
        return SIZE_MAX;
    nt_frame_name_ex(f, flags, ti->names + ti->names_len, len);
    ti->names_len += len;
    return ti->names_len - len;
}

/* One table: the selected samples of thread index th (SIZE_MAX = all threads). */
static nt_status count_table(top_impl *ti, top_work *w, size_t th, nt_top_table *out)
{
    const nt_trace *t = w->t;
    const nt_top_options *opt = w->opt;
    size_t ns = nt_trace_stack_count(t);
    memset(w->stack_w, 0, (ns ? ns : 1) * sizeof *w->stack_w);
    uint64_t total = 0, empty = 0;
    /* One thread's table visits that thread's samples only (the trace finds them). */
    size_t nsamples = nt_trace_sample_count(t);
    for (size_t i = th == SIZE_MAX ? 0 : tr_view_next_of_thread(t, (uint32_t)th, 0, nsamples); i < nsamples;
         i = th == SIZE_MAX ? i + 1 : tr_view_next_of_thread(t, (uint32_t)th, i + 1, nsamples)) {
        if (!ex_selected(&w->sel, i))
            continue;
        uint64_t c = w->wall ? (uint64_t)w->wall[i] : tr_view_count(t, i);
        uint32_t k = tr_view_stack(t, i);
        w->stack_w[k] = sat_add(w->stack_w[k], c);
        total = sat_add(total, c);
    }
    for (size_t i = 0; i < w->nm.n; i++)
        w->rows[i] = (top_row){ (uint32_t)i, 0, 0 };
    for (size_t k = 0; k < ns; k++) {
        uint64_t c = w->stack_w[k];
        if (!c)
            continue;
        nt_trace_stack r = nt_trace_stack_at(t, k);
        if (!r.frame_count) {
            empty = sat_add(empty, c);
            continue;
        }
        const uint32_t *ids = r.frame_ids, *name = w->nm.of_frame;
        w->rows[name[ids[0]]].excl = sat_add(w->rows[name[ids[0]]].excl, c);
        /* Inclusive: once per sample even when recursion repeats a name. */
        for (uint32_t f = 0; f < r.frame_count; f++) {
            uint32_t id = name[ids[f]];
            if (w->seen[id] != k + 1) {
                w->seen[id] = (uint32_t)k + 1;
                w->rows[id].incl = sat_add(w->rows[id].incl, c);
            }
        }
    }
    out->samples = total;
    out->empty = empty;
    out->thread_id = th == SIZE_MAX ? 0 : nt_trace_thread_id(t, th);
    size_t n = 0;
    for (size_t i = 0; i < w->nm.n; i++)
        if (w->rows[i].incl)
            w->rows[n++] = w->rows[i];
    top_row *scratch = cm_mem_alloc(&ti->mem, (n ? n : 1) * sizeof *scratch);
    if (!scratch)
        return NT_ERR_NOMEM;
    row_order ro = { opt->by_inclusive, &w->nm };
    cm_merge_sort(w->rows, scratch, n, sizeof *w->rows, cmp_rows, &ro);
    cm_mem_free(&ti->mem, scratch, (n ? n : 1) * sizeof *scratch);
    size_t keep = opt->rows && n > opt->rows ? opt->rows : n;
    if (!cm_mem_reserve(&ti->mem, (void **)&ti->rows, &ti->rows_cap, ti->nrows + keep, sizeof *ti->rows))
        return NT_ERR_NOMEM;
    out->row_count = keep;
    out->rows = (const nt_top_row *)(uintptr_t)ti->nrows; /* an index until the rows stop moving */
    for (size_t i = 0; i < keep; i++) {
        size_t at = store_name(ti, w->nm.rep[w->rows[i].id], w->nm.flags);
        if (at == SIZE_MAX)
            return NT_ERR_NOMEM;
        ti->rows[ti->nrows++] = (nt_top_row){ (const char *)(uintptr_t)at, w->rows[i].excl, w->rows[i].incl };
    }
    return NT_OK;
}

void nt_top_free(nt_top *top)
{
    if (!top)
        return;
    top_impl *ti = (top_impl *)top;
    cm_mem_free(&ti->mem, ti->tables, (ti->ntables ? ti->ntables : 1) * sizeof *ti->tables);
    cm_mem_free(&ti->mem, ti->rows, ti->rows_cap * sizeof *ti->rows);
    cm_mem_free(&ti->mem, ti->names, ti->names_cap);
    CM_MEM_DELETE(top_impl, ti);
}

nt_status nt_top_build(const nt_trace *t, const nt_top_options *options, nt_top **out)
{
    if (!out)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    if (!t)
        return NT_ERR_INVALID_ARG;
    nt_top_options opt;
    if (!ABI_IN(nt_top_options, &opt, options))
        return NT_ERR_INVALID_ARG;
    top_impl *ti = CM_MEM_NEW(top_impl, tr_view_allocator(t));
    if (!ti)
        return NT_ERR_NOMEM;
    top_work w = { .t = t, .opt = &opt };
    nt_export_options so = { .filter = opt.filter };
    if (!ex_selection_fits(t, &so)) {
        CM_MEM_DELETE(top_impl, ti);
        return NT_ERR_INVALID_ARG;
    }
    ex_selection_init(&w.sel, t, &so);
    size_t ns = nt_trace_stack_count(t) ? nt_trace_stack_count(t) : 1;
    size_t nsamples = nt_trace_sample_count(t) ? nt_trace_sample_count(t) : 1;
    nt_status st = ex_names_build(&ti->mem, t, opt.signatures ? NT_NAME_SIGNATURE : 0, &w.nm);
    if (st == NT_OK && opt.weight == NT_WEIGHT_TIME) {
        w.wall = cm_mem_alloc(&ti->mem, nsamples * sizeof *w.wall);
        st = w.wall ? nt_trace_wall_ns(t, w.wall) : NT_ERR_NOMEM;
    }
    size_t nn = w.nm.n ? w.nm.n : 1;
    if (st == NT_OK) {
        w.stack_w = cm_mem_alloc(&ti->mem, ns * sizeof *w.stack_w);
        w.seen = cm_mem_alloc(&ti->mem, nn * sizeof *w.seen);
        w.rows = cm_mem_alloc(&ti->mem, nn * sizeof *w.rows);
        ti->ntables = opt.by_thread ? nt_trace_thread_count(t) : 1;
        ti->tables = cm_mem_alloc(&ti->mem, (ti->ntables ? ti->ntables : 1) * sizeof *ti->tables);
        if (!w.stack_w || !w.seen || !w.rows || !ti->tables)
            st = NT_ERR_NOMEM;
    }
    size_t made = 0;
    for (size_t i = 0; st == NT_OK && i < ti->ntables; i++) {
        if (opt.by_thread && opt.filter.has_thread && nt_trace_thread_id(t, i) != opt.filter.thread_id)
            continue;
        memset(w.seen, 0, nn * sizeof *w.seen); /* stamps are stack indices: fresh per table */
        st = count_table(ti, &w, opt.by_thread ? i : SIZE_MAX, &ti->tables[made]);
        made++;
    }
    cm_mem_free(&ti->mem, w.wall, nsamples * sizeof *w.wall);
    cm_mem_free(&ti->mem, w.stack_w, ns * sizeof *w.stack_w);
    cm_mem_free(&ti->mem, w.seen, nn * sizeof *w.seen);
    cm_mem_free(&ti->mem, w.rows, nn * sizeof *w.rows);
    ex_names_free(&ti->mem, &w.nm);
    if (st != NT_OK) {
        nt_top_free(&ti->pub);
        return st;
    }
    /* Rows and names stopped moving: indices become pointers. */
    for (size_t i = 0; i < made; i++)
        ti->tables[i].rows = ti->rows ? ti->rows + (uintptr_t)ti->tables[i].rows : NULL;
    for (size_t r = 0; r < ti->nrows; r++)
        ti->rows[r].name = ti->names + (uintptr_t)ti->rows[r].name;
    ti->pub.table_count = made;
    ti->pub.tables = ti->tables;
    *out = &ti->pub;
    return NT_OK;
}
