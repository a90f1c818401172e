/* Metadata records: V4/V5 payloads (V1 field lists, the V5 V2Params and
 * OpCode tags) and V6 rows, from an nt_event_desc. */
#include "write/writer_internal.h"

#include <string.h>

/* Fields are pre-order with depths; children of an object (or an array of
 * objects) follow it at depth + 1. */
static bool has_children(const nt_field *f)
{
    return f->type == NT_TYPE_OBJECT || (cm_type_has_element(f->type) && f->element_type == NT_TYPE_OBJECT);
}

/* Readers bound nesting (the parser at 8 levels) and field counts. */
#define MAX_DEPTH 8

static bool fields_valid(const nt_event_desc *d)
{
    if ((d->field_count && !d->fields) || d->field_count > NT_DEFAULT_MAX_FIELDS)
        return false;
    for (uint32_t i = 0; i < d->field_count; i++) {
        const nt_field *f = &d->fields[i];
        if (!f->name || (cm_type_has_element(f->type) && cm_type_has_element(f->element_type)))
            return false; /* an array of arrays: nt_field has no room for the inner element type */
        uint32_t max = i == 0 ? 0 : d->fields[i - 1].depth + (has_children(&d->fields[i - 1]) ? 1 : 0);
        if (f->depth > max || f->depth + (has_children(f) ? 1u : 0u) > MAX_DEPTH)
            return false;
    }
    return true;
}

/* Fields at `depth` from *i until a shallower one. */
static uint32_t count_level(const nt_field *f, uint32_t n, uint32_t i, uint32_t depth)
{
    uint32_t c = 0;
    for (; i < n && f[i].depth >= depth; i++)
        if (f[i].depth == depth)
            c++;
    return c;
}

static void v1_fields(cm_buf *b, const nt_field *f, uint32_t n, uint32_t *i, uint32_t depth)
{
    cm_buf_u32(b, count_level(f, n, *i, depth));
    while (*i < n && f[*i].depth == depth) {
        const nt_field *x = &f[(*i)++];
        cm_buf_u32(b, x->type);
        if (x->type == NT_TYPE_OBJECT)
            v1_fields(b, f, n, i, depth + 1);
        cm_buf_utf16z(b, x->name, CM_UTF8_REPLACE);
    }
}

static void v2_fields(cm_buf *b, const nt_field *f, uint32_t n, uint32_t *i, uint32_t depth)
{
    cm_buf_u32(b, count_level(f, n, *i, depth));
    while (*i < n && f[*i].depth == depth) {
        const nt_field *x = &f[(*i)++];
        size_t at = b->n;
        cm_buf_u32(b, 0);
        cm_buf_utf16z(b, x->name, CM_UTF8_REPLACE);
        cm_buf_u32(b, x->type);
        if (x->type == NT_TYPE_ARRAY)
            cm_buf_u32(b, x->element_type);
        if (has_children(x))
            v2_fields(b, f, n, i, depth + 1);
        cm_buf_put32(b, at, (uint32_t)(b->n - at));
    }
}

static void v6_fields(cm_buf *b, const nt_field *f, uint32_t n, uint32_t *i, uint32_t depth);

/* V6 Type: code, [element type], [element count], [object fields]. */
static void v6_type(cm_buf *b, const nt_field *x, const nt_field *f, uint32_t n, uint32_t *i, uint32_t depth)
{
    cm_buf_u8(b, (uint8_t)x->type);
    if (cm_type_has_element(x->type)) {
        cm_buf_u8(b, (uint8_t)x->element_type);
        if (x->element_type == NT_TYPE_OBJECT)
            v6_fields(b, f, n, i, depth + 1);
        if (x->type == NT_TYPE_FIXED_ARRAY)
            cm_buf_u16(b, 0); /* the element count is not part of nt_field */
    } else if (x->type == NT_TYPE_OBJECT) {
        v6_fields(b, f, n, i, depth + 1);
    }
}

static void v6_fields(cm_buf *b, const nt_field *f, uint32_t n, uint32_t *i, uint32_t depth)
{
    cm_buf_u16(b, (uint16_t)count_level(f, n, *i, depth));
    while (*i < n && f[*i].depth == depth) {
        const nt_field *x = &f[(*i)++];
        size_t at = b->n;
        cm_buf_u16(b, 0);
        cm_buf_str8(b, x->name);
        v6_type(b, x, f, n, i, depth);
        size_t size = b->n - at - 2;
        if (size > UINT16_MAX)
            b->failed = true;
        cm_buf_put16(b, at, (uint16_t)size);
    }
}

static nt_status encode_v4(nt_writer *w, cm_buf *b, const nt_event_desc *d, uint32_t id)
{
    bool v2 = false;
    for (uint32_t i = 0; i < d->field_count; i++)
        if (d->fields[i].type == NT_TYPE_ARRAY)
            v2 = true;
        else if (d->fields[i].type > NT_TYPE_ARRAY)
            return wr_fail(w, NT_ERR_INVALID_ARG, "field type %u exists only in V6", d->fields[i].type);
    cm_buf_u32(b, id);
    cm_buf_utf16z(b, d->provider, CM_UTF8_REPLACE);
    cm_buf_u32(b, d->event_id);
    cm_buf_utf16z(b, d->event_name, CM_UTF8_REPLACE);
    cm_buf_u64(b, d->keywords);
    cm_buf_u32(b, d->version);
    cm_buf_u32(b, d->level);
    uint32_t i = 0;
    if (v2)
        cm_buf_u32(b, 0);
    else
        v1_fields(b, d->fields, d->field_count, &i, 0);
    if (d->opcode) {
        if (d->opcode > 255)
            return wr_fail(w, NT_ERR_INVALID_ARG, "opcode %u does not fit a byte", d->opcode);
        cm_buf_u32(b, 1); /* the tag's payload size */
        cm_buf_u8(b, CM_META_TAG_OPCODE);
        cm_buf_u8(b, (uint8_t)d->opcode);
    }
    if (v2) {
        size_t at = b->n;
        cm_buf_u32(b, 0);
        cm_buf_u8(b, CM_META_TAG_V2PARAMS);
        i = 0;
        v2_fields(b, d->fields, d->field_count, &i, 0);
        cm_buf_put32(b, at, (uint32_t)(b->n - at - 5));
    }
    return NT_OK;
}

static nt_status encode_v6(nt_writer *w, cm_buf *b, const nt_event_desc *d, uint32_t id)
{
    if (d->opcode > 255 || d->level > 255 || d->version > 255)
        return wr_fail(w, NT_ERR_INVALID_ARG, "V6 metadata holds opcode, level and version in one byte each");
    cm_buf_varu(b, id);
    cm_buf_str8(b, d->provider);
    cm_buf_varu(b, d->event_id);
    cm_buf_str8(b, d->event_name);
    uint32_t i = 0;
    v6_fields(b, d->fields, d->field_count, &i, 0);
    size_t at = b->n;
    cm_buf_u16(b, 0);
    if (d->opcode) {
        cm_buf_u8(b, CM_V6_META_OPCODE);
        cm_buf_u8(b, (uint8_t)d->opcode);
    }
    if (d->keywords) {
        cm_buf_u8(b, CM_V6_META_KEYWORDS);
        cm_buf_u64(b, d->keywords);
    }
    if (d->level) {
        cm_buf_u8(b, CM_V6_META_LEVEL);
        cm_buf_u8(b, (uint8_t)d->level);
    }
    if (d->version) {
        cm_buf_u8(b, CM_V6_META_VERSION);
        cm_buf_u8(b, (uint8_t)d->version);
    }
    cm_buf_put16(b, at, (uint16_t)(b->n - at - 2));
    return NT_OK;
}

nt_status wr_encode_metadata(nt_writer *w, cm_buf *b, const nt_event_desc *d, uint32_t id)
{
    if (!d->provider)
        return wr_fail(w, NT_ERR_INVALID_ARG, "metadata without a provider name");
    if (!fields_valid(d))
        return wr_fail(w, NT_ERR_INVALID_ARG, "field list of %s/%u is not a pre-order tree of at most %u fields, %u levels deep", d->provider,
                        d->event_id, NT_DEFAULT_MAX_FIELDS, MAX_DEPTH);
    nt_status s = w->opt.format == 6 ? encode_v6(w, b, d, id) : encode_v4(w, b, d, id);
    if (s == NT_OK && b->failed)
        return wr_fail(w, NT_ERR_NOMEM, "cannot encode metadata %u (out of memory or a field over 64 KiB)", id);
    return s;
}
