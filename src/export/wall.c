/* The wall profile's weights (nt_trace_wall_ns): each sample weighs the time
 * to its thread's next sample, the rule NT_WEIGHT_TIME exports by, taken
 * from the exporters' own walk so that top, samples and stacks agree. */
#include "export/export_internal.h"

nt_status nt_trace_wall_ns(const nt_trace *t, int64_t *out)
{
    if (!t || (!out && nt_trace_sample_count(t)))
        return NT_ERR_INVALID_ARG;
    ex_selection sel; /* every sample: the gap runs to the next sample whatever a filter keeps */
    ex_selection_init(&sel, t, NULL);
    cm_mem m;
    cm_mem_init(&m, tr_view_allocator(t));
    ex_walk wk;
    if (!ex_walk_init(&wk, &m, t, &sel))
        return NT_ERR_NOMEM;
    for (uint32_t th = 0, nth = (uint32_t)nt_trace_thread_count(t); th < nth; th++) {
        ex_walk_it it;
        ex_walk_begin(&wk, th, &it);
        int64_t w;
        for (size_t i; (i = ex_walk_next(&wk, &it, true, &w)) != SIZE_MAX;)
            out[i] = w;
    }
    ex_walk_free(&wk);
    return NT_OK;
}
