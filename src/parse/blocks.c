/* V4/V5 block decoding: event and metadata blocks (event-header decoding),
 * stack blocks and sequence-point blocks.  Each function gets one whole block
 * in memory and walks it with a bounded cursor. */
#include "parse/event_header.h"
#include "parse/parser_internal.h"
#include "common/utf16.h"

#include <string.h>

#define OFF(c, base, base_off) ((base_off) + (uint64_t)((c)->p - (base)))

/* ---- capture-thread sequence numbers (drop detection) ------------------ */

static size_t thread_slot(uint64_t tid, size_t cap)
{
    return (size_t)((tid * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static nt_thread_seq *thread_get(nt_parser *p, uint64_t tid, uint64_t off, nt_status *err)
{
    if (p->thread_cap) {
        size_t i = thread_slot(tid, p->thread_cap);
        while (p->threads[i].used) {
            if (p->threads[i].tid == tid)
                return &p->threads[i];
            i = (i + 1) & (p->thread_cap - 1);
        }
    }
    if (p->thread_count >= p->lim.max_threads) {
        *err = nt_fail(p, NT_ERR_LIMIT, off, "more than max_threads (%u) capture threads", p->lim.max_threads);
        return NULL;
    }
    if ((p->thread_count + 1) * 2 > p->thread_cap) {
        size_t ncap = p->thread_cap ? p->thread_cap * 2 : 64;
        nt_thread_seq *nt = NULL;
        if (!nt_mem_resize(&p->mem, (void **)&nt, 0, ncap * sizeof *nt)) {
            *err = nt_fail(p, NT_ERR_NOMEM, off, "cannot grow the thread table");
            return NULL;
        }
        memset(nt, 0, ncap * sizeof *nt);
        for (size_t k = 0; k < p->thread_cap; k++) {
            if (!p->threads[k].used)
                continue;
            size_t i = thread_slot(p->threads[k].tid, ncap);
            while (nt[i].used)
                i = (i + 1) & (ncap - 1);
            nt[i] = p->threads[k];
        }
        nt_mem_free(&p->mem, p->threads, p->thread_cap * sizeof *p->threads);
        p->threads = nt;
        p->thread_cap = ncap;
        p->last_thread = NULL;
    }
    size_t i = thread_slot(tid, p->thread_cap);
    while (p->threads[i].used)
        i = (i + 1) & (p->thread_cap - 1);
    p->threads[i].used = true;
    p->threads[i].tid = tid;
    p->threads[i].last_seq = 0;
    p->threads[i].dropped = 0;
    p->thread_count++;
    return &p->threads[i];
}

/* Sequence numbers count attempted writes per capture thread, so a gap is a
 * drop.  A restart at 1 is a recycled thread id, not a drop. */
static nt_status track_sequence(nt_parser *p, uint64_t ctid, uint32_t seq, uint64_t off)
{
    nt_thread_seq *t = p->last_thread;
    if (!t || t->tid != ctid) {
        nt_status err = NT_OK;
        t = thread_get(p, ctid, off, &err);
        if (!t)
            return err;
        p->last_thread = t;
    }
    if (t->last_seq != 0 && seq != t->last_seq + 1 && seq != 1) {
        uint32_t gap = seq - t->last_seq - 1;
        if (gap < 0x80000000u) {
            t->dropped += gap;
            p->stats.events_dropped += gap;
        }
    }
    t->last_seq = seq;
    return NT_OK;
}

/* ---- events ------------------------------------------------------------- */

nt_status nt_header_fail(nt_parser *p, nt_header_result r, uint64_t off, const nt_event *ev, const char *block)
{
    if (r == NT_HEADER_OVERRUN)
        return nt_fail(p, NT_ERR_MALFORMED, off, "event payload of %u bytes overruns the %s", ev->payload_size, block);
    return nt_fail(p, NT_ERR_MALFORMED, off, "compressed event header truncated or invalid");
}

nt_status nt_decode_event_block(nt_parser *p, const uint8_t *content, size_t size, uint64_t content_off,
                                bool metadata_block)
{
    const char *what = metadata_block ? "metadata block" : "event block";
    nt_cursor c = nt_cursor_make(content, size);
    uint16_t header_size, flags;
    if (!nt_cur_u16(&c, &header_size) || !nt_cur_u16(&c, &flags))
        return nt_fail(p, NT_ERR_MALFORMED, content_off, "%s header truncated", what);
    if (header_size < 20 || header_size > size)
        return nt_fail(p, NT_ERR_MALFORMED, content_off, "%s header size %u out of range", what, header_size);
    c.p = content + header_size;
    const bool compressed = flags & 1;

    nt_event ev;
    memset(&ev, 0, sizeof ev);
    while (c.p < c.end) {
        uint64_t blob_off = OFF(&c, content, content_off);
        uint32_t payload_size = 0;
        if (compressed) {
            nt_header_result r = nt_read_compressed_header(&c, &ev, &ev.thread_id, &ev.capture_thread_id, NULL);
            if (r != NT_HEADER_OK)
                return nt_header_fail(p, r, blob_off, &ev, what);
            payload_size = ev.payload_size;
        } else {
            uint32_t event_size = 0, raw_meta = 0;
            uint64_t ts = 0;
            if (nt_cur_left(&c) < 80)
                return nt_fail(p, NT_ERR_MALFORMED, blob_off, "event header truncated");
            nt_cur_u32(&c, &event_size);
            if (event_size < 76 || event_size > nt_cur_left(&c))
                return nt_fail(p, NT_ERR_MALFORMED, blob_off, "event size %u out of range", event_size);
            const uint8_t *next = c.p + event_size;
            nt_cur_u32(&c, &raw_meta);
            ev.metadata_id = raw_meta & 0x7FFFFFFFu;
            ev.is_sorted = (raw_meta & 0x80000000u) == 0; /* the writer sets bit 31 when NOT sorted */
            nt_cur_u32(&c, &ev.sequence_number);
            nt_cur_u64(&c, &ev.thread_id);
            nt_cur_u64(&c, &ev.capture_thread_id);
            nt_cur_u32(&c, &ev.processor_number);
            nt_cur_u32(&c, &ev.stack_id);
            nt_cur_u64(&c, &ts);
            ev.timestamp = (int64_t)ts;
            nt_cur_bytes(&c, ev.activity_id, 16);
            nt_cur_bytes(&c, ev.related_activity_id, 16);
            nt_cur_u32(&c, &payload_size);
            if (payload_size > event_size - 76)
                return nt_fail(p, NT_ERR_MALFORMED, blob_off, "event payload of %u bytes overruns its event size %u",
                               payload_size, event_size);
            ev.payload_size = payload_size;
            ev.payload = c.p;
            c.p = next; /* EventSize covers the trailing alignment padding */
        }
        ev.offset = blob_off;
        nt_status s;
        if (metadata_block) {
            s = nt_parse_metadata_record(p, ev.payload, payload_size, OFF(&c, content, content_off) - payload_size);
        } else {
            if (ev.metadata_id != 0) {
                s = track_sequence(p, ev.capture_thread_id, ev.sequence_number, blob_off);
                if (s)
                    return s;
            }
            /* Consecutive events mostly share their metadata (samples): skip the lookup then. */
            if (!ev.desc || ev.desc->metadata_id != ev.metadata_id)
                ev.desc = nt_metadata_find(&p->meta, ev.metadata_id);
            s = nt_event_deliver(p, &ev);
        }
        if (s)
            return s;
    }
    return NT_OK;
}

/* ---- metadata records ---------------------------------------------------- */

typedef struct meta_ctx {
    nt_parser *p;
    size_t nfields;
    bool overflow; /* more fields than max_fields: a limit breach, not a parse failure */
    bool nomem;    /* the field scratch could not grow: out of memory, not a parse failure */
} meta_ctx;

/* Convert a UTF-16 string into the metadata arena. */
static const char *arena_utf16(nt_parser *p, const uint8_t *s, size_t units)
{
    if (!nt_scratch_reserve(p, nt_utf8_bound(units))) {
        p->meta.over_budget = false; /* an allocation failure, whatever the arena said before */
        return NULL;
    }
    size_t n = nt_utf16_to_utf8(s, units, p->str);
    return nt_metadata_strdup(&p->meta, p->str, n, p->lim.max_metadata_bytes);
}

/* Fields are collected raw (UTF-16 name spans) and converted once the whole
 * description parsed, so an unparsable list costs no arena space. */
static nt_raw_field *push_field(meta_ctx *m, uint32_t type, uint32_t elem, uint32_t depth)
{
    nt_parser *p = m->p;
    if (m->nfields >= p->lim.max_fields) {
        m->overflow = true;
        return NULL;
    }
    if (!nt_mem_reserve(&p->mem, (void **)&p->fields, &p->fields_cap, m->nfields + 1, sizeof *p->fields)) {
        m->nomem = true;
        return NULL;
    }
    nt_raw_field *f = &p->fields[m->nfields++];
    f->name = NULL;
    f->units = 0;
    f->type = type;
    f->element_type = elem;
    f->depth = depth;
    return f;
}

#define MAX_FIELD_DEPTH 8

/* V1 list: i32 count, then per field: i32 type, [nested list if Object], utf16z name. */
static bool parse_v1_fields(meta_ctx *m, nt_cursor *c, uint32_t depth)
{
    uint32_t count;
    if (depth > MAX_FIELD_DEPTH || !nt_cur_u32(c, &count))
        return false;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t type;
        if (!nt_cur_u32(c, &type))
            return false;
        size_t idx = m->nfields;
        if (!push_field(m, type, 0, depth))
            return false;
        if (type == NT_TYPE_OBJECT && !parse_v1_fields(m, c, depth + 1))
            return false;
        nt_raw_field *f = &m->p->fields[idx];
        if (!nt_utf16z_scan(c, &f->name, &f->units))
            return false;
    }
    return true;
}

/* V2Params tag: i32 count, then per field: i32 size (itself included),
 * utf16z name, i32 type, [i32 element type if Array], [nested list if Object]. */
static bool parse_v2_fields(meta_ctx *m, nt_cursor *c, uint32_t depth)
{
    uint32_t count;
    if (depth > MAX_FIELD_DEPTH || !nt_cur_u32(c, &count))
        return false;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *start = c->p;
        uint32_t field_size, type, elem = 0;
        const uint8_t *s;
        size_t units;
        if (!nt_cur_u32(c, &field_size) || field_size < 4 || field_size > (size_t)(c->end - start))
            return false;
        nt_cursor f = nt_cursor_make(c->p, field_size - 4);
        if (!nt_utf16z_scan(&f, &s, &units) || !nt_cur_u32(&f, &type))
            return false;
        if (type == NT_TYPE_ARRAY && !nt_cur_u32(&f, &elem))
            return false;
        nt_raw_field *rf = push_field(m, type, elem, depth);
        if (!rf)
            return false;
        rf->name = s;
        rf->units = units;
        if ((type == NT_TYPE_OBJECT || elem == NT_TYPE_OBJECT) && !parse_v2_fields(m, &f, depth + 1))
            return false;
        c->p = start + field_size;
    }
    return true;
}

nt_status nt_parse_metadata_record(nt_parser *p, const uint8_t *payload, size_t size, uint64_t payload_off)
{
    nt_cursor c = nt_cursor_make(payload, size);
    uint32_t id, event_id, version, level;
    uint64_t keywords;
    const uint8_t *prov, *name;
    size_t prov_units, name_units;
    if (!nt_cur_u32(&c, &id) || !nt_utf16z_scan(&c, &prov, &prov_units) || !nt_cur_u32(&c, &event_id) ||
        !nt_utf16z_scan(&c, &name, &name_units) || !nt_cur_u64(&c, &keywords) || !nt_cur_u32(&c, &version) ||
        !nt_cur_u32(&c, &level))
        return nt_fail(p, NT_ERR_MALFORMED, payload_off, "metadata record truncated");
    if (id == 0 || id > INT32_MAX)
        return nt_fail(p, NT_ERR_MALFORMED, payload_off, "metadata id %u is reserved or negative", id);
    if (nt_metadata_find(&p->meta, id))
        return nt_fail(p, NT_ERR_MALFORMED, payload_off, "metadata id %u defined twice", id);
    if (p->meta.count >= p->lim.max_metadata)
        return nt_fail(p, NT_ERR_LIMIT, payload_off, "more than max_metadata (%u) metadata records",
                       p->lim.max_metadata);

    /* Field descriptions: parse what we can; an unparsable list only loses
     * its names (as TraceEvent does).  Then the V5 tags. */
    meta_ctx m = { p, 0, false, false };
    uint32_t opcode = 0;
    if (nt_cur_left(&c) >= 4) {
        if (!parse_v1_fields(&m, &c, 0)) {
            if (m.nomem)
                return nt_fail(p, NT_ERR_NOMEM, payload_off, "cannot hold the fields of metadata record %u", id);
            if (m.overflow)
                return nt_fail(p, NT_ERR_LIMIT, payload_off, "metadata record has more than max_fields (%u) fields",
                               p->lim.max_fields);
            m.nfields = 0;
            c.p = c.end;
        }
        while (nt_cur_left(&c) >= 5) {
            uint32_t tag_size = 0;
            uint8_t kind = 0;
            nt_cur_u32(&c, &tag_size);
            nt_cur_u8(&c, &kind);
            if (tag_size > nt_cur_left(&c))
                break;
            nt_cursor t = nt_cursor_make(c.p, tag_size);
            if (kind == 1 && tag_size >= 1) {
                opcode = c.p[0];
            } else if (kind == 2) {
                m.nfields = 0; /* V2Params replaces the (empty) V1 list */
                if (!parse_v2_fields(&m, &t, 0)) {
                    if (m.nomem)
                        return nt_fail(p, NT_ERR_NOMEM, payload_off, "cannot hold the fields of metadata record %u",
                                       id);
                    if (m.overflow)
                        return nt_fail(p, NT_ERR_LIMIT, payload_off,
                                       "metadata record has more than max_fields (%u) fields", p->lim.max_fields);
                    m.nfields = 0;
                }
            }
            c.p += tag_size;
        }
    }

    size_t budget = p->lim.max_metadata_bytes;
    nt_event_desc d;
    memset(&d, 0, sizeof d);
    d.metadata_id = id;
    d.event_id = event_id;
    d.keywords = keywords;
    d.version = version;
    d.level = level;
    d.opcode = opcode;
    d.provider = arena_utf16(p, prov, prov_units);
    d.event_name = d.provider ? arena_utf16(p, name, name_units) : NULL;
    if (d.event_name && m.nfields) {
        nt_field *fields = nt_metadata_alloc(&p->meta, m.nfields * sizeof *fields, budget);
        if (fields) {
            for (size_t i = 0; i < m.nfields && fields; i++) {
                const nt_raw_field *rf = &p->fields[i];
                fields[i].type = rf->type;
                fields[i].element_type = rf->element_type;
                fields[i].depth = rf->depth;
                fields[i].name = arena_utf16(p, rf->name, rf->units);
                if (!fields[i].name)
                    fields = NULL;
            }
        }
        d.fields = fields;
        d.field_count = fields ? (uint32_t)m.nfields : 0;
        if (!fields)
            d.event_name = NULL;
    }
    return nt_metadata_commit(p, &d, payload_off);
}

nt_status nt_metadata_commit(nt_parser *p, nt_event_desc *d, uint64_t off)
{
    if (!d->provider || !d->event_name) {
        if (p->meta.over_budget)
            return nt_fail(p, NT_ERR_LIMIT, off, "metadata exceeds max_metadata_bytes (%u)", p->lim.max_metadata_bytes);
        return nt_fail(p, NT_ERR_NOMEM, off, "cannot store metadata record %u", d->metadata_id);
    }
    d->kind = nt_classify_event(d->provider, d->event_id);
    nt_schema_attach(d);
    const nt_event_desc *stored = nt_metadata_add(&p->meta, d);
    if (!stored)
        return nt_fail(p, NT_ERR_NOMEM, off, "cannot store metadata record %u", d->metadata_id);
    p->stats.metadata++;
    return NT_CALL(p, metadata, stored);
}

/* ---- stacks ------------------------------------------------------------- */

nt_status nt_decode_stack_block(nt_parser *p, const uint8_t *content, size_t size, uint64_t content_off)
{
    nt_cursor c = nt_cursor_make(content, size);
    uint32_t first, count;
    if (!nt_cur_u32(&c, &first) || !nt_cur_u32(&c, &count))
        return nt_fail(p, NT_ERR_MALFORMED, content_off, "stack block header truncated");
    nt_stack_table *t = &p->stacks;
    if (t->n == 0)
        t->base = first;
    uint32_t expected = t->base + t->n;
    if (first - t->base < t->n)
        return nt_fail(p, NT_ERR_MALFORMED, content_off, "stack id %u defined twice in one interval", first);
    if ((uint64_t)first + count > UINT32_MAX + 1ull)
        return nt_fail(p, NT_ERR_MALFORMED, content_off, "stack ids overflow 32 bits");
    /* Ids are dense: a gap becomes "missing" entries, which count against max_stacks. */
    uint64_t gap = (uint32_t)(first - expected);
    if ((uint64_t)t->n + gap > p->lim.max_stacks)
        return nt_fail(p, NT_ERR_LIMIT, content_off, "stack id %u exceeds max_stacks (%u) in one interval", first,
                       p->lim.max_stacks);
    if (gap) {
        if (!nt_mem_reserve(&p->mem, (void **)&t->ent, &t->ent_cap, t->n + gap, sizeof *t->ent))
            return nt_fail(p, NT_ERR_NOMEM, content_off, "cannot grow the stack table");
        for (uint64_t k = 0; k < gap; k++)
            t->ent[t->n++] = (nt_stack_entry){ 0, NT_STACK_MISSING };
    }
    const uint32_t ptr = p->info.pointer_size;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t soff = OFF(&c, content, content_off);
        uint32_t bytes;
        if (!nt_cur_u32(&c, &bytes) || bytes > nt_cur_left(&c))
            return nt_fail(p, NT_ERR_MALFORMED, soff, "stack %u truncated", first + i);
        if (bytes % ptr)
            return nt_fail(p, NT_ERR_MALFORMED, soff, "stack of %u bytes is not a whole number of %u-byte IPs",
                           bytes, ptr);
        uint32_t frames = bytes / ptr;
        if (t->n >= p->lim.max_stacks)
            return nt_fail(p, NT_ERR_LIMIT, soff, "more than max_stacks (%u) stacks in one interval",
                           p->lim.max_stacks);
        if (frames > p->lim.max_stack_frames - t->ips_len)
            return nt_fail(p, NT_ERR_LIMIT, soff, "more than max_stack_frames (%u) IPs in one interval",
                           p->lim.max_stack_frames);
        if (!nt_mem_reserve(&p->mem, (void **)&t->ent, &t->ent_cap, t->n + 1, sizeof *t->ent) ||
            !nt_mem_reserve(&p->mem, (void **)&t->ips, &t->ips_cap, t->ips_len + frames, sizeof *t->ips))
            return nt_fail(p, NT_ERR_NOMEM, soff, "cannot grow the stack table");
        uint64_t *dst = t->ips ? t->ips + t->ips_len : NULL; /* empty stacks before any IP: no table yet */
        if (ptr == 8) {
            for (uint32_t k = 0; k < frames; k++)
                dst[k] = nt_le64(c.p + 8 * k);
        } else {
            for (uint32_t k = 0; k < frames; k++)
                dst[k] = nt_le32(c.p + 4 * k);
        }
        c.p += bytes;
        t->ent[t->n++] = (nt_stack_entry){ (uint32_t)t->ips_len, frames };
        t->ips_len += frames;
        p->stats.stacks++;
        if (p->cb.stack) {
            nt_stack s = { first + i, frames, dst };
            nt_status st = NT_CALL(p, stack, &s);
            if (st)
                return st;
        }
    }
    if (c.p != c.end)
        return nt_fail(p, NT_ERR_MALFORMED, OFF(&c, content, content_off), "%zu stray bytes after the stacks",
                       nt_cur_left(&c));
    return NT_OK;
}

/* ---- sequence points ---------------------------------------------------- */

nt_status nt_decode_sp_block(nt_parser *p, const uint8_t *content, size_t size, uint64_t content_off)
{
    nt_cursor c = nt_cursor_make(content, size);
    uint64_t ts;
    uint32_t count;
    if (!nt_cur_u64(&c, &ts) || !nt_cur_u32(&c, &count))
        return nt_fail(p, NT_ERR_MALFORMED, content_off, "sequence point header truncated");
    if (count > nt_cur_left(&c) / 12)
        return nt_fail(p, NT_ERR_MALFORMED, content_off + 8, "sequence point lists %u threads but holds %zu bytes",
                       count, nt_cur_left(&c));
    if (!nt_mem_reserve(&p->mem, (void **)&p->sp_threads, &p->sp_threads_cap, count ? count : 1,
                        sizeof *p->sp_threads))
        return nt_fail(p, NT_ERR_NOMEM, content_off, "cannot hold %u sequence-point threads", count);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t toff = OFF(&c, content, content_off);
        uint64_t tid = 0;
        uint32_t seq = 0;
        nt_cur_u64(&c, &tid);
        nt_cur_u32(&c, &seq);
        nt_status err = NT_OK;
        nt_thread_seq *t = thread_get(p, tid, toff, &err);
        if (!t)
            return err;
        uint32_t dropped = t->dropped;
        if (t->last_seq != 0 && seq - t->last_seq < 0x80000000u && seq != t->last_seq) {
            dropped += seq - t->last_seq;
            p->stats.events_dropped += seq - t->last_seq;
        }
        t->last_seq = seq;
        t->dropped = 0;
        p->sp_threads[i] = (nt_sp_thread){ tid, seq, dropped };
    }
    p->stats.sequence_points++;
    nt_sequence_point sp = { (int64_t)ts, 0, count, p->sp_threads };
    nt_status s = NT_CALL(p, sequence_point, &sp);
    nt_stacks_clear(&p->stacks);
    return s;
}
