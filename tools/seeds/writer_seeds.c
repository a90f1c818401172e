/* corpus/seeds: small writer-made NetTrace streams, each exercising one corner
 * of the format, for the conversion tests and the fuzzers' starting corpus. */
#include "seeds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *g_dir;
static int g_failed;

static void check(nt_writer *w, nt_status s, const char *what)
{
    if (s != NT_OK) {
        fprintf(stderr, "make_seeds: %s: %s\n", what, nt_writer_message(w));
        g_failed = 1;
    }
}

static void save(const char *name, const uint8_t *data, size_t len)
{
    seeds_save_file(g_dir, name, data, len, NULL);
}

static nt_writer_options opts(uint32_t format, uint32_t ptr, bool uncompressed)
{
    nt_writer_options o = { 0 };
    nt_writer_options_default(&o);
    o.format = format;
    o.pointer_size = ptr;
    o.uncompressed = uncompressed;
    o.sync_time_utc = (nt_systemtime){ 2026, 11, 0, 29, 12, 0, 0, 0 };
    o.sync_qpc = 1000;
    o.process_id = 4321;
    o.processor_count = 4;
    return o;
}

/* Samples on three threads with a few stacks (one empty), two sequence points. */
static void samples(nt_writer *w)
{
    const uint64_t a[] = { 0x7f0000001000ull & 0xffffffffu, 0x2000, 0x3000 };
    for (int sp = 0; sp < 2; sp++) {
        uint32_t s1, s2, s0;
        check(w, nt_writer_stack(w, a, 3, &s1), "stack");
        check(w, nt_writer_stack(w, a + 1, 2, &s2), "stack");
        check(w, nt_writer_stack(w, NULL, 0, &s0), "empty stack");
        for (int i = 0; i < 6; i++) {
            nt_writer_event h = { .thread_id = 100 + (uint64_t)i % 3, .capture_thread_id = 7,
                                  .timestamp = 2000 + sp * 100 + i, .stack_id = i % 3 == 0 ? s1 : i % 3 == 1 ? s2 : s0,
                                  .is_sorted = i == 0 };
            check(w, nt_writer_sample(w, &h, (uint32_t)(i % 3)), "sample");
        }
        check(w, nt_writer_sequence_point(w, 2000 + sp * 100 + 50, 0), "sequence point");
    }
}

/* One record of every typed kind and version. */
static void typed(nt_writer *w)
{
    for (uint32_t which = 0; which < 4; which++)
        for (uint32_t v = 0; v < 3; v++) {
            nt_method m = { .which = (nt_record_event)which, .version = v, .method_id = 0x100 + which,
                            .module_id = 0x200, .start_address = 0x7000 + 0x40 * which, .size = 0x40,
                            .token = 0x06000001, .flags = NT_METHOD_FLAG_JITTED, .declaring_type = "Ns.Type",
                            .name = "Run", .signature = "void ()", .clr_instance_id = 1, .rejit_id = v == 2 ? 3 : 0,
                            .timestamp = 3000 + which };
            check(w, nt_writer_method(w, NULL, &m), "method");
        }
    for (uint32_t which = 0; which < 4; which++)
        for (int dom = 0; dom < 2; dom++) {
            if (which == NT_RECORD_UNLOAD && dom)
                continue;
            nt_module m = { .which = (nt_record_event)which, .domain = dom, .version = dom ? 1 : 2,
                            .module_id = 0x200, .assembly_id = 0x300, .app_domain_id = dom ? 1 : 0,
                            .il_path = "/app/App.dll", .native_path = "", .clr_instance_id = 1,
                            .timestamp = 3100 + which };
            check(w, nt_writer_module(w, NULL, &m), "module");
        }
    for (uint32_t which = 0; which < 4; which++)
        for (uint32_t v = 0; v < 2; v++) {
            nt_assembly a = { .which = (nt_record_event)which, .version = v, .assembly_id = 0x300,
                              .app_domain_id = 1, .binding_id = v, .name = "App, Version=1.0.0.0",
                              .clr_instance_id = 1, .timestamp = 3200 + which };
            check(w, nt_writer_assembly(w, NULL, &a), "assembly");
        }
}

/* A user event with a described payload (V5 tags: opcode, V2Params arrays). */
static void described(nt_writer *w, bool v6_types)
{
    const nt_field v4f[] = { { "Id", NT_TYPE_INT32, 0, 0 }, { "Name", NT_TYPE_STRING, 0, 0 },
                             { "Data", NT_TYPE_ARRAY, NT_TYPE_BYTE, 0 }, { "Pt", NT_TYPE_OBJECT, 0, 0 },
                             { "X", NT_TYPE_INT16, 0, 1 }, { "Y", NT_TYPE_INT16, 0, 1 } };
    const nt_field v6f[] = { { "V", NT_TYPE_VARINT, 0, 0 }, { "U", NT_TYPE_VARUINT, 0, 0 },
                             { "Fixed", NT_TYPE_FIXED_ARRAY, NT_TYPE_UINT32, 0 }, { "C", NT_TYPE_UTF8_CHAR, 0, 0 },
                             { "R", NT_TYPE_RELLOC, NT_TYPE_BYTE, 0 }, { "D", NT_TYPE_DATALOC, NT_TYPE_BYTE, 0 },
                             { "B", NT_TYPE_BOOLEAN8, 0, 0 } };
    nt_event_desc d = { .provider = "Seed-Provider", .event_id = 5, .event_name = "Described", .keywords = 0x1,
                        .version = 1, .level = 4, .opcode = 10 };
    d.fields = v6_types ? v6f : v4f;
    d.field_count = v6_types ? 7 : 6;
    uint32_t id;
    check(w, nt_writer_define(w, &d, &id), "define");
    static const uint8_t payload[] = { 1, 0, 0, 0, 'h', 0, 'i', 0, 0, 0, 2, 0, 0xAB, 0xCD, 3, 0, 4, 0 };
    nt_writer_event e = { .metadata_id = id, .thread_id = 9, .timestamp = 4000, .payload = payload,
                          .payload_size = sizeof payload };
    memset(e.activity_id, 0x11, 16);
    check(w, nt_writer_write_event(w, &e), "event");
}

typedef void (*body_fn)(nt_writer *w);

static void seed(const char *name, nt_writer_options o, body_fn a, body_fn b, size_t cut)
{
    nt_membuf out = { 0 };
    nt_writer *w = nt_writer_new(&o, nt_membuf_write, &out, NULL);
    if (!w) {
        fprintf(stderr, "make_seeds: cannot create a writer\n");
        g_failed = 1;
        return;
    }
    if (a)
        a(w);
    if (b)
        b(w);
    check(w, nt_writer_finish(w), "finish");
    nt_writer_free(w);
    save(name, out.data, cut && cut < out.len ? out.len - cut : out.len);
    nt_membuf_free(&out);
}

static void described_v4(nt_writer *w) { described(w, false); }
static void described_v6(nt_writer *w) { described(w, true); }

static void drops(nt_writer *w)
{
    nt_writer_event h = { .thread_id = 5, .timestamp = 10 };
    check(w, nt_writer_sample(w, &h, 2), "sample");
    h.sequence_number = 4;
    check(w, nt_writer_sample(w, &h, 2), "sample");
    const nt_sp_thread list[] = { { 5, 9, 0 } };
    check(w, nt_writer_sequence_point_threads(w, 20, 0, list, 1), "sequence point");
}

static void labels(nt_writer *w)
{
    nt_label l[10];
    memset(l, 0, sizeof l);
    for (int i = 0; i < 10; i++)
        l[i].kind = (uint32_t)i + 1;
    memset(l[0].guid, 1, 16);
    memset(l[1].guid, 2, 16);
    memset(l[2].guid, 3, 16);
    l[3].value = 0x5151;
    l[4].key = "k";
    l[4].text = "v";
    l[5].key = "n";
    l[5].value = (uint64_t)-3;
    l[6].value = 2;
    l[7].value = 0x8;
    l[8].value = 5;
    l[9].value = 2;
    uint32_t ll;
    check(w, nt_writer_label_list(w, l, 10, &ll), "label list");
    nt_method m = { .which = NT_RECORD_LOAD, .version = 2, .method_id = 1, .declaring_type = "T", .name = "M",
                    .signature = "S", .rejit_id = 4 };
    /* metadata says version 0 ... */
    nt_event_desc d = { .provider = NT_PROVIDER_RUNTIME, .event_id = 143, .event_name = "", .version = 0 };
    uint32_t id;
    check(w, nt_writer_define(w, &d, &id), "define");
    /* ... the label list says 2: the payload is the V2 layout */
    uint8_t pl[80];
    size_t n = 0;
    const uint64_t q[3] = { m.method_id, 0, 0 };
    memcpy(pl, q, 24);
    n = 24;
    memset(pl + n, 0, 12);
    n += 12;
    const uint8_t strs[] = { 'T', 0, 0, 0, 'M', 0, 0, 0, 'S', 0, 0, 0, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0 };
    memcpy(pl + n, strs, sizeof strs);
    n += sizeof strs;
    nt_writer_event e = { .metadata_id = id, .thread_id = 3, .timestamp = 10, .label_list_id = ll, .payload = pl,
                          .payload_size = (uint32_t)n };
    check(w, nt_writer_write_event(w, &e), "event");
}

static void threads(nt_writer *w)
{
    nt_writer_event h = { .thread_id = 1, .timestamp = 1 };
    check(w, nt_writer_sample(w, &h, 2), "sample");
    h.thread_id = 2;
    check(w, nt_writer_sample(w, &h, 2), "sample");
    check(w, nt_writer_remove_thread(w, 1), "remove thread");
    check(w, nt_writer_sequence_point(w, 2, NT_SP_FLUSH_THREADS), "sequence point");
    h.timestamp = 3;
    check(w, nt_writer_sample(w, &h, 1), "sample");
    check(w, nt_writer_sequence_point(w, 4, NT_SP_FLUSH_METADATA), "sequence point");
    h.timestamp = 5;
    check(w, nt_writer_sample(w, &h, 1), "sample");
}

int seeds_writer(const char *dir)
{
    g_dir = dir;
    seed("v4_samples.nettrace", opts(4, 8, false), samples, NULL, 0);
    seed("v4_uncompressed.nettrace", opts(4, 8, true), samples, described_v4, 0);
    seed("v4_32bit.nettrace", opts(4, 4, false), samples, typed, 0);
    seed("v4_typed.nettrace", opts(4, 8, false), typed, NULL, 0);
    seed("v4_v5_tags.nettrace", opts(4, 8, false), described_v4, NULL, 0);
    seed("v4_drops.nettrace", opts(4, 8, false), drops, NULL, 0);
    seed("v4_truncated.nettrace", opts(4, 8, false), samples, typed, 37);
    seed("v6_samples.nettrace", opts(6, 8, false), samples, NULL, 0);
    seed("v6_uncompressed.nettrace", opts(6, 8, true), samples, described_v4, 0);
    seed("v6_32bit.nettrace", opts(6, 4, false), samples, typed, 0);
    seed("v6_typed.nettrace", opts(6, 8, false), typed, NULL, 0);
    seed("v6_field_types.nettrace", opts(6, 8, false), described_v6, NULL, 0);
    seed("v6_labels.nettrace", opts(6, 8, false), labels, NULL, 0);
    seed("v6_threads.nettrace", opts(6, 8, false), threads, NULL, 0);
    seed("v6_drops.nettrace", opts(6, 8, false), drops, NULL, 0);
    seed("v6_truncated.nettrace", opts(6, 8, false), samples, typed, 37);
    return g_failed;
}
