/* Hash flooding: key sets built to collide under the parser's old, fixed
 * multiplicative hashes (every key in one probe chain: quadratic time, a few
 * MB costing minutes) cost the keyed tables no more than ordinary keys.
 * The cost measured is the tables' own probe count, not time: the
 * adversarial stream must stay within a small factor of a control stream
 * with the same number of keys.  Under the old hashes these streams cost
 * hundreds of times their control.
 *
 * Tables covered: capture thread ids (V4 events and sequence points), V6
 * thread indexes (Thread and SequencePoint blocks), metadata ids (records
 * and the lookups of every event, an undefined id included).  The distinct
 * keys of each are capped (max_threads, max_metadata) with NT_ERR_LIMIT. */
#include "common/format.h"
#include "parse/context.h"
#include "streams.h"

#include "ltest.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define OLD_THREAD_MUL 0x9E3779B97F4A7C15ull /* the old thread-table hash: (k * M) >> 32 */
#define OLD_META_MUL 0x9E3779B1u             /* the old metadata hash: (id * M) mod 2^32 */

/* The multiplicative inverse of an odd number modulo 2^64 (Newton). */
static uint64_t inverse64(uint64_t a)
{
    uint64_t x = a;
    for (int i = 0; i < 6; i++)
        x *= 2 - a * x;
    return x;
}

/* Key i of a set whose old-hash slot is 0 in every table of up to 2^32 slots. */
static uint64_t colliding_thread_key(uint64_t i) { return i * inverse64(OLD_THREAD_MUL); }

/* n metadata ids (>= PS_META_DIRECT_IDS, so they are hashed, and <=
 * INT32_MAX): with adversarial, ids whose old-hash slot is 0 in every table
 * of up to 2^15 slots; else consecutive ids. */
static uint32_t *meta_ids(uint32_t n, bool adversarial)
{
    uint32_t *ids = calloc(n, sizeof *ids);
    uint32_t inv = (uint32_t)inverse64(OLD_META_MUL);
    for (uint32_t k = 1, i = 0; i < n; k++) {
        uint32_t id = adversarial ? (k << 15) * inv : PS_META_DIRECT_IDS + k;
        if (id >= PS_META_DIRECT_IDS && id <= INT32_MAX)
            ids[i++] = id;
    }
    return ids;
}

static uint64_t parse_probes(const tb *b, nt_status *st, bool metadata_table)
{
    nt_parser *p = nt_parser_new(NULL, NULL, NULL, NULL);
    cr_assert_not_null(p);
    nt_status s = nt_parser_feed(p, b->d, b->n);
    if (s == NT_OK)
        s = nt_parser_finish(p);
    *st = s;
    uint64_t probes = metadata_table ? p->meta.probes : p->threads.probes;
    nt_parser_free(p);
    return probes;
}

static const uint8_t payload[4] = { 2, 0, 0, 0 };

/* V4: one event per capture thread, then a sequence point listing them all. */
static void v4_threads(tb *b, uint32_t n, bool adversarial)
{
    tb_header(b, 8, 1000000000);
    tb_metadata_block(b, 1, "Flood", 1, 0);
    uint64_t *tids = calloc(n, sizeof *tids);
    uint32_t *seqs = calloc(n, sizeof *seqs);
    size_t pos = tb_block_begin(b, "EventBlock");
    tb_event_header(b, 1);
    tb_event prev = { 0 };
    for (uint32_t i = 0; i < n; i++) {
        tids[i] = adversarial ? colliding_thread_key(i + 1) : i + 1;
        seqs[i] = 1;
        tb_event e = { 1, 1, 0, 0, tids[i], tids[i], (int64_t)i + 1, payload, 4 };
        tb_compressed_event(b, &e, &prev);
    }
    tb_block_end(b, pos);
    tb_sp_block(b, (int64_t)n + 1, n, tids, seqs);
    tb_end(b);
    free(tids);
    free(seqs);
}

/* V4: n metadata records, one event of each, then one event of each of
 * `undefined_refs` undefined ids, each after an event of a defined one so
 * that no lookup is skipped as a repeat. */
static void v4_metadata(tb *b, uint32_t n, uint32_t undefined_refs, bool adversarial)
{
    uint32_t *ids = meta_ids(n + undefined_refs, adversarial);
    tb_header(b, 8, 1000000000);
    for (uint32_t i = 0; i < n; i++)
        tb_metadata_block(b, ids[i], "Flood", i, 0);
    size_t pos = tb_block_begin(b, "EventBlock");
    tb_event_header(b, 1);
    tb_event prev = { 0 };
    uint32_t seq = 0;
    for (uint32_t i = 0; i < n + undefined_refs; i++) {
        uint32_t pair[2] = { ids[i], ids[0] };
        for (int k = 0; k < 2; k++) {
            seq++;
            tb_event e = { pair[k], seq, 0, 0, 7, 7, (int64_t)seq, payload, 4 };
            tb_compressed_event(b, &e, &prev);
        }
    }
    tb_block_end(b, pos);
    tb_end(b);
    free(ids);
}

/* V6 stream pieces, written by hand (the writer numbers thread indexes itself). */
static void v6_threads(tb *b, uint32_t n, bool adversarial)
{
    tb_v6_header(b);
    tb body = { 0 };
    for (uint32_t i = 0; i < n; i++) {
        uint64_t index = adversarial ? colliding_thread_key(i + 1) : i + 1;
        tb row = { 0 };
        tb_varu(&row, index);
        tb_u8(&row, CM_V6_THREAD_OS_TID);
        tb_varu(&row, 1000 + i);
        tb_u16(&body, (uint16_t)row.n);
        tb_bytes(&body, row.d, row.n);
        tb_free(&row);
    }
    tb_v6_block(b, CM_V6_THREAD, &body);
    body.n = 0;
    tb_u64(&body, 1);
    tb_u32(&body, 0);
    tb_u32(&body, n);
    for (uint32_t i = 0; i < n; i++) {
        tb_varu(&body, adversarial ? colliding_thread_key(i + 1) : i + 1);
        tb_varu(&body, 0);
    }
    tb_v6_block(b, CM_V6_SEQUENCE_POINT, &body);
    tb_free(&body);
    tb_u32(b, 0); /* EndOfStream */
}

/* Both streams parse the same way, and the adversarial one's probes stay
 * within a small factor of the control's (plus a constant for tiny counts). */
static void expect_flat(const char *what, uint64_t adv, nt_status adv_s, uint64_t ctl, nt_status ctl_s,
                        uint64_t keys)
{
    cr_expect_eq(adv_s, ctl_s, "%s: same status", what);
    cr_expect_leq(adv, 4 * ctl + keys, "%s: %llu probes against %llu for ordinary keys (%llu keys)", what,
                  (unsigned long long)adv, (unsigned long long)ctl, (unsigned long long)keys);
}

LTest(hash_flood, v4_capture_threads)
{
    const uint32_t n = 20000;
    tb a = { 0 }, c = { 0 };
    v4_threads(&a, n, true);
    v4_threads(&c, n, false);
    nt_status as, cs;
    uint64_t ap = parse_probes(&a, &as, false), cp = parse_probes(&c, &cs, false);
    cr_expect_eq(cs, NT_OK);
    expect_flat("capture threads", ap, as, cp, cs, n);
    tb_free(&a);
    tb_free(&c);
}

LTest(hash_flood, v6_thread_indexes)
{
    const uint32_t n = 20000;
    tb a = { 0 }, c = { 0 };
    v6_threads(&a, n, true);
    v6_threads(&c, n, false);
    nt_status as, cs;
    uint64_t ap = parse_probes(&a, &as, false), cp = parse_probes(&c, &cs, false);
    cr_expect_eq(cs, NT_ERR_NO_EVENTS, "threads and a sequence point, no events");
    expect_flat("V6 thread indexes", ap, as, cp, cs, n);
    tb_free(&a);
    tb_free(&c);
}

LTest(hash_flood, metadata_ids)
{
    const uint32_t n = 6000, undefined_refs = 20000; /* 26,000 ids colliding under the old hash */
    tb a = { 0 }, c = { 0 };
    v4_metadata(&a, n, undefined_refs, true);
    v4_metadata(&c, n, undefined_refs, false);
    nt_status as, cs;
    uint64_t ap = parse_probes(&a, &as, true), cp = parse_probes(&c, &cs, true);
    cr_expect_eq(cs, NT_OK);
    expect_flat("metadata ids", ap, as, cp, cs, n + undefined_refs);
    tb_free(&a);
    tb_free(&c);
}

/* The distinct keys are capped: past the limit, a named NT_ERR_LIMIT. */
LTest(hash_flood, distinct_keys_capped)
{
    tb b = { 0 };
    v4_threads(&b, 300, true);
    nt_limits lim = { .max_threads = 256 };
    char msg[256];
    cr_expect_eq(nt_parse_buffer(b.d, b.n, NULL, NULL, &lim, msg, sizeof msg), NT_ERR_LIMIT);
    cr_expect(strstr(msg, "max_threads") != NULL, "%s", msg);
    tb_free(&b);
    v6_threads(&b, 300, true);
    cr_expect_eq(nt_parse_buffer(b.d, b.n, NULL, NULL, &lim, msg, sizeof msg), NT_ERR_LIMIT);
    cr_expect(strstr(msg, "max_threads") != NULL, "%s", msg);
    tb_free(&b);
    v4_metadata(&b, 300, 0, true);
    nt_limits mlim = { .max_metadata = 256 };
    cr_expect_eq(nt_parse_buffer(b.d, b.n, NULL, NULL, &mlim, msg, sizeof msg), NT_ERR_LIMIT);
    cr_expect(strstr(msg, "max_metadata") != NULL, "%s", msg);
    tb_free(&b);
}
