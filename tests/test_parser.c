/* The parser on hand-built streams: what the corpus lacks. */
#include "streams.h"
#include "support.h"

#include "ltest.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* A small stream: metadata for the sample profiler, one stack, two samples,
 * one sequence point, end. */
static void build_samples_x(tb *b, uint32_t ptr, bool compressed, bool with_end, size_t unknown_bytes)
{
    tb_header(b, ptr, 1000000000);
    if (unknown_bytes) { /* a block type this reader does not know, before everything else */
        size_t upos = tb_block_begin(b, "FutureBlock");
        for (size_t i = 0; i < unknown_bytes; i++)
            tb_u8(b, 0xAB);
        tb_block_end(b, upos);
    }
    tb_metadata_block(b, 1, NT_PROVIDER_SAMPLE_PROFILER, 0, 0);
    const uint64_t s1[] = { 0x1000, 0x2000, 0x3000 };
    const uint64_t *ips[] = { s1 };
    const uint32_t depth[] = { 3 };
    tb_stack_block(b, 1, 1, ips, depth, ptr);
    size_t pos = tb_block_begin(b, "EventBlock");
    tb_event_header(b, compressed ? 1 : 0);
    uint8_t managed[4] = { 2, 0, 0, 0 }, external[4] = { 1, 0, 0, 0 };
    tb_event e1 = { 1, 1, 1, 0, 77, 99, 5000, managed, 4 };
    tb_event e2 = { 1, 2, 1, 0, 0x1122334455667788ull, 99, 6000, external, 4 };
    if (compressed) {
        tb_event prev = { 0 };
        tb_compressed_event(b, &e1, &prev);
        tb_compressed_event(b, &e2, &prev);
    } else {
        tb_uncompressed_event(b, &e1);
        tb_uncompressed_event(b, &e2);
    }
    tb_block_end(b, pos);
    const uint64_t tids[] = { 99 };
    const uint32_t seqs[] = { 2 };
    tb_sp_block(b, 7000, 1, tids, seqs);
    if (with_end)
        tb_end(b);
}

static void build_samples(tb *b, uint32_t ptr, bool compressed, bool with_end)
{
    build_samples_x(b, ptr, compressed, with_end, 0);
}

typedef struct seen {
    int samples;
    nt_sample s[4];
    uint64_t ips[4][4];
    int depth[4]; /* -1: no stack */
    uint32_t interval[4];
    int sps;
    int events;
    int metadata;
} seen;

static int on_sample(void *u, const nt_sample *s)
{
    seen *x = u;
    if (x->samples < 4) {
        x->s[x->samples] = *s;
        for (uint32_t i = 0; s->stack && i < s->stack->count && i < 4; i++)
            x->ips[x->samples][i] = s->stack->ips[i];
        x->depth[x->samples] = s->stack ? (int)s->stack->count : -1; /* the pointer dies with the callback */
        x->interval[x->samples] = s->stack ? s->stack->interval : UINT32_MAX;
    }
    x->samples++;
    return 0;
}
static int on_sp(void *u, const nt_sequence_point *sp)
{
    (void)sp;
    ((seen *)u)->sps++;
    return 0;
}
static int on_event(void *u, const nt_event *e)
{
    (void)e;
    ((seen *)u)->events++;
    return 0;
}

static nt_status run(const tb *b, seen *x, const nt_limits *lim, char *msg, size_t msz)
{
    nt_callbacks cb = { 0 };
    cb.sample = on_sample;
    cb.sequence_point = on_sp;
    cb.event = on_event;
    memset(x, 0, sizeof *x);
    return nt_parse_buffer(b->d, b->n, &cb, x, lim, msg, msz);
}

static void check_samples(uint32_t ptr, bool compressed)
{
    tb b = { 0 };
    build_samples(&b, ptr, compressed, true);
    seen x;
    char msg[256];
    nt_status s = run(&b, &x, NULL, msg, sizeof msg);
    cr_assert_eq(s, NT_OK, "%s", msg);
    cr_assert_eq(x.samples, 2);
    cr_expect_eq(x.s[0].thread_id, 77);
    cr_expect_eq(x.s[0].type, NT_SAMPLE_MANAGED);
    cr_expect_eq(x.s[0].time_ns, 5000);
    cr_expect_eq(x.s[1].thread_id, 0x1122334455667788ull, "64-bit thread ids are kept");
    cr_expect_eq(x.s[1].type, NT_SAMPLE_EXTERNAL);
    cr_expect_eq(x.s[1].stack_id, 1);
    cr_expect_eq(x.depth[0], 3);
    cr_expect_eq(x.ips[0][0], 0x1000, "leaf first");
    cr_expect_eq(x.ips[0][2], 0x3000);
    cr_expect_eq(x.sps, 1);
    tb_free(&b);
}

LTest(parser, compressed_headers) { check_samples(8, true); }
LTest(parser, uncompressed_headers) { check_samples(8, false); }
LTest(parser, pointer_size_4) { check_samples(4, true); }

LTest(parser, chunk_invariance_every_split)
{
    tb b = { 0 };
    build_samples(&b, 8, true, true);
    ts_digest whole;
    ts_digest_init(&whole);
    cr_assert_eq(ts_digest_feed(b.d, b.n, NULL, 0, NULL, &whole, NULL), NT_OK);
    /* Every split point pair (i, j), as http-parser's test_scan does. */
    for (size_t i = 0; i < b.n; i += 3) {
        for (size_t j = i; j < b.n; j += 5) {
            nt_callbacks cb = { 0 };
            ts_digest_callbacks(&cb);
            ts_digest d;
            ts_digest_init(&d);
            nt_parser *p = nt_parser_new(&cb, &d, NULL, NULL);
            nt_parser_feed(p, b.d, i);
            nt_parser_feed(p, b.d + i, j - i);
            nt_parser_feed(p, b.d + j, b.n - j);
            nt_status s = nt_parser_finish(p);
            nt_parser_free(p);
            cr_assert_eq(s, NT_OK);
            cr_assert_eq(d.calls, whole.calls, "split %zu/%zu", i, j);
            /* ts_digest_feed folds the final status into the hash; do the same. */
            ts_digest w2 = whole;
            (void)w2;
        }
    }
    tb_free(&b);
}

LTest(parser, every_prefix_is_clean)
{
    tb b = { 0 };
    build_samples(&b, 8, true, true);
    for (size_t n = 0; n < b.n; n++) {
        ts_digest d;
        ts_digest_init(&d);
        nt_status s = ts_digest_feed(b.d, n, NULL, 0, NULL, &d, NULL);
        cr_assert(s == NT_ERR_TRUNCATED || s == NT_ERR_NOT_NETTRACE || s == NT_ERR_NO_EVENTS,
                  "prefix %zu: %s", n, nt_status_name(s));
    }
    tb_free(&b);
}

LTest(parser, truncated_still_delivers_complete_blocks)
{
    tb b = { 0 };
    build_samples(&b, 8, true, false); /* no end tag */
    seen x;
    char msg[256];
    cr_assert_eq(run(&b, &x, NULL, msg, sizeof msg), NT_ERR_TRUNCATED);
    cr_expect_eq(x.samples, 2);
    cr_expect(strstr(msg, "at byte") != NULL, "%s", msg);
    tb_free(&b);
}

LTest(parser, not_nettrace)
{
    const char junk[] = "this is not a trace at all, no sir";
    cr_expect_eq(nt_parse_buffer(junk, sizeof junk, NULL, NULL, NULL, NULL, 0), NT_ERR_NOT_NETTRACE);
    cr_expect_eq(nt_parse_buffer(junk, 0, NULL, NULL, NULL, NULL, 0), NT_ERR_NOT_NETTRACE);
}

LTest(parser, v6_and_netperf_are_unsupported)
{
    tb b = { 0 };
    tb_bytes(&b, "Nettrace", 8);
    tb_u32(&b, 0);
    tb_u32(&b, 7);
    tb_u32(&b, 0);
    char msg[256];
    cr_expect_eq(nt_parse_buffer(b.d, b.n, NULL, NULL, NULL, msg, sizeof msg), NT_ERR_UNSUPPORTED_VERSION);
    cr_expect(strstr(msg, "version 7") != NULL, "%s", msg);
    tb_free(&b);
    tb_u32(&b, 20);
    tb_bytes(&b, "!FastSerialization.1", 20);
    cr_expect_eq(nt_parse_buffer(b.d, b.n, NULL, NULL, NULL, NULL, 0), NT_ERR_UNSUPPORTED_VERSION);
    tb_free(&b);
}

/* A NetPerf stream is refused, but the version its header says is read first
 * and reported (info prints it); cut before it, it is refused all the same. */
LTest(parser, netperf_reports_its_version)
{
    tb b = { 0 };
    tb_u32(&b, 20);
    tb_bytes(&b, "!FastSerialization.1", 20);
    tb_bytes(&b, "\x04\x04\x01", 3); /* BeginObject, type: BeginObject NullReference */
    tb_u32(&b, 3);                    /* Trace object version */
    tb_u32(&b, 0);
    tb_u32(&b, 5);
    tb_bytes(&b, "Trace\x06", 6);
    for (size_t cut = 0; cut <= b.n; cut++) {
        nt_parser *p = nt_parser_new(NULL, NULL, NULL, NULL);
        cr_assert(p);
        nt_status s = nt_parser_feed(p, b.d, cut);
        if (s == NT_OK)
            s = nt_parser_finish(p);
        bool past_version = cut >= 4 + 20 + 3 + 4;
        if (cut < 8)
            cr_expect_eq(s, NT_ERR_NOT_NETTRACE, "cut %zu: %s", cut, nt_status_name(s));
        else
            cr_expect_eq(s, NT_ERR_UNSUPPORTED_VERSION, "cut %zu: %s", cut, nt_status_name(s));
        cr_expect_eq(nt_parser_format_version(p), past_version ? 3u : 0u, "cut %zu", cut);
        cr_expect_null(nt_parser_trace_info(p));
        if (past_version) {
            cr_expect(strstr(nt_parser_message(p), "format version 3") != NULL, "%s", nt_parser_message(p));
            cr_expect_eq(nt_parser_error_offset(p), 27);
        }
        nt_parser_free(p);
    }
    tb_free(&b);
}

LTest(parser, header_only_is_no_events)
{
    tb b = { 0 };
    tb_header(&b, 8, 1000);
    cr_expect_eq(nt_parse_buffer(b.d, b.n, NULL, NULL, NULL, NULL, 0), NT_ERR_NO_EVENTS);
    tb_end(&b);
    cr_expect_eq(nt_parse_buffer(b.d, b.n, NULL, NULL, NULL, NULL, 0), NT_ERR_NO_EVENTS);
    tb_free(&b);
}

LTest(parser, unknown_block_is_skipped)
{
    for (size_t n = 1; n <= 9; n++) { /* every padding phase after it */
        tb b = { 0 };
        build_samples_x(&b, 8, true, true, 36 + n);
        seen x;
        char msg[256];
        cr_assert_eq(run(&b, &x, NULL, msg, sizeof msg), NT_OK, "%s", msg);
        cr_expect_eq(x.samples, 2);
        tb_free(&b);
    }
}

LTest(parser, block_length_claiming_4gib)
{
    tb b = { 0 };
    tb_header(&b, 8, 1000);
    size_t pos = tb_block_begin(&b, "EventBlock");
    tb_put32(&b, pos, 0xFFFFFFF0u);
    char msg[256];
    nt_status s = nt_parse_buffer(b.d, b.n, NULL, NULL, NULL, msg, sizeof msg);
    cr_expect_eq(s, NT_ERR_MALFORMED, "%s", msg);
    tb_put32(&b, pos, 0x7FFFFFF0u);
    s = nt_parse_buffer(b.d, b.n, NULL, NULL, NULL, msg, sizeof msg);
    cr_expect_eq(s, NT_ERR_LIMIT, "%s", msg);
    cr_expect(strstr(msg, "max_block_bytes") != NULL, "%s", msg);
    tb_free(&b);
}

LTest(parser, limit_breach_names_the_limit)
{
    tb b = { 0 };
    build_samples(&b, 8, true, true);
    nt_limits lim = { 0 };
    lim.max_stack_frames = 2; /* the stack has 3 */
    seen x;
    char msg[256];
    cr_expect_eq(run(&b, &x, &lim, msg, sizeof msg), NT_ERR_LIMIT);
    cr_expect(strstr(msg, "max_stack_frames") != NULL, "%s", msg);
    tb_free(&b);
}

static int stop_now(void *u, const nt_sample *s)
{
    (void)s;
    ++*(int *)u;
    return 1;
}

LTest(parser, callback_stops_parse)
{
    tb b = { 0 };
    build_samples(&b, 8, true, true);
    nt_callbacks cb = { 0 };
    cb.sample = stop_now;
    int n = 0;
    nt_parser *p = nt_parser_new(&cb, &n, NULL, NULL);
    cr_expect_eq(nt_parser_feed(p, b.d, b.n), NT_ERR_STOPPED);
    cr_expect_eq(nt_parser_feed(p, b.d, b.n), NT_ERR_STOPPED, "errors are sticky");
    cr_expect_eq(nt_parser_finish(p), NT_ERR_STOPPED);
    cr_expect_eq(n, 1);
    nt_parser_free(p);
    tb_free(&b);
}

LTest(parser, ticks_to_ns_exact)
{
    cr_expect_eq(nt_ticks_to_ns(3124099, 3124099), 1000000000);
    cr_expect_eq(nt_ticks_to_ns(100935252313, 3124099), 32308595954545);
    cr_expect_eq(nt_ticks_to_ns(-1, 3), -333333334, "floor, not truncation");
    cr_expect_eq(nt_ticks_to_ns(INT64_MAX, 1), INT64_MAX, "saturates");
    cr_expect_eq(nt_ticks_to_ns(5, 0), 0);
}

/* ---- metadata: V1 fields, V5 tags ------------------------------------- */

static nt_event_desc g_desc;
static nt_field g_fields[8];
static char g_names[8][32];
static char g_provider[64];
static int grab_desc(void *u, const nt_event_desc *d)
{
    (void)u;
    g_desc = *d;
    snprintf(g_provider, sizeof g_provider, "%s", d->provider);
    for (uint32_t i = 0; i < d->field_count && i < 8; i++) {
        g_fields[i] = d->fields[i];
        snprintf(g_names[i], sizeof g_names[i], "%s", d->fields[i].name);
    }
    return 0;
}

/* One metadata block holding `payload`, then an end tag (no events). */
static void metadata_stream(tb *b, const tb *payload)
{
    tb_header(b, 8, 1000);
    size_t pos = tb_block_begin(b, "MetadataBlock");
    tb_event_header(b, 1);
    tb_event e = { 0 }, prev = { 0 };
    e.payload = payload->d;
    e.payload_size = (uint32_t)payload->n;
    tb_compressed_event(b, &e, &prev);
    tb_block_end(b, pos);
    tb_end(b);
}

LTest(parser, metadata_v1_fields_nested)
{
    tb m = { 0 };
    tb_u32(&m, 5);
    tb_utf16z(&m, "My-Provider");
    tb_u32(&m, 42);
    tb_utf16z(&m, "MyEvent");
    tb_u64(&m, 0xF0);
    tb_u32(&m, 3);
    tb_u32(&m, 4);
    tb_u32(&m, 2);            /* two top-level fields */
    tb_u32(&m, 9);            /* Int32 */
    tb_utf16z(&m, "Count");
    tb_u32(&m, 1);            /* Object with one nested field */
    tb_u32(&m, 1);
    tb_u32(&m, 18);           /* String */
    tb_utf16z(&m, "Inner");
    tb_utf16z(&m, "Outer");
    tb b = { 0 };
    metadata_stream(&b, &m);
    nt_callbacks cb = { 0 };
    cb.metadata = grab_desc;
    char msg[256];
    cr_assert_eq(nt_parse_buffer(b.d, b.n, &cb, NULL, NULL, msg, sizeof msg), NT_ERR_NO_EVENTS, "%s", msg);
    cr_expect_eq(g_desc.metadata_id, 5);
    cr_expect_str_eq(g_provider, "My-Provider");
    cr_expect_eq(g_desc.event_id, 42);
    cr_expect_eq(g_desc.version, 3);
    cr_expect_eq(g_desc.keywords, 0xF0);
    cr_assert_eq(g_desc.field_count, 3);
    cr_expect_str_eq(g_names[0], "Count");
    cr_expect_eq(g_fields[0].type, NT_TYPE_INT32);
    cr_expect_str_eq(g_names[1], "Outer");
    cr_expect_eq(g_fields[1].type, NT_TYPE_OBJECT);
    cr_expect_str_eq(g_names[2], "Inner");
    cr_expect_eq(g_fields[2].depth, 1);
    tb_free(&m);
    tb_free(&b);
}

LTest(parser, metadata_v5_tags)
{
    tb m = { 0 };
    tb_u32(&m, 7);
    tb_utf16z(&m, "P");
    tb_u32(&m, 1);
    tb_utf16z(&m, "E");
    tb_u64(&m, 0);
    tb_u32(&m, 0);
    tb_u32(&m, 4);
    tb_u32(&m, 0);            /* V1 list empty: V2Params follows */
    tb_u32(&m, 1);            /* OpCode tag */
    tb_u8(&m, 1);
    tb_u8(&m, 10);
    tb v2 = { 0 };            /* V2Params: one array of UInt16 */
    tb_u32(&v2, 1);
    size_t start = v2.n;
    tb_u32(&v2, 0);
    tb_utf16z(&v2, "Ids");
    tb_u32(&v2, 19);
    tb_u32(&v2, 8);
    tb_put32(&v2, start, (uint32_t)(v2.n - start));
    tb_u32(&m, (uint32_t)v2.n);
    tb_u8(&m, 2);
    tb_bytes(&m, v2.d, v2.n);
    tb b = { 0 };
    metadata_stream(&b, &m);
    nt_callbacks cb = { 0 };
    cb.metadata = grab_desc;
    nt_parse_buffer(b.d, b.n, &cb, NULL, NULL, NULL, 0);
    cr_expect_eq(g_desc.opcode, 10);
    cr_assert_eq(g_desc.field_count, 1);
    cr_expect_str_eq(g_names[0], "Ids");
    cr_expect_eq(g_fields[0].type, NT_TYPE_ARRAY);
    cr_expect_eq(g_fields[0].element_type, NT_TYPE_UINT16);
    tb_free(&v2);
    tb_free(&m);
    tb_free(&b);
}

LTest(parser, metadata_unparsable_fields_keep_the_event)
{
    tb m = { 0 };
    tb_u32(&m, 9);
    tb_utf16z(&m, "P");
    tb_u32(&m, 3);
    tb_utf16z(&m, "E");
    tb_u64(&m, 0);
    tb_u32(&m, 1);
    tb_u32(&m, 4);
    tb_u32(&m, 1000);         /* claims 1000 fields, holds none */
    tb b = { 0 };
    metadata_stream(&b, &m);
    nt_callbacks cb = { 0 };
    cb.metadata = grab_desc;
    memset(&g_desc, 0, sizeof g_desc);
    cr_expect_eq(nt_parse_buffer(b.d, b.n, &cb, NULL, NULL, NULL, 0), NT_ERR_NO_EVENTS);
    cr_expect_eq(g_desc.metadata_id, 9, "the description is still delivered");
    cr_expect_eq(g_desc.field_count, 0);
    tb_free(&m);
    tb_free(&b);
}

LTest(parser, metadata_defined_twice_is_malformed)
{
    tb b = { 0 };
    tb_header(&b, 8, 1000);
    tb_metadata_block(&b, 1, "P", 1, 0);
    tb_metadata_block(&b, 1, "P", 2, 0);
    tb_end(&b);
    char msg[256];
    cr_expect_eq(nt_parse_buffer(b.d, b.n, NULL, NULL, NULL, msg, sizeof msg), NT_ERR_MALFORMED);
    cr_expect(strstr(msg, "defined twice") != NULL, "%s", msg);
    tb_free(&b);
}

/* ---- stacks: empty stacks, reset at sequence points, unknown ids ------ */

static void sample_block(tb *b, uint32_t first_seq, uint32_t stack_id, uint32_t n, int64_t ts)
{
    static uint8_t managed[4] = { 2, 0, 0, 0 };
    size_t pos = tb_block_begin(b, "EventBlock");
    tb_event_header(b, 1);
    tb_event prev = { 0 };
    for (uint32_t i = 0; i < n; i++) {
        tb_event e = { 1, first_seq + i, stack_id, 0, 11, 99, ts + i, managed, 4 };
        tb_compressed_event(b, &e, &prev);
    }
    tb_block_end(b, pos);
}

/* A V4 stream with the sample profiler's metadata, ptr 8, a 1 GHz clock. */
static void sample_stream_begin(tb *b)
{
    tb_header(b, 8, 1000000000);
    tb_metadata_block(b, 1, NT_PROVIDER_SAMPLE_PROFILER, 0, 0);
}

/* Parses b with the sample callback only; the stream holds four samples. */
static void parse_four_samples(const tb *b, seen *x)
{
    nt_callbacks cb = { 0 };
    cb.sample = on_sample;
    memset(x, 0, sizeof *x);
    cr_assert_eq(nt_parse_buffer(b->d, b->n, &cb, x, NULL, NULL, 0), NT_OK);
    cr_assert_eq(x->samples, 4);
}

LTest(parser, empty_stack_and_reset_at_sequence_points)
{
    tb b = { 0 };
    sample_stream_begin(&b);
    const uint64_t a[] = { 0xA1, 0xA2 };
    const uint64_t *ips1[] = { a, a };
    const uint32_t d1[] = { 0, 2 }; /* stack 1 empty, stack 2 = A1 A2 */
    tb_stack_block(&b, 1, 2, ips1, d1, 8);
    sample_block(&b, 1, 1, 1, 10);
    sample_block(&b, 2, 2, 1, 20);
    uint64_t tid = 99;
    uint32_t seq = 2;
    tb_sp_block(&b, 30, 1, &tid, &seq);
    const uint64_t c[] = { 0xC1 };
    const uint64_t *ips2[] = { c };
    const uint32_t d2[] = { 1 };
    tb_stack_block(&b, 1, 1, ips2, d2, 8); /* id 1 again, new content */
    sample_block(&b, 3, 1, 1, 40);
    sample_block(&b, 4, 2, 1, 50);         /* id 2 no longer exists */
    tb_end(&b);
    seen x;
    parse_four_samples(&b, &x);
    cr_expect_eq(x.depth[0], 0, "empty stack is a stack with no frames");
    cr_expect_eq(x.ips[1][1], 0xA2);
    cr_expect_eq(x.ips[2][0], 0xC1, "stack ids restart after a sequence point");
    cr_expect_eq(x.depth[3], -1, "a stale id resolves to nothing");
    /* the parser says which interval an id belongs to: (interval, id) is unique */
    cr_expect_eq(x.interval[0], 0);
    cr_expect_eq(x.interval[1], 0);
    cr_expect_eq(x.interval[2], 1, "the stack after the first sequence point is of interval 1");
    tb_free(&b);
}

/* The stack table hands out its own entries, whose IPs point into storage
 * that moves as later stack blocks of the interval grow it: stacks defined
 * before the growth must still read their own IPs (under ASan, a stale
 * pointer is a use after free). */
LTest(parser, stacks_survive_the_ip_storage_moving)
{
    tb b = { 0 };
    sample_stream_begin(&b);
    const uint64_t a[] = { 0xA1, 0xA2 };
    const uint64_t *ips1[] = { a, a };
    const uint32_t d1[] = { 2, 0 }; /* stack 1 = A1 A2, stack 2 empty */
    tb_stack_block(&b, 1, 2, ips1, d1, 8);
    static uint64_t big[4096];
    for (uint32_t i = 0; i < 4096; i++)
        big[i] = 0xB000 + i;
    const uint64_t *ipsb[] = { big };
    for (uint32_t k = 0; k < 12; k++) { /* ids 5..16 (3 and 4 missing), 4096 frames each */
        const uint32_t db[] = { 4096 };
        tb_stack_block(&b, 5 + k, 1, ipsb, db, 8);
    }
    sample_block(&b, 1, 1, 1, 10);
    sample_block(&b, 2, 2, 1, 20);
    sample_block(&b, 3, 3, 1, 30);
    sample_block(&b, 4, 16, 1, 40);
    tb_end(&b);
    seen x;
    parse_four_samples(&b, &x);
    cr_expect(x.depth[0] == 2 && x.ips[0][0] == 0xA1 && x.ips[0][1] == 0xA2, "the first stack after the growth");
    cr_expect_eq(x.depth[1], 0, "an empty stack");
    cr_expect_eq(x.depth[2], -1, "an id in the gap resolves to nothing");
    cr_expect(x.depth[3] == 4096 && x.ips[3][0] == 0xB000 && x.ips[3][3] == 0xB003, "the last stack");
    tb_free(&b);
}

static nt_sequence_point g_sp;
static nt_sp_thread g_spt[4];
static int grab_sp(void *u, const nt_sequence_point *sp)
{
    (void)u;
    g_sp = *sp;
    for (uint32_t i = 0; i < sp->thread_count && i < 4; i++)
        g_spt[i] = sp->threads[i];
    return 0;
}

LTest(parser, dropped_events_per_thread)
{
    tb b = { 0 };
    tb_header(&b, 8, 1000);
    tb_metadata_block(&b, 1, NT_PROVIDER_SAMPLE_PROFILER, 0, 0);
    sample_block(&b, 1, 0, 3, 10);   /* seq 1,2,3 */
    sample_block(&b, 8, 0, 2, 20);   /* seq 8,9: 4 lost in between */
    uint64_t tid = 99;
    uint32_t seq = 12;               /* 10, 11, 12 written but lost */
    tb_sp_block(&b, 30, 1, &tid, &seq);
    tb_end(&b);
    nt_callbacks cb = { 0 };
    cb.sequence_point = grab_sp;
    nt_parser *p = nt_parser_new(&cb, NULL, NULL, NULL);
    cr_assert_eq(nt_parser_feed(p, b.d, b.n), NT_OK);
    cr_assert_eq(nt_parser_finish(p), NT_OK);
    cr_assert_eq(g_sp.thread_count, 1);
    cr_expect_eq(g_spt[0].capture_thread_id, 99);
    cr_expect_eq(g_spt[0].dropped, 7);
    nt_parser_stats st = { 0 };
    nt_parser_stats_get(p, &st);
    cr_expect_eq(st.events_dropped, 7);
    nt_parser_free(p);
    tb_free(&b);
}

LTest(parser, undefined_metadata_is_delivered_without_description)
{
    tb b = { 0 };
    tb_header(&b, 8, 1000);
    tb_metadata_block(&b, 1, NT_PROVIDER_SAMPLE_PROFILER, 0, 0);
    size_t pos = tb_block_begin(&b, "EventBlock");
    tb_event_header(&b, 1);
    tb_event prev = { 0 }, e = { 77, 1, 0, 0, 5, 5, 100, NULL, 0 };
    tb_compressed_event(&b, &e, &prev);
    tb_block_end(&b, pos);
    tb_end(&b);
    nt_parser *p = nt_parser_new(NULL, NULL, NULL, NULL);
    nt_parser_feed(p, b.d, b.n);
    cr_expect_eq(nt_parser_finish(p), NT_OK);
    nt_parser_stats st = { 0 };
    nt_parser_stats_get(p, &st);
    cr_expect_eq(st.events, 1);
    cr_expect_eq(st.unknown_metadata_refs, 1);
    nt_parser_free(p);
    tb_free(&b);
}

/* ---- typed payloads: every version ------------------------------------ */

static nt_method g_m;
static char g_mname[64], g_mtype[64], g_msig[64];
static nt_assembly g_a;
static char g_aname[64];
static nt_module g_mod;
static char g_il[64];
static int grab_method(void *u, const nt_method *m)
{
    (void)u;
    g_m = *m;
    snprintf(g_mname, 64, "%s", m->name);
    snprintf(g_mtype, 64, "%s", m->declaring_type);
    snprintf(g_msig, 64, "%s", m->signature);
    return 0;
}
static int grab_assembly(void *u, const nt_assembly *a)
{
    (void)u;
    g_a = *a;
    snprintf(g_aname, 64, "%s", a->name);
    return 0;
}
static int grab_module(void *u, const nt_module *m)
{
    (void)u;
    g_mod = *m;
    snprintf(g_il, 64, "%s", m->il_path);
    return 0;
}

/* A stream with one metadata record and one event carrying `payload`. */
static nt_status one_event(const char *provider, uint32_t event_id, uint32_t version, const tb *payload,
                           char *msg, size_t msz)
{
    tb b = { 0 };
    tb_header(&b, 8, 1000);
    tb_metadata_block(&b, 1, provider, event_id, version);
    size_t pos = tb_block_begin(&b, "EventBlock");
    tb_event_header(&b, 1);
    tb_event prev = { 0 }, e = { 1, 1, 0, 0, 5, 5, 100, payload->d, (uint32_t)payload->n };
    tb_compressed_event(&b, &e, &prev);
    tb_block_end(&b, pos);
    tb_end(&b);
    nt_callbacks cb = { 0 };
    cb.method = grab_method;
    cb.assembly = grab_assembly;
    cb.module = grab_module;
    nt_status s = nt_parse_buffer(b.d, b.n, &cb, NULL, NULL, msg, msz);
    tb_free(&b);
    return s;
}

static void method_payload(tb *m, uint32_t version)
{
    tb_u64(m, 0x1111);
    tb_u64(m, 0x2222);
    tb_u64(m, 0x7f0000001000ull);
    tb_u32(m, 0x80);
    tb_u32(m, 0x06000001);
    tb_u32(m, NT_METHOD_FLAG_JITTED | (4u << 7));
    tb_utf16z(m, "Ns.Type`1[System.__Canon]");
    tb_utf16z(m, "Work");
    tb_utf16z(m, "void (int32)");
    if (version >= 1)
        tb_u16(m, 9);
    if (version >= 2)
        tb_u64(m, 3);
}

LTest(parser, method_payload_versions)
{
    for (uint32_t v = 0; v <= 3; v++) {
        tb m = { 0 };
        method_payload(&m, v);
        char msg[256];
        memset(&g_m, 0, sizeof g_m);
        cr_assert_eq(one_event(NT_PROVIDER_RUNDOWN, 144, v, &m, msg, sizeof msg), NT_OK, "v%u: %s", v, msg);
        cr_expect_eq(g_m.which, NT_RECORD_DC_END);
        cr_expect_eq(g_m.start_address, 0x7f0000001000ull);
        cr_expect_eq(g_m.size, 0x80);
        cr_expect_eq(NT_METHOD_TIER(g_m.flags), 4);
        cr_expect_str_eq(g_mtype, "Ns.Type`1[System.__Canon]");
        cr_expect_str_eq(g_mname, "Work");
        cr_expect_str_eq(g_msig, "void (int32)");
        cr_expect_eq(g_m.clr_instance_id, v >= 1 ? 9 : 0);
        cr_expect_eq(g_m.rejit_id, v >= 2 ? 3 : 0, "v%u (v3: the known V2 prefix)", v);
        tb_free(&m);
    }
    /* A V2 payload cut before its ReJITID is malformed, not guessed at. */
    tb m = { 0 };
    method_payload(&m, 1);
    cr_expect_eq(one_event(NT_PROVIDER_RUNTIME, 143, 2, &m, NULL, 0), NT_ERR_MALFORMED);
    tb_free(&m);
}

LTest(parser, assembly_v0_and_v1_layouts_differ)
{
    tb a0 = { 0 };
    tb_u64(&a0, 0xA5);
    tb_u64(&a0, 0xD0);
    tb_u32(&a0, 1);
    tb_utf16z(&a0, "Lib, Version=1.0.0.0");
    cr_assert_eq(one_event(NT_PROVIDER_RUNTIME, 154, 0, &a0, NULL, 0), NT_OK);
    cr_expect_eq(g_a.assembly_id, 0xA5);
    cr_expect_eq(g_a.flags, 1);
    cr_expect_str_eq(g_aname, "Lib, Version=1.0.0.0");
    tb a1 = { 0 };
    tb_u64(&a1, 0xA6);
    tb_u64(&a1, 0xD0);
    tb_u64(&a1, 0xB1);        /* BindingID inserted in V1 */
    tb_u32(&a1, 2);
    tb_utf16z(&a1, "Other");
    tb_u16(&a1, 9);
    cr_assert_eq(one_event(NT_PROVIDER_RUNDOWN, 156, 1, &a1, NULL, 0), NT_OK);
    cr_expect_eq(g_a.which, NT_RECORD_DC_END);
    cr_expect_eq(g_a.binding_id, 0xB1);
    cr_expect_eq(g_a.flags, 2);
    cr_expect_str_eq(g_aname, "Other");
    tb_free(&a0);
    tb_free(&a1);
}

LTest(parser, module_load_and_domain_module)
{
    tb m = { 0 };
    tb_u64(&m, 0x300);
    tb_u64(&m, 0xA5);
    tb_u32(&m, 0);
    tb_u32(&m, 0);
    tb_utf16z(&m, "/app/Lib.dll");
    tb_utf16z(&m, "");
    tb_u16(&m, 9);
    /* V2 appends PDB fields after ClrInstanceID: the module map needs only the prefix. */
    cr_assert_eq(one_event(NT_PROVIDER_RUNTIME, 152, 2, &m, NULL, 0), NT_OK);
    cr_expect_eq(g_mod.module_id, 0x300);
    cr_expect_eq(g_mod.assembly_id, 0xA5);
    cr_expect_str_eq(g_il, "/app/Lib.dll");
    cr_expect(!g_mod.domain);
    tb d = { 0 };             /* DomainModuleDCEnd: AppDomainID after AssemblyID */
    tb_u64(&d, 0x301);
    tb_u64(&d, 0xA6);
    tb_u64(&d, 0xD1);
    tb_u32(&d, 0);
    tb_u32(&d, 0);
    tb_utf16z(&d, "/app/Two.dll");
    tb_utf16z(&d, "");
    tb_u16(&d, 9);
    cr_assert_eq(one_event(NT_PROVIDER_RUNDOWN, 152, 1, &d, NULL, 0), NT_OK);
    cr_expect(g_mod.domain);
    cr_expect_eq(g_mod.app_domain_id, 0xD1);
    cr_expect_str_eq(g_il, "/app/Two.dll");
    tb_free(&d);
    tb_free(&m);
}

/* ---- allocation failures ----------------------------------------------- */

typedef struct failing_alloc {
    long countdown; /* fail when it reaches 0 */
} failing_alloc;

static void *fa_realloc(void *ctx, void *ptr, size_t n)
{
    failing_alloc *f = ctx;
    if (f->countdown-- == 0)
        return NULL;
    return realloc(ptr, n);
}
static void fa_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

/* Fail allocation k for k = 0, 1, ... until the parse succeeds: every
 * failure is NT_ERR_NOMEM (or parser creation fails), never a crash or leak. */
LTest(parser, allocation_failure_injection)
{
    tb b = { 0 };
    build_samples(&b, 8, true, true);
    bool succeeded = false;
    for (long k = 0; k < 200 && !succeeded; k++) {
        failing_alloc f = { k };
        nt_allocator a = { fa_realloc, fa_free, &f };
        nt_callbacks cb = { 0 };
        ts_digest_callbacks(&cb);
        ts_digest d;
        ts_digest_init(&d);
        nt_parser *p = nt_parser_new(&cb, &d, NULL, &a);
        if (!p)
            continue;
        nt_status s = nt_parser_feed(p, b.d, b.n);
        if (s == NT_OK)
            s = nt_parser_finish(p);
        cr_assert(s == NT_OK || s == NT_ERR_NOMEM, "k=%ld: %s", k, nt_parser_message(p));
        succeeded = s == NT_OK;
        nt_parser_stats st = { 0 };
        nt_parser_stats_get(p, &st);
        nt_parser_free(p);
    }
    cr_expect(succeeded);
    tb_free(&b);
}

static nt_status parse_with(const tb *b, const nt_limits *lim, const nt_allocator *a, char *msg, size_t cap)
{
    nt_callbacks cb = { 0 };
    ts_digest_callbacks(&cb);
    ts_digest d;
    ts_digest_init(&d);
    nt_parser *p = nt_parser_new(&cb, &d, lim, a);
    if (!p)
        return NT_ERR_NOMEM;
    nt_status s = nt_parser_feed(p, b->d, b->n);
    if (s == NT_OK)
        s = nt_parser_finish(p);
    snprintf(msg, cap, "%s", nt_parser_message(p));
    nt_parser_free(p);
    return s;
}

/* A metadata budget breach is NT_ERR_LIMIT naming the limit, an allocation
 * failure under a budget just large enough is NT_ERR_NOMEM: the arena says
 * which of the two refused, the parser does not guess from sizes. */
LTest(parser, metadata_budget_breach_vs_allocation_failure)
{
    tb b = { 0 };
    build_samples(&b, 8, true, true);
    nt_limits lim = { 0 };
    char msg[256];
    uint32_t fit = 0;
    for (uint32_t budget = 16; budget <= 4096 && !fit; budget += 16) {
        lim.max_metadata_bytes = budget;
        if (parse_with(&b, &lim, NULL, msg, sizeof msg) == NT_OK)
            fit = budget;
    }
    cr_assert(fit > 16, "no budget between 32 and 4096 bytes holds the metadata");
    lim.max_metadata_bytes = fit - 16;
    cr_expect_eq(parse_with(&b, &lim, NULL, msg, sizeof msg), NT_ERR_LIMIT);
    cr_expect(strstr(msg, "max_metadata_bytes") != NULL, "%s", msg);
    lim.max_metadata_bytes = fit;
    bool succeeded = false;
    for (long k = 0; k < 200 && !succeeded; k++) {
        failing_alloc f = { k };
        nt_allocator a = { fa_realloc, fa_free, &f };
        nt_status s = parse_with(&b, &lim, &a, msg, sizeof msg);
        cr_assert(s == NT_OK || s == NT_ERR_NOMEM, "k=%ld: status %d: %s", k, (int)s, msg);
        succeeded = s == NT_OK;
    }
    cr_expect(succeeded);
    tb_free(&b);
}

/* Memory stays within what the limits allow, whatever the stream claims. */
LTest(parser, memory_bounded_by_limits)
{
    tb b = { 0 };
    tb_header(&b, 8, 1000);
    tb_metadata_block(&b, 1, NT_PROVIDER_SAMPLE_PROFILER, 0, 0);
    for (int k = 0; k < 200; k++) { /* 200 intervals of 50 deep stacks each */
        uint64_t fr[64];
        for (int i = 0; i < 64; i++)
            fr[i] = 0x1000u + (uint64_t)i;
        const uint64_t *ips[50];
        uint32_t dep[50];
        for (int i = 0; i < 50; i++) {
            ips[i] = fr;
            dep[i] = 64;
        }
        tb_stack_block(&b, 1, 50, ips, dep, 8);
        sample_block(&b, (uint32_t)k * 10 + 1, 1, 10, k * 100);
        uint64_t tid = 99;
        uint32_t seq = (uint32_t)k * 10 + 10;
        tb_sp_block(&b, k * 100 + 50, 1, &tid, &seq);
    }
    tb_end(&b);
    nt_parser *p = nt_parser_new(NULL, NULL, NULL, NULL);
    for (size_t off = 0; off < b.n; off += 4096)
        nt_parser_feed(p, b.d + off, b.n - off < 4096 ? b.n - off : 4096);
    cr_assert_eq(nt_parser_finish(p), NT_OK);
    nt_parser_stats st = { 0 };
    nt_parser_stats_get(p, &st);
    /* one interval: 50 stacks x 64 IPs x 8 bytes = 25.6 KB, plus a block buffer and tables */
    cr_expect_lt(st.memory_peak, 256u * 1024u, "peak %zu bytes for a %zu-byte stream", st.memory_peak, b.n);
    cr_expect_lt(st.memory_peak, b.n / 4);
    nt_parser_free(p);
    tb_free(&b);
}
