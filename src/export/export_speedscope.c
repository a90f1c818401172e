/* Speedscope JSON: the frames once in "shared", then one sampled profile per
 * thread whose stacks are frame indices root first, with a weight per sample.
 * A sampled profile has no open/close events, so there is nothing to pair up:
 * the file is valid by construction. */
#include "common/abi.h"
#include "export/export_names.h"

#include <stdlib.h>
#include <string.h>

void tr_frame_name_json(tr_out *o, const nt_frame *f, unsigned flags)
{
    /* A name longer than the buffer (none is, in practice) is shown cut. */
    char buf[1024];
    nt_frame_name_ex(f, flags, buf, sizeof buf);
    tr_out_json(o, buf);
}

void tr_speedscope_open(tr_out *o, const tr_names *nm, size_t n)
{
    tr_out_str(o, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n\"shared\":{\"frames\":[");
    for (size_t i = 0; i < n; i++) {
        tr_out_str(o, i ? ",\n{\"name\":" : "\n{\"name\":");
        tr_frame_name_json(o, nm->rep[i], nm->flags);
        tr_out_bytes(o, "}", 1);
    }
}

void tr_speedscope_profile(tr_out *o, bool first, uint64_t thread_id, const char *unit, int64_t total)
{
    tr_out_str(o, first ? "\n{\"type\":\"sampled\",\"name\":\"Thread " : ",\n{\"type\":\"sampled\",\"name\":\"Thread ");
    tr_out_u64(o, thread_id);
    tr_out_str(o, "\",\"unit\":\"");
    tr_out_str(o, unit);
    tr_out_str(o, "\",\"startValue\":0,\"endValue\":");
    tr_out_i64(o, total);
    tr_out_str(o, ",\n\"samples\":[");
}

void tr_speedscope_stack(tr_out *o, const nt_trace *t, uint32_t stack, const uint32_t *of_frame)
{
    const tr_rstack *r = &t->stacks[stack];
    for (uint32_t k = r->count; k-- > 0;) {
        tr_out_u64(o, of_frame[t->ids[r->off + k]]);
        if (k)
            tr_out_bytes(o, ",", 1);
    }
}

void tr_speedscope_close(tr_out *o, const char *name)
{
    tr_out_str(o, "],\n\"name\":");
    tr_out_json(o, name ? name : "nettrace");
    tr_out_str(o, ",\"activeProfileIndex\":0,\"exporter\":\"libnettrace ");
    tr_out_str(o, NT_VERSION_STRING);
    tr_out_str(o, "\"}\n");
}

size_t tr_threads_busiest(const nt_trace *t, const tr_walk *wk, tr_thread_total *order)
{
    size_t n = 0;
    for (uint32_t th = 0; th < t->nthreads; th++) {
        if (!tr_walk_thread_selected(wk, th))
            continue;
        int64_t total = 0, wt;
        size_t count = 0;
        tr_walk_it it;
        tr_walk_begin(wk, th, &it);
        while (tr_walk_next(wk, &it, false, &wt) != SIZE_MAX) {
            total = tr_add_weight(total, wt);
            count++;
        }
        if (count)
            order[n++] = (tr_thread_total){ .thread = th, .total = total };
    }
    if (n)
        qsort(order, n, sizeof *order, tr_cmp_busiest);
    return n;
}

nt_status nt_export_speedscope(const nt_trace *t, const nt_export_options *given, nt_sink_fn w, void *user)
{
    nt_export_options opts, *opt = &opts;
    if (!ABI_IN(nt_export_options, opt, given))
        return NT_ERR_INVALID_ARG;
    tr_export x;
    if (t && t->agg)
        return NT_ERR_INVALID_ARG; /* a timeline needs every sample */
    nt_status st = tr_export_open(&x, t, opt, w);
    if (st != NT_OK)
        return st;
    const tr_selection *sel = &x.sel;
    const tr_names *nm = &x.nm;
    tr_walk *wk = &x.wk;
    bool by_time = sel->opt.weight == NT_WEIGHT_TIME;
    tr_out o;
    tr_out_init(&o, w, user);
    tr_speedscope_open(&o, nm, nm->n);
    tr_out_str(&o, "]},\n\"profiles\":[");
    /* Busiest thread first: speedscope opens the first profile (activeProfileIndex 0). */
    tr_thread_total *order = cm_mem_alloc(&x.m, (t->nthreads ? t->nthreads : 1) * sizeof *order);
    if (!order) {
        tr_export_close(&x);
        return NT_ERR_NOMEM;
    }
    size_t nprof = tr_threads_busiest(t, wk, order);
    for (size_t p = 0; p < nprof && !o.failed; p++) {
        uint32_t th = (uint32_t)order[p].thread;
        int64_t total = order[p].total, wt;
        tr_walk_it it;
        tr_speedscope_profile(&o, p == 0, t->threads[th], by_time ? "nanoseconds" : "none", total);
        bool any = false;
        tr_walk_begin(wk, th, &it);
        for (size_t i; (i = tr_walk_next(wk, &it, false, &wt)) != SIZE_MAX;) {
            tr_out_str(&o, any ? ",[" : "[");
            any = true;
            tr_speedscope_stack(&o, t, TR_SAMPLE(t, i)->stack, nm->of_frame);
            tr_out_bytes(&o, "]", 1);
        }
        tr_out_str(&o, "],\n\"weights\":[");
        any = false;
        tr_walk_begin(wk, th, &it);
        while (tr_walk_next(wk, &it, false, &wt) != SIZE_MAX) {
            if (any)
                tr_out_bytes(&o, ",", 1);
            any = true;
            tr_out_i64(&o, wt);
        }
        tr_out_str(&o, "]}");
    }
    cm_mem_free(&x.m, order, (t->nthreads ? t->nthreads : 1) * sizeof *order);
    tr_speedscope_close(&o, sel->opt.name);
    st = tr_out_flush(&o);
    tr_export_close(&x);
    return st;
}
