/* Payload-only decoding (nt_payload_decoder): a runtime event's payload that
 * arrived without a stream -- from the CLR profiling API's
 * EventPipeEventDelivered, or an EventListener -- decoded by the same layout
 * table and the same iterator the parser's events use (field_decode.c), so
 * its fields are what `nettrace events` prints for the event in a trace. */
#include "parse/field_decode.h"
#include "common/limits.h"

#include <stddef.h>
#include <string.h>

struct nt_payload_decoder {
    cm_mem mem;
    nt_trace_info info;        /* only its pointer size is read */
    struct nt_field_ctx fctx;  /* string scratch, limits */
    nt_event_desc desc;
    nt_event ev;               /* what the iterator walks: valid until the next begin */
    char provider[256];
};

nt_payload_decoder *nt_payload_decoder_new(const nt_limits *limits, const nt_allocator *alloc)
{
    nt_payload_decoder *d = CM_MEM_NEW(nt_payload_decoder, alloc);
    if (!d)
        return NULL;
    nt_limits lim;
    cm_limits_resolve(&lim, limits);
    ps_field_ctx_init(&d->fctx, &d->mem, &d->info, &lim);
    return d;
}

nt_status nt_payload_fields_begin(nt_payload_decoder *d, const char *provider, uint32_t event_id, uint32_t version,
                                  uint32_t pointer_size, const void *payload, uint32_t size, nt_field_iter *it)
{
    if (!it)
        return NT_ERR_INVALID_ARG;
    /* A refused begin leaves an iteration that has ended: nt_field_next yields nothing. */
    memset(it, 0, offsetof(nt_field_iter, stack_));
    it->status = NT_ERR_INVALID_ARG;
    it->message = "no layout for this event";
    it->done_ = true;
    if (!d || !provider || (!payload && size) || (pointer_size != 4 && pointer_size != 8) ||
        strlen(provider) >= sizeof d->provider)
        return NT_ERR_INVALID_ARG;
    memcpy(d->provider, provider, strlen(provider) + 1);
    d->desc = (nt_event_desc){ .provider = d->provider, .event_id = event_id, .version = version,
                               .event_name = "" };
    ps_schema_attach(&d->desc);
    if (!d->desc.schema)
        return NT_ERR_INVALID_ARG; /* no layout for it: not a runtime event the table knows */
    d->info.pointer_size = pointer_size;
    d->ev = (nt_event){ .desc = &d->desc, .payload_size = size, .payload = payload, .field_ctx = &d->fctx };
    return nt_event_fields_begin(&d->ev, it);
}

const nt_event *nt_payload_event(const nt_payload_decoder *d) { return d ? &d->ev : NULL; }

void nt_payload_decoder_free(nt_payload_decoder *d)
{
    if (!d)
        return;
    ps_field_ctx_free(&d->fctx);
    CM_MEM_DELETE(nt_payload_decoder, d);
}
