/* Folded stacks for flamegraph.pl: "root;...;leaf weight", one line per
 * distinct stack.  Code versions of one method resolve to different records
 * but print the same, so stacks are merged by their sequence of frame names
 * (dense name ids, ex_names), not by stack index.  Lines are ordered by that
 * sequence and formatted only when written, so the export holds a few
 * integers per stack and never the text. */
#include "common/abi.h"
#include "common/text_escape.h"
#include "export/export_internal.h"
#include "common/sort.h"

#include <string.h>

typedef struct folded_ctx {
    const nt_trace *t;
    const ex_names *nm;
} folded_ctx;

int ex_stacks_cmp(const nt_trace *t, const ex_names *nm, uint32_t a, uint32_t b)
{
    nt_trace_stack x = nt_trace_stack_at(t, a), y = nt_trace_stack_at(t, b);
    uint32_t i = x.frame_count, j = y.frame_count;
    while (i && j) {
        uint32_t p = nm->of_frame[x.frame_ids[--i]], q = nm->of_frame[y.frame_ids[--j]];
        if (p != q)
            return p < q ? -1 : 1;
    }
    return i ? 1 : j ? -1 : 0;
}

/* Two stacks (indices) root first by name id. */
static int cmp_stacks(const void *pa, const void *pb, void *ctx)
{
    const folded_ctx *c = ctx;
    return ex_stacks_cmp(c->t, c->nm, *(const uint32_t *)pa, *(const uint32_t *)pb);
}

void ex_folded_frame(ex_out *o, const char *name)
{
    /* A name from the trace may hold the format's separator or controls: keep one frame one
     * field, one stack one line, and no control byte (common/text_escape.h). */
    char esc[4096];
    size_t n = cm_text_escape(esc, sizeof esc, name, ";");
    ex_out_bytes(o, esc, n < sizeof esc ? n : sizeof esc - 1);
}

void ex_folded_stack(ex_out *o, const nt_trace *t, uint32_t k, unsigned flags)
{
    nt_trace_stack r = nt_trace_stack_at(t, k);
    if (!r.frame_count) {
        ex_out_bytes(o, "-", 1);
        return;
    }
    char buf[1024];
    for (uint32_t f = r.frame_count; f-- > 0;) {
        nt_frame_name_ex(nt_trace_frame_at(t, r.frame_ids[f]), flags, buf, sizeof buf);
        ex_folded_frame(o, buf);
        if (f)
            ex_out_bytes(o, ";", 1);
    }
}

nt_status nt_export_folded(const nt_trace *t, const nt_export_options *given, nt_sink_fn w, void *user)
{
    nt_export_options opts, *opt = &opts;
    if (!ABI_IN(nt_export_options, opt, given))
        return NT_ERR_INVALID_ARG;
    if (!t || !w || !ex_selection_fits(t, opt))
        return NT_ERR_INVALID_ARG;
    ex_selection sel;
    ex_selection_init(&sel, t, opt);
    cm_mem m;
    cm_mem_init(&m, tr_view_allocator(t));
    size_t nstacks = nt_trace_stack_count(t), ns = nstacks ? nstacks : 1;
    int64_t *sw = cm_mem_alloc(&m, ns * sizeof *sw);
    bool *used = cm_mem_alloc(&m, ns);
    ex_walk wk;
    if (!sw || !used || !ex_walk_init(&wk, &m, t, &sel)) {
        cm_mem_free(&m, sw, sw ? ns * sizeof *sw : 0);
        cm_mem_free(&m, used, used ? ns : 0);
        return NT_ERR_NOMEM;
    }
    memset(sw, 0, ns * sizeof *sw);
    memset(used, 0, ns);
    size_t nused = 0;
    for (uint32_t th = 0, nth = (uint32_t)nt_trace_thread_count(t); th < nth; th++) {
        if (!ex_walk_thread_selected(&wk, th))
            continue;
        ex_walk_it it;
        ex_walk_begin(&wk, th, &it);
        int64_t wt;
        for (size_t i; (i = ex_walk_next(&wk, &it, false, &wt)) != SIZE_MAX;) {
            uint32_t k = tr_view_stack(t, i);
            sw[k] = cm_sat_add(sw[k], wt);
            nused += !used[k];
            used[k] = true;
        }
    }
    ex_walk_free(&wk);
    ex_names nm;
    nt_status st = ex_names_build(&m, t, sel.opt.signatures ? NT_NAME_SIGNATURE : 0, &nm);
    uint32_t *order = st == NT_OK ? cm_mem_alloc(&m, (nused ? nused : 1) * 2 * sizeof *order) : NULL;
    if (st == NT_OK && !order)
        st = NT_ERR_NOMEM;
    if (st == NT_OK) {
        size_t n = 0;
        for (size_t k = 0; k < nstacks; k++)
            if (used[k])
                order[n++] = (uint32_t)k;
        folded_ctx c = { t, &nm };
        cm_merge_sort(order, order + nused, n, sizeof *order, cmp_stacks, &c);
        ex_out o;
        ex_out_init(&o, w, user);
        for (size_t i = 0; i < n && !o.failed; i++) {
            int64_t total = sw[order[i]];
            while (i + 1 < n && cmp_stacks(&order[i], &order[i + 1], &c) == 0)
                total = cm_sat_add(total, sw[order[++i]]);
            ex_folded_stack(&o, t, order[i], nm.flags);
            ex_out_bytes(&o, " ", 1);
            ex_out_i64(&o, total);
            ex_out_bytes(&o, "\n", 1);
        }
        st = ex_out_flush(&o);
    }
    cm_mem_free(&m, order, (nused ? nused : 1) * 2 * sizeof *order);
    ex_names_free(&m, &nm);
    cm_mem_free(&m, used, ns);
    cm_mem_free(&m, sw, ns * sizeof *sw);
    return st;
}
