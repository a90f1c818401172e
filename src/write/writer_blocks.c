/* Blocks and their framing: the stream header, one pending block per kind,
 * the compressed event-header encoding, and the flush order.
 *
 * Like the runtime, the writer keeps one pending block per kind.  Metadata,
 * stacks, threads and label lists can be flushed alone at any time (they only
 * have to come before the events that use them); the event block is flushed
 * only after all the others, so a reference never points forward. */
#include "write/writer_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- output ------------------------------------------------------------ */

nt_status wr_emit(nt_writer *w, const void *p, size_t n)
{
    if (w->status)
        return w->status;
    if (!n)
        return NT_OK;
    if (w->write(w->user, p, n) != 0)
        return wr_fail(w, NT_ERR_IO, "the sink failed after %llu bytes", (unsigned long long)w->offset);
    w->offset += n;
    return NT_OK;
}

static void put_systemtime(cm_buf *b, const nt_systemtime *t)
{
    const uint16_t v[8] = { t->year, t->month, t->day_of_week, t->day, t->hour, t->minute, t->second,
                            t->milliseconds };
    for (int i = 0; i < 8; i++)
        cm_buf_u16(b, v[i]);
}

static void put_kv_u32(cm_buf *b, const char *key, uint32_t v)
{
    char num[16];
    snprintf(num, sizeof num, "%u", v);
    cm_buf_str8(b, key);
    cm_buf_str8(b, num);
}

/* The stream header goes out before the first block.  It is built in a buffer
 * of its own: the first flush can come in the middle of an event or label list
 * being encoded in the scratch buffer (a flush that reused it wrote a label
 * list of 0 bytes). */
nt_status wr_ensure_header(nt_writer *w)
{
    if (w->header_done)
        return w->status;
    w->header_done = true;
    const nt_writer_options *o = &w->opt;
    cm_buf head = { .mem = &w->mem };
    cm_buf *b = &head;
    cm_buf_bytes(b, CM_FMT_MAGIC, CM_FMT_MAGIC_LEN);
    if (o->format == 6) {
        cm_buf_u32(b, 0);
        cm_buf_u32(b, 6);
        cm_buf_u32(b, o->format_minor);
        size_t at = b->n;
        cm_buf_u32(b, 0);
        put_systemtime(b, &o->sync_time_utc);
        cm_buf_u64(b, (uint64_t)o->sync_qpc);
        cm_buf_u64(b, (uint64_t)o->qpc_frequency);
        cm_buf_u32(b, o->pointer_size);
        cm_buf_u32(b, 3);
        put_kv_u32(b, "HardwareThreadCount", o->processor_count);
        put_kv_u32(b, "ProcessId", o->process_id);
        put_kv_u32(b, "ExpectedCPUSamplingRate", o->sampling_interval_ns);
        cm_buf_put32(b, at, (uint32_t)(b->n - at - 4) | (uint32_t)CM_V6_TRACE << CM_V6_BLOCK_KIND_SHIFT);
    } else {
        cm_buf_u32(b, CM_FMT_FS_HEADER_LEN);
        cm_buf_bytes(b, CM_FMT_FS_HEADER, CM_FMT_FS_HEADER_LEN);
        /* Trace object: BeginPrivateObject, type header (version 4, min reader 4), payload, EndObject */
        const uint8_t type_hdr[3] = { CM_TAG_BEGIN_PRIVATE_OBJECT, CM_TAG_BEGIN_PRIVATE_OBJECT, CM_TAG_NULL_REFERENCE };
        cm_buf_bytes(b, type_hdr, 3);
        cm_buf_u32(b, 4);
        cm_buf_u32(b, 4);
        cm_buf_u32(b, 5);
        cm_buf_bytes(b, "Trace", 5);
        cm_buf_u8(b, CM_TAG_END_OBJECT);
        put_systemtime(b, &o->sync_time_utc);
        cm_buf_u64(b, (uint64_t)o->sync_qpc);
        cm_buf_u64(b, (uint64_t)o->qpc_frequency);
        cm_buf_u32(b, o->pointer_size);
        cm_buf_u32(b, o->process_id);
        cm_buf_u32(b, o->processor_count);
        cm_buf_u32(b, o->sampling_interval_ns);
        cm_buf_u8(b, CM_TAG_END_OBJECT);
    }
    nt_status s = b->failed ? wr_fail(w, NT_ERR_NOMEM, "cannot buffer the stream header") : wr_emit(w, b->d, b->n);
    cm_buf_free(b);
    return s;
}

/* Frame one block: `head` (the block's inner header) then `body`. */
nt_status wr_emit_block(nt_writer *w, const char *v4_name, uint32_t v6_kind, const void *head, size_t head_len,
                         const cm_buf *body)
{
    nt_status s = wr_ensure_header(w);
    if (s)
        return s;
    if (body->failed)
        return wr_fail(w, NT_ERR_NOMEM, "cannot buffer a block");
    size_t size = head_len + body->n;
    if (size > MAX_BLOCK_CONTENT)
        return wr_fail(w, NT_ERR_INVALID_ARG, "a block of %zu bytes exceeds 16 MiB", size);
    uint8_t pre[64];
    size_t n = 0;
    if (w->opt.format == 6) {
        uint32_t x = (uint32_t)size | v6_kind << 24;
        for (int i = 0; i < 4; i++)
            pre[n++] = (uint8_t)(x >> (8 * i));
    } else {
        size_t name_len = strlen(v4_name);
        pre[n++] = CM_TAG_BEGIN_PRIVATE_OBJECT;
        pre[n++] = CM_TAG_BEGIN_PRIVATE_OBJECT; /* the type header: an object too, */
        pre[n++] = CM_TAG_NULL_REFERENCE;       /* whose own type is null */
        const uint32_t fields[3] = { 2, 2, (uint32_t)name_len };
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 4; i++)
                pre[n++] = (uint8_t)(fields[k] >> (8 * i));
        memcpy(pre + n, v4_name, name_len);
        n += name_len;
        pre[n++] = CM_TAG_END_OBJECT;
        for (int i = 0; i < 4; i++)
            pre[n++] = (uint8_t)(size >> (8 * i));
        /* Padding aligns the content to the absolute stream offset. */
        while ((w->offset + n) & 3)
            pre[n++] = 0;
    }
    s = wr_emit(w, pre, n);
    if (!s)
        s = wr_emit(w, head, head_len);
    if (!s)
        s = wr_emit(w, body->d, body->n);
    if (!s && w->opt.format != 6)
        s = wr_emit(w, "\x06", 1);
    return s;
}


static size_t event_block_head(const nt_writer *w, const wblock *b, uint8_t *h)
{
    uint16_t flags = w->opt.uncompressed ? 0 : CM_EVENT_BLOCK_COMPRESSED;
    uint64_t v[2] = { (uint64_t)b->min_ts, (uint64_t)b->max_ts };
    h[0] = 20;
    h[1] = 0;
    h[2] = (uint8_t)flags;
    h[3] = 0;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 8; i++)
            h[4 + 8 * k + i] = (uint8_t)(v[k] >> (8 * i));
    return 20;
}

void wr_block_reset(wblock *b)
{
    b->body.n = 0;
    b->count = 0;
    b->min_ts = b->max_ts = 0;
    memset(&b->prev, 0, sizeof b->prev);
}

static nt_status flush_meta(nt_writer *w)
{
    wblock *b = &w->meta;
    if (!b->count)
        return w->status;
    nt_status s;
    if (w->opt.format == 6) {
        const uint8_t head[2] = { 0, 0 }; /* HeaderSize 0: no extra header bytes */
        s = wr_emit_block(w, NULL, CM_V6_METADATA, head, 2, &b->body);
    } else {
        uint8_t head[20];
        s = wr_emit_block(w, "MetadataBlock", 0, head, event_block_head(w, b, head), &b->body);
    }
    wr_block_reset(b);
    return s;
}

static nt_status flush_id_block(nt_writer *w, wblock *b, const char *name, uint32_t kind)
{
    if (!b->count)
        return w->status;
    uint8_t head[8];
    for (int i = 0; i < 4; i++) {
        head[i] = (uint8_t)(b->first_id >> (8 * i));
        head[4 + i] = (uint8_t)(b->count >> (8 * i));
    }
    nt_status s = wr_emit_block(w, name, kind, head, 8, &b->body);
    b->first_id += b->count;
    wr_block_reset(b);
    return s;
}

static nt_status flush_plain(nt_writer *w, wblock *b, uint32_t kind)
{
    if (!b->count)
        return w->status;
    nt_status s = wr_emit_block(w, NULL, kind, NULL, 0, &b->body);
    wr_block_reset(b);
    return s;
}

nt_status wr_flush_stacks(nt_writer *w) { return flush_id_block(w, &w->stacks, "StackBlock", CM_V6_STACK); }
nt_status wr_flush_threads(nt_writer *w) { return flush_plain(w, &w->threads, CM_V6_THREAD); }
nt_status wr_flush_labels(nt_writer *w) { return flush_id_block(w, &w->labels, NULL, CM_V6_LABEL_LIST); }

nt_status wr_flush_all(nt_writer *w)
{
    nt_status s = flush_meta(w);
    if (!s)
        s = wr_flush_stacks(w);
    if (!s && w->opt.format == 6)
        s = wr_flush_threads(w);
    if (!s && w->opt.format == 6)
        s = wr_flush_labels(w);
    if (!s && w->events.count) {
        uint8_t head[20];
        size_t n = event_block_head(w, &w->events, head);
        s = wr_emit_block(w, "EventBlock", CM_V6_EVENT, head, n, &w->events.body);
        wr_block_reset(&w->events);
    }
    return s;
}

/* ---- event and metadata blobs ------------------------------------------- */

static bool guid_eq(const uint8_t *a, const uint8_t *b) { return memcmp(a, b, 16) == 0; }

/* Encode one blob against blk->prev into out (and update prev). */
void wr_encode_blob(nt_writer *w, wblock *blk, cm_buf *out, const whdr *h, bool sorted, const void *payload)
{
    const bool v6 = w->opt.format == 6;
    whdr *p = &blk->prev;
    if (w->opt.uncompressed) {
        /* The V5 spec pads a V4 blob to a 4-byte file offset, but TraceEvent
         * advances by PayloadSize and misreads a padded blob; EventSize
         * without padding is read by both TraceEvent and nt_parser. */
        cm_buf_u32(out, (v6 ? 48 : 76) + h->payload_size);
        cm_buf_u32(out, h->metadata_id | (sorted ? 0 : PS_HDR_NOT_SORTED_BIT));
        cm_buf_u32(out, h->seq);
        cm_buf_u64(out, h->thread);
        cm_buf_u64(out, h->capture);
        cm_buf_u32(out, h->processor);
        cm_buf_u32(out, h->stack_id);
        cm_buf_u64(out, (uint64_t)h->timestamp);
        if (v6) {
            cm_buf_u32(out, h->label_list_id);
        } else {
            cm_buf_bytes(out, h->act, 16);
            cm_buf_bytes(out, h->rel, 16);
        }
        cm_buf_u32(out, h->payload_size);
        cm_buf_bytes(out, payload, h->payload_size);
        *p = *h;
        return;
    }
    uint8_t flags = 0;
    if (h->metadata_id != p->metadata_id)
        flags |= PS_HDR_METADATA_ID;
    if (p->seq + (h->metadata_id != 0 ? 1u : 0u) != h->seq || h->capture != p->capture ||
        h->processor != p->processor)
        flags |= PS_HDR_CAPTURE_THREAD_AND_SEQUENCE;
    if (h->thread != p->thread)
        flags |= PS_HDR_THREAD_ID;
    if (h->stack_id != p->stack_id)
        flags |= PS_HDR_STACK_ID;
    if (v6) {
        if (h->label_list_id != p->label_list_id)
            flags |= PS_HDR_ACTIVITY_ID;
    } else {
        if (!guid_eq(h->act, p->act))
            flags |= PS_HDR_ACTIVITY_ID;
        if (!guid_eq(h->rel, p->rel))
            flags |= PS_HDR_RELATED_ACTIVITY_ID;
    }
    if (sorted)
        flags |= PS_HDR_SORTED;
    if (h->payload_size != p->payload_size)
        flags |= PS_HDR_PAYLOAD_SIZE;
    cm_buf_u8(out, flags);
    if (flags & PS_HDR_METADATA_ID)
        cm_buf_varu(out, h->metadata_id);
    if (flags & PS_HDR_CAPTURE_THREAD_AND_SEQUENCE) {
        cm_buf_varu(out, (uint32_t)(h->seq - p->seq - 1));
        cm_buf_varu(out, h->capture);
        cm_buf_varu(out, h->processor);
    }
    if (flags & PS_HDR_THREAD_ID)
        cm_buf_varu(out, h->thread);
    if (flags & PS_HDR_STACK_ID)
        cm_buf_varu(out, h->stack_id);
    cm_buf_varu(out, (uint64_t)h->timestamp - (uint64_t)p->timestamp);
    if (v6) {
        if (flags & PS_HDR_ACTIVITY_ID)
            cm_buf_varu(out, h->label_list_id);
    } else {
        if (flags & PS_HDR_ACTIVITY_ID)
            cm_buf_bytes(out, h->act, 16);
        if (flags & PS_HDR_RELATED_ACTIVITY_ID)
            cm_buf_bytes(out, h->rel, 16);
    }
    if (flags & PS_HDR_PAYLOAD_SIZE)
        cm_buf_varu(out, h->payload_size);
    cm_buf_bytes(out, payload, h->payload_size);
    *p = *h;
}

void wr_note_ts(wblock *b, int64_t ts)
{
    if (b->count == 0 || ts < b->min_ts)
        b->min_ts = ts;
    if (b->count == 0 || ts > b->max_ts)
        b->max_ts = ts;
}

nt_status wr_append_metadata(nt_writer *w, const cm_buf *rec)
{
    wblock *b = &w->meta;
    if (rec->n > MAX_BLOCK_CONTENT - 64)
        return wr_fail(w, NT_ERR_INVALID_ARG, "a metadata record of %zu bytes is too large", rec->n);
    if (b->count && b->body.n + rec->n + 16 > w->opt.block_bytes) {
        nt_status s = flush_meta(w);
        if (s)
            return s;
    }
    if (w->opt.format == 6) {
        if (rec->n > UINT16_MAX)
            return wr_fail(w, NT_ERR_INVALID_ARG, "a V6 metadata row of %zu bytes exceeds 64 KiB", rec->n);
        cm_buf_u16(&b->body, (uint16_t)rec->n);
        cm_buf_bytes(&b->body, rec->d, rec->n);
    } else {
        whdr h;
        memset(&h, 0, sizeof h);
        h.payload_size = (uint32_t)rec->n;
        wr_encode_blob(w, b, &b->body, &h, false, rec->d);
    }
    b->count++;
    if (b->body.failed)
        return wr_fail(w, NT_ERR_NOMEM, "cannot buffer metadata");
    return NT_OK;
}
