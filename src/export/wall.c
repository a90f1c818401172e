/* The wall profile's weights (nt_trace_wall_ns): each sample weighs the time
 * to its thread's next sample, the rule NT_WEIGHT_TIME exports by, taken
 * from the exporters' own walk so that top, samples and stacks agree. */
#include "export/export_names.h"

nt_status nt_trace_wall_ns(const nt_trace *t, int64_t *out)
{
    if (!t || (!out && t->nsamples))
        return NT_ERR_INVALID_ARG;
    tr_selection sel; /* every sample: the gap runs to the next sample whatever a filter keeps */
    tr_selection_init(&sel, t, NULL);
    cm_mem m;
    cm_mem_init(&m, &t->mem.a);
    tr_walk wk;
    if (!tr_walk_init(&wk, &m, t, &sel))
        return NT_ERR_NOMEM;
    for (uint32_t th = 0; th < t->nthreads; th++) {
        tr_walk_it it;
        tr_walk_begin(&wk, th, &it);
        int64_t w;
        for (size_t i; (i = tr_walk_next(&wk, &it, true, &w)) != SIZE_MAX;)
            out[i] = w;
    }
    tr_walk_free(&wk);
    return NT_OK;
}
