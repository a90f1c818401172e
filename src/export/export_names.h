/* Dense name indices for frames, and samples grouped by thread. */
#ifndef EX_NAMES_H
#define EX_NAMES_H

#include "trace/trace_internal.h"

typedef struct tr_names {
    uint32_t *of_frame;        /* frame id -> name index */
    size_t frames_alloc;
    const nt_frame **rep;      /* name index -> a frame with that name */
    size_t n, rep_cap;
    unsigned flags;            /* how the names are made (nt_frame_name_ex) */
} tr_names;

/* flags: nt_frame_name_ex's (NT_NAME_SIGNATURE keeps overloads apart). */
nt_status tr_names_build(cm_mem *m, const nt_trace *t, unsigned flags, tr_names *nm);
void tr_names_free(cm_mem *m, tr_names *nm);

/* Walking one thread's samples in time order, with the weight of each (the
 * time to that thread's next sample).  With few threads a walk scans all
 * samples, which needs no memory; with many, an index grouped by thread is
 * built once (4 bytes a sample). */
typedef struct tr_walk {
    const nt_trace *t;
    const tr_selection *sel;
    cm_mem *m;
    uint32_t *order, *first;   /* NULL when scanning */
} tr_walk;

typedef struct tr_walk_it {
    uint32_t thread;
    size_t pos, end;
    size_t cur, next;          /* current and lookahead sample, SIZE_MAX at the end */
} tr_walk_it;

bool tr_walk_init(tr_walk *w, cm_mem *m, const nt_trace *t, const tr_selection *sel);
void tr_walk_free(tr_walk *w);
void tr_walk_begin(const tr_walk *w, uint32_t thread, tr_walk_it *it);
/* Next sample of the thread that the selection keeps, SIZE_MAX at the end;
 * *weight gets its weight by the selection's rule (time_weight forces time). */
size_t tr_walk_next(const tr_walk *w, tr_walk_it *it, bool time_weight, int64_t *weight);
/* Whether the selection covers thread index th at all. */
bool tr_walk_thread_selected(const tr_walk *w, uint32_t th);

/* What the speedscope and pprof exporters hold while they run: the sample
 * selection, the name table and a walk, all through the trace's allocator. */
typedef struct tr_export {
    tr_selection sel;
    cm_mem m;
    tr_names nm;
    tr_walk wk;
} tr_export;

/* Checks the arguments, then builds the names and the walk.  On failure
 * nothing is left to release. */
nt_status tr_export_open(tr_export *x, const nt_trace *t, const nt_export_options *opt, nt_sink_fn w);
/* Releases what is still held (an exporter may free the walk early). */
void tr_export_close(tr_export *x);

/* A thread's share of a speedscope export, where the busiest thread comes
 * first (speedscope opens the first profile): its id (the CPU profile: its
 * thread index), its total weight and (the event profiles) its first record. */
typedef struct tr_thread_total {
    uint64_t thread;
    int64_t total;
    size_t first;
} tr_thread_total;
/* qsort order of tr_thread_total: total descending, equal totals by thread. */
int tr_cmp_busiest(const void *a, const void *b);

/* export_folded.c: compare two resolved stacks root first by name index;
 * write stack k root first as folded frames ("-" when empty; flags: the
 * names' nt_frame_name_ex flags); write one frame name escaped for the
 * format (common/text_escape.h, ';' a separator). */
int tr_stacks_cmp(const nt_trace *t, const tr_names *nm, uint32_t a, uint32_t b);
void tr_folded_stack(tr_out *o, const nt_trace *t, uint32_t k, unsigned flags);
void tr_folded_frame(tr_out *o, const char *name);
/* export_speedscope.c: a frame's display name (nt_frame_name_ex flags) as a JSON string. */
void tr_frame_name_json(tr_out *o, const nt_frame *f, unsigned flags);
/* export_speedscope.c, the pieces of a speedscope document that the CPU and
 * the event profiles share: its start with the first n names of nm as the
 * shared frames; a thread's sampled profile up to its samples ("unit" one of
 * speedscope's units, first: no comma before it); one sample's frame indices
 * root first; the end after the profiles, with the document's name. */
void tr_speedscope_open(tr_out *o, const tr_names *nm, size_t n);
void tr_speedscope_profile(tr_out *o, bool first, uint64_t thread_id, const char *unit, int64_t total);
void tr_speedscope_stack(tr_out *o, const nt_trace *t, uint32_t stack, const uint32_t *of_frame);
void tr_speedscope_close(tr_out *o, const char *name);
/* The threads with selected samples into order (t->nthreads entries), thread
 * = its index, with their total weights, busiest first; returns how many. */
size_t tr_threads_busiest(const nt_trace *t, const tr_walk *wk, tr_thread_total *order);

#endif
