/* Speedscope JSON: the frames once in "shared", then one sampled profile per
 * thread whose stacks are frame indices root first, with a weight per sample.
 * A sampled profile has no open/close events, so there is nothing to pair up:
 * the file is valid by construction. */
#include "export/export_internal.h"

#include <stdlib.h>
#include <string.h>

void ex_frame_name_json(ex_out *o, const nt_frame *f, unsigned flags)
{
    /* A name longer than the buffer (none is, in practice) is shown cut. */
    char buf[1024];
    nt_frame_name_ex(f, flags, buf, sizeof buf);
    ex_out_json(o, buf);
}

void ex_speedscope_open(ex_out *o, const ex_names *nm, size_t n)
{
    ex_out_str(o, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n\"shared\":{\"frames\":[");
    for (size_t i = 0; i < n; i++) {
        ex_out_str(o, i ? ",\n{\"name\":" : "\n{\"name\":");
        ex_frame_name_json(o, nm->rep[i], nm->flags);
        ex_out_bytes(o, "}", 1);
    }
}

void ex_speedscope_profile(ex_out *o, bool first, uint64_t thread_id, const char *unit, int64_t total)
{
    ex_out_str(o, first ? "\n{\"type\":\"sampled\",\"name\":\"Thread " : ",\n{\"type\":\"sampled\",\"name\":\"Thread ");
    ex_out_u64(o, thread_id);
    ex_out_str(o, "\",\"unit\":\"");
    ex_out_str(o, unit);
    ex_out_str(o, "\",\"startValue\":0,\"endValue\":");
    ex_out_i64(o, total);
    ex_out_str(o, ",\n\"samples\":[");
}

void ex_speedscope_stack(ex_out *o, const nt_trace *t, uint32_t stack, const uint32_t *of_frame)
{
    nt_trace_stack r = nt_trace_stack_at(t, stack);
    for (uint32_t k = r.frame_count; k-- > 0;) {
        ex_out_u64(o, of_frame[r.frame_ids[k]]);
        if (k)
            ex_out_bytes(o, ",", 1);
    }
}

void ex_speedscope_close(ex_out *o, const char *name)
{
    ex_out_str(o, "],\n\"name\":");
    ex_out_json(o, name ? name : "nettrace");
    ex_out_str(o, ",\"activeProfileIndex\":0,\"exporter\":\"libnettrace ");
    ex_out_str(o, NT_VERSION_STRING);
    ex_out_str(o, "\"}\n");
}

size_t ex_threads_busiest(const nt_trace *t, const ex_walk *wk, ex_thread_total *order)
{
    size_t n = 0;
    for (uint32_t th = 0, nth = (uint32_t)nt_trace_thread_count(t); th < nth; th++) {
        if (!ex_walk_thread_selected(wk, th))
            continue;
        int64_t total = 0, wt;
        size_t count = 0;
        ex_walk_it it;
        ex_walk_begin(wk, th, &it);
        while (ex_walk_next(wk, &it, false, &wt) != SIZE_MAX) {
            total = cm_sat_add(total, wt);
            count++;
        }
        if (count)
            order[n++] = (ex_thread_total){ .thread = th, .total = total };
    }
    if (n)
        qsort(order, n, sizeof *order, ex_cmp_busiest);
    return n;
}

nt_status nt_export_speedscope(const nt_trace *t, const nt_export_options *given, nt_sink_fn w, void *user)
{
    ex_export x;
    if (t && tr_view_counted(t))
        return NT_ERR_INVALID_ARG; /* a timeline needs every sample */
    nt_status st = ex_export_open(&x, t, given, w);
    if (st != NT_OK)
        return st;
    const ex_selection *sel = &x.sel;
    const ex_names *nm = &x.nm;
    ex_walk *wk = &x.wk;
    bool by_time = sel->opt.weight == NT_WEIGHT_TIME;
    ex_out o;
    ex_out_init(&o, w, user);
    ex_speedscope_open(&o, nm, nm->n);
    ex_out_str(&o, "]},\n\"profiles\":[");
    /* Busiest thread first: speedscope opens the first profile (activeProfileIndex 0). */
    size_t nth = nt_trace_thread_count(t) ? nt_trace_thread_count(t) : 1;
    ex_thread_total *order = cm_mem_alloc(&x.m, nth * sizeof *order);
    if (!order) {
        ex_export_close(&x);
        return NT_ERR_NOMEM;
    }
    size_t nprof = ex_threads_busiest(t, wk, order);
    for (size_t p = 0; p < nprof && !o.failed; p++) {
        uint32_t th = (uint32_t)order[p].thread;
        int64_t total = order[p].total, wt;
        ex_walk_it it;
        ex_speedscope_profile(&o, p == 0, nt_trace_thread_id(t, th), by_time ? "nanoseconds" : "none", total);
        bool any = false;
        ex_walk_begin(wk, th, &it);
        for (size_t i; (i = ex_walk_next(wk, &it, false, &wt)) != SIZE_MAX;) {
            ex_out_str(&o, any ? ",[" : "[");
            any = true;
            ex_speedscope_stack(&o, t, tr_view_stack(t, i), nm->of_frame);
            ex_out_bytes(&o, "]", 1);
        }
        ex_out_str(&o, "],\n\"weights\":[");
        any = false;
        ex_walk_begin(wk, th, &it);
        while (ex_walk_next(wk, &it, false, &wt) != SIZE_MAX) {
            if (any)
                ex_out_bytes(&o, ",", 1);
            any = true;
            ex_out_i64(&o, wt);
        }
        ex_out_str(&o, "]}");
    }
    cm_mem_free(&x.m, order, nth * sizeof *order);
    ex_speedscope_close(&o, sel->opt.name);
    st = ex_out_flush(&o);
    ex_export_close(&x);
    return st;
}
