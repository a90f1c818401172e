/* Payload-only decoding (nt_payload_decoder): an event's payload that
 * arrived without a stream -- from the CLR profiling API's
 * EventPipeEventDelivered, or an EventListener -- decoded by the same layouts
 * and the same iterator the parser's events use (field_decode.c), so its
 * fields are what `nettrace events` prints for the event in a trace.  The
 * layout comes from the runtime's event table, the well-known EventSources'
 * (eventsource_table.c), or the metadata blob that came with the payload,
 * read by the parser's own metadata code into a parser the decoder keeps for
 * its descriptions (nt_payload_describe). */
#include "parse/blocks.h"
#include "parse/eventsource_table.h"
#include "parse/field_decode.h"
#include "common/limits.h"
#include "common/byte_buf.h"

#include <stddef.h>
#include <string.h>

struct nt_payload_decoder {
    cm_mem mem;
    nt_limits lim;
    nt_trace_info info;        /* only its pointer size is read */
    struct nt_field_ctx fctx;  /* string scratch, limits */
    nt_event_desc desc;
    nt_event ev;               /* what the iterator walks: valid until the next begin */
    char provider[256];
    nt_parser *described;      /* the descriptions nt_payload_describe read (NULL until the first) */
    uint32_t ndescribed;
};

nt_payload_decoder *nt_payload_decoder_new(const nt_limits *limits, const nt_allocator *alloc)
{
    nt_payload_decoder *d = CM_MEM_NEW(nt_payload_decoder, alloc);
    if (!d)
        return NULL;
    cm_limits_resolve(&d->lim, limits);
    ps_field_ctx_init(&d->fctx, &d->mem, &d->info, &d->lim);
    return d;
}

/* An iteration refused at its begin has ended: nt_field_next yields nothing. */
static void refuse(nt_field_iter *it)
{
    memset(it, 0, offsetof(nt_field_iter, stack_));
    it->status = NT_ERR_INVALID_ARG;
    it->message = "no layout for this event";
    it->done_ = true;
}

static bool args_ok(uint32_t pointer_size, const void *payload, uint32_t size)
{
    return (payload || !size) && (pointer_size == 4 || pointer_size == 8);
}

/* Iterate the payload against desc (its layout: the runtime table's schema, or its fields). */
static nt_status begin_with(nt_payload_decoder *d, const nt_event_desc *desc, uint32_t pointer_size,
                            const void *payload, uint32_t size, nt_field_iter *it)
{
    d->info.pointer_size = pointer_size;
    d->ev = (nt_event){ .desc = desc, .payload_size = size, .payload = payload, .field_ctx = &d->fctx };
    return nt_event_fields_begin(&d->ev, it);
}

nt_status nt_payload_fields_begin(nt_payload_decoder *d, const char *provider, uint32_t event_id, uint32_t version,
                                  uint32_t pointer_size, const void *payload, uint32_t size, nt_field_iter *it)
{
    if (!it)
        return NT_ERR_INVALID_ARG;
    refuse(it);
    if (!d || !provider || !args_ok(pointer_size, payload, size) || strlen(provider) >= sizeof d->provider)
        return NT_ERR_INVALID_ARG;
    memcpy(d->provider, provider, strlen(provider) + 1);
    d->desc = (nt_event_desc){ .provider = d->provider, .event_id = event_id, .version = version,
                               .event_name = "" };
    ps_schema_attach(&d->desc);
    if (d->desc.schema)
        return begin_with(d, &d->desc, pointer_size, payload, size, it);
    const nt_event_desc *known = ps_es_find(provider, event_id, version);
    if (!known)
        return NT_ERR_INVALID_ARG; /* neither table knows it: its metadata says (nt_payload_describe) */
    return begin_with(d, known, pointer_size, payload, size, it);
}

/* Whether the payload fits desc's layout exactly: every field decodes and no byte is left. */
static bool fits(nt_payload_decoder *d, const nt_event_desc *desc, uint32_t pointer_size, const void *payload,
                 uint32_t size)
{
    nt_field_iter it;
    nt_field_value v;
    if (begin_with(d, desc, pointer_size, payload, size, &it) != NT_OK)
        return false;
    while (nt_field_next(&it, &v))
        ;
    return it.status == NT_OK && it.leftover == 0;
}

nt_status nt_payload_fields_begin_named(nt_payload_decoder *d, const char *provider, const char *event_name,
                                        uint32_t pointer_size, const void *payload, uint32_t size, nt_field_iter *it)
{
    if (!it)
        return NT_ERR_INVALID_ARG;
    refuse(it);
    if (!d || !provider || !event_name || !args_ok(pointer_size, payload, size))
        return NT_ERR_INVALID_ARG;
    const nt_event_desc *found[4];
    size_t n = ps_es_find_named(provider, event_name, found, sizeof found / sizeof found[0]);
    if (n == 0)
        return NT_ERR_INVALID_ARG;
    /* One name, several layouts (EventCounters): the first the payload fits exactly, else the first. */
    size_t pick = 0;
    for (size_t i = 0; n > 1 && i < n; i++)
        if (fits(d, found[i], pointer_size, payload, size)) {
            pick = i;
            break;
        }
    return begin_with(d, found[pick], pointer_size, payload, size, it);
}

/* The decoder's metadata record for provider and blob: u32 id, provider as UTF-16 with its NUL, then
 * the blob, as a V4/V5 metadata event's payload holds them; NULL when memory is short. */
static uint8_t *metadata_record(nt_payload_decoder *d, uint32_t id, const char *provider, const void *blob,
                                uint32_t size, size_t *len)
{
    *len = 4 + 2 * (cm_utf16_units(provider, CM_UTF8_REPLACE) + 1) + size;
    uint8_t *r = cm_mem_alloc(&d->mem, *len);
    if (!r)
        return NULL;
    cm_buf b = cm_buf_over(r, *len); /* sized exactly: it cannot fail */
    cm_buf_u32(&b, id);
    cm_buf_utf16z(&b, provider, CM_UTF8_REPLACE);
    cm_buf_bytes(&b, blob, size);
    return r;
}

nt_status nt_payload_describe(nt_payload_decoder *d, const char *provider, const void *metadata, uint32_t size,
                              uint32_t *id_out)
{
    if (id_out)
        *id_out = 0;
    if (!d || !provider || !*provider || !metadata || !size || !id_out)
        return NT_ERR_INVALID_ARG;
    if (d->ndescribed >= d->lim.max_metadata)
        return NT_ERR_LIMIT;
    if (!d->described && !(d->described = nt_parser_new(NULL, NULL, &d->lim, &d->mem.a)))
        return NT_ERR_NOMEM;
    size_t len;
    uint32_t id = d->ndescribed + 1;
    uint8_t *rec = metadata_record(d, id, provider, metadata, size, &len);
    if (!rec)
        return NT_ERR_NOMEM;
    nt_status st = ps_v4_metadata_record(d->described, rec, len, 0);
    cm_mem_free(&d->mem, rec, len);
    if (st != NT_OK) {
        /* A parser's failure is sticky; here it is this blob's alone: the descriptions read stay. */
        d->described->status = NT_OK;
        d->described->msg[0] = 0;
        return st;
    }
    d->ndescribed = id;
    *id_out = id;
    return NT_OK;
}

nt_status nt_payload_fields_begin_described(nt_payload_decoder *d, uint32_t id, uint32_t pointer_size,
                                            const void *payload, uint32_t size, nt_field_iter *it)
{
    if (!it)
        return NT_ERR_INVALID_ARG;
    refuse(it);
    if (!d || !d->described || id == 0 || id > d->ndescribed || !args_ok(pointer_size, payload, size))
        return NT_ERR_INVALID_ARG;
    const nt_event_desc *desc = ps_metadata_find(&d->described->meta, id);
    if (!desc)
        return NT_ERR_INVALID_ARG;
    return begin_with(d, desc, pointer_size, payload, size, it);
}

const nt_event *nt_payload_event(const nt_payload_decoder *d) { return d ? &d->ev : NULL; }

void nt_payload_decoder_free(nt_payload_decoder *d)
{
    if (!d)
        return;
    nt_parser_free(d->described);
    ps_field_ctx_free(&d->fctx);
    CM_MEM_DELETE(nt_payload_decoder, d);
}
