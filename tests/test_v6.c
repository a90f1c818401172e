/* NetTrace V6: writer -> parser round trips, the V6-only tables (threads,
 * label lists, flushes), and the framing (unknown kinds, versions). */
#include "ltest.h"
#include "support.h"
#include "writer_rec.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static nt_writer_options v6(uint32_t ptr, bool uncompressed)
{
    nt_writer_options o = { 0 };
    nt_writer_options_default(&o);
    o.format = 6;
    o.pointer_size = ptr;
    o.uncompressed = uncompressed;
    return o;
}

/* The round trips V4 and V6 share are test_writer.c's, parameterised over both formats. */

LTest(v6, trace_block_key_values)
{
    nt_writer_options o = v6(8, false);
    o.format_minor = 3;
    o.sync_time_utc = (nt_systemtime){ 2026, 11, 0, 29, 11, 5, 0, 999 };
    o.sync_qpc = 42;
    o.qpc_frequency = 1000;
    o.process_id = 31337;
    o.processor_count = 64;
    o.sampling_interval_ns = 100000;
    nt_membuf out;
    nt_writer *w = rec_writer(&out, &o);
    nt_writer_event h = { .thread_id = 9, .timestamp = 1042 };
    cr_assert_eq(nt_writer_sample(w, &h, NT_SAMPLE_MANAGED), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    cr_expect_arr_eq(out.data, "Nettrace\0\0\0\0\x06\0\0\0\x03\0\0\0", 20);
    cr_expect_arr_eq(out.data + out.len - 4, "\0\0\0\0", 4, "EndOfStream block");
    rec r;
    cr_assert_eq(rec_parse(&r, out.data, out.len, 0), NT_OK, "%s", r.msg);
    cr_expect_eq(r.info.format_major, 6);
    cr_expect_eq(r.info.format_minor, 3);
    cr_expect_eq(r.info.pointer_size, 8);
    cr_expect_eq(r.info.process_id, 31337);
    cr_expect_eq(r.info.processor_count, 64);
    cr_expect_eq(r.info.sampling_interval_ns, 100000);
    cr_expect_eq(r.info.sync_qpc, 42);
    cr_expect_eq(r.info.qpc_frequency, 1000);
    cr_expect_eq(r.info.sync_time_utc.milliseconds, 999);
    cr_assert_eq(r.nsamples, 1);
    cr_expect_eq(r.samples[0].thread_id, 9, "the OS thread id, not the index");
    cr_expect_eq(r.samples[0].time_ns, 1042000000);
    rec_free(&r);
    nt_membuf_free(&out);
}

/* The same writer calls in V4 and V6 give the same callbacks (bar the header and offsets). */
LTest(v6, same_callbacks_as_v4)
{
    nt_membuf out[2];
    for (int k = 0; k < 2; k++) {
        nt_writer_options o = { 0 };
        nt_writer_options_default(&o);
        o.format = k ? 6 : 4;
        nt_writer *w = rec_writer(&out[k], &o);
        const nt_field f[] = { { "A", NT_TYPE_UINT32, 0, 0 }, { "S", NT_TYPE_OBJECT, 0, 0 },
                               { "B", NT_TYPE_STRING, 0, 1 }, { "Arr", NT_TYPE_ARRAY, NT_TYPE_INT16, 0 } };
        nt_event_desc d = { .provider = "Prov", .event_id = 3, .event_name = "Ev", .keywords = 0x40, .version = 2,
                            .level = 4, .opcode = 9, .field_count = 4, .fields = f };
        uint32_t id;
        cr_assert_eq(nt_writer_define(w, &d, &id), NT_OK, "%s", nt_writer_message(w));
        for (int i = 0; i < 40; i++) {
            uint64_t ips[3] = { 0x100u + (unsigned)i % 3, 0x200, 0x300 };
            uint32_t sid;
            cr_assert_eq(nt_writer_stack(w, ips, 3, &sid), NT_OK);
            uint8_t payload[16];
            memset(payload, i, sizeof payload);
            nt_writer_event e = { .metadata_id = id, .thread_id = 100 + (uint64_t)i % 4,
                                  .capture_thread_id = i % 3 ? 200 : 0, .processor_number = (uint32_t)i % 2,
                                  .stack_id = i % 5 ? sid : 0, .timestamp = 1000 - i * (i % 2 ? 1 : -1),
                                  .is_sorted = i % 7 == 0, .payload = payload, .payload_size = (uint32_t)i % 17 };
            cr_assert_eq(nt_writer_write_event(w, &e), NT_OK, "%s", nt_writer_message(w));
            if (i % 13 == 12)
                cr_assert_eq(nt_writer_sequence_point(w, 5000 + i, 0), NT_OK);
        }
        cr_assert_eq(nt_writer_finish(w), NT_OK);
        nt_writer_free(w);
    }
    rec a, b;
    cr_assert_eq(rec_parse(&a, out[0].data, out[0].len, 0), NT_OK, "%s", a.msg);
    cr_assert_eq(rec_parse(&b, out[1].data, out[1].len, 5), NT_OK, "%s", b.msg);
    cr_assert_eq(a.nmeta, 1);
    cr_assert_eq(b.nmeta, 1);
    const nt_event_desc *x = &a.meta[0].d, *y = &b.meta[0].d;
    cr_expect_str_eq(x->provider, y->provider);
    cr_expect_str_eq(x->event_name, y->event_name);
    cr_expect_eq(x->keywords, y->keywords);
    cr_expect_eq(x->version, y->version);
    cr_expect_eq(x->level, y->level);
    cr_expect_eq(x->opcode, y->opcode);
    cr_assert_eq(x->field_count, 4);
    cr_assert_eq(y->field_count, 4);
    for (int i = 0; i < 4; i++) {
        cr_expect_str_eq(x->fields[i].name, y->fields[i].name);
        cr_expect_eq(x->fields[i].type, y->fields[i].type);
        cr_expect_eq(x->fields[i].element_type, y->fields[i].element_type);
        cr_expect_eq(x->fields[i].depth, y->fields[i].depth);
    }
    cr_assert_eq(a.nev, 40);
    cr_assert_eq(b.nev, 40);
    for (int i = 0; i < 40; i++) {
        nt_event e1 = a.ev[i].ev, e2 = b.ev[i].ev;
        cr_expect_eq(e1.metadata_id, e2.metadata_id);
        cr_expect_eq(e1.sequence_number, e2.sequence_number);
        cr_expect_eq(e1.thread_id, e2.thread_id);
        cr_expect_eq(e1.capture_thread_id, e2.capture_thread_id);
        cr_expect_eq(e1.processor_number, e2.processor_number);
        cr_expect_eq(e1.stack_id, e2.stack_id);
        cr_expect_eq(e1.timestamp, e2.timestamp);
        cr_expect_eq(e1.is_sorted, e2.is_sorted);
        cr_assert_eq(e1.payload_size, e2.payload_size);
        cr_expect_arr_eq(a.ev[i].payload, b.ev[i].payload, e1.payload_size);
        cr_assert_eq(a.ev[i].stack_count, b.ev[i].stack_count);
        if (a.ev[i].stack_count != UINT32_MAX)
            cr_expect_arr_eq(a.ev[i].stack_ips, b.ev[i].stack_ips, a.ev[i].stack_count * 8);
    }
    cr_assert_eq(a.nsps, b.nsps);
    for (size_t i = 0; i < a.nsps; i++) {
        cr_expect_eq(a.sps[i].sp.timestamp, b.sps[i].sp.timestamp);
        cr_assert_eq(a.sps[i].sp.thread_count, b.sps[i].sp.thread_count);
    }
    cr_expect_eq(a.stats.stacks, b.stats.stacks);
    cr_expect_eq(a.stats.events_dropped, 0);
    cr_expect_eq(b.stats.events_dropped, 0);
    rec_free(&a);
    rec_free(&b);
    nt_membuf_free(&out[0]);
    nt_membuf_free(&out[1]);
}

LTest(v6, label_lists_override_version_and_carry_activity_ids)
{
    nt_writer_options o = v6(8, false);
    nt_membuf out;
    nt_writer *w = rec_writer(&out, &o);
    /* A MethodLoadVerbose whose metadata says version 1 but whose label list says 2:
     * the V2 template (with ReJITID) must decode the payload. */
    nt_event_desc d = { .provider = NT_PROVIDER_RUNTIME, .event_id = 143, .event_name = "", .version = 1, .level = 4 };
    uint32_t id;
    cr_assert_eq(nt_writer_define(w, &d, &id), NT_OK);
    nt_label labels[4];
    memset(labels, 0, sizeof labels);
    labels[0].kind = NT_LABEL_ACTIVITY_ID;
    memset(labels[0].guid, 0xAB, 16);
    labels[1].kind = NT_LABEL_STRING;
    labels[1].key = "request";
    labels[1].text = "GET /";
    labels[2].kind = NT_LABEL_VERSION;
    labels[2].value = 2;
    labels[3].kind = NT_LABEL_INT;
    labels[3].key = "n";
    labels[3].value = (uint64_t)-5;
    uint32_t ll;
    cr_assert_eq(nt_writer_label_list(w, labels, 4, &ll), NT_OK, "%s", nt_writer_message(w));
    nt_label rel = { .kind = NT_LABEL_RELATED_ACTIVITY_ID };
    memset(rel.guid, 0xCD, 16);
    uint32_t ll2;
    cr_assert_eq(nt_writer_label_list(w, &rel, 1, &ll2), NT_OK);
    cr_expect_eq(ll, 1);
    cr_expect_eq(ll2, 2);
    /* payload: the V2 MethodLoadVerbose layout */
    uint8_t pl[128];
    size_t n = 0;
    const uint64_t q[3] = { 0x1111, 0x2222, 0x3333 };
    memcpy(pl + n, q, 24);
    n += 24;
    const uint32_t dw[3] = { 77, 0x06000001, 8 };
    memcpy(pl + n, dw, 12);
    n += 12;
    const char *strs[3] = { "T", "M", "S" };
    for (int i = 0; i < 3; i++) {
        pl[n++] = (uint8_t)strs[i][0];
        pl[n++] = 0;
        pl[n++] = 0;
        pl[n++] = 0;
    }
    pl[n++] = 6; /* ClrInstanceID */
    pl[n++] = 0;
    const uint64_t rejit = 0x5555;
    memcpy(pl + n, &rejit, 8);
    n += 8;
    nt_writer_event e = { .metadata_id = id, .thread_id = 5, .timestamp = 10, .label_list_id = ll,
                          .payload = pl, .payload_size = (uint32_t)n };
    cr_assert_eq(nt_writer_write_event(w, &e), NT_OK, "%s", nt_writer_message(w));
    e.label_list_id = ll2;
    e.payload_size = (uint32_t)n - 8; /* version 1 from the metadata: no ReJITID */
    cr_assert_eq(nt_writer_write_event(w, &e), NT_OK);
    cr_assert_eq(nt_writer_sequence_point(w, 20, 0), NT_OK);
    e.label_list_id = ll; /* label lists end at a sequence point */
    cr_expect_eq(nt_writer_write_event(w, &e), NT_ERR_INVALID_ARG);
    nt_writer_free(w);
    nt_membuf_free(&out);

    w = rec_writer(&out, &o);
    cr_assert_eq(nt_writer_define(w, &d, &id), NT_OK);
    cr_assert_eq(nt_writer_label_list(w, labels, 4, &ll), NT_OK);
    cr_assert_eq(nt_writer_label_list(w, &rel, 1, &ll2), NT_OK);
    e.metadata_id = id;
    e.label_list_id = ll;
    e.payload_size = (uint32_t)n;
    cr_assert_eq(nt_writer_write_event(w, &e), NT_OK);
    e.label_list_id = ll2;
    e.payload_size = (uint32_t)n - 8;
    cr_assert_eq(nt_writer_write_event(w, &e), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);

    rec r;
    cr_assert_eq(rec_parse(&r, out.data, out.len, 3), NT_OK, "%s", r.msg);
    cr_assert_eq(r.nmethods, 2);
    cr_expect_eq(r.methods[0].version, 2);
    cr_expect_eq(r.methods[0].rejit_id, 0x5555);
    cr_expect_eq(r.methods[0].clr_instance_id, 6);
    cr_expect_str_eq(r.methods[0].name, "M");
    cr_expect_eq(r.methods[1].version, 1);
    cr_expect_eq(r.methods[1].rejit_id, 0);
    cr_assert_eq(r.nev, 2);
    uint8_t ab[16], cd[16], zero[16] = { 0 };
    memset(ab, 0xAB, 16);
    memset(cd, 0xCD, 16);
    cr_expect_arr_eq(r.ev[0].ev.activity_id, ab, 16);
    cr_expect_arr_eq(r.ev[0].ev.related_activity_id, zero, 16);
    cr_expect_eq(r.ev[0].desc_version, 2, "the event callback sees the overridden description");
    cr_expect_arr_eq(r.ev[1].ev.activity_id, zero, 16);
    cr_expect_arr_eq(r.ev[1].ev.related_activity_id, cd, 16);
    cr_expect_eq(r.ev[1].desc_version, 1);
    cr_expect_eq(r.meta[0].d.version, 1, "the metadata itself is unchanged");
    rec_free(&r);
    nt_membuf_free(&out);
}

LTest(v6, threads_remove_and_flushes)
{
    nt_writer_options o = v6(8, false);
    nt_membuf out;
    nt_writer *w = rec_writer(&out, &o);
    nt_writer_event h = { .thread_id = 0xDEADBEEF01ull, .capture_thread_id = 0xDEADBEEF01ull, .timestamp = 1 };
    cr_assert_eq(nt_writer_sample(w, &h, 2), NT_OK);
    h.thread_id = 0xDEADBEEF02ull;
    h.capture_thread_id = 0xDEADBEEF02ull;
    h.timestamp = 2;
    cr_assert_eq(nt_writer_sample(w, &h, 2), NT_OK);
    cr_assert_eq(nt_writer_remove_thread(w, 0xDEADBEEF01ull), NT_OK);
    cr_assert_eq(nt_writer_sequence_point(w, 3, NT_SP_FLUSH_THREADS), NT_OK);
    /* both threads again, under new indexes */
    h.timestamp = 4;
    cr_assert_eq(nt_writer_sample(w, &h, 1), NT_OK);
    h.thread_id = h.capture_thread_id = 0xDEADBEEF01ull;
    cr_assert_eq(nt_writer_sample(w, &h, 1), NT_OK);
    /* metadata flush: the sample profiler metadata is defined again under id 1 */
    cr_assert_eq(nt_writer_sequence_point(w, 5, NT_SP_FLUSH_METADATA), NT_OK);
    h.timestamp = 6;
    cr_assert_eq(nt_writer_sample(w, &h, 0), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);

    rec r;
    cr_assert_eq(rec_parse(&r, out.data, out.len, 0), NT_OK, "%s", r.msg);
    cr_assert_eq(r.nsamples, 5);
    const uint64_t tids[5] = { 0xDEADBEEF01ull, 0xDEADBEEF02ull, 0xDEADBEEF02ull, 0xDEADBEEF01ull, 0xDEADBEEF01ull };
    for (int i = 0; i < 5; i++)
        cr_expect_eq(r.samples[i].thread_id, tids[i], "sample %d", i);
    cr_assert_eq(r.nmeta, 2, "defined again after the metadata flush");
    cr_expect_eq(r.meta[0].d.metadata_id, r.meta[1].d.metadata_id);
    cr_assert_eq(r.nsps, 2);
    cr_expect_eq(r.sps[0].sp.flags, NT_SP_FLUSH_THREADS);
    cr_expect_eq(r.sps[0].sp.thread_count, 1, "the removed thread is not listed");
    cr_expect_eq(r.sps[0].threads[0].capture_thread_id, 0xDEADBEEF02ull);
    cr_expect_eq(r.sps[1].sp.flags, NT_SP_FLUSH_METADATA);
    cr_expect_eq(r.sps[1].sp.thread_count, 2);
    cr_expect_eq(r.stats.events_dropped, 0);
    rec_free(&r);
    nt_membuf_free(&out);
}

LTest(v6, drops_from_sequence_numbers)
{
    nt_writer_options o = v6(8, false);
    nt_membuf out;
    nt_writer *w = rec_writer(&out, &o);
    nt_writer_event h = { .thread_id = 1, .timestamp = 1 };
    cr_assert_eq(nt_writer_sample(w, &h, 2), NT_OK);
    h.sequence_number = 4;
    cr_assert_eq(nt_writer_sample(w, &h, 2), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    rec r;
    cr_assert_eq(rec_parse(&r, out.data, out.len, 0), NT_OK, "%s", r.msg);
    cr_expect_eq(r.stats.events_dropped, 2);
    rec_free(&r);
    nt_membuf_free(&out);
}

/* A small V6 stream, then copies with an unknown block inserted after the Trace block. */
static void small_v6(nt_membuf *out, bool uncompressed)
{
    nt_writer_options o = v6(8, uncompressed);
    nt_writer *w = rec_writer(out, &o);
    uint64_t ips[2] = { 0xA, 0xB };
    uint32_t sid;
    cr_assert_eq(nt_writer_stack(w, ips, 2, &sid), NT_OK);
    nt_writer_event h = { .thread_id = 7, .timestamp = 100, .stack_id = sid };
    cr_assert_eq(nt_writer_sample(w, &h, 2), NT_OK);
    nt_module m = { .which = NT_RECORD_DC_END, .version = 2, .module_id = 1, .il_path = "a.dll", .native_path = "" };
    cr_assert_eq(nt_writer_module(w, &h, &m), NT_OK);
    cr_assert_eq(nt_writer_sequence_point(w, 200, 0), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
}

LTest(v6, unknown_kinds_are_skipped_in_any_chunking)
{
    nt_membuf out;
    small_v6(&out, false);
    ts_digest ref;
    ts_digest_init(&ref);
    cr_assert_eq(ts_digest_feed(out.data, out.len, NULL, 0, NULL, &ref, NULL), NT_OK);
    cr_expect_eq(ref.samples, 1);
    cr_expect_eq(ref.modules, 1);
    uint32_t trace_hdr;
    memcpy(&trace_hdr, out.data + 20, 4);
    size_t after_trace = 24 + (trace_hdr & 0xFFFFFF);
    for (uint32_t extra = 0; extra < 6; extra++) {
        size_t n = out.len + 4 + extra;
        uint8_t *s = malloc(n);
        memcpy(s, out.data, after_trace);
        uint32_t hdr = extra | (200u << 24);
        memcpy(s + after_trace, &hdr, 4);
        memset(s + after_trace + 4, 0xEE, extra);
        memcpy(s + after_trace + 4 + extra, out.data + after_trace, out.len - after_trace);
        for (size_t c = 1; c <= 5; c++) {
            ts_digest d;
            ts_digest_init(&d);
            cr_expect_eq(ts_digest_feed(s, n, &c, 1, NULL, &d, NULL), NT_OK);
            cr_expect_eq(d.samples, 1);
            cr_expect_eq(d.modules, 1);
        }
        rec r;
        rec_parse(&r, s, n, 0);
        cr_expect_eq(r.stats.unknown_blocks, 1);
        rec_free(&r);
        free(s);
    }
    nt_membuf_free(&out);
}

LTest(v6, every_chunking_and_truncation)
{
    for (int unc = 0; unc < 2; unc++) {
        nt_membuf out;
        small_v6(&out, unc);
        ts_digest ref;
        ts_digest_init(&ref);
        cr_assert_eq(ts_digest_feed(out.data, out.len, NULL, 0, NULL, &ref, NULL), NT_OK);
        for (size_t c = 1; c <= 9; c++) {
            ts_digest d;
            ts_digest_init(&d);
            cr_expect_eq(ts_digest_feed(out.data, out.len, &c, 1, NULL, &d, NULL), NT_OK);
            cr_expect_eq(d.h, ref.h, "chunk %zu", c);
        }
        for (size_t n = 0; n + 1 < out.len; n++) {
            ts_digest d;
            ts_digest_init(&d);
            nt_status s = ts_digest_feed(out.data, n, NULL, 0, NULL, &d, NULL);
            cr_expect(s == NT_ERR_TRUNCATED || s == NT_ERR_NOT_NETTRACE || s == NT_ERR_NO_EVENTS, "cut at %zu: %s",
                      n, nt_status_name(s));
        }
        nt_membuf_free(&out);
    }
}

/* Hand-made V6 bytes for what the writer never produces. */
typedef struct bb {
    uint8_t d[512];
    size_t n;
} bb;

static void bb_bytes(bb *b, const void *p, size_t n)
{
    memcpy(b->d + b->n, p, n);
    b->n += n;
}
static void bb_u32(bb *b, uint32_t v) { bb_bytes(b, &v, 4); }

static void bb_header_and_trace(bb *b, uint32_t major)
{
    bb_bytes(b, "Nettrace", 8);
    bb_u32(b, 0);
    bb_u32(b, major);
    bb_u32(b, 0);
    bb_u32(b, 40u | 1u << 24);
    uint8_t trace[40] = { 0 };
    trace[24] = 100; /* frequency */
    trace[32] = 8;   /* pointer size */
    bb_bytes(b, trace, 40);
}

LTest(v6, bad_streams_fail_cleanly_with_offsets)
{
    char msg[256];
    /* major 7 (and 5) are refused */
    for (uint32_t major = 5; major <= 7; major += 2) {
        bb b = { .n = 0 };
        bb_header_and_trace(&b, major);
        cr_expect_eq(nt_parse_buffer(b.d, b.n, NULL, NULL, NULL, msg, sizeof msg), NT_ERR_UNSUPPORTED_VERSION);
    }
    /* an event that references a thread index never introduced */
    bb b = { .n = 0 };
    bb_header_and_trace(&b, 6);
    const uint8_t meta[] = { 0, 0,                  /* header size 0 */
                             9, 0, 1, 1, 'P', 1, 0, 0, 0, 0, 0 };
    bb_u32(&b, sizeof meta | 3u << 24);
    bb_bytes(&b, meta, sizeof meta);
    uint8_t ev[20] = { 20, 0, 1, 0 };
    const uint8_t blob[] = { 0x01 | 0x02 | 0x04, 1, 0, 5, 0, 5, 0 };
    bb_u32(&b, (uint32_t)(20 + sizeof blob) | 2u << 24);
    size_t ev_at = b.n;
    bb_bytes(&b, ev, 20);
    bb_bytes(&b, blob, sizeof blob);
    bb_u32(&b, 0);
    cr_expect_eq(nt_parse_buffer(b.d, b.n, NULL, NULL, NULL, msg, sizeof msg), NT_ERR_MALFORMED);
    cr_expect(strstr(msg, "unknown thread index 5") != NULL, "%s", msg);
    char want[32];
    snprintf(want, sizeof want, "at byte %zu", ev_at + 20);
    cr_expect(strstr(msg, want) != NULL, "%s (want %s)", msg, want);

    /* a first block that is not Trace */
    bb c = { .n = 0 };
    bb_bytes(&c, "Nettrace", 8);
    bb_u32(&c, 0);
    bb_u32(&c, 6);
    bb_u32(&c, 0);
    bb_u32(&c, 0u | 2u << 24);
    cr_expect_eq(nt_parse_buffer(c.d, c.n, NULL, NULL, NULL, msg, sizeof msg), NT_ERR_MALFORMED);

    /* an EndOfStream right after the Trace: no events */
    bb e = { .n = 0 };
    bb_header_and_trace(&e, 6);
    bb_u32(&e, 0);
    cr_expect_eq(nt_parse_buffer(e.d, e.n, NULL, NULL, NULL, msg, sizeof msg), NT_ERR_NO_EVENTS);

    /* a Trace block with a bad pointer size */
    bb t = { .n = 0 };
    bb_header_and_trace(&t, 6);
    t.d[20 + 4 + 32] = 3;
    cr_expect_eq(nt_parse_buffer(t.d, t.n, NULL, NULL, NULL, msg, sizeof msg), NT_ERR_MALFORMED);
    cr_expect(strstr(msg, "pointer size 3") != NULL, "%s", msg);

    /* a block larger than max_block_bytes */
    bb l = { .n = 0 };
    bb_header_and_trace(&l, 6);
    bb_u32(&l, 0xFFFFFFu | 2u << 24);
    nt_limits lim = { .max_block_bytes = 1024 };
    cr_expect_eq(nt_parse_buffer(l.d, l.n, NULL, NULL, &lim, msg, sizeof msg), NT_ERR_LIMIT);
}

LTest(v6, writer_refuses_what_v6_cannot_hold)
{
    nt_writer_options o = v6(8, false);
    nt_membuf out;
    nt_writer *w = rec_writer(&out, &o);
    nt_event_desc d = { .provider = "P", .event_id = 1, .version = 300 };
    cr_expect_eq(nt_writer_define(w, &d, NULL), NT_ERR_INVALID_ARG);
    nt_writer_free(w);
    w = rec_writer(&out, &o);
    cr_expect_eq(nt_writer_label_list(w, NULL, 0, NULL), NT_ERR_INVALID_ARG);
    nt_writer_free(w);
    w = rec_writer(&out, &o);
    cr_expect_eq(nt_writer_remove_thread(w, 77), NT_ERR_INVALID_ARG, "never seen");
    nt_writer_free(w);
    nt_membuf_free(&out);
}

/* Mutated V6 streams: every outcome is a clean status (ASan/UBSan watch the rest). */
LTest(v6, mutations_fail_cleanly)
{
    nt_membuf out;
    nt_writer_options o = v6(8, false);
    nt_writer *w = rec_writer(&out, &o);
    nt_label l[3] = { { .kind = NT_LABEL_ACTIVITY_ID }, { .kind = NT_LABEL_VERSION, .value = 1 },
                      { .kind = NT_LABEL_STRING, .key = "a", .text = "b" } };
    uint32_t ll;
    cr_assert_eq(nt_writer_label_list(w, l, 3, &ll), NT_OK);
    const nt_field f[] = { { "O", NT_TYPE_OBJECT, 0, 0 }, { "A", NT_TYPE_ARRAY, NT_TYPE_OBJECT, 1 },
                           { "X", NT_TYPE_VARINT, 0, 2 }, { "F", NT_TYPE_FIXED_ARRAY, NT_TYPE_UINT16, 1 } };
    nt_event_desc d = { .provider = "P", .event_id = 2, .event_name = "E", .field_count = 4, .fields = f,
                        .version = 1, .opcode = 3, .keywords = 5, .level = 2 };
    uint32_t id;
    cr_assert_eq(nt_writer_define(w, &d, &id), NT_OK, "%s", nt_writer_message(w));
    uint64_t ips[2] = { 1, 2 };
    uint32_t sid;
    cr_assert_eq(nt_writer_stack(w, ips, 2, &sid), NT_OK);
    for (int i = 0; i < 4; i++) {
        nt_writer_event e = { .metadata_id = id, .thread_id = 1 + (uint64_t)i % 2, .timestamp = i, .stack_id = sid,
                              .label_list_id = i % 2 ? ll : 0, .payload = "abcd", .payload_size = 4 };
        cr_assert_eq(nt_writer_write_event(w, &e), NT_OK);
    }
    nt_module m = { .which = NT_RECORD_LOAD, .version = 2, .il_path = "x", .native_path = "y" };
    cr_assert_eq(nt_writer_module(w, NULL, &m), NT_OK);
    cr_assert_eq(nt_writer_remove_thread(w, 2), NT_OK);
    cr_assert_eq(nt_writer_sequence_point(w, 9, 3), NT_OK);
    nt_writer_event h = { .thread_id = 1, .timestamp = 10 };
    cr_assert_eq(nt_writer_sample(w, &h, 1), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);

    uint8_t *buf = malloc(out.len);
    uint64_t x = 88172645463325252ull;
    size_t bad = 0;
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(buf, out.data, out.len);
        int edits = 1 + iter % 4;
        for (int k = 0; k < edits; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            size_t at = 20 + (size_t)(x % (out.len - 20)); /* keep the version header */
            buf[at] = (uint8_t)(x >> 32) & (iter % 3 ? 0xFF : 0x80 | 0x7F);
        }
        size_t len = iter % 5 == 0 ? (size_t)(x % out.len) : out.len;
        nt_status s = nt_parse_buffer(buf, len, NULL, NULL, NULL, NULL, 0);
        bool ok = s == NT_OK || s == NT_ERR_MALFORMED || s == NT_ERR_TRUNCATED || s == NT_ERR_NO_EVENTS ||
                  s == NT_ERR_LIMIT || (s == NT_ERR_NOT_NETTRACE && len < 8);
        if (!ok)
            cr_log_warn("mutation %d: %s", iter, nt_status_name(s));
        bad += !ok;
    }
    cr_expect_eq(bad, 0);
    free(buf);
    nt_membuf_free(&out);
}

/* Random writer call sequences, written as V4 and as V6 (random options, read
 * in random chunks), give the same callbacks: a consumer cannot tell which
 * version it read except from the header. */
static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void random_calls(nt_writer *w, uint64_t seed, uint32_t ptr)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    const nt_field f[] = { { "a", NT_TYPE_INT32, 0, 0 }, { "o", NT_TYPE_OBJECT, 0, 0 }, { "s", NT_TYPE_STRING, 0, 1 },
                           { "arr", NT_TYPE_ARRAY, NT_TYPE_DOUBLE, 0 } };
    uint32_t ids[8], nids = 0, nstacks = 0;
    int64_t ts = (int64_t)(rnd(&x) % 1000000);
    uint8_t payload[300];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)rnd(&x);
    int ops = 50 + (int)(rnd(&x) % 400);
    for (int op = 0; op < ops; op++) {
        uint32_t r = (uint32_t)(rnd(&x) % 100);
        nt_writer_event h = { .thread_id = 1000 + rnd(&x) % 6, .timestamp = ts + (int64_t)(rnd(&x) % 50) - 10,
                              .processor_number = (uint32_t)(rnd(&x) % 4) };
        if (rnd(&x) % 3 == 0)
            h.capture_thread_id = 7 + rnd(&x) % 2;
        if (nstacks && rnd(&x) % 2)
            h.stack_id = 1 + (uint32_t)(rnd(&x) % nstacks);
        if (rnd(&x) % 7 == 0)
            memset(h.activity_id, (int)(rnd(&x) % 3), 16);
        if (rnd(&x) % 11 == 0)
            memset(h.related_activity_id, 0x5A, 16);
        h.is_sorted = rnd(&x) % 5 == 0;
        ts += (int64_t)(rnd(&x) % 20);
        nt_status s = NT_OK;
        if (r < 5 && nids < 8) {
            nt_event_desc d = { .provider = "Rand", .event_id = nids, .event_name = "E", .version = nids % 3,
                                .opcode = nids % 2 ? 7 : 0, .keywords = nids, .level = 5,
                                .field_count = nids % 2 ? 4 : 0, .fields = f };
            s = nt_writer_define(w, &d, &ids[nids++]);
        } else if (r < 15) {
            uint64_t ips[12];
            uint32_t n = (uint32_t)(rnd(&x) % 12);
            for (uint32_t k = 0; k < n; k++)
                ips[k] = rnd(&x) % (ptr == 4 ? 0xFFFFFFFFull : UINT64_MAX);
            uint32_t sid;
            s = nt_writer_stack(w, ips, n, &sid);
            if (sid > nstacks)
                nstacks = sid;
        } else if (r < 40 && nids) {
            h.metadata_id = ids[rnd(&x) % nids];
            h.payload = payload;
            h.payload_size = (uint32_t)(rnd(&x) % sizeof payload);
            if (rnd(&x) % 10 == 0)
                h.sequence_number = (uint32_t)(rnd(&x) % 1000) + 1;
            s = nt_writer_write_event(w, &h);
        } else if (r < 70) {
            s = nt_writer_sample(w, &h, (uint32_t)(rnd(&x) % 4));
        } else if (r < 78) {
            nt_method m = { .which = (nt_record_event)(rnd(&x) % 4), .version = (uint32_t)(rnd(&x) % 3),
                            .method_id = rnd(&x), .module_id = rnd(&x), .start_address = rnd(&x),
                            .size = (uint32_t)rnd(&x), .token = (uint32_t)rnd(&x), .flags = (uint32_t)rnd(&x),
                            .declaring_type = "T\xc3\xbc", .name = "", .signature = "sig" };
            m.clr_instance_id = m.version ? 3 : 0;
            m.rejit_id = m.version == 2 ? 9 : 0;
            m.timestamp = h.timestamp;
            s = nt_writer_method(w, rnd(&x) % 2 ? &h : NULL, &m);
        } else if (r < 84) {
            nt_module m = { .which = (nt_record_event)(rnd(&x) % 4), .version = (uint32_t)(rnd(&x) % 3),
                            .module_id = rnd(&x), .assembly_id = rnd(&x), .flags = 1, .il_path = "a",
                            .native_path = "b", .timestamp = h.timestamp };
            m.domain = m.which != NT_RECORD_UNLOAD && rnd(&x) % 2;
            m.app_domain_id = m.domain ? 5 : 0;
            m.clr_instance_id = m.version ? 2 : 0;
            s = nt_writer_module(w, &h, &m);
        } else if (r < 90) {
            nt_assembly a = { .which = (nt_record_event)(rnd(&x) % 4), .version = (uint32_t)(rnd(&x) % 2),
                              .assembly_id = rnd(&x), .app_domain_id = 1, .flags = 2, .name = "n",
                              .timestamp = h.timestamp };
            a.binding_id = a.version ? 4 : 0;
            a.clr_instance_id = a.version ? 1 : 0;
            s = nt_writer_assembly(w, NULL, &a);
        } else if (r < 94) {
            s = nt_writer_sequence_point(w, ts, 0);
            nstacks = 0;
        } else {
            s = nt_writer_flush(w);
        }
        if (s != NT_OK)
            cr_assert_fail("seed %llu op %d: %s", (unsigned long long)seed, op, nt_writer_message(w));
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK);
}

LTest(v6, random_call_sequences_read_the_same_in_v4_and_v6)
{
    for (uint64_t seed = 1; seed <= 40; seed++) {
        uint64_t x = seed * 7919;
        nt_writer_options o[2] = { 0 };
        nt_membuf out[2];
        rec r[2];
        for (int k = 0; k < 2; k++) {
            nt_writer_options_default(&o[k]);
            o[k].format = k ? 6 : 4;
            o[k].pointer_size = seed % 2 ? 4 : 8;
            o[k].uncompressed = rnd(&x) % 3 == 0;
            o[k].block_bytes = (uint32_t)(64 + rnd(&x) % 20000);
            o[k].qpc_frequency = seed % 3 ? 1000000000 : 3579545;
            o[k].process_id = (uint32_t)seed;
            nt_writer *w = rec_writer(&out[k], &o[k]);
            random_calls(w, seed, o[k].pointer_size);
            nt_writer_free(w);
            rec_parse(&r[k], out[k].data, out[k].len, (size_t)(rnd(&x) % 300));
            cr_assert_eq(r[k].status, NT_OK, "seed %llu V%u: %s", (unsigned long long)seed, o[k].format, r[k].msg);
        }
        cr_expect_eq(r[0].info.format_major, 4);
        cr_expect_eq(r[1].info.format_major, 6);
        const char *what = NULL;
        size_t d = rec_compare(&r[0], &r[1], &what);
        cr_expect_eq(d, 0, "seed %llu: %zu differences, first in %s", (unsigned long long)seed, d, what ? what : "");
        for (int k = 0; k < 2; k++) {
            rec_free(&r[k]);
            nt_membuf_free(&out[k]);
        }
    }
}

LTest(v6, thread_and_label_tables_obey_the_limits)
{
    nt_writer_options o = v6(8, false);
    nt_membuf out;
    nt_writer *w = rec_writer(&out, &o);
    for (uint64_t t = 0; t < 100; t++) {
        nt_writer_event h = { .thread_id = 5000 + t, .timestamp = (int64_t)t };
        cr_assert_eq(nt_writer_sample(w, &h, 2), NT_OK);
    }
    for (uint32_t i = 0; i < 40; i++) {
        nt_label l = { .kind = NT_LABEL_SPAN_ID, .value = i };
        cr_assert_eq(nt_writer_label_list(w, &l, 1, NULL), NT_OK);
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    char msg[256];
    cr_expect_eq(nt_parse_buffer(out.data, out.len, NULL, NULL, NULL, msg, sizeof msg), NT_OK, "%s", msg);
    nt_limits lim = { .max_threads = 50 };
    cr_expect_eq(nt_parse_buffer(out.data, out.len, NULL, NULL, &lim, msg, sizeof msg), NT_ERR_LIMIT);
    cr_expect(strstr(msg, "max_threads") != NULL, "%s", msg);
    nt_limits lim2 = { .max_stacks = 30 };
    cr_expect_eq(nt_parse_buffer(out.data, out.len, NULL, NULL, &lim2, msg, sizeof msg), NT_ERR_LIMIT);
    cr_expect(strstr(msg, "label lists") != NULL, "%s", msg);
    nt_membuf_free(&out);
}

LTest(v6, field_types_round_trip)
{
    const nt_field f[] = { { "v", NT_TYPE_VARINT, 0, 0 },           { "u", NT_TYPE_VARUINT, 0, 0 },
                           { "c", NT_TYPE_UTF8_CHAR, 0, 0 },        { "b", NT_TYPE_BOOLEAN8, 0, 0 },
                           { "rl", NT_TYPE_RELLOC, NT_TYPE_OBJECT, 0 }, { "x", NT_TYPE_BYTE, 0, 1 },
                           { "dl", NT_TYPE_DATALOC, NT_TYPE_INT16, 0 }, { "fa", NT_TYPE_FIXED_ARRAY, NT_TYPE_GUID, 0 },
                           { "arr", NT_TYPE_ARRAY, NT_TYPE_OBJECT, 0 }, { "o", NT_TYPE_OBJECT, 0, 1 },
                           { "deep", NT_TYPE_STRING, 0, 2 },        { "last", NT_TYPE_BOOLEAN32, 0, 0 } };
    nt_event_desc d = { .provider = "Types", .event_id = 1, .event_name = "T", .field_count = 12, .fields = f };
    nt_writer_options o = v6(8, false);
    nt_membuf out;
    nt_writer *w = rec_writer(&out, &o);
    uint32_t id;
    cr_assert_eq(nt_writer_define(w, &d, &id), NT_OK, "%s", nt_writer_message(w));
    nt_writer_event e = { .metadata_id = id, .thread_id = 1 };
    cr_assert_eq(nt_writer_write_event(w, &e), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    rec r;
    cr_assert_eq(rec_parse(&r, out.data, out.len, 1), NT_OK, "%s", r.msg);
    cr_assert_eq(r.nmeta, 1);
    cr_assert_eq(r.meta[0].d.field_count, 12);
    for (int i = 0; i < 12; i++) {
        cr_expect_str_eq(r.meta[0].d.fields[i].name, f[i].name);
        cr_expect_eq(r.meta[0].d.fields[i].type, f[i].type, "%s", f[i].name);
        cr_expect_eq(r.meta[0].d.fields[i].element_type, f[i].element_type, "%s", f[i].name);
        cr_expect_eq(r.meta[0].d.fields[i].depth, f[i].depth, "%s", f[i].name);
    }
    rec_free(&r);
    nt_membuf_free(&out);

    /* V6-only types in V4, and arrays of arrays anywhere, are refused */
    nt_writer_options o4 = v6(8, false);
    o4.format = 4;
    w = rec_writer(&out, &o4);
    cr_expect_eq(nt_writer_define(w, &d, NULL), NT_ERR_INVALID_ARG);
    nt_writer_free(w);
    const nt_field aa[] = { { "aa", NT_TYPE_ARRAY, NT_TYPE_ARRAY, 0 } };
    nt_event_desc d2 = { .provider = "Types", .event_id = 2, .field_count = 1, .fields = aa };
    w = rec_writer(&out, &o);
    cr_expect_eq(nt_writer_define(w, &d2, NULL), NT_ERR_INVALID_ARG);
    nt_writer_free(w);
    nt_membuf_free(&out);
}
