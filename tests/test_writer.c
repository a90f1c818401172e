/* nt_writer -> nt_parser round trips in every layout (V4/V5 and V6, parameterised), and the V4/V5
 * writer's block buffering and errors (test_v6.c: what only V6 has). */
#include "ltest.h"
#include "support.h"
#include "writer_rec.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

static nt_writer_options opts(uint32_t ptr, bool uncompressed)
{
    nt_writer_options o = { 0 };
    nt_writer_options_default(&o);
    o.pointer_size = ptr;
    o.uncompressed = uncompressed;
    return o;
}

LTest(writer, typed_roundtrip_defaults)
{
    rec_check_typed_roundtrip(NULL);
}

LTest(writer, trace_header_fields)
{
    nt_writer_options o = opts(4, false);
    o.sync_time_utc = (nt_systemtime){ 2026, 11, 0, 29, 10, 58, 7, 123 };
    o.sync_qpc = 123456789;
    o.qpc_frequency = 10000000;
    o.process_id = 4242;
    o.processor_count = 16;
    o.sampling_interval_ns = 250000;
    nt_membuf out;
    nt_writer *w = rec_writer(&out, &o);
    nt_writer_event h = { .thread_id = 1, .timestamp = 123456799 };
    cr_assert_eq(nt_writer_sample(w, &h, NT_SAMPLE_MANAGED), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    /* The runtime's layout: Trace object payload at 53, first block at 102. */
    cr_expect_eq(out.data[101], 0x06);
    cr_expect_eq(out.data[102], 0x05);
    cr_expect_eq(out.data[out.len - 1], 0x01);
    rec r;
    cr_assert_eq(rec_parse(&r, out.data, out.len, 0), NT_OK, "%s", r.msg);
    cr_expect_eq(r.info.format_major, 4);
    cr_expect_eq(r.info.object_version, 4);
    cr_expect_eq(r.info.min_reader_version, 4);
    cr_expect_eq(r.info.sync_time_utc.year, 2026);
    cr_expect_eq(r.info.sync_time_utc.milliseconds, 123);
    cr_expect_eq(r.info.sync_qpc, 123456789);
    cr_expect_eq(r.info.qpc_frequency, 10000000);
    cr_expect_eq(r.info.pointer_size, 4);
    cr_expect_eq(r.info.process_id, 4242);
    cr_expect_eq(r.info.processor_count, 16);
    cr_expect_eq(r.info.sampling_interval_ns, 250000);
    cr_assert_eq(r.nsamples, 1);
    cr_expect_eq(r.samples[0].time_ns, 12345679900);
    rec_free(&r);
    nt_membuf_free(&out);
}

/* Every layout the writer writes, for the round trips that hold in all of them: V4 and V6, 64- and
 * 32-bit stack IPs, compressed and uncompressed event headers. */
typedef struct layout {
    uint32_t format, pointer_size;
    bool uncompressed;
} layout;

static const layout LAYOUTS[] = {
    { 4, 8, false }, { 4, 8, true }, { 4, 4, false }, { 4, 4, true },
    { 6, 8, false }, { 6, 8, true }, { 6, 4, false }, { 6, 4, true },
};

static nt_writer_options layout_options(const layout *l)
{
    nt_writer_options o = opts(l->pointer_size, l->uncompressed);
    o.format = l->format;
    return o;
}

/* User metadata with nested and array fields, V5 opcode tag, every header field. */
static void raw_roundtrip(const layout *l)
{
    nt_writer_options o = layout_options(l);
    nt_membuf out;
    nt_writer *w = rec_writer(&out, &o);
    const nt_field flat[] = { { "Count", NT_TYPE_INT32, 0, 0 }, { "Name", NT_TYPE_STRING, 0, 0 },
                              { "Point", NT_TYPE_OBJECT, 0, 0 }, { "X", NT_TYPE_DOUBLE, 0, 1 },
                              { "Y", NT_TYPE_DOUBLE, 0, 1 }, { "Tail", NT_TYPE_GUID, 0, 0 } };
    const nt_field arr[] = { { "Bytes", NT_TYPE_ARRAY, NT_TYPE_BYTE, 0 },
                             { "Items", NT_TYPE_ARRAY, NT_TYPE_OBJECT, 0 },
                             { "Key", NT_TYPE_STRING, 0, 1 },
                             { "Val", NT_TYPE_INT64, 0, 1 },
                             { "After", NT_TYPE_UINT16, 0, 0 } };
    nt_event_desc d1 = { .provider = "My-Provider", .event_id = 7, .event_name = "Flat", .keywords = 0xF00,
                         .version = 3, .level = 5, .opcode = 11, .field_count = 6, .fields = flat };
    nt_event_desc d2 = { .metadata_id = 40, .provider = "My-Provider", .event_id = 8, .event_name = "Arrays",
                         .level = 2, .field_count = 5, .fields = arr };
    uint32_t id1 = 0, id2 = 0, id3 = 0;
    cr_assert_eq(nt_writer_define(w, &d1, &id1), NT_OK, "%s", nt_writer_message(w));
    cr_assert_eq(nt_writer_define(w, &d2, &id2), NT_OK, "%s", nt_writer_message(w));
    nt_event_desc d3 = { .provider = "Other", .event_id = 1 };
    cr_assert_eq(nt_writer_define(w, &d3, &id3), NT_OK);
    cr_expect_eq(id1, 1);
    cr_expect_eq(id2, 40);
    cr_expect_eq(id3, 41);
    uint64_t ips[2] = { 1, 2 };
    uint32_t sid, sid_again, sid_empty;
    cr_assert_eq(nt_writer_stack(w, ips, 2, &sid), NT_OK);
    cr_assert_eq(nt_writer_stack(w, NULL, 0, &sid_empty), NT_OK);
    cr_assert_eq(nt_writer_stack(w, ips, 2, &sid_again), NT_OK);
    cr_expect_eq(sid, sid_again, "identical stacks share an id");
    cr_expect_neq(sid, sid_empty);

    enum { N = 50 };
    nt_writer_event ev[N];
    uint8_t payloads[N][40];
    for (int i = 0; i < N; i++) {
        nt_writer_event *e = &ev[i];
        memset(e, 0, sizeof *e);
        e->metadata_id = i % 3 == 0 ? id1 : i % 3 == 1 ? id2 : id3;
        e->thread_id = 0x100000000ull + (uint64_t)(i % 4);
        e->capture_thread_id = i % 5 == 0 ? 0 : 0x200 + (uint64_t)(i % 2);
        e->processor_number = (uint32_t)i % 7;
        e->stack_id = i % 4 == 0 ? 0 : i % 4 == 1 ? sid : sid_empty;
        e->timestamp = 1000 + (i % 2 ? -i : i) * 3; /* goes backwards across threads */
        if (i % 6 == 2)
            memset(e->activity_id, i, 16);
        if (i % 10 == 3)
            memset(e->related_activity_id, 0xA0 + i, 16);
        e->is_sorted = i % 8 == 0;
        for (int k = 0; k < 40; k++)
            payloads[i][k] = (uint8_t)(i * 31 + k);
        e->payload = payloads[i];
        e->payload_size = (uint32_t)(i % 9) * 4 + (uint32_t)(i % 3); /* includes 0 and odd sizes */
        cr_assert_eq(nt_writer_write_event(w, e), NT_OK, "%s", nt_writer_message(w));
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);

    for (size_t chunk = 0; chunk < 6; chunk++) {
        rec r;
        cr_assert_eq(rec_parse(&r, out.data, out.len, chunk), NT_OK, "%s", r.msg);
        cr_assert_eq(r.nmeta, 3);
        const nt_event_desc *g = &r.meta[0].d;
        cr_expect_eq(g->metadata_id, 1);
        cr_expect_str_eq(g->provider, "My-Provider");
        cr_expect_str_eq(g->event_name, "Flat");
        cr_expect_eq(g->keywords, 0xF00);
        cr_expect_eq(g->version, 3);
        cr_expect_eq(g->level, 5);
        cr_expect_eq(g->opcode, 11);
        cr_assert_eq(g->field_count, 6);
        for (int i = 0; i < 6; i++) {
            cr_expect_str_eq(g->fields[i].name, flat[i].name);
            cr_expect_eq(g->fields[i].type, flat[i].type);
            cr_expect_eq(g->fields[i].depth, flat[i].depth);
        }
        g = &r.meta[1].d;
        cr_expect_eq(g->metadata_id, 40);
        cr_assert_eq(g->field_count, 5);
        for (int i = 0; i < 5; i++) {
            cr_expect_str_eq(g->fields[i].name, arr[i].name);
            cr_expect_eq(g->fields[i].type, arr[i].type);
            cr_expect_eq(g->fields[i].element_type, arr[i].element_type);
            cr_expect_eq(g->fields[i].depth, arr[i].depth);
        }
        cr_expect_str_eq(r.meta[2].d.event_name, "");
        cr_assert_eq(r.nev, N);
        uint32_t seq[2] = { 0, 0 }, seq_self[4] = { 0 };
        for (int i = 0; i < N; i++) {
            const nt_event *x = &r.ev[i].ev;
            const nt_writer_event *e = &ev[i];
            cr_expect_eq(x->metadata_id, e->metadata_id);
            cr_expect_eq(x->thread_id, e->thread_id);
            uint64_t ct = e->capture_thread_id ? e->capture_thread_id : e->thread_id;
            cr_expect_eq(x->capture_thread_id, ct);
            uint32_t want = e->capture_thread_id ? ++seq[ct & 1] : ++seq_self[e->thread_id & 3];
            cr_expect_eq(x->sequence_number, want, "event %d", i);
            cr_expect_eq(x->processor_number, e->processor_number);
            cr_expect_eq(x->stack_id, e->stack_id);
            cr_expect_eq(r.ev[i].stack_count, e->stack_id == 0 ? UINT32_MAX : e->stack_id == sid ? 2 : 0);
            cr_expect_eq(x->timestamp, e->timestamp);
            cr_expect_arr_eq(x->activity_id, e->activity_id, 16);
            cr_expect_arr_eq(x->related_activity_id, e->related_activity_id, 16);
            cr_expect_eq(x->is_sorted, e->is_sorted);
            cr_assert_eq(x->payload_size, e->payload_size);
            cr_expect_arr_eq(r.ev[i].payload, e->payload, e->payload_size);
        }
        cr_expect_eq(r.stats.events_dropped, 0);
        cr_expect_eq(r.stats.unknown_metadata_refs, 0);
        cr_expect_eq(r.stats.unknown_stack_refs, 0);
        rec_free(&r);
    }
    nt_membuf_free(&out);
}

ParameterizedTestParameters(writer, typed_roundtrip)
{
    return cr_make_param_array(layout, LAYOUTS, sizeof LAYOUTS / sizeof LAYOUTS[0]);
}

ParameterizedTest(const layout *l, writer, typed_roundtrip)
{
    nt_writer_options o = layout_options(l);
    rec_check_typed_roundtrip(&o);
    cr_assert(!ts_leaks_found(), "LeakSanitizer found a leak in this test (report above)");
}

ParameterizedTestParameters(writer, raw_events)
{
    return cr_make_param_array(layout, LAYOUTS, sizeof LAYOUTS / sizeof LAYOUTS[0]);
}

ParameterizedTest(const layout *l, writer, raw_events)
{
    raw_roundtrip(l);
    cr_assert(!ts_leaks_found(), "LeakSanitizer found a leak in this test (report above)");
}

LTest(writer, event_blocks_flush_near_100k_and_take_large_payloads)
{
    nt_membuf out;
    nt_writer *w = rec_writer(&out, NULL);
    nt_event_desc d = { .provider = "Big", .event_id = 1 };
    uint32_t id;
    cr_assert_eq(nt_writer_define(w, &d, &id), NT_OK);
    size_t big = 3u << 20; /* larger than a block: gets a block of its own */
    uint8_t *payload = malloc(big);
    for (size_t i = 0; i < big; i++)
        payload[i] = (uint8_t)(i * 7);
    size_t sizes[] = { 1000, 1000, big, 10, 70000, 70000, 70000, 3 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        nt_writer_event e = { .metadata_id = id, .thread_id = 5, .timestamp = (int64_t)i,
                              .payload = payload, .payload_size = (uint32_t)sizes[i] };
        cr_assert_eq(nt_writer_write_event(w, &e), NT_OK, "%s", nt_writer_message(w));
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    rec r;
    cr_assert_eq(rec_parse(&r, out.data, out.len, 65536), NT_OK, "%s", r.msg);
    cr_assert_eq(r.nev, 8);
    for (size_t i = 0; i < 8; i++) {
        cr_assert_eq(r.ev[i].ev.payload_size, sizes[i]);
        cr_expect_arr_eq(r.ev[i].payload, payload, sizes[i]);
    }
    /* [1000 1000] [big] [10 70000] [70000] [70000 3] */
    cr_expect_geq(r.stats.event_blocks, 4);
    cr_expect_eq(r.stats.metadata_blocks, 1);
    rec_free(&r);
    free(payload);
    nt_membuf_free(&out);
}

LTest(writer, many_threads_and_sequence_points)
{
    nt_membuf out;
    nt_writer_options o = opts(4, false);
    o.block_bytes = 4096; /* many small blocks */
    nt_writer *w = rec_writer(&out, &o);
    enum { THREADS = 3000, ROUNDS = 3 };
    for (int round = 0; round < ROUNDS; round++) {
        uint64_t ips[2] = { 0x1000u + (unsigned)round, 0x2000 };
        uint32_t sid;
        cr_assert_eq(nt_writer_stack(w, ips, 2, &sid), NT_OK);
        cr_expect_eq(sid, 1, "stack ids restart after a sequence point");
        for (uint64_t t = 0; t < THREADS; t++) {
            nt_writer_event h = { .thread_id = 0x7000000000ull + t * 13, .capture_thread_id = 0x7000000000ull + t * 13,
                                  .timestamp = round * 100000 + (int64_t)t, .stack_id = sid };
            if (nt_writer_sample(w, &h, NT_SAMPLE_EXTERNAL) != NT_OK)
                cr_assert_fail("%s", nt_writer_message(w));
        }
        cr_assert_eq(nt_writer_sequence_point(w, round * 100000 + 99999, 0), NT_OK);
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    ts_digest ref;
    ts_digest_init(&ref);
    cr_assert_eq(ts_digest_feed(out.data, out.len, NULL, 0, NULL, &ref, NULL), NT_OK);
    cr_expect_eq(ref.samples, THREADS * ROUNDS);
    cr_expect_eq(ref.sequence_points, ROUNDS);
    for (uint64_t seed = 1; seed <= 4; seed++) {
        ts_digest d;
        ts_digest_init(&d);
        ts_digest_feed_random(out.data, out.len, seed, 5000, NULL, &d, NULL);
        cr_expect_eq(d.h, ref.h, "random chunking %llu changes the callbacks", (unsigned long long)seed);
    }
    rec r;
    cr_assert_eq(rec_parse(&r, out.data, out.len, 0), NT_OK, "%s", r.msg);
    cr_assert_eq(r.nsps, ROUNDS);
    /* Count mismatches in the loops (one assertion per check keeps the test fast). */
    size_t bad_seq = 0, bad_drop = 0, bad_stack = 0;
    for (int i = 0; i < ROUNDS; i++) {
        cr_expect_eq(r.sps[i].sp.thread_count, THREADS);
        for (uint32_t k = 0; k < r.sps[i].sp.thread_count; k++) {
            bad_seq += r.sps[i].threads[k].sequence_number != (uint32_t)i + 1;
            bad_drop += r.sps[i].threads[k].dropped != 0;
        }
    }
    for (size_t i = 0; i < r.nsamples; i++)
        bad_stack += r.samples[i].stack_id != 1;
    cr_expect_eq(bad_seq, 0);
    cr_expect_eq(bad_drop, 0);
    cr_expect_eq(bad_stack, 0);
    cr_expect_gt(r.stats.event_blocks, 10);
    cr_expect_eq(r.stats.unknown_stack_refs, 0);
    rec_free(&r);
    nt_membuf_free(&out);
}

LTest(writer, every_chunking_gives_the_same_callbacks)
{
    nt_membuf out;
    nt_writer *w = rec_writer(&out, NULL);
    for (int i = 0; i < 200; i++) {
        uint64_t ips[4] = { 0x10u + (unsigned)i % 7, 0x20, 0x30, 0x40 };
        uint32_t sid;
        cr_assert_eq(nt_writer_stack(w, ips, 1 + (uint32_t)i % 4, &sid), NT_OK);
        nt_writer_event h = { .thread_id = (uint64_t)i % 9, .timestamp = i, .stack_id = sid };
        cr_assert_eq(nt_writer_sample(w, &h, (uint32_t)i % 3), NT_OK);
        if (i % 50 == 49)
            cr_assert_eq(nt_writer_sequence_point(w, i, 0), NT_OK);
        if (i % 30 == 0)
            cr_assert_eq(nt_writer_flush(w), NT_OK);
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    ts_digest ref;
    ts_digest_init(&ref);
    cr_assert_eq(ts_digest_feed(out.data, out.len, NULL, 0, NULL, &ref, NULL), NT_OK);
    for (size_t c = 1; c <= 17; c++) {
        ts_digest d;
        ts_digest_init(&d);
        cr_expect_eq(ts_digest_feed(out.data, out.len, &c, 1, NULL, &d, NULL), NT_OK);
        cr_expect_eq(d.h, ref.h, "chunk size %zu", c);
    }
    nt_membuf_free(&out);
}

LTest(writer, explicit_sequence_numbers_show_drops)
{
    nt_membuf out;
    nt_writer *w = rec_writer(&out, NULL);
    nt_writer_event h = { .thread_id = 3, .timestamp = 1 };
    cr_assert_eq(nt_writer_sample(w, &h, 2), NT_OK);     /* seq 1 */
    h.sequence_number = 5;                               /* 2..4 lost */
    cr_assert_eq(nt_writer_sample(w, &h, 2), NT_OK);
    h.sequence_number = 0;
    cr_assert_eq(nt_writer_sample(w, &h, 2), NT_OK);     /* seq 6 */
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    rec r;
    cr_assert_eq(rec_parse(&r, out.data, out.len, 0), NT_OK, "%s", r.msg);
    cr_expect_eq(r.stats.events_dropped, 3);
    cr_assert_eq(r.nev, 3);
    cr_expect_eq(r.ev[2].ev.sequence_number, 6);
    rec_free(&r);
    nt_membuf_free(&out);
}

LTest(writer, blocks_are_padded_on_the_absolute_offset)
{
    /* Different metadata name lengths shift every later block by 0-3 bytes. */
    for (int shift = 0; shift < 4; shift++) {
        nt_membuf out;
        nt_writer *w = rec_writer(&out, NULL);
        char prov[8] = "P";
        for (int k = 0; k < shift; k++)
            prov[1 + k] = 'x';
        prov[1 + shift] = 0;
        nt_event_desc d = { .provider = prov, .event_id = 1 };
        uint32_t id;
        cr_assert_eq(nt_writer_define(w, &d, &id), NT_OK);
        cr_assert_eq(nt_writer_flush(w), NT_OK);
        uint64_t ip = 0x99;
        uint32_t sid;
        cr_assert_eq(nt_writer_stack(w, &ip, 1, &sid), NT_OK);
        nt_writer_event e = { .metadata_id = id, .thread_id = 1, .stack_id = sid };
        cr_assert_eq(nt_writer_write_event(w, &e), NT_OK);
        cr_assert_eq(nt_writer_finish(w), NT_OK);
        nt_writer_free(w);
        /* Every StackBlock/EventBlock content starts 4-aligned: find the size fields. */
        for (size_t i = 0; i + 10 < out.len; i++) {
            if (memcmp(out.data + i, "StackBlock\x06", 11) == 0 || memcmp(out.data + i, "EventBlock\x06", 11) == 0) {
                size_t after = i + 11 + 4;
                size_t content = (after + 3) & ~(size_t)3;
                for (size_t p = after; p < content; p++)
                    cr_expect_eq(out.data[p], 0, "padding is zero");
            }
        }
        rec r;
        cr_expect_eq(rec_parse(&r, out.data, out.len, 1), NT_OK, "shift %d: %s", shift, r.msg);
        cr_expect_eq(r.nev, 1);
        cr_expect_eq(r.ev[0].stack_count, 1);
        rec_free(&r);
        nt_membuf_free(&out);
    }
}

static int failing_sink(void *user, const void *data, size_t len)
{
    (void)data;
    size_t *budget = user;
    if (len > *budget)
        return -1;
    *budget -= len;
    return 0;
}

LTest(writer, errors_are_sticky_and_clear)
{
    nt_membuf out;
    nt_writer *w = rec_writer(&out, NULL);
    nt_writer_event e = { .metadata_id = 9, .thread_id = 1 };
    cr_expect_eq(nt_writer_write_event(w, &e), NT_ERR_INVALID_ARG);
    cr_expect(strstr(nt_writer_message(w), "metadata id 9") != NULL, "%s", nt_writer_message(w));
    cr_expect_eq(nt_writer_finish(w), NT_ERR_INVALID_ARG, "errors are sticky");
    nt_writer_free(w);
    nt_membuf_free(&out);

    w = rec_writer(&out, NULL);
    nt_writer_event h = { .thread_id = 1, .stack_id = 1 };
    cr_expect_eq(nt_writer_sample(w, &h, 0), NT_ERR_INVALID_ARG, "stack 1 was never defined");
    nt_writer_free(w);
    nt_membuf_free(&out);

    nt_writer_options o = opts(4, false);
    w = rec_writer(&out, &o);
    uint64_t wide = 0x100000000ull;
    cr_expect_eq(nt_writer_stack(w, &wide, 1, NULL), NT_ERR_INVALID_ARG);
    nt_writer_free(w);
    nt_membuf_free(&out);

    w = rec_writer(&out, NULL);
    nt_event_desc d = { .provider = "P", .event_id = 1, .metadata_id = 3 };
    cr_expect_eq(nt_writer_define(w, &d, NULL), NT_OK);
    cr_expect_eq(nt_writer_define(w, &d, NULL), NT_ERR_INVALID_ARG, "id 3 twice");
    nt_writer_free(w);
    nt_membuf_free(&out);

    w = rec_writer(&out, NULL);
    nt_label l = { .kind = NT_LABEL_VERSION, .value = 1 };
    cr_expect_eq(nt_writer_label_list(w, &l, 1, NULL), NT_ERR_STATE, "label lists are V6 only");
    nt_writer_free(w);
    nt_membuf_free(&out);

    w = rec_writer(&out, NULL);
    cr_expect_eq(nt_writer_sequence_point(w, 0, NT_SP_FLUSH_METADATA), NT_ERR_INVALID_ARG, "flags are V6 only");
    nt_writer_free(w);
    nt_membuf_free(&out);

    size_t budget = 200;
    w = nt_writer_new(NULL, failing_sink, &budget, NULL);
    nt_writer_event s = { .thread_id = 1 };
    cr_assert_eq(nt_writer_sample(w, &s, 1), NT_OK, "buffered, nothing written yet");
    cr_expect_eq(nt_writer_finish(w), NT_ERR_IO);
    cr_expect_eq(nt_writer_status(w), NT_ERR_IO);
    nt_writer_free(w);

    nt_writer_options bad = opts(6, false);
    bad.pointer_size = 2;
    cr_expect_null(nt_writer_new(&bad, nt_membuf_write, &out, NULL));
    cr_expect_null(nt_writer_new(NULL, NULL, NULL, NULL));
}

LTest(writer, empty_stream_is_header_and_end)
{
    nt_membuf out;
    nt_writer *w = rec_writer(&out, NULL);
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    rec r;
    cr_expect_eq(rec_parse(&r, out.data, out.len, 0), NT_ERR_NO_EVENTS);
    cr_expect_eq(r.traces, 1);
    rec_free(&r);
    nt_membuf_free(&out);
}

LTest(writer, truncation_at_every_byte_is_clean)
{
    nt_membuf out;
    nt_writer *w = rec_writer(&out, NULL);
    uint64_t ips[2] = { 5, 6 };
    uint32_t sid;
    cr_assert_eq(nt_writer_stack(w, ips, 2, &sid), NT_OK);
    nt_writer_event h = { .thread_id = 2, .timestamp = 10, .stack_id = sid };
    cr_assert_eq(nt_writer_sample(w, &h, 2), NT_OK);
    nt_method m = { .which = NT_RECORD_LOAD, .version = 2, .name = "M", .declaring_type = "T", .signature = "S" };
    cr_assert_eq(nt_writer_method(w, NULL, &m), NT_OK);
    cr_assert_eq(nt_writer_sequence_point(w, 20, 0), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    for (size_t n = 0; n < out.len; n++) {
        ts_digest d;
        ts_digest_init(&d);
        nt_status s = ts_digest_feed(out.data, n, NULL, 0, NULL, &d, NULL);
        cr_expect(s == NT_ERR_TRUNCATED || s == NT_ERR_NOT_NETTRACE || s == NT_ERR_NO_EVENTS, "cut at %zu: %s", n,
                  nt_status_name(s));
    }
    nt_membuf_free(&out);
}

LTest(writer, explicit_sequence_point_lists_carry_drops)
{
    for (uint32_t format = 4; format <= 6; format += 2) {
        nt_writer_options o = { 0 };
        nt_writer_options_default(&o);
        o.format = format;
        nt_membuf out;
        nt_writer *w = rec_writer(&out, &o);
        nt_writer_event h = { .thread_id = 11, .timestamp = 1 };
        cr_assert_eq(nt_writer_sample(w, &h, 2), NT_OK); /* seq 1 */
        /* thread 11 attempted 4 events (3 lost); thread 12 never wrote one */
        const nt_sp_thread list[2] = { { 11, 4, 0 }, { 12, 9, 0 } };
        cr_assert_eq(nt_writer_sequence_point_threads(w, 2, 0, list, 2), NT_OK, "%s", nt_writer_message(w));
        cr_assert_eq(nt_writer_sample(w, &h, 2), NT_OK); /* continues at 5 */
        cr_assert_eq(nt_writer_finish(w), NT_OK);
        nt_writer_free(w);
        rec r;
        cr_assert_eq(rec_parse(&r, out.data, out.len, 0), NT_OK, "%s", r.msg);
        cr_assert_eq(r.nsps, 1);
        cr_assert_eq(r.sps[0].sp.thread_count, 2);
        cr_expect_eq(r.sps[0].threads[0].capture_thread_id, 11);
        cr_expect_eq(r.sps[0].threads[0].dropped, 3, "format %u", format);
        cr_expect_eq(r.sps[0].threads[1].capture_thread_id, 12);
        cr_expect_eq(r.stats.events_dropped, 3);
        cr_assert_eq(r.nev, 2);
        cr_expect_eq(r.ev[1].ev.sequence_number, 5);
        rec_free(&r);
        nt_membuf_free(&out);
    }
}

LTest(writer, refuses_field_lists_readers_cannot_take)
{
    nt_membuf out;
    nt_field deep[10];
    for (uint32_t i = 0; i < 10; i++)
        deep[i] = (nt_field){ "o", NT_TYPE_OBJECT, 0, i };
    nt_event_desc d = { .provider = "P", .event_id = 1, .field_count = 10, .fields = deep };
    nt_writer *w = rec_writer(&out, NULL);
    cr_expect_eq(nt_writer_define(w, &d, NULL), NT_ERR_INVALID_ARG, "nested 9 levels deep");
    nt_writer_free(w);
    d.field_count = 9; /* an object at depth 8 would have its fields at 9 */
    w = rec_writer(&out, NULL);
    cr_expect_eq(nt_writer_define(w, &d, NULL), NT_ERR_INVALID_ARG);
    nt_writer_free(w);
    deep[8].type = NT_TYPE_INT64; /* depth 8: the deepest the parser reads */
    for (uint32_t format = 4; format <= 6; format += 2) {
        nt_writer_options o = opts(8, false);
        o.format = format;
        w = rec_writer(&out, &o);
        uint32_t id;
        cr_assert_eq(nt_writer_define(w, &d, &id), NT_OK, "%s", nt_writer_message(w));
        nt_writer_event e = { .metadata_id = id, .thread_id = 1 };
        cr_assert_eq(nt_writer_write_event(w, &e), NT_OK);
        cr_assert_eq(nt_writer_finish(w), NT_OK);
        nt_writer_free(w);
        rec r;
        cr_assert_eq(rec_parse(&r, out.data, out.len, 0), NT_OK, "%s", r.msg);
        cr_assert_eq(r.nmeta, 1);
        cr_expect_eq(r.meta[0].d.field_count, 9, "V%u keeps all 9 nested fields", format);
        rec_free(&r);
        nt_membuf_free(&out);
    }
    nt_field skip[2] = { { "a", NT_TYPE_INT32, 0, 0 }, { "b", NT_TYPE_INT32, 0, 1 } };
    d.fields = skip;
    d.field_count = 2;
    w = rec_writer(&out, NULL);
    cr_expect_eq(nt_writer_define(w, &d, NULL), NT_ERR_INVALID_ARG, "a child of a non-object");
    nt_writer_free(w);
    nt_membuf_free(&out);
}

static int keep_info(void *user, const nt_trace_info *t)
{
    *(nt_trace_info *)user = *t;
    return 0;
}

/* Zero means default in every option, pointer_size included (it once made
 * nt_writer_new return NULL although the header said "default 8"). */
LTest(writer, zero_options_select_the_defaults)
{
    for (uint32_t format = 0; format <= 6; format += 6) {
        nt_writer_options o = { 0 };
        memset(&o, 0, sizeof o);
        o.format = format;
        nt_membuf out = { 0 };
        nt_writer *w = nt_writer_new(&o, nt_membuf_write, &out, NULL);
        cr_assert(w, "a zeroed option struct (format %u) must select the defaults", format);
        const uint64_t ips[] = { 0x1234567890ull };
        nt_writer_event h = { .thread_id = 3, .timestamp = 5 };
        cr_assert_eq(nt_writer_stack(w, ips, 1, &h.stack_id), NT_OK, "%s", nt_writer_message(w));
        cr_assert_eq(nt_writer_sample(w, &h, NT_SAMPLE_MANAGED), NT_OK, "%s", nt_writer_message(w));
        cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
        nt_writer_free(w);
        nt_trace_info info;
        memset(&info, 0, sizeof info);
        nt_callbacks cb = { 0 };
        cb.trace = keep_info;
        cr_assert_eq(nt_parse_buffer(out.data, out.len, &cb, &info, NULL, NULL, 0), NT_OK);
        cr_expect_eq(info.format_major, format ? 6 : 4);
        cr_expect_eq(info.pointer_size, 8);
        cr_expect_eq(info.qpc_frequency, 1000000000);
        cr_expect_eq(info.processor_count, 1);
        cr_expect_eq(info.sampling_interval_ns, 1000000);
        nt_membuf_free(&out);
    }
}
