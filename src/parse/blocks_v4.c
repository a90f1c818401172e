/* V4/V5 blocks: event and metadata blocks (compressed or fixed event
 * headers), V1 and V2Params metadata field lists, sequence-point blocks.
 * Stack blocks are shared with V6 (stack_block.c). */
#include "common/compiler.h"
#include "common/format.h"
#include "common/utf16.h"
#include "parse/blocks.h"
#include "parse/deliver.h"
#include "parse/event_header.h"

#include <string.h>

/* ---- events ------------------------------------------------------------- */

/* Drop detection on the event's capture thread, at the first event of a
 * run (*run NULL): the thread found, which the run's later events share.
 * Within a run (no PS_HDR_CAPTURE bit) the header counts the sequence number
 * up by one per event, so those events cannot show a gap: the loop only
 * records their numbers. */
CC_ALWAYS_INLINE static inline nt_status run_start(nt_parser *p, const nt_event *ev, uint64_t off,
                                                                  ps_thread_entry **run)
{
    ps_thread_entry *t = p->threads.last;
    if (!t || t->key != ev->capture_thread_id) {
        nt_status s = ps_threads_get(p, ev->capture_thread_id, off, &t);
        if (s)
            return s;
        p->threads.last = t;
    }
    *run = t;
    uint32_t lost = ps_seq_event(t, ev->sequence_number, true);
    return lost ? ps_gap_report(p, t, ev->sequence_number - lost, lost, ev->timestamp, off, NT_GAP_AT_EVENT)
                : NT_OK;
}


/* One event's header, of the block's form (a constant in each caller's copy,
 * as is roomy: see ps_read_header); on failure the parser's error at the
 * event's offset. */
CC_ALWAYS_INLINE static inline nt_status read_header(nt_parser *p, cm_cursor *c, nt_event *ev, bool compressed,
                                                                   bool roomy, int known, uint8_t *flags,
                                                                   uint64_t blob_off, const char *what)
{
    uint32_t event_size = 0;
    ps_header_result r = ps_read_header(c, ev, &ev->thread_id, &ev->capture_thread_id, NULL, compressed, roomy, known,
                                        flags, &event_size);
    return r == PS_HEADER_OK ? NT_OK : ps_header_fail(p, r, blob_off, ev, what, event_size);
}

/* What the events of a block carry from one to the next besides the event
 * itself (whose fields the header only updates). */
typedef struct v4_run {
    unsigned what;        /* ps_desc_what(ev.desc) | PS_UNKNOWN_STACK of ev.stack */
    ps_thread_entry *run; /* the capture thread of the current run (run_start) */
    uint64_t to_off;      /* an event's stream offset is its address plus this */
} v4_run;

/* One event of an event block: its header, drops, lookups and callbacks
 * (known: see ps_read_compressed_header_in). */
CC_ALWAYS_INLINE static inline nt_status one_event(nt_parser *p, cm_cursor *c, nt_event *ev, v4_run *r,
                                                                 nt_sample *sample, bool compressed, bool roomy,
                                                                 int known)
{
    /* Stored first: the header's failure reports it from there. */
    ev->offset = (uint64_t)(uintptr_t)c->p + r->to_off;
    uint8_t f;
    nt_status s;
    if ((s = read_header(p, c, ev, compressed, roomy, known, &f, ev->offset, "event block")) != NT_OK)
        return s;
    if (f & PS_HDR_CAPTURE)
        r->run = NULL;
    if (ev->metadata_id != 0) { /* metadata events carry no sequence number */
        if (r->run)
            r->run->last_seq = ev->sequence_number;
        else if ((s = run_start(p, ev, ev->offset, &r->run)) != NT_OK)
            return s;
    }
    if (f & PS_HDR_STACK_ID)
        r->what = (r->what & ~PS_UNKNOWN_STACK) | ps_event_find_stack(p, ev);
    /* Writers set the bit when the id differs from the previous event's. */
    if (f & PS_HDR_METADATA_ID) {
        ev->desc = ps_metadata_find(&p->meta, ev->metadata_id);
        r->what = (r->what & PS_UNKNOWN_STACK) | ps_desc_what(ev->desc);
    }
    return ps_event_deliver(p, ev, r->what, sample);
}

/* The events of an event block, specialised on the header form: the loop
 * every event runs, so nothing in it is tested per event that is fixed per
 * block (PS_EVENT_LOOPS). */
CC_ALWAYS_INLINE static inline nt_status event_loop(nt_parser *p, cm_cursor c, const uint8_t *content,
                                                                  uint64_t content_off, bool compressed)
{
    nt_event ev;
    ps_block_event_init(p, &ev);
    /* Ids are looked up only when the header changes them: before the first
     * event they are 0 (no stack; metadata id 0 is never defined, but look). */
    ev.desc = ps_metadata_find(&p->meta, 0);
    v4_run r = { ps_desc_what(ev.desc), NULL, content_off - (uint64_t)(uintptr_t)content };
    nt_sample sample = { .event = &ev }; /* the sample callback's argument, kept beside ev */
    nt_status s = NT_OK;
#define ONE(cm, roomy, known) one_event(p, &c, &ev, &r, &sample, cm, roomy, known)
    PS_EVENT_LOOPS(c, compressed, s, ONE);
#undef ONE
    return s;
}

static nt_status decode_event_block(nt_parser *p, const uint8_t *content, size_t size, uint64_t content_off)
{
    cm_cursor c;
    bool compressed;
    nt_status s = ps_event_block_begin(p, &c, content, size, content_off, "event block", &compressed);
    if (s)
        return s;
    return compressed ? event_loop(p, c, content, content_off, true) : event_loop(p, c, content, content_off, false);
}

/* Metadata blocks are few and short: one loop for both header forms. */
static nt_status decode_metadata_block(nt_parser *p, const uint8_t *content, size_t size, uint64_t content_off)
{
    cm_cursor start;
    bool compressed;
    nt_status s = ps_event_block_begin(p, &start, content, size, content_off, "metadata block", &compressed);
    if (s)
        return s;
    cm_cursor c = start;
    nt_event ev;
    memset(&ev, 0, sizeof ev);
    while (c.p < c.end) {
        uint64_t blob_off = PS_OFF(&c, content, content_off);
        uint8_t f;
        if ((s = read_header(p, &c, &ev, compressed, false, -1, &f, blob_off, "metadata block")) != NT_OK)
            return s;
        s = ps_v4_metadata_record(p, ev.payload, ev.payload_size, PS_OFF(&c, content, content_off) - ev.payload_size);
        if (s)
            return s;
    }
    return NT_OK;
}

/* ---- metadata records ---------------------------------------------------- */

/* V1 list: i32 count, then per field: i32 type, [nested list if Object], utf16z name. */
static bool parse_v1_fields(nt_parser *p, cm_cursor *c, uint32_t depth)
{
    uint32_t count;
    if (depth > PS_MAX_FIELD_DEPTH || !cm_cur_u32(c, &count))
        return false;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t type;
        if (!cm_cur_u32(c, &type))
            return false;
        size_t idx = p->fields.n;
        if (!ps_fields_push(p, (ps_name_span){ NULL, 0 }, type, 0, depth))
            return false;
        if (type == NT_TYPE_OBJECT && !parse_v1_fields(p, c, depth + 1))
            return false;
        ps_raw_field *f = &p->fields.f[idx]; /* the nested list may have moved the scratch */
        if (!cm_utf16z_scan(c, &f->name.s, &f->name.len))
            return false;
    }
    return true;
}

/* V2Params tag: i32 count, then per field: i32 size (itself included),
 * utf16z name, i32 type, [i32 element type if Array], [nested list if Object]. */
static bool parse_v2_fields(nt_parser *p, cm_cursor *c, uint32_t depth)
{
    uint32_t count;
    if (depth > PS_MAX_FIELD_DEPTH || !cm_cur_u32(c, &count))
        return false;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *start = c->p;
        uint32_t field_size, type, elem = 0;
        ps_name_span name;
        if (!cm_cur_u32(c, &field_size) || field_size < 4 || field_size > (size_t)(c->end - start))
            return false;
        cm_cursor f = cm_cursor_make(c->p, field_size - 4);
        if (!cm_utf16z_scan(&f, &name.s, &name.len) || !cm_cur_u32(&f, &type))
            return false;
        if (type == NT_TYPE_ARRAY && !cm_cur_u32(&f, &elem))
            return false;
        if (!ps_fields_push(p, name, type, elem, depth))
            return false;
        if ((type == NT_TYPE_OBJECT || elem == NT_TYPE_OBJECT) && !parse_v2_fields(p, &f, depth + 1))
            return false;
        c->p = start + field_size;
    }
    return true;
}

nt_status ps_v4_metadata_record(nt_parser *p, const uint8_t *payload, size_t size, uint64_t payload_off)
{
    cm_cursor c = cm_cursor_make(payload, size);
    ps_raw_desc r;
    memset(&r, 0, sizeof r);
    r.utf16 = true;
    uint32_t id;
    if (!cm_cur_u32(&c, &id) || !cm_utf16z_scan(&c, &r.provider.s, &r.provider.len) ||
        !cm_cur_u32(&c, &r.d.event_id) || !cm_utf16z_scan(&c, &r.event_name.s, &r.event_name.len) ||
        !cm_cur_u64(&c, &r.d.keywords) || !cm_cur_u32(&c, &r.d.version) || !cm_cur_u32(&c, &r.d.level))
        return ps_fail(p, NT_ERR_MALFORMED, payload_off, "metadata record truncated");
    /* Field descriptions (none when fewer than 4 bytes are left), then the V5 tags. */
    nt_status s = ps_metadata_fields(p, &r, id, &c, cm_cur_left(&c) >= 4 ? parse_v1_fields : NULL, payload_off);
    if (s)
        return s;
    while (cm_cur_left(&c) >= 5) {
        uint32_t tag_size = 0;
        uint8_t kind = 0;
        cm_cur_u32(&c, &tag_size);
        cm_cur_u8(&c, &kind);
        if (tag_size > cm_cur_left(&c))
            break;
        cm_cursor t = cm_cursor_make(c.p, tag_size);
        if (kind == CM_META_TAG_OPCODE && tag_size >= 1) {
            r.d.opcode = c.p[0];
        } else if (kind == CM_META_TAG_V2PARAMS) {
            ps_fields_reset(&p->fields); /* V2Params replaces the (empty) V1 list */
            if (!parse_v2_fields(p, &t, 0) && (s = ps_fields_failed(p, id, payload_off)) != NT_OK)
                return s;
        }
        c.p += tag_size;
    }
    return ps_metadata_commit(p, &r, payload_off);
}

/* ---- sequence points ---------------------------------------------------- */

/* u64 timestamp, u32 thread count, then per thread: u64 capture thread id, u32 sequence number. */
static nt_status decode_sp_block(nt_parser *p, const uint8_t *content, size_t size, uint64_t content_off)
{
    cm_cursor c = cm_cursor_make(content, size);
    uint64_t ts;
    uint32_t count;
    if (!cm_cur_u64(&c, &ts) || !cm_cur_u32(&c, &count))
        return ps_fail(p, NT_ERR_MALFORMED, content_off, "sequence point header truncated");
    if (count > cm_cur_left(&c) / 12)
        return ps_fail(p, NT_ERR_MALFORMED, content_off + 8, "sequence point lists %u threads but holds %zu bytes",
                       count, cm_cur_left(&c));
    nt_status s = ps_sp_reserve(p, count, content_off);
    if (s)
        return s;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t toff = PS_OFF(&c, content, content_off);
        uint64_t tid = 0;
        uint32_t seq = 0;
        cm_cur_u64(&c, &tid);
        cm_cur_u32(&c, &seq);
        ps_thread_entry *t;
        if ((s = ps_threads_get(p, tid, toff, &t)) != NT_OK)
            return s;
        if ((s = ps_sp_set_thread(p, i, t, seq, (int64_t)ts, toff)) != NT_OK)
            return s;
    }
    return ps_sp_deliver(p, (int64_t)ts, 0, count);
}

/* ---- dispatch ------------------------------------------------------------ */

nt_status ps_v4_decode_block(nt_parser *p, const uint8_t *u, size_t n)
{
    p->stats.blocks++;
    switch (p->btype) {
    case PS_BLOCK_EVENT:
        p->stats.event_blocks++;
        return decode_event_block(p, u, n, p->unit_off);
    case PS_BLOCK_METADATA:
        p->stats.metadata_blocks++;
        return decode_metadata_block(p, u, n, p->unit_off);
    case PS_BLOCK_STACK:
        p->stats.stack_blocks++;
        return ps_decode_stack_block(p, u, n, p->unit_off);
    case PS_BLOCK_SP:
        p->stats.sp_blocks++;
        return decode_sp_block(p, u, n, p->unit_off);
    default:
        return NT_OK;
    }
}
