/* Loss accounting for the live windows (window.c): which threads lost how
 * many events in a window, from the gaps the parser finds in their sequence
 * numbers (nt_callbacks.sequence_gap).
 *
 * A wl_table is one window's loss by thread: the continuous window adds each
 * gap as it comes, a request window or a cut adds the gaps of its span from
 * the wl_log, which keeps the gaps (time, thread, events) while the sample
 * log does, bounded by a count.  Both cost what they hold: threads that lost
 * events, gaps of the span kept. */
#ifndef NT_TRACE_LOSS_H
#define NT_TRACE_LOSS_H

#include "nettrace_trace.h"
#include "common/alloc.h"
#include "common/map.h"

typedef struct wl_table {
    nt_thread_loss *rows;      /* by thread id after wl_table_sort, else by first gap */
    size_t n, cap;
    cm_map row_of;             /* thread id -> row index + 1, until sorted */
    uint64_t gaps, dropped;
} wl_table;

/* Count a gap of `lost` events on thread tid; false when memory is short (the gap is not counted). */
bool wl_table_add(cm_mem *mem, wl_table *t, uint64_t tid, uint64_t gaps, uint64_t lost);
/* Order the rows by thread id (the table then takes no more gaps). */
void wl_table_sort(cm_mem *mem, wl_table *t);
void wl_table_free(cm_mem *mem, wl_table *t);

#define WL_LOG_MAX 65536u

typedef struct wl_gap {
    int64_t time_ns;
    uint64_t thread_id;
    uint64_t lost;
} wl_gap;

typedef struct wl_log {
    wl_gap *e;                 /* e[first .. n) are held, in arrival (stream) order */
    size_t first, n, cap;
    uint64_t dropped;          /* gaps dropped by the bound */
    int64_t dropped_through_ns; /* the newest time among them; INT64_MIN: none */
} wl_log;

/* Keep a gap (past WL_LOG_MAX, the oldest is dropped); false when memory is short. */
bool wl_log_add(cm_mem *mem, wl_log *l, int64_t time_ns, uint64_t tid, uint64_t lost);
/* Drop the gaps older than keep_from_ns (INT64_MAX: all) from the front. */
void wl_log_trim(cm_mem *mem, wl_log *l, int64_t keep_from_ns);
/* The gaps in [from_ns, to_ns) whose thread `selected` accepts (NULL: all) into t; the gaps of
 * the span the bound dropped, at most, into *unplaced.  False when memory is short. */
bool wl_log_count(cm_mem *mem, const wl_log *l, int64_t from_ns, int64_t to_ns,
                  bool (*selected)(const void *ctx, uint64_t tid), const void *ctx, wl_table *t,
                  uint64_t *unplaced);
void wl_log_free(cm_mem *mem, wl_log *l);

#endif
