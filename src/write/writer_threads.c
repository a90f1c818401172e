/* Threads: the writer's table of the threads it has seen (their last sequence
 * numbers for sequence points; in V6 their index in the current thread table,
 * introduced by a Thread block row), and the V6 RemoveThread block. */
#include "write/writer_internal.h"

#include <string.h>

wthread *wr_thread_find(nt_writer *w, uint64_t tid)
{
    const uint64_t *v = cm_map_get(&w->thread_by_tid, tid);
    return v ? &w->thr[*v - 1] : NULL;
}

wthread *wr_thread_get(nt_writer *w, uint64_t tid)
{
    wthread *t = wr_thread_find(w, tid);
    if (t)
        return t;
    if (w->thr_count >= NT_DEFAULT_MAX_THREADS) {
        wr_fail(w, NT_ERR_LIMIT, "more than %u threads", NT_DEFAULT_MAX_THREADS);
        return NULL;
    }
    uint64_t *v;
    if (!cm_mem_reserve(&w->mem, (void **)&w->thr, &w->thr_cap, w->thr_count + 1, sizeof *w->thr) ||
        !(v = cm_map_put(&w->mem, &w->thread_by_tid, tid, NULL))) {
        wr_fail(w, NT_ERR_NOMEM, "cannot grow the thread table");
        return NULL;
    }
    *v = w->thr_count + 1;
    w->thr[w->thr_count] = (wthread){ .tid = tid };
    return &w->thr[w->thr_count++];
}

/* V6: the thread's index, introducing it in a Thread block row on first use. */
nt_status wr_thread_index(nt_writer *w, wthread *t)
{
    if (t->index)
        return NT_OK;
    wblock *b = &w->threads;
    if (b->count && b->body.n + 40 > w->opt.block_bytes) {
        nt_status s = wr_flush_threads(w);
        if (s)
            return s;
    }
    t->index = ++w->next_thread_index;
    size_t at = b->body.n;
    cm_buf_u16(&b->body, 0);
    cm_buf_varu(&b->body, t->index);
    cm_buf_u8(&b->body, CM_V6_THREAD_OS_TID);
    cm_buf_varu(&b->body, t->tid);
    cm_buf_u8(&b->body, CM_V6_THREAD_OS_PID);
    cm_buf_varu(&b->body, w->opt.process_id);
    cm_buf_put16(&b->body, at, (uint16_t)(b->body.n - at - 2));
    b->count++;
    return b->body.failed ? wr_fail(w, NT_ERR_NOMEM, "cannot buffer a thread row") : NT_OK;
}

nt_status nt_writer_remove_thread(nt_writer *w, uint64_t thread_id)
{
    nt_status s = wr_usable(w);
    if (s || w->opt.format != 6)
        return s;
    wthread *t = wr_thread_find(w, thread_id);
    if (!t || !t->index)
        return wr_fail(w, NT_ERR_INVALID_ARG, "thread %llu has no index to remove", (unsigned long long)thread_id);
    if ((s = wr_ensure_header(w)) || (s = wr_flush_all(w)))
        return s;
    cm_buf body = { .mem = &w->mem };
    cm_buf_varu(&body, t->index);
    cm_buf_varu(&body, t->seq);
    s = wr_emit_block(w, NULL, CM_V6_REMOVE_THREAD, NULL, 0, &body);
    cm_buf_free(&body);
    t->index = 0;
    return s;
}
