/* Metadata records from scratch to the metadata table (fields.h). */
#include "common/utf16.h"
#include "common/utf8.h"
#include "parse/context.h"

#include <string.h>

void ps_fields_free(ps_field_scratch *f, cm_mem *mem)
{
    cm_mem_free(mem, f->f, f->cap * sizeof *f->f);
    memset(f, 0, sizeof *f);
}

ps_raw_field *ps_fields_push(nt_parser *p, ps_name_span name, uint32_t type, uint32_t elem, uint32_t depth)
{
    ps_field_scratch *fs = &p->fields;
    if (fs->n >= p->lim.max_fields) {
        fs->overflow = true;
        return NULL;
    }
    if (!cm_mem_reserve(&p->mem, (void **)&fs->f, &fs->cap, fs->n + 1, sizeof *fs->f)) {
        fs->nomem = true;
        return NULL;
    }
    ps_raw_field *f = &fs->f[fs->n++];
    *f = (ps_raw_field){ name, type, elem, depth };
    return f;
}

nt_status ps_fields_failed(nt_parser *p, uint32_t id, uint64_t off)
{
    if (p->fields.nomem)
        return ps_fail(p, NT_ERR_NOMEM, off, "cannot hold the fields of metadata record %u", id);
    if (p->fields.overflow)
        return ps_fail(p, NT_ERR_LIMIT, off, "metadata record has more than max_fields (%u) fields",
                       p->lim.max_fields);
    p->fields.n = 0;
    return NT_OK;
}

/* The checks every new metadata id passes: in range, not yet defined, room
 * under max_metadata. */
static nt_status check_new_id(nt_parser *p, uint32_t id, uint64_t off)
{
    if (id == 0 || id > INT32_MAX)
        return ps_fail(p, NT_ERR_MALFORMED, off, "metadata id %u is reserved or out of range", id);
    if (ps_metadata_find(&p->meta, id))
        return ps_fail(p, NT_ERR_MALFORMED, off, "metadata id %u defined twice", id);
    if (p->meta.count >= p->lim.max_metadata)
        return ps_fail(p, NT_ERR_LIMIT, off, "more than max_metadata (%u) metadata records", p->lim.max_metadata);
    return NT_OK;
}

nt_status ps_metadata_fields(nt_parser *p, ps_raw_desc *r, uint32_t id, cm_cursor *c, ps_fields_parse_fn parse,
                             uint64_t off)
{
    nt_status s = check_new_id(p, id, off);
    if (s)
        return s;
    r->d.metadata_id = id;
    ps_fields_reset(&p->fields);
    if (parse && !parse(p, c, 0)) {
        if ((s = ps_fields_failed(p, id, off)) != NT_OK)
            return s;
        c->p = c->end;
    }
    return NT_OK;
}

/* A V6 name (UTF-8 in the stream) made valid: *out and *len are the span
 * itself when it is valid UTF-8 up to its first NUL (where a C string ends),
 * else a copy in the scratch with every invalid sequence replaced by U+FFFD
 * (the library promises UTF-8).  False when the scratch cannot grow. */
static bool utf8_name(nt_parser *p, ps_name_span n, const char **out, size_t *len)
{
    if (!ps_scratch_reserve(p, n.len + 1 + 3 * n.len + 1))
        return false;
    char *raw = p->str, *fixed = p->str + n.len + 1;
    memcpy(raw, n.s, n.len);
    raw[n.len] = '\0';
    const unsigned char *s = (const unsigned char *)raw;
    bool valid = true;
    for (const unsigned char *q = s; *q && valid;)
        valid = cm_utf8_next(&q, CM_UTF8_REJECT) != CM_UTF8_INVALID;
    if (valid) {
        *out = (const char *)n.s;
        *len = n.len;
        return true;
    }
    size_t k = 0;
    while (*s)
        k += cm_utf8_encode(cm_utf8_next(&s, CM_UTF8_REPLACE), fixed + k);
    *out = fixed;
    *len = k;
    return true;
}

/* A name into the metadata arena: converted from UTF-16 through the string
 * scratch, or UTF-8 copied (invalid sequences replaced).  NULL when the
 * arena refused it (its over_budget says whether for the budget) or memory
 * ran out. */
static const char *store_name(nt_parser *p, ps_name_span n, bool utf16)
{
    size_t budget = p->lim.max_metadata_bytes;
    if (!utf16) {
        const char *s;
        size_t len;
        if (!utf8_name(p, n, &s, &len)) {
            p->meta.over_budget = false; /* an allocation failure, whatever the arena said before */
            return NULL;
        }
        return ps_metadata_strdup(&p->meta, s, len, budget);
    }
    if (!ps_scratch_reserve(p, cm_utf8_bound(n.len))) {
        p->meta.over_budget = false; /* an allocation failure, whatever the arena said before */
        return NULL;
    }
    size_t len = cm_utf16_to_utf8(n.s, n.len, p->str);
    return ps_metadata_strdup(&p->meta, p->str, len, budget);
}

nt_status ps_metadata_commit(nt_parser *p, const ps_raw_desc *r, uint64_t off)
{
    nt_event_desc d = r->d;
    size_t nf = p->fields.n;
    d.provider = store_name(p, r->provider, r->utf16);
    d.event_name = d.provider ? store_name(p, r->event_name, r->utf16) : NULL;
    d.fields = NULL;
    d.field_count = 0;
    if (d.event_name && nf) {
        nt_field *fields = ps_metadata_alloc(&p->meta, nf * sizeof *fields, p->lim.max_metadata_bytes);
        for (size_t i = 0; fields && i < nf; i++) {
            const ps_raw_field *rf = &p->fields.f[i];
            fields[i].type = rf->type;
            fields[i].element_type = rf->element_type;
            fields[i].depth = rf->depth;
            fields[i].name = store_name(p, rf->name, r->utf16);
            if (!fields[i].name)
                fields = NULL;
        }
        d.fields = fields;
        d.field_count = fields ? (uint32_t)nf : 0;
        if (!fields)
            d.event_name = NULL;
    }
    if (!d.provider || !d.event_name) {
        if (p->meta.over_budget)
            return ps_fail(p, NT_ERR_LIMIT, off, "metadata exceeds max_metadata_bytes (%u)", p->lim.max_metadata_bytes);
        return ps_fail(p, NT_ERR_NOMEM, off, "cannot store metadata record %u", d.metadata_id);
    }
    d.kind = ps_classify_event(d.provider, d.event_id);
    ps_schema_attach(&d);
    const nt_event_desc *stored = ps_metadata_add(&p->meta, &d);
    if (!stored)
        return ps_fail(p, NT_ERR_NOMEM, off, "cannot store metadata record %u", d.metadata_id);
    p->stats.metadata++;
    return PS_CALL(p, metadata, stored);
}
