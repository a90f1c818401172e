/* Loss per thread for the live windows (loss.h). */
#include "trace/loss.h"
#include "common/sort.h"

#include <string.h>

bool wl_table_add(cm_mem *mem, wl_table *t, uint64_t tid, uint64_t gaps, uint64_t lost)
{
    bool added;
    uint64_t *row = cm_map_put(mem, &t->row_of, tid, &added);
    if (!row)
        return false;
    if (added) {
        if (!cm_mem_reserve(mem, (void **)&t->rows, &t->cap, t->n + 1, sizeof *t->rows)) {
            cm_map_del(&t->row_of, tid);
            return false;
        }
        t->rows[t->n++] = (nt_thread_loss){ tid, 0, 0 };
        *row = t->n;
    }
    nt_thread_loss *r = &t->rows[*row - 1];
    r->gaps += gaps;
    r->dropped += lost;
    t->gaps += gaps;
    t->dropped += lost;
    return true;
}

static int by_thread(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    uint64_t x = ((const nt_thread_loss *)a)->thread_id, y = ((const nt_thread_loss *)b)->thread_id;
    return (x > y) - (x < y);
}

void wl_table_sort(cm_mem *mem, wl_table *t)
{
    cm_map_free(mem, &t->row_of);
    if (t->n < 2)
        return;
    /* Sorting needs room for a second copy; without it the rows stay in order of first loss. */
    nt_thread_loss *tmp = cm_mem_alloc(mem, t->n * sizeof *tmp);
    if (!tmp)
        return;
    cm_merge_sort(t->rows, tmp, t->n, sizeof *t->rows, by_thread, NULL);
    cm_mem_free(mem, tmp, t->n * sizeof *tmp);
}

void wl_table_free(cm_mem *mem, wl_table *t)
{
    cm_map_free(mem, &t->row_of);
    cm_mem_free(mem, t->rows, t->cap * sizeof *t->rows);
    memset(t, 0, sizeof *t);
}

/* Move the held gaps to the front once the dropped ones are most of the array. */
static void compact(wl_log *l)
{
    if (l->first < 1024 || l->first < l->n / 2)
        return;
    memmove(l->e, l->e + l->first, (l->n - l->first) * sizeof *l->e);
    l->n -= l->first;
    l->first = 0;
}

bool wl_log_add(cm_mem *mem, wl_log *l, int64_t time_ns, uint64_t tid, uint64_t lost)
{
    if (l->n - l->first >= WL_LOG_MAX) {
        const wl_gap *old = &l->e[l->first++];
        l->dropped++;
        l->dropped_through_ns = old->time_ns > l->dropped_through_ns ? old->time_ns : l->dropped_through_ns;
        compact(l);
    }
    if (!cm_mem_reserve(mem, (void **)&l->e, &l->cap, l->n + 1, sizeof *l->e))
        return false;
    l->e[l->n++] = (wl_gap){ time_ns, tid, lost };
    return true;
}

void wl_log_trim(cm_mem *mem, wl_log *l, int64_t keep_from_ns)
{
    while (l->first < l->n && l->e[l->first].time_ns < keep_from_ns)
        l->first++;
    if (l->first == l->n) {
        /* Nothing held: give the array back, so an idle log holds nothing. */
        cm_mem_free(mem, l->e, l->cap * sizeof *l->e);
        l->e = NULL;
        l->first = l->n = l->cap = 0;
        return;
    }
    compact(l);
}

bool wl_log_count(cm_mem *mem, const wl_log *l, int64_t from_ns, int64_t to_ns,
                  bool (*selected)(const void *ctx, uint64_t tid), const void *ctx, wl_table *t,
                  uint64_t *unplaced)
{
    for (size_t i = l->first; i < l->n; i++) {
        const wl_gap *g = &l->e[i];
        if (g->time_ns < from_ns || g->time_ns >= to_ns || (selected && !selected(ctx, g->thread_id)))
            continue;
        if (!wl_table_add(mem, t, g->thread_id, 1, g->lost))
            return false;
    }
    *unplaced = l->dropped && l->dropped_through_ns >= from_ns ? l->dropped : 0;
    return true;
}

void wl_log_free(cm_mem *mem, wl_log *l)
{
    cm_mem_free(mem, l->e, l->cap * sizeof *l->e);
    memset(l, 0, sizeof *l);
    l->dropped_through_ns = INT64_MIN;
}
