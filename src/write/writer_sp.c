/* Sequence points: flush everything, list each capture thread with its last
 * sequence number, and start a new interval (stack ids and V6 label lists
 * restart; V6 flags also drop the thread indexes or the metadata). */
#include "write/writer_internal.h"

#include <string.h>

/* The public flags are the format's, written as they are. */
_Static_assert(NT_SP_FLUSH_THREADS == CM_V6_SP_FLUSH_THREADS && NT_SP_FLUSH_METADATA == CM_V6_SP_FLUSH_METADATA,
               "NT_SP_FLUSH_* must equal the V6 sequence-point flags");

/* One capture thread of a sequence point: V6 its index, V4 its id; and its last sequence number. */
static void put_sp_thread(cm_buf *body, bool v6, const wthread *t)
{
    if (v6) {
        cm_buf_varu(body, t->index);
        cm_buf_varu(body, t->seq);
    } else {
        cm_buf_u64(body, t->tid);
        cm_buf_u32(body, t->seq);
    }
}

static nt_status sequence_point(nt_writer *w, int64_t timestamp, uint32_t flags, const nt_sp_thread *list,
                                uint32_t list_count)
{
    nt_status s = wr_usable(w);
    if (s)
        return s;
    const bool v6 = w->opt.format == 6;
    if (flags & ~(v6 ? NT_SP_FLUSH_THREADS | NT_SP_FLUSH_METADATA : 0u))
        return wr_fail(w, NT_ERR_INVALID_ARG, "sequence-point flags 0x%x (only V6 has flags 1 and 2)", flags);
    if (list && v6) {
        /* Listed threads need an index before the blocks are flushed. */
        for (uint32_t i = 0; i < list_count; i++) {
            wthread *t = wr_thread_get(w, list[i].capture_thread_id);
            if (!t || (s = wr_thread_index(w, t)))
                return w->status;
        }
    }
    if ((s = wr_ensure_header(w)) || (s = wr_flush_all(w)))
        return s;
    cm_buf body = { .mem = &w->mem };
    uint8_t head[16];
    size_t hn = 0;
    uint32_t n = 0;
    for (uint32_t i = 0; list && i < list_count; i++) {
        wthread *t = wr_thread_get(w, list[i].capture_thread_id);
        if (!t) {
            cm_buf_free(&body);
            return w->status;
        }
        t->seq = list[i].sequence_number;
        t->capture = true;
        put_sp_thread(&body, v6, t);
        n++;
    }
    for (size_t k = 0; !list && k < w->thr_count; k++) {
        const wthread *t = &w->thr[k];
        if (!t->capture || (v6 && !t->index))
            continue;
        put_sp_thread(&body, v6, t);
        n++;
    }
    for (int i = 0; i < 8; i++)
        head[hn++] = (uint8_t)((uint64_t)timestamp >> (8 * i));
    if (v6)
        for (int i = 0; i < 4; i++)
            head[hn++] = (uint8_t)(flags >> (8 * i));
    for (int i = 0; i < 4; i++)
        head[hn++] = (uint8_t)(n >> (8 * i));
    s = wr_emit_block(w, "SPBlock", CM_V6_SEQUENCE_POINT, head, hn, &body);
    cm_buf_free(&body);
    if (s)
        return s;
    /* Stack ids and label lists restart; V6 flags drop threads and metadata. */
    wr_stacks_forget(w);
    w->next_label_id = 1;
    w->labels.first_id = 1;
    w->act_label = 0;
    if (flags & NT_SP_FLUSH_THREADS)
        for (size_t k = 0; k < w->thr_count; k++)
            w->thr[k].index = 0;
    if (flags & NT_SP_FLUSH_METADATA)
        wr_meta_forget(w);
    return NT_OK;
}

nt_status nt_writer_sequence_point(nt_writer *w, int64_t timestamp, uint32_t flags)
{
    return sequence_point(w, timestamp, flags, NULL, 0);
}

nt_status nt_writer_sequence_point_threads(nt_writer *w, int64_t timestamp, uint32_t flags,
                                           const nt_sp_thread *threads, uint32_t count)
{
    if (w && !w->status && count && !threads)
        return wr_fail(w, NT_ERR_INVALID_ARG, "NULL thread list");
    static const nt_sp_thread none[1];
    return sequence_point(w, timestamp, flags, threads ? threads : none, threads ? count : 0);
}

