/* The event loops read a compressed header without bounds checks while the
 * block has room for the longest one (PS_COMPRESSED_HEADER_MAX, event_header.h)
 * and with them for the block's last few events.  These streams put the
 * longest header a writer can produce (every flag set, every varint at its
 * full width: 88 bytes in V4/V5, 61 in V6) at every distance from its
 * block's end around that threshold, on both sides of it: the values read
 * must be the same whichever loop read them, in any chunking; a block cut
 * inside the header, or a varint too long for its width, must fail at the
 * event's offset in either loop. */
#include "common/format.h"
#include "nettrace.h"
#include "streams.h"

#include "ltest.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEEN 64

typedef struct seen_event {
    uint32_t metadata_id, seq, processor, stack_id, payload_size;
    uint64_t thread, capture, offset;
    int64_t timestamp;
    uint8_t act[16], rel[16], payload[8];
    bool sorted, has_desc;
} seen_event;

typedef struct seen {
    uint32_t n;
    seen_event e[MAX_SEEN];
} seen;

static int on_event(void *u, const nt_event *e)
{
    seen *s = u;
    cr_assert_lt(s->n, MAX_SEEN);
    seen_event *x = &s->e[s->n++];
    memset(x, 0, sizeof *x);
    x->metadata_id = e->metadata_id;
    x->seq = e->sequence_number;
    x->processor = e->processor_number;
    x->stack_id = e->stack_id;
    x->payload_size = e->payload_size;
    x->thread = e->thread_id;
    x->capture = e->capture_thread_id;
    x->offset = e->offset;
    x->timestamp = e->timestamp;
    memcpy(x->act, e->activity_id, 16);
    memcpy(x->rel, e->related_activity_id, 16);
    memcpy(x->payload, e->payload, e->payload_size < 8 ? e->payload_size : 8);
    x->sorted = e->is_sorted;
    x->has_desc = e->desc != NULL;
    return 0;
}

typedef struct outcome {
    nt_status status;
    uint64_t err_offset;
    char msg[256];
    seen s;
} outcome;

/* Parses an exact-size heap copy of the stream whole (chunk 0) or in
 * pieces of `chunk` bytes. */
static outcome parse(const tb *b, size_t chunk)
{
    outcome o;
    memset(&o, 0, sizeof o);
    uint8_t *copy = malloc(b->n);
    cr_assert_not_null(copy);
    memcpy(copy, b->d, b->n);
    nt_callbacks cb = { 0 };
    cb.event = on_event;
    nt_parser *p = nt_parser_new(&cb, &o.s, NULL, NULL);
    cr_assert_not_null(p);
    nt_status s = NT_OK;
    for (size_t at = 0; at < b->n && s == NT_OK;) {
        size_t n = chunk && b->n - at > chunk ? chunk : b->n - at;
        s = nt_parser_feed(p, copy + at, n);
        at += n;
    }
    if (s == NT_OK)
        s = nt_parser_finish(p);
    o.status = s;
    o.err_offset = nt_parser_error_offset(p);
    snprintf(o.msg, sizeof o.msg, "%s", nt_parser_message(p));
    nt_parser_free(p);
    free(copy);
    return o;
}

static void expect_same(const outcome *a, const outcome *b, const char *what)
{
    cr_assert_eq(a->status, b->status, "%s: status %d, whole %d", what, b->status, a->status);
    cr_assert_eq(a->err_offset, b->err_offset, "%s: error offset", what);
    cr_assert_eq(a->s.n, b->s.n, "%s: %u events, whole %u", what, b->s.n, a->s.n);
    for (uint32_t i = 0; i < a->s.n; i++)
        cr_assert(memcmp(&a->s.e[i], &b->s.e[i], sizeof a->s.e[i]) == 0, "%s: event %u differs", what, i);
}

/* A varint of exactly `width` bytes (padded with continuation bytes: still
 * valid LEB128 as long as the value fits). */
static void varu_wide(tb *b, uint64_t v, unsigned width)
{
    for (unsigned k = 0; k + 1 < width; k++) {
        tb_u8(b, (uint8_t)(0x80 | (v & 0x7f)));
        v >>= 7;
    }
    tb_u8(b, (uint8_t)v);
}

/* What the long header carries. */
#define L_META 1u
#define L_SEQ_DELTA 0xFFFFFFFEu /* counts the sequence back by one */
#define L_CAPTURE UINT64_MAX
#define L_PROCESSOR 0xFFFFFFFFu
#define L_THREAD 0x8000000000000001ull
#define L_STACK 0xFFFFFFFFu
#define L_DT 0x8000000000000003ull
#define L_LABEL 0xFFFFFFFFu

/* How a long header is broken (none, or a varint one byte too long for its
 * width: a 10th byte above 1, a 5th byte above 0x0f). */
enum { BREAK_NONE, BREAK_U64, BREAK_U32 };

/* The longest compressed header: every flag, every varint at full width
 * (V4: both activity ids; V6: a label list), payload `payload` bytes. */
static void long_event(tb *b, bool v6, uint32_t payload, int brk)
{
    tb_u8(b, v6 ? 0xDF : 0xFF); /* V6 has no 0x20 */
    if (brk == BREAK_U32) {
        varu_wide(b, L_META, 4);
        b->d[b->n - 1] |= 0x80;
        tb_u8(b, 0x10); /* a fifth byte with bits beyond 32 */
    } else {
        varu_wide(b, L_META, 5);
    }
    varu_wide(b, L_SEQ_DELTA, 5);
    if (brk == BREAK_U64) {
        varu_wide(b, L_CAPTURE & 0x7fffffffffffffffull, 9);
        b->d[b->n - 1] |= 0x80;
        tb_u8(b, 0x02); /* a tenth byte above bit 63 */
    } else {
        varu_wide(b, L_CAPTURE, 10);
    }
    varu_wide(b, L_PROCESSOR, 5);
    varu_wide(b, L_THREAD, 10);
    varu_wide(b, L_STACK, 5);
    varu_wide(b, L_DT, 10);
    if (v6) {
        varu_wide(b, L_LABEL, 5);
    } else {
        for (int k = 0; k < 16; k++)
            tb_u8(b, (uint8_t)(0x10 + k));
        for (int k = 0; k < 16; k++)
            tb_u8(b, (uint8_t)(0x30 + k));
    }
    varu_wide(b, payload, 5);
    for (uint32_t k = 0; k < payload; k++)
        tb_u8(b, (uint8_t)(0xA0 + k));
}

#define V4_LONG 88
#define V6_LONG 61
#define LEAD 40 /* short events before the long one: the loop starts unchecked */

/* The events region of a block: a first event (metadata 1, capture and
 * thread 7, payload 0), LEAD two-byte events, the long one, `trail`
 * three-byte events after it (each sets the payload size back to 0);
 * `cut`: the region ends this many bytes into the long event (0: whole). */
static void events(tb *b, bool v6, uint32_t payload, unsigned trail, int brk, size_t cut, size_t *long_at)
{
    tb_u8(b, 0x87);
    tb_varu(b, 1); /* metadata id */
    tb_varu(b, 0); /* sequence delta */
    tb_varu(b, 7); /* capture thread (V6: index) */
    tb_varu(b, 0); /* processor */
    tb_varu(b, 7); /* thread (V6: index) */
    tb_varu(b, 10);
    tb_varu(b, 0); /* payload size */
    for (int i = 0; i < LEAD; i++) {
        tb_u8(b, 0);
        tb_varu(b, 1);
    }
    *long_at = b->n;
    long_event(b, v6, payload, brk);
    if (cut) {
        b->n = *long_at + cut;
        return;
    }
    for (unsigned i = 0; i < trail; i++) {
        tb_u8(b, 0x80);
        tb_varu(b, 1);
        tb_varu(b, 0);
    }
}

/* ---- V4 ------------------------------------------------------------------- */

static void v4_stream(tb *b, uint32_t payload, unsigned trail, int brk, size_t cut, uint64_t *long_off)
{
    memset(b, 0, sizeof *b);
    tb_header(b, 8, 1000);
    tb_metadata_block(b, L_META, "Test-Provider", 5, 0);
    size_t pos = tb_block_begin(b, "EventBlock");
    tb_event_header(b, CM_EVENT_BLOCK_COMPRESSED);
    size_t at;
    events(b, false, payload, trail, brk, cut, &at);
    *long_off = b->base + at;
    tb_block_end(b, pos);
    tb_end(b);
}

/* The first event, LEAD short ones, the long one, then `trail`. */
static void check_events(const seen *s, bool v6, uint32_t payload, unsigned trail, uint64_t long_off,
                         const char *what)
{
    cr_assert_eq(s->n, 1 + LEAD + 1 + trail, "%s: %u events", what, s->n);
    const seen_event *l = &s->e[1 + LEAD];
    uint32_t seq_before = s->e[LEAD].seq;
    cr_assert_eq(seq_before, 1 + LEAD, "%s", what);
    cr_expect_eq(l->offset, long_off, "%s: the long event's offset", what);
    cr_expect_eq(l->metadata_id, L_META, "%s", what);
    cr_expect(l->has_desc, "%s", what);
    cr_expect_eq(l->seq, seq_before + L_SEQ_DELTA + 1, "%s: sequence %u", what, l->seq);
    cr_expect_eq(l->capture, v6 ? 4242u : L_CAPTURE, "%s: capture thread %llx", what,
                 (unsigned long long)l->capture);
    cr_expect_eq(l->thread, v6 ? 4343u : L_THREAD, "%s: thread %llx", what, (unsigned long long)l->thread);
    cr_expect_eq(l->processor, L_PROCESSOR, "%s", what);
    cr_expect_eq(l->stack_id, L_STACK, "%s", what);
    cr_expect_eq((uint64_t)l->timestamp, (uint64_t)s->e[LEAD].timestamp + L_DT, "%s: timestamp", what);
    cr_expect(l->sorted, "%s: the sorted bit", what);
    cr_expect_eq(l->payload_size, payload, "%s: payload size %u", what, l->payload_size);
    for (uint32_t k = 0; k < payload && k < 8; k++)
        cr_expect_eq(l->payload[k], 0xA0 + k, "%s: payload byte %u", what, k);
    for (int k = 0; k < 16; k++) {
        cr_expect_eq(l->act[k], v6 ? 0x50 + k : 0x10 + k, "%s: activity id byte %d", what, k);
        cr_expect_eq(l->rel[k], v6 ? 0 : 0x30 + k, "%s: related activity id byte %d", what, k);
    }
    for (unsigned i = 0; i < trail; i++) {
        const seen_event *t = &s->e[2 + LEAD + i];
        cr_expect_eq(t->seq, l->seq + 1 + i, "%s: trailing event %u", what, i);
        cr_expect_eq(t->thread, l->thread, "%s: trailing event %u keeps the thread", what, i);
        cr_expect_eq(t->capture, l->capture, "%s", what);
        cr_expect_eq(t->stack_id, L_STACK, "%s", what);
        cr_expect_eq(t->payload_size, 0, "%s", what);
        cr_expect(memcmp(t->act, l->act, 16) == 0, "%s: trailing event %u keeps the activity id", what, i);
        cr_expect(!t->sorted, "%s", what);
    }
}

static void chunkings_agree(const tb *b, const outcome *whole, const char *what)
{
    static const size_t chunks[] = { 1, 7, 64 };
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        outcome o = parse(b, chunks[k]);
        char w[96];
        snprintf(w, sizeof w, "%s, chunks of %zu", what, chunks[k]);
        expect_same(whole, &o, w);
    }
}

typedef void stream_fn(tb *b, uint32_t payload, unsigned trail, int brk, size_t cut, uint64_t *long_off);

/* The long header followed by payload bytes and trail events: every
 * combination up to the given counts parses to the same values, in any
 * chunking. */
static void expect_threshold_crossed(stream_fn *stream, bool v6, uint32_t max_payload, unsigned max_trail)
{
    for (uint32_t payload = 0; payload <= max_payload; payload++)
        for (unsigned trail = 0; trail <= max_trail; trail++) {
            tb b;
            uint64_t off;
            stream(&b, payload, trail, BREAK_NONE, 0, &off);
            char what[96];
            snprintf(what, sizeof what, "%s, %u bytes left after the header start", v6 ? "V6" : "V4",
                     (v6 ? V6_LONG : V4_LONG) + payload + 3 * trail);
            outcome o = parse(&b, 0);
            cr_assert_eq(o.status, NT_OK, "%s: %s", what, o.msg);
            check_events(&o.s, v6, payload, trail, off, what);
            chunkings_agree(&b, &o, what);
            tb_free(&b);
        }
}

/* The long header cut at every byte, or with a varint too long for its
 * width read by the unchecked loop (bytes to spare after it) and by the
 * checked one (the last event, exactly its length): each fails at the
 * event's offset, the events before it delivered. */
static void expect_bad_headers_fail_at_the_event(stream_fn *stream, size_t long_len)
{
    for (size_t cut = 1; cut < long_len; cut++) {
        tb b;
        uint64_t off;
        stream(&b, 0, 0, BREAK_NONE, cut, &off);
        outcome o = parse(&b, 0);
        cr_assert_eq(o.status, NT_ERR_MALFORMED, "cut %zu: status %d (%s)", cut, o.status, o.msg);
        cr_assert_eq(o.err_offset, off, "cut %zu: error at %llu, the event is at %llu (%s)", cut,
                     (unsigned long long)o.err_offset, (unsigned long long)off, o.msg);
        cr_assert_eq(o.s.n, 1 + LEAD, "cut %zu: the events before it are delivered", cut);
        chunkings_agree(&b, &o, "cut");
        tb_free(&b);
    }
    for (int brk = BREAK_U64; brk <= BREAK_U32; brk++)
        for (unsigned trail = 0; trail <= 40; trail += 40) {
            tb b;
            uint64_t off;
            stream(&b, 0, trail, brk, 0, &off);
            outcome o = parse(&b, 0);
            cr_assert_eq(o.status, NT_ERR_MALFORMED, "break %d, trail %u: status %d", brk, trail, o.status);
            cr_assert_eq(o.err_offset, off, "break %d, trail %u: error at %llu, event at %llu", brk, trail,
                         (unsigned long long)o.err_offset, (unsigned long long)off);
            cr_assert(strstr(o.msg, "compressed event header"), "break %d: %s", brk, o.msg);
            cr_assert_eq(o.s.n, 1 + LEAD);
            tb_free(&b);
        }
}

LTest(header_room, v4_longest_header_on_both_sides_of_the_threshold)
{
    expect_threshold_crossed(v4_stream, false, 4, 3); /* 88 .. 101 bytes left */
}

LTest(header_room, v4_cut_or_overlong_header_fails_at_the_event)
{
    expect_bad_headers_fail_at_the_event(v4_stream, V4_LONG);
}

/* ---- V6 ------------------------------------------------------------------- */

static void v6_str(tb *b, const char *s)
{
    tb_varu(b, strlen(s));
    tb_bytes(b, s, strlen(s));
}

static void v6_thread_row(tb *body, uint64_t index, uint64_t os_tid)
{
    tb row = { 0 };
    tb_varu(&row, index);
    tb_u8(&row, CM_V6_THREAD_OS_TID);
    tb_varu(&row, os_tid);
    tb_u16(body, (uint16_t)row.n);
    tb_bytes(body, row.d, row.n);
    tb_free(&row);
}

static void v6_stream(tb *b, uint32_t payload, unsigned trail, int brk, size_t cut, uint64_t *long_off)
{
    memset(b, 0, sizeof *b);
    tb_v6_header(b);
    tb body = { 0 };
    /* metadata: id 1, a provider, event 5, no fields, no optional metadata */
    tb row = { 0 };
    tb_varu(&row, L_META);
    v6_str(&row, "Test-Provider");
    tb_varu(&row, 5);
    v6_str(&row, "");
    tb_u16(&row, 0);
    tb_u16(&row, 0);
    tb_u16(&body, 0);
    tb_u16(&body, (uint16_t)row.n);
    tb_bytes(&body, row.d, row.n);
    tb_free(&row);
    tb_v6_block(b, CM_V6_METADATA, &body);
    body.n = 0;
    v6_thread_row(&body, 7, 7);
    v6_thread_row(&body, L_CAPTURE, 4242);
    v6_thread_row(&body, L_THREAD, 4343);
    tb_v6_block(b, CM_V6_THREAD, &body);
    body.n = 0;
    tb_u32(&body, L_LABEL); /* the last id there is */
    tb_u32(&body, 1);
    tb_u8(&body, CM_V6_LABEL_ACTIVITY_ID | CM_V6_LABEL_LAST_IN_LIST);
    for (int k = 0; k < 16; k++)
        tb_u8(&body, (uint8_t)(0x50 + k));
    tb_v6_block(b, CM_V6_LABEL_LIST, &body);
    body.n = 0;
    tb_u16(&body, 20);
    tb_u16(&body, CM_EVENT_BLOCK_COMPRESSED);
    tb_u64(&body, 0);
    tb_u64(&body, 0);
    size_t at;
    events(&body, true, payload, trail, brk, cut, &at);
    *long_off = b->n + 4 + at;
    tb_v6_block(b, CM_V6_EVENT, &body);
    tb_free(&body);
    tb_u32(b, 0); /* EndOfStream */
}

LTest(header_room, v6_longest_header_on_both_sides_of_the_threshold)
{
    expect_threshold_crossed(v6_stream, true, 35, 2); /* 61 .. 102 bytes left, across 88 */
}

LTest(header_room, v6_cut_or_overlong_header_fails_at_the_event)
{
    expect_bad_headers_fail_at_the_event(v6_stream, V6_LONG);
}
