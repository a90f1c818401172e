/* NetTrace V6 blocks: Trace (key/value pairs), Event (thread indexes, label
 * lists), Metadata (V6 rows, field types and optional metadata), Stack (as
 * V4), SequencePoint (thread and metadata flushes), Thread, RemoveThread and
 * LabelList.  Each decoder gets one whole block in memory. */
#include "parse/blocks_v6.h"
#include "parse/event_header.h"

#include <string.h>

#define OFF(c, base, base_off) ((base_off) + (uint64_t)((c)->p - (base)))
#define MAX_FIELD_DEPTH 8

enum { K_END = 0, K_TRACE = 1, K_EVENT = 2, K_METADATA = 3, K_SP = 4, K_STACK = 5, K_THREAD = 6,
       K_REMOVE_THREAD = 7, K_LABEL_LIST = 8 };

/* A thread index of the thread table. */
typedef struct v6_thread {
    uint64_t index;
    uint64_t os_tid, os_pid;
    uint32_t last_seq;  /* 0: nothing seen yet */
    uint32_t dropped;   /* since the last sequence point */
    uint8_t state;      /* 0 empty, 1 live, 2 removed (tombstone) */
} v6_thread;

/* What a label list changes about an event. */
#define LL_ACT 0x01u
#define LL_REL 0x02u
#define LL_OPCODE 0x04u
#define LL_KEYWORDS 0x08u
#define LL_LEVEL 0x10u
#define LL_VERSION 0x20u
#define LL_MISSING 0x80000000u /* an id inside a gap */

typedef struct v6_labels {
    uint32_t have;
    uint8_t act[16], rel[16];
    uint8_t opcode, level, version;
    uint64_t keywords;
} v6_labels;

/* A metadata field before its name goes into the arena. */
typedef struct v6_field {
    const uint8_t *name;
    size_t len;
    uint32_t type, elem, depth;
} v6_field;

typedef struct nt_v6 {
    uint32_t kind;             /* kind of the block being framed */
    v6_thread *thr;
    size_t thr_cap, thr_fill, thr_live; /* fill counts tombstones */
    v6_labels *ll;
    size_t ll_cap;
    uint32_t ll_base, ll_n;
    v6_field *f;
    size_t f_cap, nf;
    bool f_overflow;
    bool f_nomem; /* the field scratch could not grow: out of memory, not a parse failure */
} nt_v6;

nt_status nt_v6_begin(nt_parser *p)
{
    if (p->v6)
        return NT_OK;
    p->v6 = nt_mem_alloc(&p->mem, sizeof *p->v6);
    if (!p->v6)
        return nt_fail(p, NT_ERR_NOMEM, p->unit_off, "cannot allocate the V6 tables");
    memset(p->v6, 0, sizeof *p->v6);
    return NT_OK;
}

void nt_v6_free(nt_parser *p)
{
    nt_v6 *v = p->v6;
    if (!v)
        return;
    nt_mem_free(&p->mem, v->thr, v->thr_cap * sizeof *v->thr);
    nt_mem_free(&p->mem, v->ll, v->ll_cap * sizeof *v->ll);
    nt_mem_free(&p->mem, v->f, v->f_cap * sizeof *v->f);
    nt_mem_free(&p->mem, v, sizeof *v);
    p->v6 = NULL;
}

/* ---- strings ---------------------------------------------------------------- */

/* V6 string: varuint32 byte length + UTF-8. */
static bool cur_str(nt_cursor *c, const uint8_t **s, size_t *len)
{
    const uint8_t *save = c->p;
    uint32_t n;
    if (!nt_cur_varu32(c, &n) || n > nt_cur_left(c)) {
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

/* ---- thread table --------------------------------------------------------------- */

static size_t thr_slot(uint64_t index, size_t cap)
{
    return (size_t)((index * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static v6_thread *thread_find(nt_v6 *v, uint64_t index)
{
    if (!v->thr_cap)
        return NULL;
    for (size_t i = thr_slot(index, v->thr_cap); v->thr[i].state; i = (i + 1) & (v->thr_cap - 1))
        if (v->thr[i].state == 1 && v->thr[i].index == index)
            return &v->thr[i];
    return NULL;
}

static nt_status thread_add(nt_parser *p, uint64_t index, uint64_t off, v6_thread **out)
{
    nt_v6 *v = p->v6;
    if (thread_find(v, index))
        return nt_fail(p, NT_ERR_MALFORMED, off, "thread index %llu defined twice", (unsigned long long)index);
    if (v->thr_live >= p->lim.max_threads)
        return nt_fail(p, NT_ERR_LIMIT, off, "more than max_threads (%u) threads", p->lim.max_threads);
    if ((v->thr_fill + 1) * 2 > v->thr_cap) {
        /* Rehash the live entries (dropping tombstones), growing when they need it. */
        size_t ncap = v->thr_cap ? v->thr_cap : 64;
        while ((v->thr_live + 1) * 2 > ncap / 2)
            ncap *= 2;
        v6_thread *n = NULL;
        if (!nt_mem_resize(&p->mem, (void **)&n, 0, ncap * sizeof *n))
            return nt_fail(p, NT_ERR_NOMEM, off, "cannot grow the thread table");
        memset(n, 0, ncap * sizeof *n);
        for (size_t k = 0; k < v->thr_cap; k++) {
            if (v->thr[k].state != 1)
                continue;
            size_t i = thr_slot(v->thr[k].index, ncap);
            while (n[i].state)
                i = (i + 1) & (ncap - 1);
            n[i] = v->thr[k];
        }
        nt_mem_free(&p->mem, v->thr, v->thr_cap * sizeof *v->thr);
        v->thr = n;
        v->thr_cap = ncap;
        v->thr_fill = v->thr_live;
    }
    size_t i = thr_slot(index, v->thr_cap);
    while (v->thr[i].state == 1)
        i = (i + 1) & (v->thr_cap - 1);
    if (v->thr[i].state == 0)
        v->thr_fill++;
    v->thr[i] = (v6_thread){ .index = index, .state = 1 };
    v->thr_live++;
    *out = &v->thr[i];
    return NT_OK;
}

static void thread_remove(nt_v6 *v, v6_thread *t)
{
    t->state = 2;
    v->thr_live--;
}

static void threads_clear(nt_v6 *v)
{
    if (v->thr_cap)
        memset(v->thr, 0, v->thr_cap * sizeof *v->thr);
    v->thr_fill = v->thr_live = 0;
}

static v6_thread *thread_ref(nt_parser *p, uint64_t index, uint64_t off, nt_status *err)
{
    v6_thread *t = thread_find(p->v6, index);
    if (!t)
        *err = nt_fail(p, NT_ERR_MALFORMED, off, "reference to unknown thread index %llu",
                       (unsigned long long)index);
    return t;
}

/* ---- block framing ------------------------------------------------------------------ */

nt_status nt_v6_block_header(nt_parser *p, const uint8_t *u, uint32_t *size, nt_v6_next *next)
{
    uint32_t x = nt_le32(u);
    uint32_t kind = x >> 24;
    *size = x & 0xFFFFFFu;
    if (!p->have_trace && kind != K_TRACE)
        return nt_fail(p, NT_ERR_MALFORMED, p->unit_off, "the first V6 block is of kind %u, not Trace", kind);
    if (p->have_trace && kind == K_TRACE)
        return nt_fail(p, NT_ERR_MALFORMED, p->unit_off, "a second Trace block");
    if (kind == K_END) {
        *next = NT_V6_END;
        return NT_OK;
    }
    if (*size > p->lim.max_block_bytes)
        return nt_fail(p, NT_ERR_LIMIT, p->unit_off, "block of %u bytes exceeds max_block_bytes (%u)", *size,
                       p->lim.max_block_bytes);
    p->v6->kind = kind;
    if (kind > K_LABEL_LIST) {
        p->stats.unknown_blocks++;
        *next = NT_V6_SKIP;
    } else {
        *next = NT_V6_BODY;
    }
    return NT_OK;
}

/* ---- trace ------------------------------------------------------------------------------ */

static nt_status decode_trace(nt_parser *p, const uint8_t *u, size_t n, uint64_t off)
{
    nt_cursor c = nt_cursor_make(u, n);
    nt_trace_info *t = &p->info;
    uint16_t st[8];
    uint64_t sync = 0, freq = 0;
    uint32_t ptr = 0, kvs = 0;
    for (int i = 0; i < 8; i++)
        if (!nt_cur_u16(&c, &st[i]))
            return nt_fail(p, NT_ERR_MALFORMED, off, "Trace block truncated");
    if (!nt_cur_u64(&c, &sync) || !nt_cur_u64(&c, &freq) || !nt_cur_u32(&c, &ptr) || !nt_cur_u32(&c, &kvs))
        return nt_fail(p, NT_ERR_MALFORMED, off, "Trace block truncated");
    t->sync_time_utc = (nt_systemtime){ st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7] };
    t->sync_qpc = (int64_t)sync;
    t->qpc_frequency = (int64_t)freq;
    t->pointer_size = ptr;
    if (ptr != 4 && ptr != 8)
        return nt_fail(p, NT_ERR_MALFORMED, off + 32, "pointer size %u is neither 4 nor 8", ptr);
    if (kvs > nt_cur_left(&c) / 2)
        return nt_fail(p, NT_ERR_MALFORMED, off + 36, "Trace block lists %u key/value pairs in %zu bytes", kvs,
                       nt_cur_left(&c));
    for (uint32_t i = 0; i < kvs; i++) {
        const uint8_t *k, *val;
        size_t kl, vl;
        uint64_t at = OFF(&c, u, off);
        if (!cur_str(&c, &k, &kl) || !cur_str(&c, &val, &vl))
            return nt_fail(p, NT_ERR_MALFORMED, at, "Trace key/value pair %u truncated", i);
        if (str_is(k, kl, "ProcessId"))
            parse_u32(val, vl, &t->process_id);
        else if (str_is(k, kl, "HardwareThreadCount"))
            parse_u32(val, vl, &t->processor_count);
        else if (str_is(k, kl, "ExpectedCPUSamplingRate"))
            parse_u32(val, vl, &t->sampling_interval_ns);
    }
    p->have_trace = true;
    nt_parser_set_clock(p, t->qpc_frequency);
    return NT_CALL(p, trace, t);
}

/* ---- metadata --------------------------------------------------------------------------- */

static bool push_field(nt_parser *p, const uint8_t *name, size_t len, uint32_t depth)
{
    nt_v6 *v = p->v6;
    if (v->nf >= p->lim.max_fields) {
        v->f_overflow = true;
        return false;
    }
    if (!nt_mem_reserve(&p->mem, (void **)&v->f, &v->f_cap, v->nf + 1, sizeof *v->f)) {
        v->f_nomem = true;
        return false;
    }
    v->f[v->nf++] = (v6_field){ name, len, 0, 0, depth };
    return true;
}

static bool parse_fields(nt_parser *p, nt_cursor *c, uint32_t depth);

/* Type: code, [element Type if 19/22/24/25], [u16 count if 22], [fields if Object]. */
static bool parse_type(nt_parser *p, nt_cursor *c, uint32_t depth, uint32_t level, uint32_t *code)
{
    uint8_t t;
    if (level > MAX_FIELD_DEPTH || !nt_cur_u8(c, &t))
        return false;
    *code = t;
    uint32_t elem_code = 0;
    if (t == NT_TYPE_ARRAY || t == NT_TYPE_FIXED_ARRAY || t == NT_TYPE_RELLOC || t == NT_TYPE_DATALOC) {
        /* the element's own nested fields (an array of objects) belong one level down */
        size_t idx = p->v6->nf - 1;
        if (!parse_type(p, c, depth, level + 1, &elem_code))
            return false;
        if (level == 0)
            p->v6->f[idx].elem = elem_code;
        uint16_t count;
        if (t == NT_TYPE_FIXED_ARRAY && !nt_cur_u16(c, &count))
            return false;
    } else if (t == NT_TYPE_OBJECT) {
        if (depth >= MAX_FIELD_DEPTH || !parse_fields(p, c, depth + 1))
            return false;
    }
    return true;
}

static bool parse_fields(nt_parser *p, nt_cursor *c, uint32_t depth)
{
    uint16_t count;
    if (!nt_cur_u16(c, &count))
        return false;
    for (uint32_t i = 0; i < count; i++) {
        uint16_t fsize;
        if (!nt_cur_u16(c, &fsize) || fsize > nt_cur_left(c))
            return false;
        nt_cursor f = nt_cursor_make(c->p, fsize);
        c->p += fsize;
        const uint8_t *name;
        size_t len;
        if (!cur_str(&f, &name, &len) || !push_field(p, name, len, depth))
            return false;
        size_t idx = p->v6->nf - 1;
        uint32_t code;
        if (!parse_type(p, &f, depth, 0, &code))
            return false;
        p->v6->f[idx].type = code;
    }
    return true;
}

static nt_status parse_row(nt_parser *p, const uint8_t *row, size_t size, uint64_t off)
{
    nt_cursor c = nt_cursor_make(row, size);
    uint32_t id, event_id;
    const uint8_t *prov, *name;
    size_t prov_len, name_len;
    if (!nt_cur_varu32(&c, &id) || !cur_str(&c, &prov, &prov_len) || !nt_cur_varu32(&c, &event_id) ||
        !cur_str(&c, &name, &name_len))
        return nt_fail(p, NT_ERR_MALFORMED, off, "metadata row truncated");
    if (id == 0 || id > INT32_MAX)
        return nt_fail(p, NT_ERR_MALFORMED, off, "metadata id %u is reserved or out of range", id);
    if (nt_metadata_find(&p->meta, id))
        return nt_fail(p, NT_ERR_MALFORMED, off, "metadata id %u defined twice", id);
    if (p->meta.count >= p->lim.max_metadata)
        return nt_fail(p, NT_ERR_LIMIT, off, "more than max_metadata (%u) metadata records", p->lim.max_metadata);

    nt_v6 *v = p->v6;
    v->nf = 0;
    v->f_overflow = false;
    v->f_nomem = false;
    /* An unparsable field list only loses the fields, as for V4/V5. */
    if (!parse_fields(p, &c, 0)) {
        if (v->f_nomem)
            return nt_fail(p, NT_ERR_NOMEM, off, "cannot hold the fields of metadata record %u", id);
        if (v->f_overflow)
            return nt_fail(p, NT_ERR_LIMIT, off, "metadata record has more than max_fields (%u) fields",
                           p->lim.max_fields);
        v->nf = 0;
        c.p = c.end;
    }
    nt_event_desc d;
    memset(&d, 0, sizeof d);
    d.metadata_id = id;
    d.event_id = event_id;
    uint16_t opt_size;
    if (nt_cur_u16(&c, &opt_size) && opt_size <= nt_cur_left(&c)) {
        nt_cursor o = nt_cursor_make(c.p, opt_size);
        uint8_t kind, b8 = 0;
        bool ok = true;
        while (ok && nt_cur_u8(&o, &kind)) {
            const uint8_t *s;
            size_t sl;
            switch (kind) {
            case 1: ok = nt_cur_u8(&o, &b8); if (ok) d.opcode = b8; break;
            case 3: ok = nt_cur_u64(&o, &d.keywords); break;
            case 4:
            case 5: ok = cur_str(&o, &s, &sl); break;
            case 6: ok = cur_str(&o, &s, &sl) && cur_str(&o, &s, &sl); break;
            case 7: ok = nt_cur_skip(&o, 16); break;
            case 8: ok = nt_cur_u8(&o, &b8); if (ok) d.level = b8; break;
            case 9: ok = nt_cur_u8(&o, &b8); if (ok) d.version = b8; break;
            default: ok = false; /* unknown kind: its size is unknown, stop */
            }
        }
    }

    size_t budget = p->lim.max_metadata_bytes;
    d.provider = nt_metadata_strdup(&p->meta, (const char *)prov, prov_len, budget);
    d.event_name = d.provider ? nt_metadata_strdup(&p->meta, (const char *)name, name_len, budget) : NULL;
    if (d.event_name && v->nf) {
        nt_field *fields = nt_metadata_alloc(&p->meta, v->nf * sizeof *fields, budget);
        for (size_t i = 0; fields && i < v->nf; i++) {
            fields[i].type = v->f[i].type;
            fields[i].element_type = v->f[i].elem;
            fields[i].depth = v->f[i].depth;
            fields[i].name = nt_metadata_strdup(&p->meta, (const char *)v->f[i].name, v->f[i].len, budget);
            if (!fields[i].name)
                fields = NULL;
        }
        d.fields = fields;
        d.field_count = fields ? (uint32_t)v->nf : 0;
        if (!fields)
            d.event_name = NULL;
    }
    return nt_metadata_commit(p, &d, off);
}

static nt_status decode_metadata(nt_parser *p, const uint8_t *u, size_t n, uint64_t off)
{
    nt_cursor c = nt_cursor_make(u, n);
    uint16_t hs;
    if (!nt_cur_u16(&c, &hs) || !nt_cur_skip(&c, hs))
        return nt_fail(p, NT_ERR_MALFORMED, off, "metadata block header truncated");
    while (c.p < c.end) {
        uint64_t roff = OFF(&c, u, off);
        uint16_t rs;
        if (!nt_cur_u16(&c, &rs) || rs > nt_cur_left(&c))
            return nt_fail(p, NT_ERR_MALFORMED, roff, "metadata row truncated");
        nt_status s = parse_row(p, c.p, rs, roff + 2);
        if (s)
            return s;
        c.p += rs;
    }
    return NT_OK;
}

/* ---- label lists --------------------------------------------------------------------- */

static void labels_clear(nt_v6 *v)
{
    v->ll_n = 0;
    v->ll_base = 0;
}

static bool parse_label_list(nt_cursor *c, v6_labels *l)
{
    memset(l, 0, sizeof *l);
    for (;;) {
        uint8_t k;
        const uint8_t *s;
        size_t sl;
        uint64_t tmp;
        if (!nt_cur_u8(c, &k))
            return false;
        bool ok;
        switch (k & 0x7F) {
        case 1: ok = nt_cur_bytes(c, l->act, 16); l->have |= LL_ACT; break;
        case 2: ok = nt_cur_bytes(c, l->rel, 16); l->have |= LL_REL; break;
        case 3: ok = nt_cur_skip(c, 16); break;
        case 4: ok = nt_cur_skip(c, 8); break;
        case 5: ok = cur_str(c, &s, &sl) && cur_str(c, &s, &sl); break;
        case 6: ok = cur_str(c, &s, &sl) && nt_cur_varu64(c, &tmp); break;
        case 7: ok = nt_cur_u8(c, &l->opcode); l->have |= LL_OPCODE; break;
        case 8: ok = nt_cur_u64(c, &l->keywords); l->have |= LL_KEYWORDS; break;
        case 9: ok = nt_cur_u8(c, &l->level); l->have |= LL_LEVEL; break;
        case 10: ok = nt_cur_u8(c, &l->version); l->have |= LL_VERSION; break;
        default: return false; /* unknown kinds have no known size */
        }
        if (!ok)
            return false;
        if (k & 0x80)
            return true;
    }
}

static nt_status decode_label_lists(nt_parser *p, const uint8_t *u, size_t n, uint64_t off)
{
    nt_v6 *v = p->v6;
    nt_cursor c = nt_cursor_make(u, n);
    uint32_t first, count;
    if (!nt_cur_u32(&c, &first) || !nt_cur_u32(&c, &count))
        return nt_fail(p, NT_ERR_MALFORMED, off, "label list block header truncated");
    if (first == 0)
        return nt_fail(p, NT_ERR_MALFORMED, off, "label list index 0 is reserved");
    if (count > nt_cur_left(&c) / 2)
        return nt_fail(p, NT_ERR_MALFORMED, off + 4, "label list block lists %u lists in %zu bytes", count,
                       nt_cur_left(&c));
    if (v->ll_n == 0)
        v->ll_base = first;
    if (first - v->ll_base < v->ll_n || first < v->ll_base)
        return nt_fail(p, NT_ERR_MALFORMED, off, "label list %u defined twice in one interval", first);
    if ((uint64_t)first + count > UINT32_MAX + 1ull)
        return nt_fail(p, NT_ERR_MALFORMED, off, "label list ids overflow 32 bits");
    uint64_t total = (uint64_t)(first - v->ll_base) + count;
    if (total > p->lim.max_stacks)
        return nt_fail(p, NT_ERR_LIMIT, off, "more than max_stacks (%u) label lists in one interval",
                       p->lim.max_stacks);
    if (!nt_mem_reserve(&p->mem, (void **)&v->ll, &v->ll_cap, (size_t)total, sizeof *v->ll))
        return nt_fail(p, NT_ERR_NOMEM, off, "cannot grow the label list table");
    while (v->ll_n < first - v->ll_base) /* a gap: ids nobody defined */
        v->ll[v->ll_n++].have = LL_MISSING;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t loff = OFF(&c, u, off);
        if (!parse_label_list(&c, &v->ll[v->ll_n]))
            return nt_fail(p, NT_ERR_MALFORMED, loff, "label list %u truncated or of an unknown kind", first + i);
        v->ll_n++;
    }
    return NT_OK;
}

/* ---- threads -------------------------------------------------------------------------- */

static nt_status decode_threads(nt_parser *p, const uint8_t *u, size_t n, uint64_t off)
{
    nt_cursor c = nt_cursor_make(u, n);
    while (c.p < c.end) {
        uint64_t roff = OFF(&c, u, off);
        uint16_t rs;
        uint64_t index;
        if (!nt_cur_u16(&c, &rs) || rs > nt_cur_left(&c))
            return nt_fail(p, NT_ERR_MALFORMED, roff, "thread row truncated");
        nt_cursor r = nt_cursor_make(c.p, rs);
        c.p += rs;
        if (!nt_cur_varu64(&r, &index))
            return nt_fail(p, NT_ERR_MALFORMED, roff, "thread row truncated");
        v6_thread *t = NULL;
        nt_status s = thread_add(p, index, roff, &t);
        if (s)
            return s;
        uint8_t kind;
        bool ok = true;
        while (ok && nt_cur_u8(&r, &kind)) {
            const uint8_t *str;
            size_t sl;
            switch (kind) {
            case 1: ok = cur_str(&r, &str, &sl); break;
            case 2: ok = nt_cur_varu64(&r, &t->os_pid); break;
            case 3: ok = nt_cur_varu64(&r, &t->os_tid); break;
            case 4: ok = cur_str(&r, &str, &sl) && cur_str(&r, &str, &sl); break;
            default: ok = false;
            }
            if (!ok)
                return nt_fail(p, NT_ERR_MALFORMED, roff, "thread row %llu: entry of kind %u truncated or unknown",
                               (unsigned long long)index, kind);
        }
    }
    return NT_OK;
}

/* Sequence numbers at a sequence point or thread removal: a higher number
 * than the last event seen means events were lost. */
static uint32_t sp_drops(nt_parser *p, v6_thread *t, uint32_t seq)
{
    uint32_t d = 0;
    if (t->last_seq != 0 && seq != t->last_seq && seq - t->last_seq < 0x80000000u) {
        d = seq - t->last_seq;
        p->stats.events_dropped += d;
    }
    t->last_seq = seq;
    return d;
}

static nt_status decode_remove_threads(nt_parser *p, const uint8_t *u, size_t n, uint64_t off)
{
    nt_cursor c = nt_cursor_make(u, n);
    while (c.p < c.end) {
        uint64_t eoff = OFF(&c, u, off), index;
        uint32_t seq;
        if (!nt_cur_varu64(&c, &index) || !nt_cur_varu32(&c, &seq))
            return nt_fail(p, NT_ERR_MALFORMED, eoff, "RemoveThread entry truncated");
        nt_status err = NT_OK;
        v6_thread *t = thread_ref(p, index, eoff, &err);
        if (!t)
            return err;
        sp_drops(p, t, seq);
        thread_remove(p->v6, t);
    }
    return NT_OK;
}

/* ---- sequence points --------------------------------------------------------------------- */

static nt_status decode_sp(nt_parser *p, const uint8_t *u, size_t n, uint64_t off)
{
    nt_v6 *v = p->v6;
    nt_cursor c = nt_cursor_make(u, n);
    uint64_t ts;
    uint32_t flags, count;
    if (!nt_cur_u64(&c, &ts) || !nt_cur_u32(&c, &flags) || !nt_cur_u32(&c, &count))
        return nt_fail(p, NT_ERR_MALFORMED, off, "sequence point header truncated");
    if (count > nt_cur_left(&c) / 2)
        return nt_fail(p, NT_ERR_MALFORMED, off + 12, "sequence point lists %u threads but holds %zu bytes", count,
                       nt_cur_left(&c));
    if (!nt_mem_reserve(&p->mem, (void **)&p->sp_threads, &p->sp_threads_cap, count ? count : 1,
                        sizeof *p->sp_threads))
        return nt_fail(p, NT_ERR_NOMEM, off, "cannot hold %u sequence-point threads", count);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t toff = OFF(&c, u, off), index;
        uint32_t seq;
        if (!nt_cur_varu64(&c, &index) || !nt_cur_varu32(&c, &seq))
            return nt_fail(p, NT_ERR_MALFORMED, toff, "sequence point thread %u truncated", i);
        nt_status err = NT_OK;
        v6_thread *t = thread_ref(p, index, toff, &err);
        if (!t)
            return err;
        uint32_t dropped = t->dropped + sp_drops(p, t, seq);
        t->dropped = 0;
        p->sp_threads[i] = (nt_sp_thread){ t->os_tid, seq, dropped };
    }
    p->stats.sequence_points++;
    nt_sequence_point sp = { (int64_t)ts, flags, count, p->sp_threads };
    nt_status s = NT_CALL(p, sequence_point, &sp);
    /* Stacks and label lists always end here; threads and metadata on request
     * (after the sequence checks above). */
    nt_stacks_clear(&p->stacks);
    labels_clear(v);
    if (flags & 1)
        threads_clear(v);
    if (flags & 2)
        nt_metadata_clear(&p->meta);
    return s;
}

/* ---- events ------------------------------------------------------------------------------- */

typedef struct v6_header {
    uint32_t label_list;
    uint64_t thread_index, capture_index;
} v6_header;

static nt_status deliver(nt_parser *p, nt_event *ev, const v6_header *h, uint64_t off)
{
    nt_v6 *v = p->v6;
    nt_status err = NT_OK;
    v6_thread *t = thread_ref(p, h->thread_index, off, &err);
    if (!t)
        return err;
    ev->thread_id = t->os_tid;
    v6_thread *ct = thread_ref(p, h->capture_index, off, &err);
    if (!ct)
        return err;
    ev->capture_thread_id = ct->os_tid;
    /* Drop detection per capture thread index; indexes are never recycled. */
    if (ct->last_seq != 0 && ev->sequence_number != ct->last_seq + 1) {
        uint32_t gap = ev->sequence_number - ct->last_seq - 1;
        if (gap < 0x80000000u) {
            ct->dropped += gap;
            p->stats.events_dropped += gap;
        }
    }
    ct->last_seq = ev->sequence_number;

    const nt_event_desc *desc = nt_metadata_find(&p->meta, ev->metadata_id);
    nt_event_desc over;
    memset(ev->activity_id, 0, 16);
    memset(ev->related_activity_id, 0, 16);
    if (h->label_list) {
        uint32_t k = h->label_list - v->ll_base;
        if (k >= v->ll_n || (v->ll[k].have & LL_MISSING))
            return nt_fail(p, NT_ERR_MALFORMED, off, "reference to unknown label list %u", h->label_list);
        const v6_labels *l = &v->ll[k];
        if (l->have & LL_ACT)
            memcpy(ev->activity_id, l->act, 16);
        if (l->have & LL_REL)
            memcpy(ev->related_activity_id, l->rel, 16);
        /* Overrides apply before the payload template is chosen. */
        if (desc && (l->have & (LL_OPCODE | LL_KEYWORDS | LL_LEVEL | LL_VERSION))) {
            over = *desc;
            if (l->have & LL_OPCODE)
                over.opcode = l->opcode;
            if (l->have & LL_KEYWORDS)
                over.keywords = l->keywords;
            if (l->have & LL_LEVEL)
                over.level = l->level;
            if (l->have & LL_VERSION)
                over.version = l->version;
            desc = &over;
        }
    }
    ev->desc = desc;
    return nt_event_deliver(p, ev);
}

static nt_status decode_events(nt_parser *p, const uint8_t *u, size_t n, uint64_t off)
{
    nt_cursor c = nt_cursor_make(u, n);
    uint16_t header_size, flags;
    if (!nt_cur_u16(&c, &header_size) || !nt_cur_u16(&c, &flags))
        return nt_fail(p, NT_ERR_MALFORMED, off, "event block header truncated");
    if (header_size < 20 || header_size > n)
        return nt_fail(p, NT_ERR_MALFORMED, off, "event block header size %u out of range", header_size);
    c.p = u + header_size;
    const bool compressed = flags & 1;
    nt_event ev;
    v6_header h;
    memset(&ev, 0, sizeof ev);
    memset(&h, 0, sizeof h);
    while (c.p < c.end) {
        uint64_t blob_off = OFF(&c, u, off);
        if (compressed) {
            nt_header_result r = nt_read_compressed_header(&c, &ev, &h.thread_index, &h.capture_index, &h.label_list);
            if (r != NT_HEADER_OK)
                return nt_header_fail(p, r, blob_off, &ev, "event block");
        } else {
            uint32_t size = 0, raw_meta = 0;
            uint64_t ts = 0;
            if (nt_cur_left(&c) < 52)
                return nt_fail(p, NT_ERR_MALFORMED, blob_off, "event header truncated");
            nt_cur_u32(&c, &size);
            if (size < 48 || size > nt_cur_left(&c))
                return nt_fail(p, NT_ERR_MALFORMED, blob_off, "event size %u out of range", size);
            const uint8_t *next = c.p + size;
            nt_cur_u32(&c, &raw_meta);
            ev.metadata_id = raw_meta & 0x7FFFFFFFu;
            ev.is_sorted = (raw_meta & 0x80000000u) == 0;
            nt_cur_u32(&c, &ev.sequence_number);
            nt_cur_u64(&c, &h.thread_index);
            nt_cur_u64(&c, &h.capture_index);
            nt_cur_u32(&c, &ev.processor_number);
            nt_cur_u32(&c, &ev.stack_id);
            nt_cur_u64(&c, &ts);
            ev.timestamp = (int64_t)ts;
            nt_cur_u32(&c, &h.label_list);
            nt_cur_u32(&c, &ev.payload_size);
            if (ev.payload_size > size - 48)
                return nt_fail(p, NT_ERR_MALFORMED, blob_off, "event payload of %u bytes overruns its event size %u",
                               ev.payload_size, size);
            ev.payload = c.p;
            c.p = next;
        }
        ev.offset = blob_off;
        nt_status s = deliver(p, &ev, &h, blob_off);
        if (s)
            return s;
    }
    return NT_OK;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

nt_status nt_v6_decode_block(nt_parser *p, const uint8_t *content, size_t size)
{
    uint64_t off = p->unit_off;
    if (p->v6->kind != K_TRACE)
        p->stats.blocks++; /* as for V4/V5: the Trace is not counted */
    switch (p->v6->kind) {
    case K_TRACE:
        return decode_trace(p, content, size, off);
    case K_EVENT:
        p->stats.event_blocks++;
        return decode_events(p, content, size, off);
    case K_METADATA:
        p->stats.metadata_blocks++;
        return decode_metadata(p, content, size, off);
    case K_SP:
        p->stats.sp_blocks++;
        return decode_sp(p, content, size, off);
    case K_STACK:
        p->stats.stack_blocks++;
        return nt_decode_stack_block(p, content, size, off);
    case K_THREAD:
        return decode_threads(p, content, size, off);
    case K_REMOVE_THREAD:
        return decode_remove_threads(p, content, size, off);
    case K_LABEL_LIST:
        return decode_label_lists(p, content, size, off);
    default:
        return NT_OK;
    }
}
