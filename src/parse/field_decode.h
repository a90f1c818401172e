/* Payload field decoding (field_decode.c): the per-parser context events point to,
 * and the hook that names a description from the runtime event table. */
#ifndef PS_FIELD_DECODE_H
#define PS_FIELD_DECODE_H

#include "common/alloc.h"

/* What nt_event_fields_begin needs from the parser: scratch for strings
 * (one per parser, sized for the current event's payload), the pointer size
 * win:Pointer fields take, and the limits. */
struct nt_field_ctx {
    cm_mem *mem;
    char *buf;
    size_t cap;
    const nt_trace_info *info;
    uint32_t max_array_elements;
    uint32_t max_depth;
    /* The V6 label list of the event being delivered: what nt_event_labels_get
     * adds to the header's activity ids (set by the V6 decoder). */
    bool has_trace_id, has_span_id;
    uint8_t trace_id[16], span_id[8];
};

void ps_field_ctx_init(struct nt_field_ctx *c, cm_mem *mem, const nt_trace_info *info, const nt_limits *lim);
void ps_field_ctx_free(struct nt_field_ctx *c);

/* Fill d->name, task_name, opcode_name and schema from the runtime event
 * table (once per metadata record, before it is stored). */
void ps_schema_attach(nt_event_desc *d);

#endif
