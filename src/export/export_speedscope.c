/* Speedscope JSON: the frames once in "shared", then one sampled profile per
 * thread whose stacks are frame indices root first, with a weight per sample.
 * A sampled profile has no open/close events, so there is nothing to pair up:
 * the file is valid by construction. */
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

nt_status nt_export_speedscope(const nt_trace *t, const nt_export_options *opt, nt_sink_fn w, void *user)
{
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
    tr_out_str(&o, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n\"shared\":{\"frames\":[");
    for (size_t i = 0; i < nm->n; i++) {
        tr_out_str(&o, i ? ",\n{\"name\":" : "\n{\"name\":");
        tr_frame_name_json(&o, nm->rep[i], nm->flags);
        tr_out_bytes(&o, "}", 1);
    }
    tr_out_str(&o, "]},\n\"profiles\":[");
    /* Busiest thread first: speedscope opens the first profile (activeProfileIndex 0). */
    tr_thread_total *order = nt_mem_alloc(&x.m, (t->nthreads ? t->nthreads : 1) * sizeof *order);
    if (!order) {
        tr_export_close(&x);
        return NT_ERR_NOMEM;
    }
    size_t nprof = 0;
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
            order[nprof++] = (tr_thread_total){ .thread = th, .total = total };
    }
    if (nprof)
        qsort(order, nprof, sizeof *order, tr_cmp_busiest);
    size_t profiles = 0;
    for (size_t p = 0; p < nprof && !o.failed; p++) {
        uint32_t th = (uint32_t)order[p].thread;
        int64_t total = order[p].total, wt;
        tr_walk_it it;
        tr_out_str(&o, profiles++ ? ",\n{\"type\":\"sampled\",\"name\":\"Thread " : "\n{\"type\":\"sampled\",\"name\":\"Thread ");
        tr_out_u64(&o, t->threads[th]);
        tr_out_str(&o, by_time ? "\",\"unit\":\"nanoseconds\"" : "\",\"unit\":\"none\"");
        tr_out_str(&o, ",\"startValue\":0,\"endValue\":");
        tr_out_i64(&o, total);
        tr_out_str(&o, ",\n\"samples\":[");
        bool any = false;
        tr_walk_begin(wk, th, &it);
        for (size_t i; (i = tr_walk_next(wk, &it, false, &wt)) != SIZE_MAX;) {
            const tr_rstack *r = &t->stacks[TR_SAMPLE(t, i)->stack];
            tr_out_str(&o, any ? ",[" : "[");
            any = true;
            for (uint32_t k = r->count; k-- > 0;) {
                tr_out_u64(&o, nm->of_frame[r->off + k]);
                if (k)
                    tr_out_bytes(&o, ",", 1);
            }
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
    nt_mem_free(&x.m, order, (t->nthreads ? t->nthreads : 1) * sizeof *order);
    tr_out_str(&o, "],\n\"name\":");
    tr_out_json(&o, sel->opt.name ? sel->opt.name : "nettrace");
    tr_out_str(&o, ",\"activeProfileIndex\":0,\"exporter\":\"libnettrace ");
    tr_out_str(&o, NT_VERSION_STRING);
    tr_out_str(&o, "\"}\n");
    st = tr_out_flush(&o);
    tr_export_close(&x);
    return st;
}
