/* nt_writer: creating and releasing a writer, writing events, flushing and
 * finishing the stream.  Blocks and framing are in writer_blocks.c; metadata,
 * stacks, threads, label lists and sequence points each in a unit of their own. */
#include "write/writer_internal.h"
#include "common/abi.h"

#include <string.h>

/* Zero selects the default in every member. */
static void fill_defaults(nt_writer_options *o)
{
    if (!o->format)
        o->format = 4;
    if (!o->pointer_size)
        o->pointer_size = 8;
    if (!o->qpc_frequency)
        o->qpc_frequency = 1000000000;
    if (!o->processor_count)
        o->processor_count = 1;
    if (!o->sampling_interval_ns)
        o->sampling_interval_ns = 1000000;
    if (!o->block_bytes)
        o->block_bytes = DEFAULT_BLOCK_BYTES;
    wr_clock_defaults(o);
}

void nt_writer_options_default(nt_writer_options *opt)
{
    nt_writer_options o = { 0 };
    fill_defaults(&o);
    ABI_OUT(nt_writer_options, opt, &o);
}

static void block_init(nt_writer *w, wblock *b)
{
    memset(b, 0, sizeof *b);
    b->body.mem = &w->mem;
}

nt_writer *nt_writer_new(const nt_writer_options *opt, nt_sink_fn write, void *user, const nt_allocator *alloc)
{
    nt_writer_options o;
    if (!ABI_IN(nt_writer_options, &o, opt))
        return NULL;
    fill_defaults(&o);
    if (!write || (o.format != 4 && o.format != 6) || (o.pointer_size != 4 && o.pointer_size != 8))
        return NULL;
    if (o.block_bytes > MAX_BLOCK_CONTENT - 64)
        o.block_bytes = MAX_BLOCK_CONTENT - 64;
    nt_writer *w = CM_MEM_NEW(nt_writer, alloc);
    if (!w)
        return NULL;
    w->opt = o;
    w->write = write;
    w->user = user;
    block_init(w, &w->meta);
    block_init(w, &w->stacks);
    block_init(w, &w->events);
    block_init(w, &w->threads);
    block_init(w, &w->labels);
    w->scratch.mem = &w->mem;
    w->payload.mem = &w->mem;
    w->next_id = 1;
    cm_hash_key_init(&w->stack_key, w);
    w->next_stack_id = 1;
    w->stacks.first_id = 1;
    w->next_label_id = 1;
    w->labels.first_id = 1;
    wr_clock_range(&o, &w->ts_lo, &w->ts_hi);
    if (!wr_clock_valid(&o.sync_time_utc)) /* sticky: every call then says why */
        wr_fail(w, NT_ERR_INVALID_ARG,
                 "sync_time_utc %04u-%02u-%02u %02u:%02u:%02u.%03u is not a date readers take (1601-01-01 to "
                 "9999-12-31, or all zero for the default)",
                 o.sync_time_utc.year, o.sync_time_utc.month, o.sync_time_utc.day, o.sync_time_utc.hour,
                 o.sync_time_utc.minute, o.sync_time_utc.second, o.sync_time_utc.milliseconds);
    return w;
}

void nt_writer_free(nt_writer *w)
{
    if (!w)
        return;
    cm_buf_free(&w->meta.body);
    cm_buf_free(&w->stacks.body);
    cm_buf_free(&w->events.body);
    cm_buf_free(&w->threads.body);
    cm_buf_free(&w->labels.body);
    cm_buf_free(&w->scratch);
    cm_buf_free(&w->payload);
    cm_map_free(&w->mem, &w->ids);
    cm_map_free(&w->mem, &w->stack_by_hash);
    cm_map_free(&w->mem, &w->thread_by_tid);
    cm_mem_free(&w->mem, w->stk, w->stk_cap * sizeof *w->stk);
    cm_mem_free(&w->mem, w->ips, w->ips_cap * sizeof *w->ips);
    cm_mem_free(&w->mem, w->thr, w->thr_cap * sizeof *w->thr);
    cm_mem_free(&w->mem, w->typed, w->typed_cap * sizeof *w->typed);
    CM_MEM_DELETE(nt_writer, w);
}

nt_status nt_writer_flush(nt_writer *w)
{
    nt_status s = wr_usable(w);
    if (s)
        return s;
    s = wr_ensure_header(w);
    return s ? s : wr_flush_all(w);
}

nt_status nt_writer_finish(nt_writer *w)
{
    nt_status s = nt_writer_flush(w);
    if (s)
        return s;
    w->finished = true;
    if (w->opt.format == 6) {
        const uint8_t end[4] = { 0, 0, 0, 0 };
        return wr_emit(w, end, 4);
    }
    return wr_emit(w, "\x01", 1);
}

nt_status nt_writer_write_event(nt_writer *w, const nt_writer_event *ev)
{
    nt_status s = wr_usable(w);
    if (s)
        return s;
    if (!ev || (!ev->payload && ev->payload_size))
        return wr_fail(w, NT_ERR_INVALID_ARG, "NULL event or payload");
    if (!wr_meta_defined(w, ev->metadata_id))
        return wr_fail(w, NT_ERR_INVALID_ARG, "metadata id %u is not defined", ev->metadata_id);
    if (ev->stack_id >= w->next_stack_id)
        return wr_fail(w, NT_ERR_INVALID_ARG, "stack id %u is not defined in this sequence-point interval",
                        ev->stack_id);
    if (ev->label_list_id && (w->opt.format != 6 || ev->label_list_id >= w->next_label_id))
        return wr_fail(w, NT_ERR_INVALID_ARG, "label list %u is not defined%s", ev->label_list_id,
                        w->opt.format != 6 ? " (label lists are V6 only)" : " in this interval");
    if (ev->payload_size > MAX_BLOCK_CONTENT - 128)
        return wr_fail(w, NT_ERR_INVALID_ARG, "a payload of %u bytes does not fit a block", ev->payload_size);
    static const uint8_t zero[16];
    const bool has_act = memcmp(ev->activity_id, zero, 16) || memcmp(ev->related_activity_id, zero, 16);
    uint32_t label = ev->label_list_id;
    if (w->opt.format == 6 && has_act) {
        /* V6 carries activity ids in label lists: make one (reused while the ids repeat). */
        if (label)
            return wr_fail(w, NT_ERR_INVALID_ARG, "V6: give activity ids in the event or in its label list, not both");
        if (!w->act_label || memcmp(w->act_ids, ev->activity_id, 16) || memcmp(w->act_ids + 16, ev->related_activity_id, 16)) {
            nt_label l[2];
            size_t n = 0;
            memset(l, 0, sizeof l);
            if (memcmp(ev->activity_id, zero, 16)) {
                l[n].kind = NT_LABEL_ACTIVITY_ID;
                memcpy(l[n++].guid, ev->activity_id, 16);
            }
            if (memcmp(ev->related_activity_id, zero, 16)) {
                l[n].kind = NT_LABEL_RELATED_ACTIVITY_ID;
                memcpy(l[n++].guid, ev->related_activity_id, 16);
            }
            if ((s = nt_writer_label_list(w, l, n, &w->act_label)))
                return s;
            memcpy(w->act_ids, ev->activity_id, 16);
            memcpy(w->act_ids + 16, ev->related_activity_id, 16);
        }
        label = w->act_label;
    }
    uint64_t ctid = ev->capture_thread_id ? ev->capture_thread_id : ev->thread_id;
    wthread *t = wr_thread_get(w, ev->thread_id);
    if (!t)
        return w->status;
    wthread *c = ctid == ev->thread_id ? t : wr_thread_get(w, ctid);
    if (!c)
        return w->status;
    t = wr_thread_get(w, ev->thread_id); /* the table may have moved */
    whdr h;
    memset(&h, 0, sizeof h);
    if (w->opt.format == 6) {
        if ((s = wr_thread_index(w, t)) || (s = wr_thread_index(w, c)))
            return s;
        h.thread = t->index;
        h.capture = c->index;
        h.label_list_id = label;
    } else {
        h.thread = ev->thread_id;
        h.capture = ctid;
        memcpy(h.act, ev->activity_id, 16);
        memcpy(h.rel, ev->related_activity_id, 16);
    }
    h.metadata_id = ev->metadata_id;
    h.seq = ev->sequence_number ? ev->sequence_number : c->seq + 1;
    h.processor = ev->processor_number;
    h.stack_id = ev->stack_id;
    if (ev->timestamp < w->ts_lo || ev->timestamp > w->ts_hi)
        return wr_fail(w, NT_ERR_INVALID_ARG,
                        "event timestamp %lld is off the calendar readers place events on from sync_qpc %lld "
                        "at %lld Hz (years 1 to 9999)",
                        (long long)ev->timestamp, (long long)w->opt.sync_qpc, (long long)w->opt.qpc_frequency);
    h.timestamp = ev->timestamp;
    h.payload_size = ev->payload_size;
    c->seq = h.seq;
    c->capture = true;

    wblock *b = &w->events;
    cm_buf *out = &w->scratch;
    out->n = 0;
    wr_encode_blob(w, b, out, &h, ev->is_sorted, ev->payload);
    if (b->count && b->body.n + out->n > w->opt.block_bytes) {
        if ((s = wr_flush_all(w)))
            return s;
        out->n = 0;
        wr_encode_blob(w, b, out, &h, ev->is_sorted, ev->payload); /* against the new block's zeroed state */
    }
    if (out->failed)
        return wr_fail(w, NT_ERR_NOMEM, "cannot encode an event");
    cm_buf_bytes(&b->body, out->d, out->n);
    if (b->body.failed)
        return wr_fail(w, NT_ERR_NOMEM, "cannot buffer an event");
    wr_note_ts(b, ev->timestamp);
    b->count++;
    if (b->body.n >= w->opt.block_bytes)
        return wr_flush_all(w);
    return NT_OK;
}

