/* The HTML flame graph of a trace's thread samples (flame_html.h): the
 * export name table as the names, one group per selected thread (busiest
 * first), and each thread's distinct stacks with their weights by the
 * selection's rule -- the walk and weights of nt_export_folded, kept per
 * thread, so the page's "every thread" tree holds what the folded export
 * writes and a thread's view what its own export would. */
#include "export/export_internal.h"
#include "export/flame_html.h"

#include <stdio.h>
#include <string.h>

/* One thread's stacks: weights summed per stack (sw, -1 for none yet;
 * touched lists the stacks seen, in order), then written and sw reset. */
static void thread_stacks(ex_out *o, const nt_trace *t, const ex_walk *wk, const ex_names *nm, uint32_t th,
                          uint32_t group, int64_t *sw, uint32_t *touched, bool *first)
{
    size_t n = 0;
    ex_walk_it it;
    ex_walk_begin(wk, th, &it);
    int64_t wt;
    for (size_t i; (i = ex_walk_next(wk, &it, false, &wt)) != SIZE_MAX;) {
        uint32_t k = tr_view_stack(t, i);
        if (sw[k] < 0) { /* first sample of this stack on the thread */
            touched[n++] = k;
            sw[k] = 0;
        }
        sw[k] = cm_sat_add(sw[k], wt);
    }
    for (size_t j = 0; j < n && !o->failed; j++) {
        uint32_t k = touched[j];
        nt_trace_stack r = nt_trace_stack_at(t, k);
        ex_flame_stack_begin(o, *first, group, sw[k]);
        *first = false;
        for (uint32_t f = r.frame_count; f-- > 0;)
            ex_flame_stack_frame(o, nm->of_frame[r.frame_ids[f]]);
        ex_flame_stack_end(o);
        sw[k] = -1;
    }
}

nt_status nt_export_html(const nt_trace *t, const nt_export_options *given, nt_sink_fn w, void *user)
{
    ex_export x;
    nt_status st = ex_export_open(&x, t, given, w);
    if (st != NT_OK)
        return st;
    size_t nth = nt_trace_thread_count(t) ? nt_trace_thread_count(t) : 1;
    size_t ns = nt_trace_stack_count(t) ? nt_trace_stack_count(t) : 1;
    ex_thread_total *order = cm_mem_alloc(&x.m, nth * sizeof *order);
    int64_t *sw = cm_mem_alloc(&x.m, ns * sizeof *sw);
    uint32_t *touched = cm_mem_alloc(&x.m, ns * sizeof *touched);
    if (!order || !sw || !touched) {
        st = NT_ERR_NOMEM;
        goto out;
    }
    for (size_t k = 0; k < ns; k++)
        sw[k] = -1; /* weights are never negative: -1 marks a stack not seen yet */
    bool by_time = x.sel.opt.weight == NT_WEIGHT_TIME;
    ex_out o;
    ex_out_init(&o, w, user);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s: %s", x.sel.opt.name ? x.sel.opt.name : "nettrace",
             by_time ? "wall time of the thread samples"
             : x.sel.opt.filter.managed_only ? "managed-cpu (thread samples in managed code)"
                                      : "thread-time (thread samples, running or blocked)");
    ex_flame_open(&o, buf, by_time ? "ns" : "samples");
    for (size_t i = 0; i < x.nm.n; i++) {
        nt_frame_name_ex(x.nm.rep[i], x.nm.flags, buf, sizeof buf);
        ex_flame_name(&o, i == 0, buf);
    }
    ex_flame_groups(&o);
    size_t ngroups = ex_threads_busiest(t, &x.wk, order);
    for (size_t g = 0; g < ngroups; g++) {
        snprintf(buf, sizeof buf, "thread %llu", (unsigned long long)nt_trace_thread_id(t, order[g].thread));
        ex_flame_group(&o, g == 0, buf, order[g].total);
    }
    ex_flame_stacks(&o);
    bool first = true;
    for (size_t g = 0; g < ngroups && !o.failed; g++)
        thread_stacks(&o, t, &x.wk, &x.nm, (uint32_t)order[g].thread, (uint32_t)g, sw, touched, &first);
    ex_flame_close(&o);
    st = ex_out_flush(&o);
out:
    cm_mem_free(&x.m, touched, touched ? ns * sizeof *touched : 0);
    cm_mem_free(&x.m, sw, sw ? ns * sizeof *sw : 0);
    cm_mem_free(&x.m, order, order ? nth * sizeof *order : 0);
    ex_export_close(&x);
    return st;
}
