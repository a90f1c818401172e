/* Folded stacks for flamegraph.pl: "root;...;leaf weight", one line per
 * distinct stack.  Code versions of one method resolve to different records
 * but print the same, so stacks are merged by their sequence of frame names
 * (dense name ids, tr_names), not by stack index.  Lines are ordered by that
 * sequence and formatted only when written, so the export holds a few
 * integers per stack and never the text. */
#include "common/abi.h"
#include "common/text_escape.h"
#include "export/export_names.h"
#include "common/sort.h"

#include <string.h>

typedef struct folded_ctx {
    const nt_trace *t;
    const tr_names *nm;
} folded_ctx;

int tr_stacks_cmp(const nt_trace *t, const tr_names *nm, uint32_t a, uint32_t b)
{
    const tr_rstack *x = &t->stacks[a], *y = &t->stacks[b];
    uint32_t i = x->count, j = y->count;
    while (i && j) {
        uint32_t p = nm->of_frame[t->ids[x->off + --i]], q = nm->of_frame[t->ids[y->off + --j]];
        if (p != q)
            return p < q ? -1 : 1;
    }
    return i ? 1 : j ? -1 : 0;
}

/* Two stacks (indices) root first by name id. */
static int cmp_stacks(const void *pa, const void *pb, void *ctx)
{
    const folded_ctx *c = ctx;
    return tr_stacks_cmp(c->t, c->nm, *(const uint32_t *)pa, *(const uint32_t *)pb);
}

void tr_folded_frame(tr_out *o, const char *name)
{
    /* A name from the trace may hold the format's separator or controls: keep one frame one
     * field, one stack one line, and no control byte (common/text_escape.h). */
    char esc[4096];
    size_t n = cm_text_escape(esc, sizeof esc, name, ";");
    tr_out_bytes(o, esc, n < sizeof esc ? n : sizeof esc - 1);
}

void tr_folded_stack(tr_out *o, const nt_trace *t, uint32_t k, unsigned flags)
{
    const tr_rstack *r = &t->stacks[k];
    if (!r->count) {
        tr_out_bytes(o, "-", 1);
        return;
    }
    char buf[1024];
    for (uint32_t f = r->count; f-- > 0;) {
        nt_frame_name_ex(&t->frames[t->ids[r->off + f]], flags, buf, sizeof buf);
        tr_folded_frame(o, buf);
        if (f)
            tr_out_bytes(o, ";", 1);
    }
}

nt_status nt_export_folded(const nt_trace *t, const nt_export_options *given, nt_sink_fn w, void *user)
{
    nt_export_options opts, *opt = &opts;
    if (!ABI_IN(nt_export_options, opt, given))
        return NT_ERR_INVALID_ARG;
    if (!t || !w || !tr_selection_fits(t, opt))
        return NT_ERR_INVALID_ARG;
    tr_selection sel;
    tr_selection_init(&sel, t, opt);
    cm_mem m;
    cm_mem_init(&m, &t->mem.a);
    size_t ns = t->nstacks ? t->nstacks : 1;
    int64_t *sw = cm_mem_alloc(&m, ns * sizeof *sw);
    bool *used = cm_mem_alloc(&m, ns);
    tr_walk wk;
    if (!sw || !used || !tr_walk_init(&wk, &m, t, &sel)) {
        cm_mem_free(&m, sw, sw ? ns * sizeof *sw : 0);
        cm_mem_free(&m, used, used ? ns : 0);
        return NT_ERR_NOMEM;
    }
    memset(sw, 0, ns * sizeof *sw);
    memset(used, 0, ns);
    size_t nused = 0;
    for (uint32_t th = 0; th < t->nthreads; th++) {
        if (!tr_walk_thread_selected(&wk, th))
            continue;
        tr_walk_it it;
        tr_walk_begin(&wk, th, &it);
        int64_t wt;
        for (size_t i; (i = tr_walk_next(&wk, &it, false, &wt)) != SIZE_MAX;) {
            uint32_t k = TR_SAMPLE(t, i)->stack;
            sw[k] = tr_add_weight(sw[k], wt);
            nused += !used[k];
            used[k] = true;
        }
    }
    tr_walk_free(&wk);
    tr_names nm;
    nt_status st = tr_names_build(&m, t, sel.opt.signatures ? NT_NAME_SIGNATURE : 0, &nm);
    uint32_t *order = st == NT_OK ? cm_mem_alloc(&m, (nused ? nused : 1) * 2 * sizeof *order) : NULL;
    if (st == NT_OK && !order)
        st = NT_ERR_NOMEM;
    if (st == NT_OK) {
        size_t n = 0;
        for (size_t k = 0; k < t->nstacks; k++)
            if (used[k])
                order[n++] = (uint32_t)k;
        folded_ctx c = { t, &nm };
        cm_merge_sort(order, order + nused, n, sizeof *order, cmp_stacks, &c);
        tr_out o;
        tr_out_init(&o, w, user);
        for (size_t i = 0; i < n && !o.failed; i++) {
            int64_t total = sw[order[i]];
            while (i + 1 < n && cmp_stacks(&order[i], &order[i + 1], &c) == 0)
                total = tr_add_weight(total, sw[order[++i]]);
            tr_folded_stack(&o, t, order[i], nm.flags);
            tr_out_bytes(&o, " ", 1);
            tr_out_i64(&o, total);
            tr_out_bytes(&o, "\n", 1);
        }
        st = tr_out_flush(&o);
    }
    cm_mem_free(&m, order, (nused ? nused : 1) * 2 * sizeof *order);
    tr_names_free(&m, &nm);
    cm_mem_free(&m, used, ns);
    cm_mem_free(&m, sw, ns * sizeof *sw);
    return st;
}
