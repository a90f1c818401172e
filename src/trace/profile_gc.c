/* The GC timeline: one nt_gc per GCStart, completed by its GCEnd, the
 * GCHeapStats that follows, and the execution-engine suspension around it.
 * The runtime also suspends for other reasons (the sample profiler does, for
 * every sample), so only a suspension whose SuspendEEBegin reason is GC (1)
 * or GC prep (6) is the GC's pause: from that SuspendEEBegin to the
 * RestartEEEnd that ends it, as PerfView's GCStats measures it. */
#include "trace/profile_internal.h"

#include <stdio.h>
#include <string.h>

#define EV_GC_START 1
#define EV_GC_END 2
#define EV_RESTART_EE_END 3
#define EV_GC_HEAP_STATS 4
#define EV_SUSPEND_EE_END 8
#define EV_SUSPEND_EE_BEGIN 9
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
    st->allocated_since = st->allocated_since > INT64_MAX - bytes ? INT64_MAX : st->allocated_since + bytes;
}

/* The latest GC with this number (GCEnd names its GC by Count). */
static nt_gc *find(nt_profile *p, int64_t number)
{
    for (size_t i = p->ngcs; i-- > 0 && p->ngcs - i <= 8;)
        if (p->gcs[i].number == (uint32_t)number)
            return &p->gcs[i];
    return p->ngcs ? &p->gcs[p->ngcs - 1] : NULL;
}

static bool gc_start(nt_profile *p, pr_gc_state *st, const nt_event *ev, int64_t ns)
{
    pr_want w[] = { { "Count", false, { 0 } }, { "Depth", false, { 0 } }, { "Reason", false, { 0 } },
                    { "Type", false, { 0 } } };
    pr_fields(ev, w, 4);
    if (!nt_mem_reserve(&p->mem, (void **)&p->gcs, &p->gcs_cap, p->ngcs + 1, sizeof *p->gcs))
        return false;
    nt_gc *g = &p->gcs[p->ngcs++];
    memset(g, 0, sizeof *g);
    g->number = (uint32_t)pr_int(&w[0]);
    g->generation = (uint32_t)pr_int(&w[1]);
    g->reason = (uint32_t)pr_int(&w[2]);
    g->type = (uint32_t)pr_int(&w[3]);
    g->thread_id = ev->thread_id;
    g->start_ns = ns;
    g->end_ns = g->restart_end_ns = g->suspension_ns = g->pause_ns = -1;
    g->suspend_begin_ns = st->in_gc_suspension ? st->suspend_begin_ns : -1;
    g->suspend_end_ns = st->in_gc_suspension ? st->suspend_end_ns : -1;
    if (g->suspend_begin_ns >= 0 && g->suspend_end_ns >= 0)
        g->suspension_ns = g->suspend_end_ns - g->suspend_begin_ns;
    g->heap_after = g->promoted = -1;
    for (int k = 0; k < 5; k++)
        g->gen_size[k] = -1;
    g->heap_before = st->heap_known ? st->last_heap_after + st->allocated_since : -1;
    st->allocated_since = 0;
    return true;
}

static void heap_stats(nt_profile *p, pr_gc_state *st, const nt_event *ev)
{
    if (!p->ngcs)
        return;
    nt_gc *g = &p->gcs[p->ngcs - 1];
    pr_want w[] = { { "GenerationSize0", false, { 0 } },  { "GenerationSize1", false, { 0 } },
                    { "GenerationSize2", false, { 0 } },  { "GenerationSize3", false, { 0 } },
                    { "GenerationSize4", false, { 0 } },  { "TotalPromotedSize0", false, { 0 } },
                    { "TotalPromotedSize1", false, { 0 } }, { "TotalPromotedSize2", false, { 0 } },
                    { "TotalPromotedSize3", false, { 0 } }, { "TotalPromotedSize4", false, { 0 } } };
    pr_fields(ev, w, 10);
    int64_t heap = 0, promoted = 0;
    for (int k = 0; k < 5; k++) {
        g->gen_size[k] = w[k].have ? pr_int(&w[k]) : -1;
        heap += w[k].have ? pr_int(&w[k]) : 0;
        promoted += w[5 + k].have ? pr_int(&w[5 + k]) : 0;
    }
    g->heap_after = heap;
    g->promoted = promoted;
    st->last_heap_after = heap;
    st->heap_known = true;
}

bool pr_gc_event(nt_profile *p, pr_gc_state *st, const nt_event *ev, int64_t ns)
{
    switch (ev->desc->event_id) {
    case EV_SUSPEND_EE_BEGIN: {
        pr_want w[] = { { "Reason", false, { 0 } } };
        pr_fields(ev, w, 1);
        int64_t r = pr_int(&w[0]);
        st->in_gc_suspension = r == SUSPEND_FOR_GC || r == SUSPEND_FOR_GC_PREP;
        st->suspend_begin_ns = ns;
        st->suspend_end_ns = -1;
        st->first_in_suspension = p->ngcs;
        return true;
    }
    case EV_SUSPEND_EE_END:
        if (st->in_gc_suspension)
            st->suspend_end_ns = ns;
        return true;
    case EV_GC_START: return gc_start(p, st, ev, ns);
    case EV_GC_END: {
        pr_want w[] = { { "Count", false, { 0 } } };
        pr_fields(ev, w, 1);
        nt_gc *g = find(p, pr_int(&w[0]));
        if (g && g->end_ns < 0) {
            g->end_ns = ns;
            if (g->pause_ns < 0 && g->suspend_begin_ns < 0)
                g->pause_ns = ns - g->start_ns; /* no suspension seen: the GC's own length */
        }
        return true;
    }
    case EV_GC_HEAP_STATS: heap_stats(p, st, ev); return true;
    case EV_RESTART_EE_END:
        if (st->in_gc_suspension) {
            for (size_t i = st->first_in_suspension; i < p->ngcs; i++) {
                nt_gc *g = &p->gcs[i];
                g->restart_end_ns = ns;
                if (g->suspend_begin_ns >= 0)
                    g->pause_ns = ns - g->suspend_begin_ns;
            }
            st->in_gc_suspension = false;
        }
        return true;
    default: return true;
    }
}
