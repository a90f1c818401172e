/* Source metadata ids to output ids.  Metadata is re-numbered; a V6 event
 * whose label list overrides its version, opcode, level or keywords gets a
 * metadata record of its own (a variant of its base, found again through a
 * keyed hash of the override); a V6 output that would need more records
 * than a reader holds at once gets a metadata-flushing sequence point and
 * defines what it uses again.  Field lists the output cannot describe are
 * left out of the record (the payload bytes are unchanged). */
#include "convert/convert_internal.h"

#include <stdio.h>

int cv_fail_writer(cv_conv *c)
{
    c->fail = nt_writer_status(c->w);
    snprintf(c->err, sizeof c->err, "writer: %s", nt_writer_message(c->w));
    return 1;
}

int cv_fail_nomem(cv_conv *c)
{
    c->fail = NT_ERR_NOMEM;
    snprintf(c->err, sizeof c->err, "out of memory");
    return 1;
}

static bool array_type(uint32_t t)
{
    return t == NT_TYPE_ARRAY || t == NT_TYPE_FIXED_ARRAY || t == NT_TYPE_RELLOC || t == NT_TYPE_DATALOC;
}

/* Field lists the output cannot describe: V6-only types in V4, arrays of
 * arrays (nt_field has no room for the inner element type) and fixed-length
 * arrays (nor for their element count). */
static bool lossy_fields(const nt_event_desc *d, uint32_t format)
{
    for (uint32_t i = 0; i < d->field_count; i++) {
        const nt_field *f = &d->fields[i];
        if (format != 6 && (f->type > NT_TYPE_ARRAY || f->element_type > NT_TYPE_ARRAY))
            return true;
        if (array_type(f->type) && array_type(f->element_type))
            return true;
        if (f->type == NT_TYPE_FIXED_ARRAY) /* nt_field carries no element count */
            return true;
    }
    return false;
}

void cv_forget_metadata(cv_conv *c)
{
    cm_map_free(&c->mem, &c->base);
    cm_map_free(&c->mem, &c->variants);
    c->nmetas = 0;
}

void cv_meta_free(cv_conv *c)
{
    cv_forget_metadata(c);
    cm_mem_free(&c->mem, c->metas, c->cap * sizeof *c->metas);
    c->metas = NULL;
    c->cap = 0;
}

/* V6: a reader holds at most NT_DEFAULT_MAX_METADATA records at once, and so
 * does the writer.  Past that, a sequence point flushing the metadata lets the
 * output go on: what is used after it is defined again. */
static int make_room(cv_conv *c)
{
    if (c->nmetas < NT_DEFAULT_MAX_METADATA)
        return 0;
    if (c->format != 6) {
        c->fail = NT_ERR_LIMIT;
        snprintf(c->err, sizeof c->err,
                 "the V4 output would need more than %u metadata records at once (label-list overrides each "
                 "make one), more than a reader holds; V6 can flush them: use --to v6",
                 NT_DEFAULT_MAX_METADATA);
        return 1;
    }
    if (nt_writer_sequence_point(c->w, c->last_timestamp, NT_SP_FLUSH_METADATA) != NT_OK)
        return cv_fail_writer(c);
    cv_forget_metadata(c);
    c->st.metadata_flushes++;
    return 0;
}

/* Define d (as given, under a new id) as metas[nmetas], a variant of
 * metas[base] (base == nmetas: a base of its own). */
static int define(cv_conv *c, const nt_event_desc *d, size_t base, uint32_t *dst)
{
    nt_event_desc x = *d;
    x.metadata_id = 0;
    if (lossy_fields(d, c->format)) {
        x.field_count = 0;
        x.fields = NULL;
        c->st.fieldless_metadata++;
    }
    if (nt_writer_define(c->w, &x, dst) != NT_OK)
        return cv_fail_writer(c);
    if (!cm_mem_reserve(&c->mem, (void **)&c->metas, &c->cap, c->nmetas + 1, sizeof *c->metas))
        return cv_fail_nomem(c);
    c->metas[c->nmetas++] = (cv_meta){ d->metadata_id, *dst, (uint32_t)base, 0, d->version, d->opcode, d->level,
                                       d->keywords };
    return 0;
}

/* Make d the base of its source id: a redefinition (after a V6 metadata
 * flush) replaces the old one, and the old one's variants with it. */
int cv_define_base(cv_conv *c, const nt_event_desc *d, uint32_t *dst)
{
    if (make_room(c) || define(c, d, c->nmetas, dst))
        return 1;
    uint64_t *v = cm_map_put(&c->mem, &c->base, d->metadata_id, NULL);
    if (!v)
        return cv_fail_nomem(c);
    *v = c->nmetas;
    return 0;
}

static bool same(const cv_meta *m, const nt_event_desc *d)
{
    return m->version == d->version && m->opcode == d->opcode && m->level == d->level && m->keywords == d->keywords;
}

/* What tells a base's variants apart, through the run's keyed hash. */
static uint64_t variant_hash(const cv_conv *c, size_t base, const nt_event_desc *d)
{
    uint64_t h = cm_hash_u64(&c->hash_key, base);
    h = cm_hash_u64(&c->hash_key, h ^ d->version);
    h = cm_hash_u64(&c->hash_key, h ^ ((uint64_t)d->opcode << 32 | d->level));
    return cm_hash_u64(&c->hash_key, h ^ d->keywords);
}

/* A variant of metas[base] for d: found among those with its hash, or defined. */
static int variant_id(cv_conv *c, size_t base, const nt_event_desc *d, uint32_t *dst)
{
    uint64_t h = variant_hash(c, base, d);
    uint64_t *first = cm_map_put(&c->mem, &c->variants, h, NULL);
    if (!first)
        return cv_fail_nomem(c);
    for (uint32_t i = (uint32_t)*first; i; i = c->metas[i - 1].next) {
        const cv_meta *m = &c->metas[i - 1];
        if (m->base == base && same(m, d)) {
            *dst = m->dst_id;
            return 0;
        }
    }
    uint64_t flushes = c->st.metadata_flushes;
    if (make_room(c))
        return 1;
    if (c->st.metadata_flushes != flushes) /* the base went with the flush */
        return cv_define_base(c, d, dst);
    if (define(c, d, base, dst))
        return 1;
    first = cm_map_put(&c->mem, &c->variants, h, NULL); /* (the map may have moved) */
    if (!first)
        return cv_fail_nomem(c);
    c->metas[c->nmetas - 1].next = (uint32_t)*first;
    *first = c->nmetas;
    return 0;
}

int cv_out_id(cv_conv *c, const nt_event *ev, uint32_t *dst)
{
    uint64_t *v = cm_map_put(&c->mem, &c->base, ev->metadata_id, NULL);
    if (!v)
        return cv_fail_nomem(c);
    if (!*v) /* defined before a metadata flush of the output's own */
        return cv_define_base(c, ev->desc, dst);
    size_t base = (size_t)*v - 1;
    if (same(&c->metas[base], ev->desc)) {
        *dst = c->metas[base].dst_id;
        return 0;
    }
    return variant_id(c, base, ev->desc, dst);
}
