/* nt_writer: block buffering and framing for NetTrace V4/V5 and V6.
 *
 * Like the runtime, the writer keeps one pending block per kind.  Metadata,
 * stacks, threads and label lists can be flushed alone at any time (they only
 * have to come before the events that use them); the event block is flushed
 * only after all the others, so a reference never points forward. */
#include "write/writer_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BLOCK_BYTES (100u * 1024u)
/* A block's content must fit V6's 24-bit size, and the parser's default block limit. */
#define MAX_BLOCK_CONTENT 0xFFFFFFu

enum { V6_END = 0, V6_TRACE = 1, V6_EVENT = 2, V6_METADATA = 3, V6_SP = 4, V6_STACK = 5, V6_THREAD = 6,
       V6_REMOVE_THREAD = 7, V6_LABEL_LIST = 8 };

void nt_writer_options_default(nt_writer_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->format = 4;
    opt->pointer_size = 8;
    opt->qpc_frequency = 1000000000;
    opt->processor_count = 1;
    opt->sampling_interval_ns = 1000000;
    opt->block_bytes = DEFAULT_BLOCK_BYTES;
}

nt_status nt_wfail(nt_writer *w, nt_status s, const char *fmt, ...)
{
    if (w->status != NT_OK)
        return w->status;
    w->status = s;
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(w->msg, sizeof w->msg, "%s: %s", nt_status_name(s), what);
    return s;
}

static void block_init(nt_writer *w, wblock *b)
{
    memset(b, 0, sizeof *b);
    b->body.mem = &w->mem;
}

nt_writer *nt_writer_new(const nt_writer_options *opt, nt_write_fn write, void *user, const nt_allocator *alloc)
{
    nt_writer_options o;
    if (opt)
        o = *opt;
    else
        nt_writer_options_default(&o);
    if (!write || (o.format != 4 && o.format != 6) || (o.pointer_size != 4 && o.pointer_size != 8))
        return NULL;
    if (o.block_bytes == 0)
        o.block_bytes = DEFAULT_BLOCK_BYTES;
    if (o.block_bytes > MAX_BLOCK_CONTENT - 64)
        o.block_bytes = MAX_BLOCK_CONTENT - 64;
    nt_mem mem;
    nt_mem_init(&mem, alloc);
    nt_writer *w = nt_mem_alloc(&mem, sizeof *w);
    if (!w)
        return NULL;
    memset(w, 0, sizeof *w);
    w->mem = mem;
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
    w->next_stack_id = 1;
    w->stacks.first_id = 1;
    w->next_label_id = 1;
    w->labels.first_id = 1;
    return w;
}

void nt_writer_free(nt_writer *w)
{
    if (!w)
        return;
    wb_free(&w->meta.body);
    wb_free(&w->stacks.body);
    wb_free(&w->events.body);
    wb_free(&w->threads.body);
    wb_free(&w->labels.body);
    wb_free(&w->scratch);
    wb_free(&w->payload);
    nt_mem_free(&w->mem, w->ids, w->ids_cap * sizeof *w->ids);
    nt_mem_free(&w->mem, w->stk, w->stk_cap * sizeof *w->stk);
    nt_mem_free(&w->mem, w->ips, w->ips_cap * sizeof *w->ips);
    nt_mem_free(&w->mem, w->thr, w->thr_cap * sizeof *w->thr);
    nt_mem_free(&w->mem, w->typed, w->typed_cap * sizeof *w->typed);
    nt_mem m = w->mem;
    nt_mem_free(&m, w, sizeof *w);
}

nt_status nt_writer_status(const nt_writer *w) { return w ? w->status : NT_ERR_INVALID_ARG; }
uint64_t nt_writer_offset(const nt_writer *w) { return w ? w->offset : 0; }

const char *nt_writer_message(const nt_writer *w)
{
    if (!w)
        return "invalid_argument: NULL writer";
    return w->status == NT_OK ? "ok" : w->msg;
}

/* Common entry check of every public call. */
static nt_status usable(nt_writer *w)
{
    if (!w)
        return NT_ERR_INVALID_ARG;
    if (w->status)
        return w->status;
    if (w->finished)
        return nt_wfail(w, NT_ERR_STATE, "the stream was already finished");
    return NT_OK;
}

/* ---- output ------------------------------------------------------------ */

static nt_status emit(nt_writer *w, const void *p, size_t n)
{
    if (w->status)
        return w->status;
    if (!n)
        return NT_OK;
    if (w->write(w->user, p, n) != 0)
        return nt_wfail(w, NT_ERR_IO, "the sink failed after %llu bytes", (unsigned long long)w->offset);
    w->offset += n;
    return NT_OK;
}

static void put_systemtime(wbuf *b, const nt_systemtime *t)
{
    const uint16_t v[8] = { t->year, t->month, t->day_of_week, t->day, t->hour, t->minute, t->second,
                            t->milliseconds };
    for (int i = 0; i < 8; i++)
        wb_u16(b, v[i]);
}

static void put_kv_u32(wbuf *b, const char *key, uint32_t v)
{
    char num[16];
    snprintf(num, sizeof num, "%u", v);
    wb_str8(b, key);
    wb_str8(b, num);
}

static nt_status emit_scratch(nt_writer *w)
{
    if (w->scratch.failed)
        return nt_wfail(w, NT_ERR_NOMEM, "cannot buffer output");
    nt_status s = emit(w, w->scratch.d, w->scratch.n);
    w->scratch.n = 0;
    return s;
}

static nt_status ensure_header(nt_writer *w)
{
    if (w->header_done)
        return w->status;
    w->header_done = true;
    const nt_writer_options *o = &w->opt;
    wbuf *b = &w->scratch;
    b->n = 0;
    wb_bytes(b, "Nettrace", 8);
    if (o->format == 6) {
        wb_u32(b, 0);
        wb_u32(b, 6);
        wb_u32(b, o->format_minor);
        size_t at = b->n;
        wb_u32(b, 0);
        put_systemtime(b, &o->sync_time_utc);
        wb_u64(b, (uint64_t)o->sync_qpc);
        wb_u64(b, (uint64_t)o->qpc_frequency);
        wb_u32(b, o->pointer_size);
        wb_u32(b, 3);
        put_kv_u32(b, "HardwareThreadCount", o->processor_count);
        put_kv_u32(b, "ProcessId", o->process_id);
        put_kv_u32(b, "ExpectedCPUSamplingRate", o->sampling_interval_ns);
        wb_put32(b, at, (uint32_t)(b->n - at - 4) | (uint32_t)V6_TRACE << 24);
    } else {
        wb_u32(b, 20);
        wb_bytes(b, "!FastSerialization.1", 20);
        /* Trace object: BeginPrivateObject, type header (version 4, min reader 4), payload, EndObject */
        const uint8_t type_hdr[3] = { 0x05, 0x05, 0x01 };
        wb_bytes(b, type_hdr, 3);
        wb_u32(b, 4);
        wb_u32(b, 4);
        wb_u32(b, 5);
        wb_bytes(b, "Trace", 5);
        wb_u8(b, 0x06);
        put_systemtime(b, &o->sync_time_utc);
        wb_u64(b, (uint64_t)o->sync_qpc);
        wb_u64(b, (uint64_t)o->qpc_frequency);
        wb_u32(b, o->pointer_size);
        wb_u32(b, o->process_id);
        wb_u32(b, o->processor_count);
        wb_u32(b, o->sampling_interval_ns);
        wb_u8(b, 0x06);
    }
    return emit_scratch(w);
}

/* Frame one block: `head` (the block's inner header) then `body`. */
static nt_status emit_block(nt_writer *w, const char *v4_name, uint32_t v6_kind, const void *head, size_t head_len,
                            const wbuf *body)
{
    nt_status s = ensure_header(w);
    if (s)
        return s;
    if (body->failed)
        return nt_wfail(w, NT_ERR_NOMEM, "cannot buffer a block");
    size_t size = head_len + body->n;
    if (size > MAX_BLOCK_CONTENT)
        return nt_wfail(w, NT_ERR_INVALID_ARG, "a block of %zu bytes exceeds 16 MiB", size);
    uint8_t pre[64];
    size_t n = 0;
    if (w->opt.format == 6) {
        uint32_t x = (uint32_t)size | v6_kind << 24;
        for (int i = 0; i < 4; i++)
            pre[n++] = (uint8_t)(x >> (8 * i));
    } else {
        size_t name_len = strlen(v4_name);
        pre[n++] = 0x05;
        pre[n++] = 0x05;
        pre[n++] = 0x01;
        const uint32_t fields[3] = { 2, 2, (uint32_t)name_len };
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 4; i++)
                pre[n++] = (uint8_t)(fields[k] >> (8 * i));
        memcpy(pre + n, v4_name, name_len);
        n += name_len;
        pre[n++] = 0x06;
        for (int i = 0; i < 4; i++)
            pre[n++] = (uint8_t)(size >> (8 * i));
        /* Padding aligns the content to the absolute stream offset. */
        while ((w->offset + n) & 3)
            pre[n++] = 0;
    }
    s = emit(w, pre, n);
    if (!s)
        s = emit(w, head, head_len);
    if (!s)
        s = emit(w, body->d, body->n);
    if (!s && w->opt.format != 6)
        s = emit(w, "\x06", 1);
    return s;
}

/* 20-byte header of event and metadata blocks. */
static size_t event_block_head(const nt_writer *w, const wblock *b, uint8_t *h)
{
    uint16_t flags = w->opt.uncompressed ? 0 : 1;
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

static void block_reset(wblock *b)
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
        s = emit_block(w, NULL, V6_METADATA, head, 2, &b->body);
    } else {
        uint8_t head[20];
        s = emit_block(w, "MetadataBlock", 0, head, event_block_head(w, b, head), &b->body);
    }
    block_reset(b);
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
    nt_status s = emit_block(w, name, kind, head, 8, &b->body);
    b->first_id += b->count;
    block_reset(b);
    return s;
}

static nt_status flush_plain(nt_writer *w, wblock *b, uint32_t kind)
{
    if (!b->count)
        return w->status;
    nt_status s = emit_block(w, NULL, kind, NULL, 0, &b->body);
    block_reset(b);
    return s;
}

static nt_status flush_all(nt_writer *w)
{
    nt_status s = flush_meta(w);
    if (!s)
        s = flush_id_block(w, &w->stacks, "StackBlock", V6_STACK);
    if (!s && w->opt.format == 6)
        s = flush_plain(w, &w->threads, V6_THREAD);
    if (!s && w->opt.format == 6)
        s = flush_id_block(w, &w->labels, NULL, V6_LABEL_LIST);
    if (!s && w->events.count) {
        uint8_t head[20];
        size_t n = event_block_head(w, &w->events, head);
        s = emit_block(w, "EventBlock", V6_EVENT, head, n, &w->events.body);
        block_reset(&w->events);
    }
    return s;
}

nt_status nt_writer_flush(nt_writer *w)
{
    nt_status s = usable(w);
    if (s)
        return s;
    s = ensure_header(w);
    return s ? s : flush_all(w);
}

nt_status nt_writer_finish(nt_writer *w)
{
    nt_status s = nt_writer_flush(w);
    if (s)
        return s;
    w->finished = true;
    if (w->opt.format == 6) {
        const uint8_t end[4] = { 0, 0, 0, 0 };
        return emit(w, end, 4);
    }
    return emit(w, "\x01", 1);
}

/* ---- metadata ids ---------------------------------------------------------- */

static size_t id_slot(uint32_t id, size_t cap) { return (size_t)((id * 0x9E3779B1u) & (cap - 1)); }

static bool id_defined(const nt_writer *w, uint32_t id)
{
    if (!w->ids_cap)
        return false;
    for (size_t i = id_slot(id, w->ids_cap);; i = (i + 1) & (w->ids_cap - 1)) {
        if (!w->ids[i])
            return false;
        if (w->ids[i] == id)
            return true;
    }
}

static bool id_add(nt_writer *w, uint32_t id)
{
    if ((w->ids_count + 1) * 2 > w->ids_cap) {
        size_t ncap = w->ids_cap ? w->ids_cap * 2 : 64;
        uint32_t *n = NULL;
        if (!nt_mem_resize(&w->mem, (void **)&n, 0, ncap * sizeof *n))
            return false;
        memset(n, 0, ncap * sizeof *n);
        for (size_t k = 0; k < w->ids_cap; k++) {
            if (!w->ids[k])
                continue;
            size_t i = id_slot(w->ids[k], ncap);
            while (n[i])
                i = (i + 1) & (ncap - 1);
            n[i] = w->ids[k];
        }
        nt_mem_free(&w->mem, w->ids, w->ids_cap * sizeof *w->ids);
        w->ids = n;
        w->ids_cap = ncap;
    }
    size_t i = id_slot(id, w->ids_cap);
    while (w->ids[i])
        i = (i + 1) & (w->ids_cap - 1);
    w->ids[i] = id;
    w->ids_count++;
    return true;
}

/* Append one metadata blob (V4) or row (V6) from scratch to the metadata block. */
static nt_status append_metadata(nt_writer *w, const wbuf *rec);

nt_status nt_writer_define(nt_writer *w, const nt_event_desc *desc, uint32_t *id_out)
{
    nt_status s = usable(w);
    if (s)
        return s;
    if (!desc)
        return nt_wfail(w, NT_ERR_INVALID_ARG, "NULL event description");
    uint32_t id = desc->metadata_id;
    if (id == 0) {
        while (id_defined(w, w->next_id))
            w->next_id++;
        id = w->next_id;
    }
    if (id > INT32_MAX)
        return nt_wfail(w, NT_ERR_INVALID_ARG, "metadata id %u is out of range", id);
    if (id_defined(w, id))
        return nt_wfail(w, NT_ERR_INVALID_ARG, "metadata id %u is already defined", id);
    if (w->ids_count >= NT_DEFAULT_MAX_METADATA)
        return nt_wfail(w, NT_ERR_LIMIT, "more than %u metadata records", NT_DEFAULT_MAX_METADATA);
    wbuf rec = { .mem = &w->mem };
    s = nt_wencode_metadata(w, &rec, desc, id);
    if (!s)
        s = append_metadata(w, &rec);
    wb_free(&rec);
    if (s)
        return s;
    if (!id_add(w, id))
        return nt_wfail(w, NT_ERR_NOMEM, "cannot record metadata id %u", id);
    if (id >= w->next_id)
        w->next_id = id + 1;
    if (id_out)
        *id_out = id;
    return NT_OK;
}

/* ---- event blobs ------------------------------------------------------------ */

static bool guid_eq(const uint8_t *a, const uint8_t *b) { return memcmp(a, b, 16) == 0; }

/* Encode one blob against blk->prev into out (and update prev). */
static void encode_blob(nt_writer *w, wblock *blk, wbuf *out, const whdr *h, bool sorted, const void *payload)
{
    const bool v6 = w->opt.format == 6;
    whdr *p = &blk->prev;
    if (w->opt.uncompressed) {
        if (v6) {
            wb_u32(out, 48 + h->payload_size);
            wb_u32(out, h->metadata_id | (sorted ? 0 : 0x80000000u));
            wb_u32(out, h->seq);
            wb_u64(out, h->thread);
            wb_u64(out, h->capture);
            wb_u32(out, h->processor);
            wb_u32(out, h->stack_id);
            wb_u64(out, (uint64_t)h->timestamp);
            wb_u32(out, h->label_list_id);
            wb_u32(out, h->payload_size);
            wb_bytes(out, payload, h->payload_size);
        } else {
            /* The V5 spec pads the blob to a 4-byte file offset, but TraceEvent
             * advances by PayloadSize and misreads a padded blob; EventSize
             * without padding is read by both TraceEvent and nt_parser. */
            wb_u32(out, 76 + h->payload_size);
            wb_u32(out, h->metadata_id | (sorted ? 0 : 0x80000000u));
            wb_u32(out, h->seq);
            wb_u64(out, h->thread);
            wb_u64(out, h->capture);
            wb_u32(out, h->processor);
            wb_u32(out, h->stack_id);
            wb_u64(out, (uint64_t)h->timestamp);
            wb_bytes(out, h->act, 16);
            wb_bytes(out, h->rel, 16);
            wb_u32(out, h->payload_size);
            wb_bytes(out, payload, h->payload_size);
        }
        *p = *h;
        return;
    }
    uint8_t flags = 0;
    if (h->metadata_id != p->metadata_id)
        flags |= 0x01;
    if (p->seq + (h->metadata_id != 0 ? 1u : 0u) != h->seq || h->capture != p->capture ||
        h->processor != p->processor)
        flags |= 0x02;
    if (h->thread != p->thread)
        flags |= 0x04;
    if (h->stack_id != p->stack_id)
        flags |= 0x08;
    if (v6) {
        if (h->label_list_id != p->label_list_id)
            flags |= 0x10;
    } else {
        if (!guid_eq(h->act, p->act))
            flags |= 0x10;
        if (!guid_eq(h->rel, p->rel))
            flags |= 0x20;
    }
    if (sorted)
        flags |= 0x40;
    if (h->payload_size != p->payload_size)
        flags |= 0x80;
    wb_u8(out, flags);
    if (flags & 0x01)
        wb_varu(out, h->metadata_id);
    if (flags & 0x02) {
        wb_varu(out, (uint32_t)(h->seq - p->seq - 1));
        wb_varu(out, h->capture);
        wb_varu(out, h->processor);
    }
    if (flags & 0x04)
        wb_varu(out, h->thread);
    if (flags & 0x08)
        wb_varu(out, h->stack_id);
    wb_varu(out, (uint64_t)h->timestamp - (uint64_t)p->timestamp);
    if (v6) {
        if (flags & 0x10)
            wb_varu(out, h->label_list_id);
    } else {
        if (flags & 0x10)
            wb_bytes(out, h->act, 16);
        if (flags & 0x20)
            wb_bytes(out, h->rel, 16);
    }
    if (flags & 0x80)
        wb_varu(out, h->payload_size);
    wb_bytes(out, payload, h->payload_size);
    *p = *h;
}

static void note_ts(wblock *b, int64_t ts)
{
    if (b->count == 0 || ts < b->min_ts)
        b->min_ts = ts;
    if (b->count == 0 || ts > b->max_ts)
        b->max_ts = ts;
}

static nt_status append_metadata(nt_writer *w, const wbuf *rec)
{
    wblock *b = &w->meta;
    if (rec->n > MAX_BLOCK_CONTENT - 64)
        return nt_wfail(w, NT_ERR_INVALID_ARG, "a metadata record of %zu bytes is too large", rec->n);
    if (b->count && b->body.n + rec->n + 16 > w->opt.block_bytes) {
        nt_status s = flush_meta(w);
        if (s)
            return s;
    }
    if (w->opt.format == 6) {
        if (rec->n > UINT16_MAX)
            return nt_wfail(w, NT_ERR_INVALID_ARG, "a V6 metadata row of %zu bytes exceeds 64 KiB", rec->n);
        wb_u16(&b->body, (uint16_t)rec->n);
        wb_bytes(&b->body, rec->d, rec->n);
    } else {
        whdr h;
        memset(&h, 0, sizeof h);
        h.payload_size = (uint32_t)rec->n;
        encode_blob(w, b, &b->body, &h, false, rec->d);
    }
    b->count++;
    if (b->body.failed)
        return nt_wfail(w, NT_ERR_NOMEM, "cannot buffer metadata");
    return NT_OK;
}

/* ---- threads ---------------------------------------------------------------- */

static size_t thr_slot(uint64_t tid, size_t cap) { return (size_t)((tid * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1); }

static wthread *thread_get(nt_writer *w, uint64_t tid)
{
    if (w->thr_cap) {
        for (size_t i = thr_slot(tid, w->thr_cap); w->thr[i].used; i = (i + 1) & (w->thr_cap - 1))
            if (w->thr[i].tid == tid)
                return &w->thr[i];
    }
    if (w->thr_count >= NT_DEFAULT_MAX_THREADS) {
        nt_wfail(w, NT_ERR_LIMIT, "more than %u threads", NT_DEFAULT_MAX_THREADS);
        return NULL;
    }
    if ((w->thr_count + 1) * 2 > w->thr_cap) {
        size_t ncap = w->thr_cap ? w->thr_cap * 2 : 64;
        wthread *n = NULL;
        if (!nt_mem_resize(&w->mem, (void **)&n, 0, ncap * sizeof *n)) {
            nt_wfail(w, NT_ERR_NOMEM, "cannot grow the thread table");
            return NULL;
        }
        memset(n, 0, ncap * sizeof *n);
        for (size_t k = 0; k < w->thr_cap; k++) {
            if (!w->thr[k].used)
                continue;
            size_t i = thr_slot(w->thr[k].tid, ncap);
            while (n[i].used)
                i = (i + 1) & (ncap - 1);
            n[i] = w->thr[k];
        }
        nt_mem_free(&w->mem, w->thr, w->thr_cap * sizeof *w->thr);
        w->thr = n;
        w->thr_cap = ncap;
    }
    size_t i = thr_slot(tid, w->thr_cap);
    while (w->thr[i].used)
        i = (i + 1) & (w->thr_cap - 1);
    w->thr[i] = (wthread){ .tid = tid, .used = true };
    w->thr_count++;
    return &w->thr[i];
}

/* V6: the thread's index, introducing it in a Thread block row on first use. */
static nt_status thread_index(nt_writer *w, wthread *t)
{
    if (t->index)
        return NT_OK;
    wblock *b = &w->threads;
    if (b->count && b->body.n + 40 > w->opt.block_bytes) {
        nt_status s = flush_plain(w, b, V6_THREAD);
        if (s)
            return s;
    }
    t->index = ++w->next_thread_index;
    size_t at = b->body.n;
    wb_u16(&b->body, 0);
    wb_varu(&b->body, t->index);
    wb_u8(&b->body, 3); /* OSThreadId */
    wb_varu(&b->body, t->tid);
    wb_u8(&b->body, 2); /* OSProcessId */
    wb_varu(&b->body, w->opt.process_id);
    wb_put16(&b->body, at, (uint16_t)(b->body.n - at - 2));
    b->count++;
    return b->body.failed ? nt_wfail(w, NT_ERR_NOMEM, "cannot buffer a thread row") : NT_OK;
}

/* ---- events ---------------------------------------------------------------------- */

nt_status nt_writer_write_event(nt_writer *w, const nt_writer_event *ev)
{
    nt_status s = usable(w);
    if (s)
        return s;
    if (!ev || (!ev->payload && ev->payload_size))
        return nt_wfail(w, NT_ERR_INVALID_ARG, "NULL event or payload");
    if (!id_defined(w, ev->metadata_id))
        return nt_wfail(w, NT_ERR_INVALID_ARG, "metadata id %u is not defined", ev->metadata_id);
    if (ev->stack_id >= w->next_stack_id)
        return nt_wfail(w, NT_ERR_INVALID_ARG, "stack id %u is not defined in this sequence-point interval",
                        ev->stack_id);
    if (ev->label_list_id && (w->opt.format != 6 || ev->label_list_id >= w->next_label_id))
        return nt_wfail(w, NT_ERR_INVALID_ARG, "label list %u is not defined%s", ev->label_list_id,
                        w->opt.format != 6 ? " (label lists are V6 only)" : " in this interval");
    if (ev->payload_size > MAX_BLOCK_CONTENT - 128)
        return nt_wfail(w, NT_ERR_INVALID_ARG, "a payload of %u bytes does not fit a block", ev->payload_size);
    static const uint8_t zero[16];
    const bool has_act = memcmp(ev->activity_id, zero, 16) || memcmp(ev->related_activity_id, zero, 16);
    uint32_t label = ev->label_list_id;
    if (w->opt.format == 6 && has_act) {
        /* V6 carries activity ids in label lists: make one (reused while the ids repeat). */
        if (label)
            return nt_wfail(w, NT_ERR_INVALID_ARG, "V6: give activity ids in the event or in its label list, not both");
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
    wthread *t = thread_get(w, ev->thread_id);
    if (!t)
        return w->status;
    wthread *c = ctid == ev->thread_id ? t : thread_get(w, ctid);
    if (!c)
        return w->status;
    t = thread_get(w, ev->thread_id); /* the table may have moved */
    whdr h;
    memset(&h, 0, sizeof h);
    if (w->opt.format == 6) {
        if ((s = thread_index(w, t)) || (s = thread_index(w, c)))
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
    h.timestamp = ev->timestamp;
    h.payload_size = ev->payload_size;
    c->seq = h.seq;
    c->capture = true;

    wblock *b = &w->events;
    wbuf *out = &w->scratch;
    out->n = 0;
    encode_blob(w, b, out, &h, ev->is_sorted, ev->payload);
    if (b->count && b->body.n + out->n > w->opt.block_bytes) {
        if ((s = flush_all(w)))
            return s;
        out->n = 0;
        encode_blob(w, b, out, &h, ev->is_sorted, ev->payload); /* against the new block's zeroed state */
    }
    if (out->failed)
        return nt_wfail(w, NT_ERR_NOMEM, "cannot encode an event");
    wb_bytes(&b->body, out->d, out->n);
    if (b->body.failed)
        return nt_wfail(w, NT_ERR_NOMEM, "cannot buffer an event");
    note_ts(b, ev->timestamp);
    b->count++;
    if (b->body.n >= w->opt.block_bytes)
        return flush_all(w);
    return NT_OK;
}

/* ---- stacks ----------------------------------------------------------------------- */

static uint64_t stack_hash(const uint64_t *ips, uint32_t count)
{
    uint64_t h = 0xcbf29ce484222325ull ^ count;
    for (uint32_t i = 0; i < count; i++) {
        h ^= ips[i];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h ? h : 1;
}

static bool stk_grow(nt_writer *w)
{
    size_t ncap = w->stk_cap ? w->stk_cap * 2 : 256;
    wstack *n = NULL;
    if (!nt_mem_resize(&w->mem, (void **)&n, 0, ncap * sizeof *n))
        return false;
    memset(n, 0, ncap * sizeof *n);
    for (size_t k = 0; k < w->stk_cap; k++) {
        if (!w->stk[k].hash)
            continue;
        size_t i = (size_t)w->stk[k].hash & (ncap - 1);
        while (n[i].hash)
            i = (i + 1) & (ncap - 1);
        n[i] = w->stk[k];
    }
    nt_mem_free(&w->mem, w->stk, w->stk_cap * sizeof *w->stk);
    w->stk = n;
    w->stk_cap = ncap;
    return true;
}

nt_status nt_writer_stack(nt_writer *w, const uint64_t *ips, uint32_t count, uint32_t *id_out)
{
    nt_status s = usable(w);
    if (s)
        return s;
    if (count && !ips)
        return nt_wfail(w, NT_ERR_INVALID_ARG, "NULL IPs");
    const uint32_t ptr = w->opt.pointer_size;
    if (ptr == 4)
        for (uint32_t i = 0; i < count; i++)
            if (ips[i] > UINT32_MAX)
                return nt_wfail(w, NT_ERR_INVALID_ARG, "IP 0x%llx does not fit a 4-byte pointer",
                                (unsigned long long)ips[i]);
    uint64_t h = stack_hash(ips, count);
    if (w->stk_cap) {
        for (size_t i = (size_t)h & (w->stk_cap - 1); w->stk[i].hash; i = (i + 1) & (w->stk_cap - 1)) {
            const wstack *e = &w->stk[i];
            if (e->hash == h && e->count == count &&
                (count == 0 || memcmp(w->ips + e->start, ips, count * sizeof *ips) == 0)) {
                if (id_out)
                    *id_out = e->id;
                return NT_OK;
            }
        }
    }
    if ((uint64_t)count * ptr > MAX_BLOCK_CONTENT - 64)
        return nt_wfail(w, NT_ERR_INVALID_ARG, "a stack of %u frames does not fit a block", count);
    if (w->stk_count >= NT_DEFAULT_MAX_STACKS - 1 || w->ips_len + count > NT_DEFAULT_MAX_STACK_FRAMES)
        return nt_wfail(w, NT_ERR_LIMIT, "too many stacks in one sequence-point interval (write a sequence point)");
    if ((w->stk_count + 1) * 2 > w->stk_cap && !stk_grow(w))
        return nt_wfail(w, NT_ERR_NOMEM, "cannot grow the stack table");
    if (!nt_mem_reserve(&w->mem, (void **)&w->ips, &w->ips_cap, w->ips_len + count + 1, sizeof *w->ips))
        return nt_wfail(w, NT_ERR_NOMEM, "cannot store a stack");
    wblock *b = &w->stacks;
    if (b->count && b->body.n + 4 + (size_t)count * ptr > w->opt.block_bytes) {
        if ((s = flush_id_block(w, b, "StackBlock", V6_STACK)))
            return s;
    }
    uint32_t id = w->next_stack_id++;
    wb_u32(&b->body, count * ptr);
    for (uint32_t i = 0; i < count; i++) {
        if (ptr == 8)
            wb_u64(&b->body, ips[i]);
        else
            wb_u32(&b->body, (uint32_t)ips[i]);
    }
    if (b->body.failed)
        return nt_wfail(w, NT_ERR_NOMEM, "cannot buffer a stack");
    b->count++;
    size_t i = (size_t)h & (w->stk_cap - 1);
    while (w->stk[i].hash)
        i = (i + 1) & (w->stk_cap - 1);
    w->stk[i] = (wstack){ h, id, count, w->ips_len };
    if (count)
        memcpy(w->ips + w->ips_len, ips, count * sizeof *ips);
    w->ips_len += count;
    w->stk_count++;
    if (id_out)
        *id_out = id;
    return NT_OK;
}

/* ---- label lists (V6) ------------------------------------------------------------- */

static nt_status put_label(nt_writer *w, wbuf *b, const nt_label *l, bool last)
{
    uint8_t kind = (uint8_t)l->kind | (last ? 0x80 : 0);
    wb_u8(b, kind);
    switch (l->kind) {
    case NT_LABEL_ACTIVITY_ID:
    case NT_LABEL_RELATED_ACTIVITY_ID:
    case NT_LABEL_TRACE_ID:
        wb_bytes(b, l->guid, 16);
        break;
    case NT_LABEL_SPAN_ID:
    case NT_LABEL_KEYWORDS:
        wb_u64(b, l->value);
        break;
    case NT_LABEL_STRING:
        wb_str8(b, l->key);
        wb_str8(b, l->text);
        break;
    case NT_LABEL_INT: {
        int64_t v = (int64_t)l->value;
        wb_str8(b, l->key);
        wb_varu(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
        break;
    }
    case NT_LABEL_OPCODE:
    case NT_LABEL_LEVEL:
    case NT_LABEL_VERSION:
        if (l->value > 255)
            return nt_wfail(w, NT_ERR_INVALID_ARG, "label kind %u holds one byte", l->kind);
        wb_u8(b, (uint8_t)l->value);
        break;
    default:
        return nt_wfail(w, NT_ERR_INVALID_ARG, "unknown label kind %u", l->kind);
    }
    return NT_OK;
}

nt_status nt_writer_label_list(nt_writer *w, const nt_label *labels, size_t count, uint32_t *id_out)
{
    nt_status s = usable(w);
    if (s)
        return s;
    if (w->opt.format != 6)
        return nt_wfail(w, NT_ERR_STATE, "label lists exist only in V6");
    if (!labels || count == 0)
        return nt_wfail(w, NT_ERR_INVALID_ARG, "a label list needs at least one label");
    wbuf *tmp = &w->scratch;
    tmp->n = 0;
    for (size_t i = 0; i < count; i++)
        if ((s = put_label(w, tmp, &labels[i], i + 1 == count)))
            return s;
    if (tmp->failed)
        return nt_wfail(w, NT_ERR_NOMEM, "cannot encode a label list");
    if (tmp->n > MAX_BLOCK_CONTENT - 64)
        return nt_wfail(w, NT_ERR_INVALID_ARG, "a label list of %zu bytes does not fit a block", tmp->n);
    if (w->next_label_id >= NT_DEFAULT_MAX_STACKS)
        return nt_wfail(w, NT_ERR_LIMIT, "too many label lists in one sequence-point interval");
    wblock *b = &w->labels;
    if (b->count && b->body.n + tmp->n > w->opt.block_bytes) {
        if ((s = flush_id_block(w, b, NULL, V6_LABEL_LIST)))
            return s;
    }
    wb_bytes(&b->body, tmp->d, tmp->n);
    if (b->body.failed)
        return nt_wfail(w, NT_ERR_NOMEM, "cannot buffer a label list");
    b->count++;
    uint32_t id = w->next_label_id++;
    if (id_out)
        *id_out = id;
    return NT_OK;
}

/* ---- sequence points and threads ---------------------------------------------------- */

static nt_status sequence_point(nt_writer *w, int64_t timestamp, uint32_t flags, const nt_sp_thread *list,
                                uint32_t list_count)
{
    nt_status s = usable(w);
    if (s)
        return s;
    const bool v6 = w->opt.format == 6;
    if (flags & ~(v6 ? 3u : 0u))
        return nt_wfail(w, NT_ERR_INVALID_ARG, "sequence-point flags 0x%x (only V6 has flags 1 and 2)", flags);
    if (list && v6) {
        /* Listed threads need an index before the blocks are flushed. */
        for (uint32_t i = 0; i < list_count; i++) {
            wthread *t = thread_get(w, list[i].capture_thread_id);
            if (!t || (s = thread_index(w, t)))
                return w->status;
        }
    }
    if ((s = ensure_header(w)) || (s = flush_all(w)))
        return s;
    wbuf body = { .mem = &w->mem };
    uint8_t head[16];
    size_t hn = 0;
    uint32_t n = 0;
    if (list) {
        for (uint32_t i = 0; i < list_count; i++) {
            wthread *t = thread_get(w, list[i].capture_thread_id);
            if (!t) {
                wb_free(&body);
                return w->status;
            }
            t->seq = list[i].sequence_number;
            t->capture = true;
            n++;
            if (v6) {
                wb_varu(&body, t->index);
                wb_varu(&body, t->seq);
            } else {
                wb_u64(&body, t->tid);
                wb_u32(&body, t->seq);
            }
        }
    }
    for (size_t k = 0; !list && k < w->thr_cap; k++) {
        const wthread *t = &w->thr[k];
        if (!t->used || !t->capture || (v6 && !t->index))
            continue;
        n++;
        if (v6) {
            wb_varu(&body, t->index);
            wb_varu(&body, t->seq);
        } else {
            wb_u64(&body, t->tid);
            wb_u32(&body, t->seq);
        }
    }
    for (int i = 0; i < 8; i++)
        head[hn++] = (uint8_t)((uint64_t)timestamp >> (8 * i));
    if (v6)
        for (int i = 0; i < 4; i++)
            head[hn++] = (uint8_t)(flags >> (8 * i));
    for (int i = 0; i < 4; i++)
        head[hn++] = (uint8_t)(n >> (8 * i));
    s = emit_block(w, "SPBlock", V6_SP, head, hn, &body);
    wb_free(&body);
    if (s)
        return s;
    /* Stack ids and label lists restart; V6 flags drop threads and metadata. */
    w->next_stack_id = 1;
    w->stacks.first_id = 1;
    w->stk_count = 0;
    w->ips_len = 0;
    if (w->stk_cap)
        memset(w->stk, 0, w->stk_cap * sizeof *w->stk);
    w->next_label_id = 1;
    w->labels.first_id = 1;
    w->act_label = 0;
    if (flags & NT_SP_FLUSH_THREADS)
        for (size_t k = 0; k < w->thr_cap; k++)
            w->thr[k].index = 0;
    if (flags & NT_SP_FLUSH_METADATA) {
        if (w->ids_cap)
            memset(w->ids, 0, w->ids_cap * sizeof *w->ids);
        w->ids_count = 0;
        w->next_id = 1;
        w->typed_count = 0;
    }
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
        return nt_wfail(w, NT_ERR_INVALID_ARG, "NULL thread list");
    static const nt_sp_thread none[1];
    return sequence_point(w, timestamp, flags, threads ? threads : none, threads ? count : 0);
}

nt_status nt_writer_remove_thread(nt_writer *w, uint64_t thread_id)
{
    nt_status s = usable(w);
    if (s || w->opt.format != 6)
        return s;
    wthread *t = NULL;
    if (w->thr_cap)
        for (size_t i = thr_slot(thread_id, w->thr_cap); w->thr[i].used; i = (i + 1) & (w->thr_cap - 1))
            if (w->thr[i].tid == thread_id) {
                t = &w->thr[i];
                break;
            }
    if (!t || !t->index)
        return nt_wfail(w, NT_ERR_INVALID_ARG, "thread %llu has no index to remove", (unsigned long long)thread_id);
    if ((s = ensure_header(w)) || (s = flush_all(w)))
        return s;
    wbuf body = { .mem = &w->mem };
    wb_varu(&body, t->index);
    wb_varu(&body, t->seq);
    s = emit_block(w, NULL, V6_REMOVE_THREAD, NULL, 0, &body);
    wb_free(&body);
    t->index = 0;
    return s;
}

/* ---- memory sink ------------------------------------------------------------------- */

int nt_membuf_write(void *user, const void *data, size_t len)
{
    nt_membuf *b = user;
    if (len > SIZE_MAX / 2 - b->len)
        return -1;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len)
            cap *= 2;
        uint8_t *d = realloc(b->data, cap);
        if (!d)
            return -1;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

void nt_membuf_free(nt_membuf *b)
{
    if (!b)
        return;
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
