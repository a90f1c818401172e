/* The GC timeline: one nt_gc per GCStart, completed by its GCEnd, the
 * GCHeapStats that follows, and the execution-engine suspension around it.
 * The runtime also suspends for other reasons (the sample profiler does, for
 * every sample), so only a suspension whose SuspendEEBegin reason is GC (1)
 * or GC prep (6) is the GC's pause: from that SuspendEEBegin to the
 * RestartEEEnd that ends it, as PerfView's GCStats measures it.  The events
 * are matched per thread: the suspending thread starts the GC, ends it,
 * writes its GCHeapStats and restarts the runtime, while other threads'
 * events (samples' suspensions, a background GC's) interleave in the stream
 * in an order that depends on buffering. */
#include "trace/profile_internal.h"
#include "common/sat.h"
#include "common/sort.h"

#include <stdio.h>
#include <string.h>

#define EV_GC_START 1
#define EV_GC_END 2
#define EV_RESTART_EE_END 3
#define EV_GC_HEAP_STATS 4
#define EV_SUSPEND_EE_END 8
#define EV_SUSPEND_EE_BEGIN 9
#define EV_GC_PER_HEAP_HISTORY 204
#define SUSPEND_FOR_GC 1
#define SUSPEND_FOR_GC_PREP 6

const char *nt_gc_reason_name(uint32_t reason)
{
    static const char *const names[] = { "AllocSmall",         "Induced",       "LowMemory",
                                         "Empty",              "AllocLarge",    "OutOfSpaceSOH",
                                         "OutOfSpaceLOH",      "InducedNotForced", "Internal",
                                         "InducedLowMemory",   "InducedCompacting", "LowMemoryHost",
                                         "PMFullGC",           "LowMemoryHostBlocking" };
    return reason < sizeof names / sizeof names[0] ? names[reason] : "Other";
}

const char *nt_gc_type_name(uint32_t type)
{
    static const char *const names[] = { "blocking", "background", "foreground" };
    return type < 3 ? names[type] : "other";
}

void pr_gc_allocated(pr_gc_state *st, int64_t bytes)
{
    st->ticks_seen = true;
    st->allocated_since = cm_sat_add(st->allocated_since, bytes);
}

/* The latest GC with this number (GCEnd names its GC by Count). */
static nt_gc *find(nt_profile *p, int64_t number)
{
    for (size_t i = p->ngcs; i-- > 0 && p->ngcs - i <= 64;)
        if (p->gcs[i].number == (uint32_t)number)
            return &p->gcs[i];
    return NULL;
}

/* A limit reached: said in st->limit_msg. */
static nt_status limit(pr_gc_state *st, const char *what, uint32_t max)
{
    snprintf(st->limit_msg, sizeof st->limit_msg, "more than %u %s (nt_trace_limits.%s)", max, what,
             what[0] == 'G' ? "max_gcs" : "max_threads");
    return NT_ERR_LIMIT;
}

/* The thread's suspension record, added when new; NULL when memory is short
 * or the threads are at max_threads (*s then NT_ERR_LIMIT). */
static pr_suspension *suspension(nt_profile *p, pr_gc_state *st, uint64_t thread, bool add, nt_status *why)
{
    uint32_t i = cm_map_index(&st->susp_index, thread);
    if (i != UINT32_MAX)
        return &st->susp[i];
    if (add && st->nsusp >= st->lim->max_threads) {
        *why = limit(st, "threads in GC suspensions", st->lim->max_threads);
        return NULL;
    }
    *why = NT_ERR_NOMEM;
    if (!add || st->nsusp >= UINT32_MAX - 2 ||
        !cm_mem_reserve(&p->mem, (void **)&st->susp, &st->susp_cap, st->nsusp + 1, sizeof *st->susp) ||
        !cm_map_set(&p->mem, &st->susp_index, thread, (uint32_t)st->nsusp))
        return NULL;
    pr_suspension *s = &st->susp[st->nsusp++];
    *s = (pr_suspension){ thread, false, -1, -1 };
    return s;
}

static nt_status gc_start(nt_profile *p, pr_gc_state *st, const nt_event *ev, int64_t ns)
{
    pr_want w[] = { { "Count", false, { 0 } }, { "Depth", false, { 0 } }, { "Reason", false, { 0 } },
                    { "Type", false, { 0 } } };
    pr_fields(ev, w, 4);
    if (p->ngcs >= st->lim->max_gcs)
        return limit(st, "GCs", st->lim->max_gcs);
    if (!cm_mem_reserve(&p->mem, (void **)&p->gcs, &p->gcs_cap, p->ngcs + 1, sizeof *p->gcs))
        return NT_ERR_NOMEM;
    nt_status unused;
    const pr_suspension *su = suspension(p, st, ev->thread_id, false, &unused);
    nt_gc *g = &p->gcs[p->ngcs++];
    memset(g, 0, sizeof *g);
    g->number = (uint32_t)pr_int(&w[0]);
    g->generation = (uint32_t)pr_int(&w[1]);
    g->reason = (uint32_t)pr_int(&w[2]);
    g->type = (uint32_t)pr_int(&w[3]);
    g->thread_id = ev->thread_id;
    g->start_ns = ns;
    g->end_ns = g->restart_end_ns = g->suspension_ns = g->pause_ns = -1;
    bool in = su && su->for_gc;
    g->suspend_begin_ns = in ? su->begin_ns : -1;
    g->suspend_end_ns = in ? su->end_ns : -1;
    if (g->suspend_begin_ns >= 0 && g->suspend_end_ns >= 0)
        g->suspension_ns = cm_elapsed(g->suspend_begin_ns, g->suspend_end_ns);
    g->heap_after = g->promoted = -1;
    for (int k = 0; k < 5; k++)
        g->gen_size[k] = -1;
    g->heap_before = st->heap_known ? cm_sat_add(st->last_heap_after, st->allocated_since) : -1;
    st->allocated_since = 0;
    return NT_OK;
}

/* GCPerHeapHistory (one per heap, during its GC): each generation's size
 * before the GC in the Values array's SizeBefore.  Without allocation ticks
 * to estimate it from, the GC's heap_before is their sum over the heaps --
 * measured, not the previous GC's heap after. */
static void per_heap_history(nt_profile *p, pr_gc_state *st, const nt_event *ev)
{
    nt_gc *g = NULL;
    size_t i = p->ngcs;
    while (i-- > 0 && p->ngcs - i <= 64 && !g)
        if (p->gcs[i].end_ns < 0)
            g = &p->gcs[i];
    if (!g || st->ticks_seen)
        return;
    nt_field_iter it;
    nt_field_value v;
    int64_t before = 0;
    bool any = false;
    if (nt_event_fields_begin(ev, &it) != NT_OK)
        return;
    while (nt_field_next(&it, &v))
        if (v.depth >= 1 && v.name && strcmp(v.name, "SizeBefore") == 0) {
            pr_want w = { v.name, true, v };
            int64_t s = pr_int(&w);
            before = s > 0 && before <= INT64_MAX - s ? before + s : before;
            any = true;
        }
    if (!any)
        return;
    size_t at = (size_t)(g - p->gcs) + 1;
    if (st->phh_gc != at) {
        st->phh_gc = at;
        st->phh_before = 0;
    }
    st->phh_before = st->phh_before <= INT64_MAX - before ? st->phh_before + before : INT64_MAX;
    g->heap_before = st->phh_before;
}

/* GCHeapStats follows the GCEnd of its GC on the same thread. */
static void heap_stats(nt_profile *p, pr_gc_state *st, const nt_event *ev)
{
    nt_gc *g = NULL;
    for (size_t i = p->ngcs; i-- > 0 && p->ngcs - i <= 64 && !g;)
        if (p->gcs[i].thread_id == ev->thread_id && p->gcs[i].end_ns >= 0)
            g = &p->gcs[i];
    if (!g || g->heap_after >= 0)
        return;
    pr_want w[] = { { "GenerationSize0", false, { 0 } },  { "GenerationSize1", false, { 0 } },
                    { "GenerationSize2", false, { 0 } },  { "GenerationSize3", false, { 0 } },
                    { "GenerationSize4", false, { 0 } },  { "TotalPromotedSize0", false, { 0 } },
                    { "TotalPromotedSize1", false, { 0 } }, { "TotalPromotedSize2", false, { 0 } },
                    { "TotalPromotedSize3", false, { 0 } }, { "TotalPromotedSize4", false, { 0 } } };
    pr_fields(ev, w, 10);
    int64_t heap = 0, promoted = 0;
    for (int k = 0; k < 5; k++) {
        g->gen_size[k] = w[k].have ? pr_int(&w[k]) : -1;
        heap = cm_sat_add(heap, w[k].have ? pr_int(&w[k]) : 0);
        promoted = cm_sat_add(promoted, w[5 + k].have ? pr_int(&w[5 + k]) : 0);
    }
    g->heap_after = heap;
    g->promoted = promoted;
    st->last_heap_after = heap;
    st->heap_known = true;
}

nt_status pr_gc_event(nt_profile *p, pr_gc_state *st, const nt_event *ev, int64_t ns)
{
    nt_status s = NT_OK;
    switch (ev->desc->event_id) {
    case EV_SUSPEND_EE_BEGIN: {
        pr_want w[] = { { "Reason", false, { 0 } } };
        pr_fields(ev, w, 1);
        int64_t r = pr_int(&w[0]);
        pr_suspension *su = suspension(p, st, ev->thread_id, true, &s);
        if (!su)
            return s;
        su->for_gc = r == SUSPEND_FOR_GC || r == SUSPEND_FOR_GC_PREP;
        su->begin_ns = ns;
        su->end_ns = -1;
        return NT_OK;
    }
    case EV_SUSPEND_EE_END: {
        pr_suspension *su = suspension(p, st, ev->thread_id, false, &s);
        if (su && su->for_gc)
            su->end_ns = ns;
        return NT_OK;
    }
    case EV_GC_START: return gc_start(p, st, ev, ns);
    case EV_GC_END: {
        pr_want w[] = { { "Count", false, { 0 } } };
        pr_fields(ev, w, 1);
        nt_gc *g = find(p, pr_int(&w[0]));
        if (g && g->end_ns < 0) {
            g->end_ns = ns;
            if (g->pause_ns < 0 && g->suspend_begin_ns < 0)
                g->pause_ns = cm_elapsed(g->start_ns, ns); /* no suspension seen: the GC's own length */
        }
        return NT_OK;
    }
    case EV_GC_HEAP_STATS: heap_stats(p, st, ev); return NT_OK;
    case EV_GC_PER_HEAP_HISTORY: per_heap_history(p, st, ev); return NT_OK;
    case EV_RESTART_EE_END: {
        pr_suspension *su = suspension(p, st, ev->thread_id, false, &s);
        if (!su || !su->for_gc)
            return NT_OK;
        /* The GCs this thread started during the suspension. */
        for (size_t i = p->ngcs; i-- > 0 && p->ngcs - i <= 64;) {
            nt_gc *g = &p->gcs[i];
            if (g->thread_id != ev->thread_id || g->suspend_begin_ns != su->begin_ns || g->restart_end_ns >= 0)
                continue;
            g->restart_end_ns = ns;
            g->pause_ns = cm_elapsed(g->suspend_begin_ns, ns);
        }
        su->for_gc = false;
        return NT_OK;
    }
    default: return NT_OK;
    }
}

void pr_gc_release(nt_profile *p, pr_gc_state *st)
{
    cm_mem_free(&p->mem, st->susp, st->susp_cap * sizeof *st->susp);
    cm_map_free(&p->mem, &st->susp_index);
    st->susp = NULL;
    st->nsusp = st->susp_cap = 0;
}

static int by_start(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    int64_t x = ((const nt_gc *)a)->start_ns, y = ((const nt_gc *)b)->start_ns;
    return (x > y) - (x < y);
}

bool pr_gc_finish(nt_profile *p, pr_gc_state *st)
{
    pr_gc_release(p, st);
    /* By start time; ties keep stream order. */
    size_t n = p->ngcs;
    if (n < 2)
        return true;
    nt_gc *tmp = cm_mem_alloc(&p->mem, n * sizeof *tmp);
    if (!tmp)
        return false;
    cm_merge_sort(p->gcs, tmp, n, sizeof *tmp, by_start, NULL);
    cm_mem_free(&p->mem, tmp, n * sizeof *tmp);
    return true;
}
