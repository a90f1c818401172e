#include "streams.h"
#include "common/format.h"
#include "write/writer_internal.h"

#include <stdlib.h>
#include <string.h>

/* The builder's bytes go through the library's one byte writer (common/byte_buf.c),
 * so the project has one byte encoder; only the framing here is hand-made. */
static cm_mem *tb_mem(void)
{
    static cm_mem mem; /* the default allocator: buffers stay free()-able */
    static bool ready;
    if (!ready) {
        cm_mem_init(&mem, NULL);
        ready = true;
    }
    return &mem;
}

#define VIA_BUF(b, call)                                                 \
    do {                                                                  \
        cm_buf w_ = { tb_mem(), (b)->d, (b)->n, (b)->cap, false };          \
        call;                                                             \
        if (w_.failed)                                                    \
            abort();                                                      \
        (b)->d = w_.d;                                                    \
        (b)->n = w_.n;                                                    \
        (b)->cap = w_.cap;                                                \
    } while (0)

void tb_free(tb *b)
{
    free(b->d);
    b->d = NULL;
    b->n = b->cap = 0;
}

void tb_bytes(tb *b, const void *p, size_t n) { VIA_BUF(b, cm_buf_bytes(&w_, p, n)); }
void tb_u8(tb *b, uint8_t v) { VIA_BUF(b, cm_buf_u8(&w_, v)); }
void tb_u16(tb *b, uint16_t v) { VIA_BUF(b, cm_buf_u16(&w_, v)); }
void tb_u32(tb *b, uint32_t v) { VIA_BUF(b, cm_buf_u32(&w_, v)); }
void tb_u64(tb *b, uint64_t v) { VIA_BUF(b, cm_buf_u64(&w_, v)); }
void tb_varu(tb *b, uint64_t v) { VIA_BUF(b, cm_buf_varu(&w_, v)); }
void tb_utf16z(tb *b, const char *s) { VIA_BUF(b, cm_buf_utf16z(&w_, s, CM_UTF8_REPLACE)); }
void tb_put32(tb *b, size_t at, uint32_t v) { VIA_BUF(b, cm_buf_put32(&w_, at, v)); }

static void type_header(tb *b, const char *name, uint32_t version, uint32_t min_reader)
{
    tb_u8(b, CM_TAG_BEGIN_PRIVATE_OBJECT);
    tb_u8(b, CM_TAG_BEGIN_PRIVATE_OBJECT); /* the type, an object whose own type is null */
    tb_u8(b, CM_TAG_NULL_REFERENCE);
    tb_u32(b, version);
    tb_u32(b, min_reader);
    tb_u32(b, (uint32_t)strlen(name));
    tb_bytes(b, name, strlen(name));
    tb_u8(b, CM_TAG_END_OBJECT);
}

void tb_header(tb *b, uint32_t pointer_size, int64_t qpc_freq)
{
    tb_bytes(b, CM_FMT_MAGIC, CM_FMT_MAGIC_LEN);
    tb_u32(b, CM_FMT_FS_HEADER_LEN);
    tb_bytes(b, CM_FMT_FS_HEADER, CM_FMT_FS_HEADER_LEN);
    type_header(b, "Trace", 4, 4);
    const uint16_t st[8] = { 2026, 11, 0, 29, 10, 0, 0, 0 };
    for (int i = 0; i < 8; i++)
        tb_u16(b, st[i]);
    tb_u64(b, 1000);                 /* sync QPC */
    tb_u64(b, (uint64_t)qpc_freq);   /* frequency */
    tb_u32(b, pointer_size);
    tb_u32(b, 4242);                 /* pid */
    tb_u32(b, 2);                    /* processors */
    tb_u32(b, 1000000);              /* sampling interval ns */
    tb_u8(b, CM_TAG_END_OBJECT);
}

size_t tb_block_begin(tb *b, const char *type)
{
    type_header(b, type, 2, 2);
    size_t pos = b->n;
    tb_u32(b, 0);
    while ((b->base + b->n) % 4) /* padding is aligned on the absolute stream offset */
        tb_u8(b, 0);
    return pos;
}

void tb_block_end(tb *b, size_t size_pos)
{
    size_t start = size_pos + 4;
    while ((b->base + start) % 4)
        start++;
    tb_put32(b, size_pos, (uint32_t)(b->n - start));
    tb_u8(b, CM_TAG_END_OBJECT);
}

void tb_end(tb *b) { tb_u8(b, CM_TAG_NULL_REFERENCE); }

void tb_event_header(tb *b, uint16_t flags)
{
    tb_u16(b, 20);
    tb_u16(b, flags);
    tb_u64(b, 0);
    tb_u64(b, 0);
}

void tb_metadata_payload(tb *out, uint32_t id, const char *provider, uint32_t event_id, uint32_t version)
{
    tb_u32(out, id);
    tb_utf16z(out, provider);
    tb_u32(out, event_id);
    tb_utf16z(out, "");
    tb_u64(out, 0);
    tb_u32(out, version);
    tb_u32(out, 5);
    tb_u32(out, 0); /* no V1 fields */
}

void tb_compressed_event(tb *b, const tb_event *e, tb_event *prev)
{
    uint8_t flags = PS_HDR_METADATA_ID | PS_HDR_THREAD_ID | PS_HDR_STACK_ID | PS_HDR_PAYLOAD_SIZE;
    bool seq_explicit = e->seq != prev->seq + (e->metadata_id ? 1u : 0u) ||
                        e->capture_thread_id != prev->capture_thread_id || e->processor != prev->processor;
    if (seq_explicit)
        flags |= PS_HDR_CAPTURE_THREAD_AND_SEQUENCE;
    tb_u8(b, flags);
    tb_varu(b, e->metadata_id);
    if (seq_explicit) {
        tb_varu(b, (uint32_t)(e->seq - prev->seq - 1));
        tb_varu(b, e->capture_thread_id);
        tb_varu(b, e->processor);
    }
    tb_varu(b, e->thread_id);
    tb_varu(b, e->stack_id);
    tb_varu(b, (uint64_t)e->timestamp - (uint64_t)prev->timestamp);
    tb_varu(b, e->payload_size);
    tb_bytes(b, e->payload, e->payload_size);
    *prev = *e;
}

void tb_uncompressed_event(tb *b, const tb_event *e)
{
    uint32_t body = 76 + e->payload_size;
    uint32_t pad = (4 - (body % 4)) % 4;
    tb_u32(b, body + pad);
    tb_u32(b, e->metadata_id);
    tb_u32(b, e->seq);
    tb_u64(b, e->thread_id);
    tb_u64(b, e->capture_thread_id);
    tb_u32(b, e->processor);
    tb_u32(b, e->stack_id);
    tb_u64(b, (uint64_t)e->timestamp);
    uint8_t zero[16] = { 0 };
    tb_bytes(b, zero, 16);
    tb_bytes(b, zero, 16);
    tb_u32(b, e->payload_size);
    tb_bytes(b, e->payload, e->payload_size);
    tb_bytes(b, zero, pad);
}

void tb_metadata_block(tb *b, uint32_t id, const char *provider, uint32_t event_id, uint32_t version)
{
    size_t pos = tb_block_begin(b, "MetadataBlock");
    tb_event_header(b, CM_EVENT_BLOCK_COMPRESSED);
    tb payload = { 0 };
    tb_metadata_payload(&payload, id, provider, event_id, version);
    tb_event e = { 0 };
    tb_event prev = { 0 };
    e.payload = payload.d;
    e.payload_size = (uint32_t)payload.n;
    tb_compressed_event(b, &e, &prev);
    tb_free(&payload);
    tb_block_end(b, pos);
}

void tb_stack_block(tb *b, uint32_t first_id, uint32_t count, const uint64_t *const *ips,
                    const uint32_t *depths, uint32_t pointer_size)
{
    size_t pos = tb_block_begin(b, "StackBlock");
    tb_u32(b, first_id);
    tb_u32(b, count);
    for (uint32_t i = 0; i < count; i++) {
        tb_u32(b, depths[i] * pointer_size);
        for (uint32_t k = 0; k < depths[i]; k++) {
            if (pointer_size == 8)
                tb_u64(b, ips[i][k]);
            else
                tb_u32(b, (uint32_t)ips[i][k]);
        }
    }
    tb_block_end(b, pos);
}

void tb_sp_block(tb *b, int64_t ts, uint32_t nthreads, const uint64_t *tids, const uint32_t *seqs)
{
    size_t pos = tb_block_begin(b, "SPBlock");
    tb_u64(b, (uint64_t)ts);
    tb_u32(b, nthreads);
    for (uint32_t i = 0; i < nthreads; i++) {
        tb_u64(b, tids[i]);
        tb_u32(b, seqs[i]);
    }
    tb_block_end(b, pos);
}

void tb_v6_block(tb *b, uint32_t kind, const tb *body)
{
    tb_u32(b, (uint32_t)body->n | kind << CM_V6_BLOCK_KIND_SHIFT);
    tb_bytes(b, body->d, body->n);
}

void tb_v6_header(tb *b)
{
    tb_bytes(b, CM_FMT_MAGIC, CM_FMT_MAGIC_LEN);
    tb_u32(b, 0);
    tb_u32(b, 6);
    tb_u32(b, 0);
    tb body = { 0 };
    for (int i = 0; i < 8; i++)
        tb_u16(&body, 1);
    tb_u64(&body, 0);
    tb_u64(&body, 1000000000);
    tb_u32(&body, 8);
    tb_u32(&body, 0);
    tb_v6_block(b, CM_V6_TRACE, &body);
    tb_free(&body);
}
