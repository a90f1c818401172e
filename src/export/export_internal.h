/* The exporters' own header (src/export/, prefix ex_): which samples an
 * export covers and their weights, a buffered writer over the caller's sink,
 * dense name indices for frames, samples grouped by thread, and the pieces
 * the folded and speedscope writers share.  A trace is read through the
 * public accessors and trace/trace_view.h, never its layout. */
#ifndef EX_INTERNAL_H
#define EX_INTERNAL_H

#include "nettrace_trace.h"
#include "common/alloc.h"
#include "common/map.h"
#include "common/sat.h"
#include "trace/trace_view.h"

/* export_common.c: sample selection and weights shared by the exporters. */
typedef struct ex_selection {
    const nt_trace *t;
    nt_export_options opt;
    int64_t from_ns, to_ns; /* opt.filter's window on the trace clock */
    int64_t default_ns;    /* weight of a thread's last sample when weighing by time */
} ex_selection;

void ex_selection_init(ex_selection *sel, const nt_trace *t, const nt_export_options *opt);
/* False when the trace cannot serve this selection (a time window over counted samples). */
bool ex_selection_fits(const nt_trace *t, const nt_export_options *opt);
bool ex_selected(const ex_selection *sel, size_t i);
/* Buffered writer over an nt_sink_fn. */
typedef struct ex_out {
    nt_sink_fn w;
    void *user;
    char buf[16384];
    size_t n;
    bool failed;
} ex_out;

void ex_out_init(ex_out *o, nt_sink_fn w, void *user);
void ex_out_bytes(ex_out *o, const void *p, size_t n);
void ex_out_str(ex_out *o, const char *s);
void ex_out_u64(ex_out *o, uint64_t v);
void ex_out_i64(ex_out *o, int64_t v);
/* s as a JSON string literal, quotes included. */
void ex_out_json(ex_out *o, const char *s);
/* Flush; NT_OK or NT_ERR_IO. */
nt_status ex_out_flush(ex_out *o);

/* export_names.c: dense name indices for frames, and samples grouped by thread. */

typedef struct ex_names {
    uint32_t *of_frame;        /* frame id -> name index */
    size_t frames_alloc;
    const nt_frame **rep;      /* name index -> a frame with that name */
    size_t n, rep_cap;
    unsigned flags;            /* how the names are made (nt_frame_name_ex) */
} ex_names;

/* flags: nt_frame_name_ex's (NT_NAME_SIGNATURE keeps overloads apart). */
nt_status ex_names_build(cm_mem *m, const nt_trace *t, unsigned flags, ex_names *nm);
void ex_names_free(cm_mem *m, ex_names *nm);

/* Walking one thread's samples in time order, with the weight of each (the
 * time to that thread's next sample).  With one thread a walk scans all
 * samples, which needs no memory; with more, an index grouped by thread is
 * built once (4 bytes a sample). */
typedef struct ex_walk {
    const nt_trace *t;
    const ex_selection *sel;
    cm_mem *m;
    uint32_t *order, *first;   /* NULL when scanning */
} ex_walk;

typedef struct ex_walk_it {
    uint32_t thread;
    size_t pos, end;
    size_t cur, next;          /* current and lookahead sample, SIZE_MAX at the end */
} ex_walk_it;

bool ex_walk_init(ex_walk *w, cm_mem *m, const nt_trace *t, const ex_selection *sel);
void ex_walk_free(ex_walk *w);
void ex_walk_begin(const ex_walk *w, uint32_t thread, ex_walk_it *it);
/* Next sample of the thread that the selection keeps, SIZE_MAX at the end;
 * *weight gets its weight by the selection's rule (time_weight forces time). */
size_t ex_walk_next(const ex_walk *w, ex_walk_it *it, bool time_weight, int64_t *weight);
/* Whether the selection covers thread index th at all. */
bool ex_walk_thread_selected(const ex_walk *w, uint32_t th);

/* What the speedscope and pprof exporters hold while they run: the sample
 * selection, the name table and a walk, all through the trace's allocator. */
typedef struct ex_export {
    ex_selection sel;
    cm_mem m;
    ex_names nm;
    ex_walk wk;
} ex_export;

/* Reads the caller's options (given, sized: ABI_IN), checks the arguments,
 * then builds the names and the walk.  On failure nothing is left to
 * release. */
nt_status ex_export_open(ex_export *x, const nt_trace *t, const nt_export_options *given, nt_sink_fn w);
/* Releases what is still held (an exporter may free the walk early). */
void ex_export_close(ex_export *x);

/* A thread's share of a speedscope export, where the busiest thread comes
 * first (speedscope opens the first profile): its id (the CPU profile: its
 * thread index), its total weight and (the event profiles) its first record. */
typedef struct ex_thread_total {
    uint64_t thread;
    int64_t total;
    size_t first;
} ex_thread_total;
/* qsort order of ex_thread_total: total descending, equal totals by thread. */
int ex_cmp_busiest(const void *a, const void *b);

/* export_folded.c: compare two resolved stacks root first by name index;
 * write stack k root first as folded frames ("-" when empty; flags: the
 * names' nt_frame_name_ex flags); write one frame name escaped for the
 * format (common/text_escape.h, ';' a separator). */
int ex_stacks_cmp(const nt_trace *t, const ex_names *nm, uint32_t a, uint32_t b);
void ex_folded_stack(ex_out *o, const nt_trace *t, uint32_t k, unsigned flags);
void ex_folded_frame(ex_out *o, const char *name);
/* export_speedscope.c: a frame's display name (nt_frame_name_ex flags) as a JSON string. */
void ex_frame_name_json(ex_out *o, const nt_frame *f, unsigned flags);
/* export_speedscope.c, the pieces of a speedscope document that the CPU and
 * the event profiles share: its start with the first n names of nm as the
 * shared frames; a thread's sampled profile up to its samples ("unit" one of
 * speedscope's units, first: no comma before it); one sample's frame indices
 * root first; the end after the profiles, with the document's name. */
void ex_speedscope_open(ex_out *o, const ex_names *nm, size_t n);
void ex_speedscope_profile(ex_out *o, bool first, uint64_t thread_id, const char *unit, int64_t total);
void ex_speedscope_stack(ex_out *o, const nt_trace *t, uint32_t stack, const uint32_t *of_frame);
void ex_speedscope_close(ex_out *o, const char *name);
/* The threads with selected samples into order (t->nthreads entries), thread
 * = its index, with their total weights, busiest first; returns how many. */
size_t ex_threads_busiest(const nt_trace *t, const ex_walk *wk, ex_thread_total *order);

#endif
