/* A metadata record between parsing and storage, for both versions: its
 * names as spans into the block (UTF-16LE in V4/V5, UTF-8 in V6), its fields
 * in a scratch list; ps_metadata_commit stores the strings in the metadata
 * arena, classifies the event and hands it to the metadata callback.  Fields
 * are gathered raw and stored only once the whole description parsed, so an
 * unparsable list costs no arena space. */
#ifndef PS_FIELDS_H
#define PS_FIELDS_H

#include "common/alloc.h"
#include "common/cursor.h"

/* Nested objects deeper than this make a field list unparsable. */
#define PS_MAX_FIELD_DEPTH 8

/* A name in the block: UTF-16LE units (V4/V5) or UTF-8 bytes (V6). */
typedef struct ps_name_span {
    const uint8_t *s;
    size_t len; /* units (UTF-16) or bytes (UTF-8) */
} ps_name_span;

typedef struct ps_raw_field {
    ps_name_span name;
    uint32_t type, element_type, depth;
} ps_raw_field;

typedef struct ps_field_scratch {
    ps_raw_field *f;
    size_t cap, n;
    bool overflow; /* more fields than max_fields: a limit breach, not a parse failure */
    bool nomem;    /* the scratch could not grow: out of memory, not a parse failure */
} ps_field_scratch;

/* A parsed description: d holds the numbers, the names are spans. */
typedef struct ps_raw_desc {
    nt_event_desc d;
    ps_name_span provider, event_name;
    bool utf16;    /* the spans (fields' too) are UTF-16LE */
} ps_raw_desc;

void ps_fields_free(ps_field_scratch *f, cm_mem *mem);

/* Start a new record's list. */
static inline void ps_fields_reset(ps_field_scratch *f)
{
    f->n = 0;
    f->overflow = f->nomem = false;
}

/* Append a field; NULL (with overflow or nomem set) when it cannot be held. */
ps_raw_field *ps_fields_push(nt_parser *p, ps_name_span name, uint32_t type, uint32_t elem, uint32_t depth);

/* After a field list failed to parse: the error when that was a limit or out
 * of memory, else NT_OK (the list is dropped, as TraceEvent does). */
nt_status ps_fields_failed(nt_parser *p, uint32_t id, uint64_t off);

/* A decoder's field-list reader (V4/V5 V1 list, V2Params, V6 list). */
typedef bool (*ps_fields_parse_fn)(nt_parser *p, cm_cursor *c, uint32_t depth);

/* What every metadata record does after its fixed part: checks id (in range,
 * not yet defined, room under max_metadata), sets it in r and reads the field
 * list from c with parse (NULL: the record has none).  An unparsable list
 * only loses the fields, as TraceEvent does, and c then stands at its end.
 * The error that ends the record, else NT_OK. */
nt_status ps_metadata_fields(nt_parser *p, ps_raw_desc *r, uint32_t id, cm_cursor *c, ps_fields_parse_fn parse,
                             uint64_t off);

/* Store r (its names and the fields in the scratch), classify it and call the
 * metadata callback. */
nt_status ps_metadata_commit(nt_parser *p, const ps_raw_desc *r, uint64_t off);

#endif
