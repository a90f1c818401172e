/* NetTrace V6 blocks: Trace (key/value pairs), Event (thread indexes, label
 * lists), Metadata (V6 rows, field types and optional metadata), Stack (as
 * V4), SequencePoint (thread and metadata flushes), Thread, RemoveThread and
 * LabelList.  Each decoder gets one whole block in memory. */
#include "common/compiler.h"
#include "common/format.h"
#include "parse/blocks.h"
#include "parse/deliver.h"
#include "parse/event_header.h"

#include <string.h>

/* What a label list changes about an event. */
#define LL_ACT 0x01u
#define LL_REL 0x02u
#define LL_OPCODE 0x04u
#define LL_KEYWORDS 0x08u
#define LL_LEVEL 0x10u
#define LL_VERSION 0x20u
#define LL_TRACE 0x40u
#define LL_SPAN 0x100u
#define LL_MISSING 0x80000000u /* an id inside a gap */

typedef struct v6_labels {
    uint32_t have;
    uint8_t act[16], rel[16], trace[16], span[8];
    uint8_t opcode, level, version;
    uint64_t keywords;
} v6_labels;

typedef struct ps_v6 {
    uint32_t kind;             /* kind of the block being framed */
    v6_labels *ll;
    size_t ll_cap;
    uint32_t ll_base, ll_n;
} ps_v6;

nt_status ps_v6_begin(nt_parser *p)
{
    if (p->v6)
        return NT_OK;
    p->v6 = cm_mem_alloc(&p->mem, sizeof *p->v6);
    if (!p->v6)
        return ps_fail(p, NT_ERR_NOMEM, p->unit_off, "cannot allocate the V6 tables");
    memset(p->v6, 0, sizeof *p->v6);
    return NT_OK;
}

void ps_v6_free(nt_parser *p)
{
    ps_v6 *v = p->v6;
    if (!v)
        return;
    cm_mem_free(&p->mem, v->ll, v->ll_cap * sizeof *v->ll);
    cm_mem_free(&p->mem, v, sizeof *v);
    p->v6 = NULL;
}

/* ---- strings ---------------------------------------------------------------- */

/* V6 string: varuint32 byte length + UTF-8. */
static bool cur_str(cm_cursor *c, const uint8_t **s, size_t *len)
{
    const uint8_t *save = c->p;
    uint32_t n;
    if (!cm_cur_varu32(c, &n) || n > cm_cur_left(c)) {
        c->p = save;
        return false;
    }
    *s = c->p;
    *len = n;
    c->p += n;
    return true;
}

static bool str_is(const uint8_t *s, size_t len, const char *lit)
{
    return len == strlen(lit) && memcmp(s, lit, len) == 0;
}

/* Decimal u32 of a key/value pair; false if it is not one. */
static bool parse_u32(const uint8_t *s, size_t len, uint32_t *out)
{
    uint64_t v = 0;
    if (len == 0 || len > 10)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

/* ---- thread indexes ------------------------------------------------------------------ */

static nt_status unknown_thread(nt_parser *p, uint64_t index, uint64_t off)
{
    return ps_fail(p, NT_ERR_MALFORMED, off, "reference to unknown thread index %llu", (unsigned long long)index);
}

/* Inline: events look their threads up whenever they change. */
static inline ps_thread_entry *thread_ref(nt_parser *p, uint64_t index, uint64_t off, nt_status *err)
{
    ps_thread_entry *t = ps_threads_find(&p->threads, index);
    if (!t)
        *err = unknown_thread(p, index, off);
    return t;
}

/* ---- block framing ------------------------------------------------------------------ */

nt_status ps_v6_block_header(nt_parser *p, const uint8_t *u, uint32_t *size, ps_v6_next *next)
{
    uint32_t x = cm_le32(u);
    uint32_t kind = x >> CM_V6_BLOCK_KIND_SHIFT;
    *size = x & CM_V6_BLOCK_SIZE_MASK;
    if (!p->have_trace && kind != CM_V6_TRACE)
        return ps_fail(p, NT_ERR_MALFORMED, p->unit_off, "the first V6 block is of kind %u, not Trace", kind);
    if (p->have_trace && kind == CM_V6_TRACE)
        return ps_fail(p, NT_ERR_MALFORMED, p->unit_off, "a second Trace block");
    if (kind == CM_V6_END_OF_STREAM) {
        *next = PS_V6_END;
        return NT_OK;
    }
    if (*size > p->lim.max_block_bytes)
        return ps_fail(p, NT_ERR_LIMIT, p->unit_off, "block of %u bytes exceeds max_block_bytes (%u)", *size,
                       p->lim.max_block_bytes);
    p->v6->kind = kind;
    if (kind > CM_V6_BLOCK_KIND_MAX) {
        p->stats.unknown_blocks++;
        *next = PS_V6_SKIP;
    } else {
        *next = PS_V6_BODY;
    }
    return NT_OK;
}

/* ---- trace ------------------------------------------------------------------------------ */

static nt_status decode_trace(nt_parser *p, const uint8_t *u, size_t n, uint64_t off)
{
    cm_cursor c = cm_cursor_make(u, n);
    nt_trace_info *t = &p->info;
    uint16_t st[8];
    uint64_t sync = 0, freq = 0;
    uint32_t ptr = 0, kvs = 0;
    for (int i = 0; i < 8; i++)
        if (!cm_cur_u16(&c, &st[i]))
            return ps_fail(p, NT_ERR_MALFORMED, off, "Trace block truncated");
    if (!cm_cur_u64(&c, &sync) || !cm_cur_u64(&c, &freq) || !cm_cur_u32(&c, &ptr) || !cm_cur_u32(&c, &kvs))
        return ps_fail(p, NT_ERR_MALFORMED, off, "Trace block truncated");
    t->sync_time_utc = (nt_systemtime){ st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7] };
    t->sync_qpc = (int64_t)sync;
    t->qpc_frequency = (int64_t)freq;
    t->pointer_size = ptr;
    nt_status s = ps_trace_check_pointer_size(p, off + 32);
    if (s)
        return s;
    if (kvs > cm_cur_left(&c) / 2)
        return ps_fail(p, NT_ERR_MALFORMED, off + 36, "Trace block lists %u key/value pairs in %zu bytes", kvs,
                       cm_cur_left(&c));
    for (uint32_t i = 0; i < kvs; i++) {
        const uint8_t *k, *val;
        size_t kl, vl;
        uint64_t at = PS_OFF(&c, u, off);
        if (!cur_str(&c, &k, &kl) || !cur_str(&c, &val, &vl))
            return ps_fail(p, NT_ERR_MALFORMED, at, "Trace key/value pair %u truncated", i);
        if (str_is(k, kl, "ProcessId"))
            parse_u32(val, vl, &t->process_id);
        else if (str_is(k, kl, "HardwareThreadCount"))
            parse_u32(val, vl, &t->processor_count);
        else if (str_is(k, kl, "ExpectedCPUSamplingRate"))
            parse_u32(val, vl, &t->sampling_interval_ns);
    }
    return ps_trace_commit(p);
}

/* ---- metadata --------------------------------------------------------------------------- */

static bool parse_fields(nt_parser *p, cm_cursor *c, uint32_t depth);

/* Type: code, [element Type if an array], [u16 count if FixedArray], [fields if Object]. */
static bool parse_type(nt_parser *p, cm_cursor *c, uint32_t depth, uint32_t level, uint32_t *code)
{
    uint8_t t;
    if (level > PS_MAX_FIELD_DEPTH || !cm_cur_u8(c, &t))
        return false;
    *code = t;
    uint32_t elem_code = 0;
    if (cm_type_has_element(t)) {
        /* the element's own nested fields (an array of objects) belong one level down */
        size_t idx = p->fields.n - 1;
        if (!parse_type(p, c, depth, level + 1, &elem_code))
            return false;
        if (level == 0)
            p->fields.f[idx].element_type = elem_code;
        uint16_t count;
        if (t == NT_TYPE_FIXED_ARRAY && !cm_cur_u16(c, &count))
            return false;
    } else if (t == NT_TYPE_OBJECT) {
        if (depth >= PS_MAX_FIELD_DEPTH || !parse_fields(p, c, depth + 1))
            return false;
    }
    return true;
}

static bool parse_fields(nt_parser *p, cm_cursor *c, uint32_t depth)
{
    uint16_t count;
    if (!cm_cur_u16(c, &count))
        return false;
    for (uint32_t i = 0; i < count; i++) {
        uint16_t fsize;
        if (!cm_cur_u16(c, &fsize) || fsize > cm_cur_left(c))
            return false;
        cm_cursor f = cm_cursor_make(c->p, fsize);
        c->p += fsize;
        ps_name_span name;
        if (!cur_str(&f, &name.s, &name.len) || !ps_fields_push(p, name, 0, 0, depth))
            return false;
        size_t idx = p->fields.n - 1;
        uint32_t code;
        if (!parse_type(p, &f, depth, 0, &code))
            return false;
        p->fields.f[idx].type = code;
    }
    return true;
}

/* Optional metadata: entries of a kind byte and its value; an unknown kind
 * has no known size and ends the list. */
static void parse_optional_metadata(cm_cursor *o, nt_event_desc *d)
{
    uint8_t kind, b8 = 0;
    bool ok = true;
    while (ok && cm_cur_u8(o, &kind)) {
        const uint8_t *s;
        size_t sl;
        switch (kind) {
        case CM_V6_META_OPCODE: ok = cm_cur_u8(o, &b8); if (ok) d->opcode = b8; break;
        case CM_V6_META_KEYWORDS: ok = cm_cur_u64(o, &d->keywords); break;
        case CM_V6_META_MESSAGE:
        case CM_V6_META_DESCRIPTION: ok = cur_str(o, &s, &sl); break;
        case CM_V6_META_KEY_VALUE: ok = cur_str(o, &s, &sl) && cur_str(o, &s, &sl); break;
        case CM_V6_META_PROVIDER_GUID: ok = cm_cur_skip(o, 16); break;
        case CM_V6_META_LEVEL: ok = cm_cur_u8(o, &b8); if (ok) d->level = b8; break;
        case CM_V6_META_VERSION: ok = cm_cur_u8(o, &b8); if (ok) d->version = b8; break;
        default: ok = false;
        }
    }
}

static nt_status parse_row(nt_parser *p, const uint8_t *row, size_t size, uint64_t off)
{
    cm_cursor c = cm_cursor_make(row, size);
    ps_raw_desc r;
    memset(&r, 0, sizeof r);
    uint32_t id;
    if (!cm_cur_varu32(&c, &id) || !cur_str(&c, &r.provider.s, &r.provider.len) ||
        !cm_cur_varu32(&c, &r.d.event_id) || !cur_str(&c, &r.event_name.s, &r.event_name.len))
        return ps_fail(p, NT_ERR_MALFORMED, off, "metadata row truncated");
    nt_status s = ps_metadata_fields(p, &r, id, &c, parse_fields, off);
    if (s)
        return s;
    uint16_t opt_size;
    if (cm_cur_u16(&c, &opt_size) && opt_size <= cm_cur_left(&c)) {
        cm_cursor o = cm_cursor_make(c.p, opt_size);
        parse_optional_metadata(&o, &r.d);
    }
    return ps_metadata_commit(p, &r, off);
}

static nt_status decode_metadata(nt_parser *p, const uint8_t *u, size_t n, uint64_t off)
{
    cm_cursor c = cm_cursor_make(u, n);
    uint16_t hs;
    if (!cm_cur_u16(&c, &hs) || !cm_cur_skip(&c, hs))
        return ps_fail(p, NT_ERR_MALFORMED, off, "metadata block header truncated");
    while (c.p < c.end) {
        uint64_t roff = PS_OFF(&c, u, off);
        uint16_t rs;
        if (!cm_cur_u16(&c, &rs) || rs > cm_cur_left(&c))
            return ps_fail(p, NT_ERR_MALFORMED, roff, "metadata row truncated");
        nt_status s = parse_row(p, c.p, rs, roff + 2);
        if (s)
            return s;
        c.p += rs;
    }
    return NT_OK;
}

/* ---- label lists --------------------------------------------------------------------- */

static void labels_clear(ps_v6 *v)
{
    v->ll_n = 0;
    v->ll_base = 0;
}

static bool parse_label_list(cm_cursor *c, v6_labels *l)
{
    memset(l, 0, sizeof *l);
    for (;;) {
        uint8_t k;
        const uint8_t *s;
        size_t sl;
        uint64_t tmp;
        if (!cm_cur_u8(c, &k))
            return false;
        bool ok;
        switch (k & CM_V6_LABEL_KIND_MASK) {
        case CM_V6_LABEL_ACTIVITY_ID: ok = cm_cur_bytes(c, l->act, 16); l->have |= LL_ACT; break;
        case CM_V6_LABEL_RELATED_ACTIVITY_ID: ok = cm_cur_bytes(c, l->rel, 16); l->have |= LL_REL; break;
        case CM_V6_LABEL_TRACE_ID: ok = cm_cur_bytes(c, l->trace, 16); l->have |= LL_TRACE; break;
        case CM_V6_LABEL_SPAN_ID: ok = cm_cur_bytes(c, l->span, 8); l->have |= LL_SPAN; break;
        case CM_V6_LABEL_STRING: ok = cur_str(c, &s, &sl) && cur_str(c, &s, &sl); break;
        case CM_V6_LABEL_INT: ok = cur_str(c, &s, &sl) && cm_cur_varu64(c, &tmp); break;
        case CM_V6_LABEL_OPCODE: ok = cm_cur_u8(c, &l->opcode); l->have |= LL_OPCODE; break;
        case CM_V6_LABEL_KEYWORDS: ok = cm_cur_u64(c, &l->keywords); l->have |= LL_KEYWORDS; break;
        case CM_V6_LABEL_LEVEL: ok = cm_cur_u8(c, &l->level); l->have |= LL_LEVEL; break;
        case CM_V6_LABEL_VERSION: ok = cm_cur_u8(c, &l->version); l->have |= LL_VERSION; break;
        default: return false; /* unknown kinds have no known size */
        }
        if (!ok)
            return false;
        if (k & CM_V6_LABEL_LAST_IN_LIST)
            return true;
    }
}

static nt_status decode_label_lists(nt_parser *p, const uint8_t *u, size_t n, uint64_t off)
{
    ps_v6 *v = p->v6;
    cm_cursor c = cm_cursor_make(u, n);
    uint32_t first, count;
    if (!cm_cur_u32(&c, &first) || !cm_cur_u32(&c, &count))
        return ps_fail(p, NT_ERR_MALFORMED, off, "label list block header truncated");
    if (first == 0)
        return ps_fail(p, NT_ERR_MALFORMED, off, "label list index 0 is reserved");
    if (count > cm_cur_left(&c) / 2)
        return ps_fail(p, NT_ERR_MALFORMED, off + 4, "label list block lists %u lists in %zu bytes", count,
                       cm_cur_left(&c));
    if (v->ll_n == 0)
        v->ll_base = first;
    if (first - v->ll_base < v->ll_n || first < v->ll_base)
        return ps_fail(p, NT_ERR_MALFORMED, off, "label list %u defined twice in one interval", first);
    if ((uint64_t)first + count > UINT32_MAX + 1ull)
        return ps_fail(p, NT_ERR_MALFORMED, off, "label list ids overflow 32 bits");
    uint64_t total = (uint64_t)(first - v->ll_base) + count;
    if (total > p->lim.max_stacks)
        return ps_fail(p, NT_ERR_LIMIT, off, "more than max_stacks (%u) label lists in one interval",
                       p->lim.max_stacks);
    if (!cm_mem_reserve(&p->mem, (void **)&v->ll, &v->ll_cap, (size_t)total, sizeof *v->ll))
        return ps_fail(p, NT_ERR_NOMEM, off, "cannot grow the label list table");
    while (v->ll_n < first - v->ll_base) /* a gap: ids nobody defined */
        v->ll[v->ll_n++].have = LL_MISSING;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t loff = PS_OFF(&c, u, off);
        if (!parse_label_list(&c, &v->ll[v->ll_n]))
            return ps_fail(p, NT_ERR_MALFORMED, loff, "label list %u truncated or of an unknown kind", first + i);
        v->ll_n++;
    }
    return NT_OK;
}

/* ---- threads -------------------------------------------------------------------------- */

static nt_status decode_threads(nt_parser *p, const uint8_t *u, size_t n, uint64_t off)
{
    cm_cursor c = cm_cursor_make(u, n);
    while (c.p < c.end) {
        uint64_t roff = PS_OFF(&c, u, off);
        uint16_t rs;
        uint64_t index;
        if (!cm_cur_u16(&c, &rs) || rs > cm_cur_left(&c))
            return ps_fail(p, NT_ERR_MALFORMED, roff, "thread row truncated");
        cm_cursor r = cm_cursor_make(c.p, rs);
        c.p += rs;
        if (!cm_cur_varu64(&r, &index))
            return ps_fail(p, NT_ERR_MALFORMED, roff, "thread row truncated");
        if (ps_threads_find(&p->threads, index))
            return ps_fail(p, NT_ERR_MALFORMED, roff, "thread index %llu defined twice", (unsigned long long)index);
        ps_thread_entry *t = NULL;
        nt_status s = ps_threads_add(p, index, roff, &t);
        if (s)
            return s;
        uint8_t kind;
        bool ok = true;
        while (ok && cm_cur_u8(&r, &kind)) {
            const uint8_t *str;
            size_t sl;
            switch (kind) {
            case CM_V6_THREAD_NAME: ok = cur_str(&r, &str, &sl); break;
            case CM_V6_THREAD_OS_PID: ok = cm_cur_varu64(&r, &t->os_pid); break;
            case CM_V6_THREAD_OS_TID: ok = cm_cur_varu64(&r, &t->os_tid); break;
            case CM_V6_THREAD_KEY_VALUE: ok = cur_str(&r, &str, &sl) && cur_str(&r, &str, &sl); break;
            default: ok = false;
            }
            if (!ok)
                return ps_fail(p, NT_ERR_MALFORMED, roff, "thread row %llu: entry of kind %u truncated or unknown",
                               (unsigned long long)index, kind);
        }
    }
    return NT_OK;
}

static nt_status decode_remove_threads(nt_parser *p, const uint8_t *u, size_t n, uint64_t off)
{
    cm_cursor c = cm_cursor_make(u, n);
    while (c.p < c.end) {
        uint64_t eoff = PS_OFF(&c, u, off), index;
        uint32_t seq;
        if (!cm_cur_varu64(&c, &index) || !cm_cur_varu32(&c, &seq))
            return ps_fail(p, NT_ERR_MALFORMED, eoff, "RemoveThread entry truncated");
        nt_status err = NT_OK;
        ps_thread_entry *t = thread_ref(p, index, eoff, &err);
        if (!t)
            return err;
        uint32_t last = t->last_seq, late = ps_seq_point(t, seq);
        nt_status s = late ? ps_gap_report(p, t, last + 1, late, INT64_MIN, eoff, NT_GAP_AT_REMOVE_THREAD) : NT_OK;
        ps_threads_remove(&p->threads, t);
        if (s)
            return s;
    }
    return NT_OK;
}

/* ---- sequence points --------------------------------------------------------------------- */

static nt_status decode_sp(nt_parser *p, const uint8_t *u, size_t n, uint64_t off)
{
    cm_cursor c = cm_cursor_make(u, n);
    uint64_t ts;
    uint32_t flags, count;
    if (!cm_cur_u64(&c, &ts) || !cm_cur_u32(&c, &flags) || !cm_cur_u32(&c, &count))
        return ps_fail(p, NT_ERR_MALFORMED, off, "sequence point header truncated");
    if (count > cm_cur_left(&c) / 2)
        return ps_fail(p, NT_ERR_MALFORMED, off + 12, "sequence point lists %u threads but holds %zu bytes", count,
                       cm_cur_left(&c));
    nt_status s = ps_sp_reserve(p, count, off);
    if (s)
        return s;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t toff = PS_OFF(&c, u, off), index;
        uint32_t seq;
        if (!cm_cur_varu64(&c, &index) || !cm_cur_varu32(&c, &seq))
            return ps_fail(p, NT_ERR_MALFORMED, toff, "sequence point thread %u truncated", i);
        ps_thread_entry *t = thread_ref(p, index, toff, &s);
        if (!t)
            return s;
        if ((s = ps_sp_set_thread(p, i, t, seq, (int64_t)ts, toff)) != NT_OK)
            return s;
    }
    s = ps_sp_deliver(p, (int64_t)ts, flags, count);
    /* Label lists end with the stacks; threads and metadata on request
     * (after the sequence checks above). */
    labels_clear(p->v6);
    if (flags & CM_V6_SP_FLUSH_THREADS)
        ps_threads_clear(&p->threads);
    if (flags & CM_V6_SP_FLUSH_METADATA)
        ps_metadata_clear(&p->meta);
    return s;
}

/* ---- events ------------------------------------------------------------------------------- */

/* What the events of a block carry from one to the next besides the event
 * itself.  The header's flags say which ids changed; what they name is
 * looked up only then (or at the block's first event: a NULL entry).  Only
 * Thread, RemoveThread, SequencePoint, Metadata and LabelList blocks change
 * the tables, so what an event block found holds for the whole block. */
typedef struct v6_run {
    uint32_t label_list;
    uint64_t thread_index, capture_index;
    ps_thread_entry *thread, *capture; /* the entries of the two indexes */
    const nt_event_desc *base;         /* the metadata of the metadata id */
    unsigned what;                     /* ps_desc_what(ev.desc) | PS_UNKNOWN_STACK of ev.stack */
    uint64_t to_off;                   /* an event's stream offset is its address plus this */
} v6_run;

/* The event's metadata with its label list's overrides (over holds the
 * overridden copy), and its activity ids: after a change of either id. */
static nt_status describe(nt_parser *p, nt_event *ev, v6_run *r, nt_event_desc *over, uint64_t off)
{
    ps_v6 *v = p->v6;
    if (!r->base || r->base->metadata_id != ev->metadata_id)
        r->base = ps_metadata_find(&p->meta, ev->metadata_id);
    const nt_event_desc *desc = r->base;
    memset(ev->activity_id, 0, 16);
    memset(ev->related_activity_id, 0, 16);
    p->fctx.has_trace_id = p->fctx.has_span_id = false;
    if (r->label_list) {
        uint32_t k = r->label_list - v->ll_base;
        if (k >= v->ll_n || (v->ll[k].have & LL_MISSING))
            return ps_fail(p, NT_ERR_MALFORMED, off, "reference to unknown label list %u", r->label_list);
        const v6_labels *l = &v->ll[k];
        if (l->have & LL_ACT)
            memcpy(ev->activity_id, l->act, 16);
        if (l->have & LL_REL)
            memcpy(ev->related_activity_id, l->rel, 16);
        /* TraceId and SpanId have no header field: the parser's field context carries them for nt_event_labels_get. */
        p->fctx.has_trace_id = (l->have & LL_TRACE) != 0;
        p->fctx.has_span_id = (l->have & LL_SPAN) != 0;
        memcpy(p->fctx.trace_id, l->trace, 16);
        memcpy(p->fctx.span_id, l->span, 8);
        /* Overrides apply before the payload template is chosen. */
        if (desc && (l->have & (LL_OPCODE | LL_KEYWORDS | LL_LEVEL | LL_VERSION))) {
            *over = *desc;
            if (l->have & LL_OPCODE)
                over->opcode = l->opcode;
            if (l->have & LL_KEYWORDS)
                over->keywords = l->keywords;
            if (l->have & LL_LEVEL)
                over->level = l->level;
            if (l->have & LL_VERSION)
                over->version = l->version;
            desc = over;
        }
    }
    ev->desc = desc;
    r->what = (r->what & PS_UNKNOWN_STACK) | ps_desc_what(desc);
    return NT_OK;
}

/* One event: its header, threads, drop detection, lookups and callbacks. */
CC_ALWAYS_INLINE static inline nt_status one_event(nt_parser *p, cm_cursor *c, nt_event *ev, v6_run *r,
                                                                 nt_event_desc *over, nt_sample *sample, bool compressed,
                                                                 bool roomy, int known)
{
    /* Stored first (and read back where needed): nothing else keeps it. */
    ev->offset = (uint64_t)(uintptr_t)c->p + r->to_off;
    uint32_t event_size = 0;
    uint8_t f;
    ps_header_result hr = ps_read_header(c, ev, &r->thread_index, &r->capture_index, &r->label_list, compressed, roomy,
                                         known, &f, &event_size);
    if (hr != PS_HEADER_OK)
        return ps_header_fail(p, hr, ev->offset, ev, "event block", event_size);
    nt_status s = NT_OK;
    if ((f & PS_HDR_THREAD) || !r->thread) {
        if (!(r->thread = thread_ref(p, r->thread_index, ev->offset, &s)))
            return s;
        ev->thread_id = r->thread->os_tid;
    }
    /* Drop detection per capture thread index (indexes are never recycled):
     * within a run the header counts the sequence up by one per event, so
     * only a run's first event can show a gap. */
    if ((f & PS_HDR_CAPTURE) || !r->capture) {
        if (!(r->capture = thread_ref(p, r->capture_index, ev->offset, &s)))
            return s;
        ev->capture_thread_id = r->capture->os_tid;
        uint32_t lost = ps_seq_event(r->capture, ev->sequence_number, false);
        if (lost && (s = ps_gap_report(p, r->capture, ev->sequence_number - lost, lost, ev->timestamp, ev->offset,
                                       NT_GAP_AT_EVENT)) != NT_OK)
            return s;
    } else {
        r->capture->last_seq = ev->sequence_number;
    }
    if (f & PS_HDR_STACK_ID)
        r->what = (r->what & ~PS_UNKNOWN_STACK) | ps_event_find_stack(p, ev);
    if ((f & (PS_HDR_METADATA_ID | PS_HDR_LABEL_LIST)) && (s = describe(p, ev, r, over, ev->offset)) != NT_OK)
        return s;
    return ps_event_deliver(p, ev, r->what, sample);
}

/* The events of an event block, specialised on the header form (as in V4:
 * PS_EVENT_LOOPS). */
CC_ALWAYS_INLINE static inline nt_status event_loop(nt_parser *p, cm_cursor c, const uint8_t *u,
                                                                  uint64_t off, bool compressed)
{
    nt_event ev;
    ps_block_event_init(p, &ev);
    nt_event_desc over; /* ev.desc when a label list overrides its metadata */
    v6_run r;
    memset(&r, 0, sizeof r);
    r.to_off = off - (uint64_t)(uintptr_t)u;
    nt_sample sample = { .event = &ev }; /* the sample callback's argument, kept beside ev */
    /* The ids before the first event are 0: no stack, no label list, and
     * metadata id 0 is never defined, but look. */
    nt_status s = describe(p, &ev, &r, &over, off);
    if (s)
        return s;
#define ONE(cm, roomy, known) one_event(p, &c, &ev, &r, &over, &sample, cm, roomy, known)
    PS_EVENT_LOOPS(c, compressed, s, ONE);
#undef ONE
    return s;
}

static nt_status decode_events(nt_parser *p, const uint8_t *u, size_t n, uint64_t off)
{
    cm_cursor c;
    bool compressed;
    nt_status s = ps_event_block_begin(p, &c, u, n, off, "event block", &compressed);
    if (s)
        return s;
    return compressed ? event_loop(p, c, u, off, true) : event_loop(p, c, u, off, false);
}

/* ---- dispatch ------------------------------------------------------------------------------ */

nt_status ps_v6_decode_block(nt_parser *p, const uint8_t *content, size_t size)
{
    uint64_t off = p->unit_off;
    if (p->v6->kind != CM_V6_TRACE)
        p->stats.blocks++; /* as for V4/V5: the Trace is not counted */
    switch (p->v6->kind) {
    case CM_V6_TRACE:
        return decode_trace(p, content, size, off);
    case CM_V6_EVENT:
        p->stats.event_blocks++;
        return decode_events(p, content, size, off);
    case CM_V6_METADATA:
        p->stats.metadata_blocks++;
        return decode_metadata(p, content, size, off);
    case CM_V6_SEQUENCE_POINT:
        p->stats.sp_blocks++;
        return decode_sp(p, content, size, off);
    case CM_V6_STACK:
        p->stats.stack_blocks++;
        return ps_decode_stack_block(p, content, size, off);
    case CM_V6_THREAD:
        return decode_threads(p, content, size, off);
    case CM_V6_REMOVE_THREAD:
        return decode_remove_threads(p, content, size, off);
    case CM_V6_LABEL_LIST:
        return decode_label_lists(p, content, size, off);
    default:
        return NT_OK;
    }
}
