/* Internals of the event profiles (profile.c: building, records, merging;
 * profile_gc.c: the GC timeline; profile_io.c: the one-call entry points)
 * and their exporters (src/export/profile_*.c). */
#ifndef TR_PROFILE_INTERNAL_H
#define TR_PROFILE_INTERNAL_H

#include "nettrace_profile.h"
#include "trace/trace_internal.h"

/* What a record holds beside its stack reference (kept in a parallel
 * tr_sample array, which the trace builder resolves like samples). */
typedef struct pr_rec {
    uint64_t thread_id;
    const char *label;      /* interned in nt_profile.strings */
    int64_t value, count;
    uint32_t epoch;         /* the trace builder's code epoch at the first event (code_epoch.h) */
    uint8_t kind, heap, open;
    const char *message;    /* exceptions with exception_messages: interned; NULL otherwise */
} pr_rec;

/* A thread's current execution-engine suspension (the thread that suspends
 * the runtime also starts the GC and restarts the runtime). */
typedef struct pr_suspension {
    uint64_t thread_id;
    bool for_gc;
    int64_t begin_ns, end_ns;
} pr_suspension;

/* The GC timeline while it is read: each thread's suspension, and the bytes
 * allocation ticks reported since the last GC.  Events are matched per
 * thread, so the interleaving of threads in the stream does not matter. */
typedef struct pr_gc_state {
    pr_suspension *susp;
    size_t nsusp, susp_cap;
    cm_map susp_index;      /* thread id -> index in susp */
    int64_t allocated_since;
    int64_t last_heap_after;
    bool heap_known;
    bool ticks_seen;        /* an allocation tick was read: heap_before estimates from them */
    size_t phh_gc;          /* 1 + index of the GC whose GCPerHeapHistory sizes are being summed */
    int64_t phh_before;     /* their SizeBefore so far (every heap, every generation) */
    const nt_trace_limits *lim; /* max_gcs, max_threads (the trace builder's) */
    char limit_msg[128];        /* which one pr_gc_event reached */
} pr_gc_state;

struct nt_profile {
    cm_mem mem;
    nt_trace *trace;
    tr_strings strings;
    tr_sample *res;         /* per record: ticks of its first event, its stack (interned, then resolved) */
    pr_rec *recs;
    size_t nrecs, res_cap, recs_cap;
    nt_gc *gcs;
    size_t ngcs, gcs_cap;
    nt_profile_totals totals[NT_PROFILE_KIND_COUNT_];
    int64_t frequency;
    int64_t first_ticks, last_ticks; /* of the events and samples read (INT64_MAX / INT64_MIN: none) */
};

/* profile_gc.c: the GC events (runtime ids 1-4, 7-9, 204) into the timeline;
 * NT_ERR_NOMEM when memory is short, NT_ERR_LIMIT (st->limit_msg says which)
 * past max_gcs or max_threads. */
nt_status pr_gc_event(nt_profile *p, pr_gc_state *st, const nt_event *ev, int64_t ns);
void pr_gc_allocated(pr_gc_state *st, int64_t bytes);
/* Orders the timeline by start time (stream order for ties) and releases st. */
bool pr_gc_finish(nt_profile *p, pr_gc_state *st);
void pr_gc_release(nt_profile *p, pr_gc_state *st);

/* profile.c: the trace builder inside a profile builder (a window asks it for its addresses). */
nt_trace_builder *pr_builder_trace(nt_profile_builder *b);

/* profile_io.c: the profile builder's kind for tr_build_input and the windows. */
extern const tr_build_kind pr_profile_kind;

/* profile_fields.c: the top-level fields named in want[0 .. n) of ev, decoded
 * in one pass (strings valid during the callback). */
typedef struct pr_want {
    const char *name;
    bool have;
    nt_field_value v;
} pr_want;
void pr_fields(const nt_event *ev, pr_want *want, size_t n);
/* A want's value as an integer (0 when absent or not a number). */
int64_t pr_int(const pr_want *w);

#endif
