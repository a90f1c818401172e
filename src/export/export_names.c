/* Distinct display names of the frames in a trace: the exporters that list
 * frames once (speedscope's shared frames, pprof's functions) give every
 * frame of every stack a dense name index, code versions of one method
 * sharing it. */
#include "common/abi.h"
#include "export/export_internal.h"

#include <string.h>

static uint64_t name_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* The name of f into buf (grown in *big when it does not fit). */
static const char *name_of(cm_mem *m, const nt_frame *f, unsigned flags, char *buf, size_t size, char **big,
                           size_t *big_size, size_t *len)
{
    *len = nt_frame_name_ex(f, flags, buf, size);
    if (*len < size)
        return buf;
    if (*len + 1 > *big_size) {
        void *p = *big;
        if (!cm_mem_resize(m, &p, *big_size, *len + 1))
            return NULL;
        *big = p;
        *big_size = *len + 1;
    }
    nt_frame_name_ex(f, flags, *big, *big_size);
    return *big;
}

/* While names are given out: the scratch of ex_names_build. */
typedef struct names_work {
    cm_mem *m;
    const nt_trace *t;
    ex_names *nm;
    cm_map by_hash;       /* name hash (probing on) -> name index */
    uint32_t *by_method;  /* method index -> name index */
    char a[512], b[512];
    char *big_a, *big_b;
    size_t big_a_size, big_b_size;
} names_work;

/* Frame id i's name index, given out now. */
static nt_status name_frame(names_work *w, uint32_t i)
{
    ex_names *nm = w->nm;
    const nt_frame *f = nt_trace_frame_at(w->t, i);
    /* Frames of one method record always share a name: look that up first. */
    if (f->method_index != NT_TRACE_NO_METHOD && w->by_method[f->method_index] != UINT32_MAX) {
        nm->of_frame[i] = w->by_method[f->method_index];
        return NT_OK;
    }
    size_t la, lb;
    const char *na = name_of(w->m, f, nm->flags, w->a, sizeof w->a, &w->big_a, &w->big_a_size, &la);
    if (!na)
        return NT_ERR_NOMEM;
    uint64_t h = name_hash(na, la);
    uint32_t id = UINT32_MAX;
    /* Probe the hash, then successors, until a free key: collisions stay exact. */
    for (uint64_t k = h;; k++) {
        uint32_t cand = cm_map_index(&w->by_hash, k);
        if (cand == UINT32_MAX)
            break;
        const char *nb = name_of(w->m, nm->rep[cand], nm->flags, w->b, sizeof w->b, &w->big_b, &w->big_b_size, &lb);
        if (!nb)
            return NT_ERR_NOMEM;
        if (la == lb && memcmp(na, nb, la) == 0) {
            id = cand;
            break;
        }
        h = k + 1;
    }
    if (id == UINT32_MAX) {
        if (!cm_mem_reserve(w->m, (void **)&nm->rep, &nm->rep_cap, nm->n + 1, sizeof *nm->rep) ||
            !cm_map_set(w->m, &w->by_hash, h, (uint32_t)nm->n))
            return NT_ERR_NOMEM;
        id = (uint32_t)nm->n;
        nm->rep[nm->n++] = f;
    }
    nm->of_frame[i] = id;
    if (f->method_index != NT_TRACE_NO_METHOD)
        w->by_method[f->method_index] = id;
    return NT_OK;
}

nt_status ex_names_build(cm_mem *m, const nt_trace *t, unsigned flags, ex_names *nm)
{
    memset(nm, 0, sizeof *nm);
    nm->flags = flags;
    size_t nf = nt_trace_frame_count(t) ? nt_trace_frame_count(t) : 1;
    nm->of_frame = cm_mem_alloc(m, nf * sizeof *nm->of_frame);
    nm->frames_alloc = nf;
    /* Method indices are dense: a frame's record finds its name id directly. */
    size_t nm_methods = nt_trace_method_count(t) ? nt_trace_method_count(t) : 1;
    names_work w = { .m = m, .t = t, .nm = nm, .by_method = cm_mem_alloc(m, nm_methods * sizeof *w.by_method) };
    nt_status st = nm->of_frame && w.by_method ? NT_OK : NT_ERR_NOMEM;
    if (st == NT_OK) {
        memset(w.by_method, 0xff, nm_methods * sizeof *w.by_method);
        memset(nm->of_frame, 0xff, nf * sizeof *nm->of_frame);
    }
    /* Names are numbered as the stacks meet them (stack by stack, innermost
     * frame first): that order is the exporters' output order. */
    for (size_t r = 0, ns = nt_trace_stack_count(t); st == NT_OK && r < ns; r++) {
        nt_trace_stack s = nt_trace_stack_at(t, r);
        for (uint32_t k = 0; st == NT_OK && k < s.frame_count; k++)
            if (nm->of_frame[s.frame_ids[k]] == UINT32_MAX)
                st = name_frame(&w, s.frame_ids[k]);
    }
    cm_mem_free(m, w.big_a, w.big_a_size);
    cm_mem_free(m, w.big_b, w.big_b_size);
    cm_map_free(m, &w.by_hash);
    cm_mem_free(m, w.by_method, nm_methods * sizeof *w.by_method);
    if (st != NT_OK)
        ex_names_free(m, nm);
    return st;
}

void ex_names_free(cm_mem *m, ex_names *nm)
{
    cm_mem_free(m, nm->of_frame, nm->frames_alloc * sizeof *nm->of_frame);
    cm_mem_free(m, (void *)nm->rep, nm->rep_cap * sizeof *nm->rep);
    memset(nm, 0, sizeof *nm);
}

/* A scan per thread reads every sample once per thread, so it pays only for
 * one thread; from two on, the index (three passes, 4 bytes a sample) is
 * cheaper (callgrind on the webapp trace as 27 live windows, each exported
 * as pprof: the scans were 5 % of all instructions). */
#define EX_SCAN_THREADS 1u

bool ex_walk_init(ex_walk *w, cm_mem *m, const nt_trace *t, const ex_selection *sel)
{
    memset(w, 0, sizeof *w);
    w->t = t;
    w->sel = sel;
    w->m = m;
    size_t n = nt_trace_sample_count(t), nt = nt_trace_thread_count(t);
    if (nt <= EX_SCAN_THREADS || sel->opt.filter.has_thread)
        return true;
    w->order = cm_mem_alloc(m, (n ? n : 1) * sizeof *w->order);
    w->first = cm_mem_alloc(m, (nt + 1) * sizeof *w->first);
    if (!w->order || !w->first) {
        ex_walk_free(w);
        return false;
    }
    memset(w->first, 0, (nt + 1) * sizeof *w->first);
    for (size_t i = 0; i < n; i++)
        w->first[tr_view_thread(t, i) + 1]++;
    for (size_t k = 0; k < nt; k++)
        w->first[k + 1] += w->first[k];
    for (size_t i = 0; i < n; i++)
        w->order[w->first[tr_view_thread(t, i)]++] = (uint32_t)i;
    /* first[k] now holds the end of thread k's run: shift back to starts. */
    for (size_t k = nt; k > 0; k--)
        w->first[k] = w->first[k - 1];
    w->first[0] = 0;
    return true;
}

void ex_walk_free(ex_walk *w)
{
    if (!w->m)
        return;
    size_t n = nt_trace_sample_count(w->t);
    cm_mem_free(w->m, w->order, (n ? n : 1) * sizeof *w->order);
    cm_mem_free(w->m, w->first, (nt_trace_thread_count(w->t) + 1) * sizeof *w->first);
    w->order = w->first = NULL;
}

bool ex_walk_thread_selected(const ex_walk *w, uint32_t th)
{
    return !w->sel->opt.filter.has_thread || nt_trace_thread_id(w->t, th) == w->sel->opt.filter.thread_id;
}

/* The thread's next sample at or after it->pos, any selection. */
static size_t raw_next(const ex_walk *w, ex_walk_it *it)
{
    if (w->order) {
        return it->pos < it->end ? w->order[it->pos++] : SIZE_MAX;
    }
    size_t i = tr_view_next_of_thread(w->t, it->thread, it->pos, it->end);
    it->pos = i == SIZE_MAX ? it->end : i + 1;
    return i;
}

void ex_walk_begin(const ex_walk *w, uint32_t thread, ex_walk_it *it)
{
    it->thread = thread;
    if (w->order) {
        it->pos = w->first[thread];
        it->end = w->first[thread + 1];
    } else {
        it->pos = 0;
        it->end = nt_trace_sample_count(w->t);
    }
    it->cur = SIZE_MAX;
    it->next = raw_next(w, it);
}

size_t ex_walk_next(const ex_walk *w, ex_walk_it *it, bool time_weight, int64_t *weight)
{
    for (;;) {
        it->cur = it->next;
        if (it->cur == SIZE_MAX)
            return SIZE_MAX;
        it->next = raw_next(w, it);
        if (!ex_selected(w->sel, it->cur))
            continue;
        if (tr_view_counted(w->t)) {
            *weight = time_weight || w->sel->opt.weight == NT_WEIGHT_TIME ? tr_view_wall_ns(w->t, it->cur)
                                                                           : (int64_t)tr_view_count(w->t, it->cur);
        } else if (!time_weight && w->sel->opt.weight != NT_WEIGHT_TIME) {
            *weight = 1;
        } else if (it->next == SIZE_MAX) {
            *weight = w->sel->default_ns;
        } else {
            *weight = tr_view_gap_ns(w->t, it->cur, it->next);
        }
        return it->cur;
    }
}

nt_status ex_export_open(ex_export *x, const nt_trace *t, const nt_export_options *given, nt_sink_fn w)
{
    nt_export_options opt;
    if (!ABI_IN(nt_export_options, &opt, given) || !t || !w || !ex_selection_fits(t, &opt))
        return NT_ERR_INVALID_ARG;
    ex_selection_init(&x->sel, t, &opt);
    cm_mem_init(&x->m, tr_view_allocator(t));
    nt_status st = ex_names_build(&x->m, t, opt.signatures ? NT_NAME_SIGNATURE : 0, &x->nm);
    if (st == NT_OK && !ex_walk_init(&x->wk, &x->m, t, &x->sel))
        st = NT_ERR_NOMEM;
    if (st != NT_OK)
        ex_names_free(&x->m, &x->nm);
    return st;
}

void ex_export_close(ex_export *x)
{
    ex_walk_free(&x->wk);
    ex_names_free(&x->m, &x->nm);
}

int ex_cmp_busiest(const void *a, const void *b)
{
    const ex_thread_total *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return (x->thread > y->thread) - (x->thread < y->thread);
}
