/* Parser seeds made with nt_writer (V4 and V6), and seeds cut from the
 * project's own recorded traces (their first records and samples, with real
 * names and stacks, re-written by nt_writer). */
#include "seeds.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W_OK(call) seeds_check(w, (call), #call)

/* Finish and free w, and save what it wrote to out (freed with the seed). */
static void finish_and_save(nt_writer *w, nt_membuf *out, const char *name)
{
    W_OK(nt_writer_finish(w));
    nt_writer_free(w);
    tb b = { .d = out->data, .n = out->len, .cap = out->cap };
    fuzz_save(name, &b);
}

/* A small sampled process: metadata with fields, typed records of each kind,
 * samples on shared and empty stacks, several threads, sequence points (with
 * V6 flush flags), labels and a removed thread in V6. */
static void writer_seed(uint32_t format, uint32_t ptr, bool uncompressed, const char *name)
{
    nt_membuf out = { 0 };
    nt_writer_options opt = { 0 };
    nt_writer_options_default(&opt);
    opt.format = format;
    opt.pointer_size = ptr;
    opt.uncompressed = uncompressed;
    opt.block_bytes = 512; /* several event blocks in a small stream */
    opt.process_id = 4242;
    opt.processor_count = 4;
    nt_writer *w = nt_writer_new(&opt, nt_membuf_write, &out, NULL);
    if (!w) {
        fprintf(stderr, "make_seeds: nt_writer_new failed\n");
        exit(1);
    }
    nt_field fields[] = { { "Url", NT_TYPE_STRING, 0, 0 }, { "Version", NT_TYPE_OBJECT, 0, 0 },
                          { "Major", NT_TYPE_INT32, 0, 1 }, { "Items", NT_TYPE_ARRAY, NT_TYPE_INT64, 0 } };
    nt_event_desc d = { 0 };
    d.provider = "My-Event-Source";
    d.event_id = 7;
    d.event_name = "Request/Start";
    d.version = 1;
    d.level = 4;
    d.opcode = 1;
    d.keywords = 0x10;
    d.field_count = 4;
    d.fields = fields;
    uint32_t my_id = 0;
    W_OK(nt_writer_define(w, &d, &my_id));
    int64_t ts = 1000;
    for (int interval = 0; interval < 2; interval++) {
        nt_method m = { 0 };
        m.which = interval ? NT_RECORD_DC_END : NT_RECORD_LOAD;
        m.version = (uint32_t)interval + 1;
        m.method_id = 0x100 + (uint64_t)interval;
        m.module_id = 0x7f00;
        m.start_address = 0x4000 + 0x100 * (uint64_t)interval;
        m.size = 0x80;
        m.flags = NT_METHOD_FLAG_JITTED;
        m.declaring_type = "App.Program";
        m.name = interval ? "Work" : "Main";
        m.signature = "void  ()";
        m.timestamp = ts;
        W_OK(nt_writer_method(w, NULL, &m));
        nt_module mod = { 0 };
        mod.which = interval ? NT_RECORD_DC_END : NT_RECORD_LOAD;
        mod.domain = interval != 0;
        mod.version = 1;
        mod.module_id = 0x7f00;
        mod.assembly_id = 0x7e00;
        mod.app_domain_id = 1;
        mod.il_path = "/app/App.dll";
        mod.native_path = "";
        mod.timestamp = ts;
        W_OK(nt_writer_module(w, NULL, &mod));
        nt_assembly a = { 0 };
        a.which = NT_RECORD_LOAD;
        a.version = (uint32_t)interval;
        a.assembly_id = 0x7e00;
        a.app_domain_id = 1;
        a.name = "App";
        a.timestamp = ts;
        W_OK(nt_writer_assembly(w, NULL, &a));
        uint64_t ips[] = { 0x4010, 0x4110, 0x9000 };
        uint32_t s_full = 0, s_leaf = 0, s_empty = 0;
        W_OK(nt_writer_stack(w, ips, 3, &s_full));
        W_OK(nt_writer_stack(w, ips, 1, &s_leaf));
        W_OK(nt_writer_stack(w, ips, 0, &s_empty));
        uint32_t labels = 0;
        if (format == 6) {
            nt_label l[2] = { { NT_LABEL_ACTIVITY_ID, { 1, 2, 3 }, 0, NULL, NULL },
                              { NT_LABEL_STRING, { 0 }, 0, "route", "/api" } };
            W_OK(nt_writer_label_list(w, l, 2, &labels));
        }
        for (int i = 0; i < 12; i++) {
            nt_writer_event hdr = { 0 };
            hdr.thread_id = 10 + (uint64_t)(i % 3);
            hdr.timestamp = ts += 997;
            hdr.stack_id = i % 3 == 0 ? s_full : i % 3 == 1 ? s_leaf : s_empty;
            hdr.processor_number = (uint32_t)i % 4;
            W_OK(nt_writer_sample(w, &hdr, i % 2 ? NT_SAMPLE_MANAGED : NT_SAMPLE_EXTERNAL));
        }
        uint8_t payload[32];
        memset(payload, 0x5a, sizeof payload);
        nt_writer_event ev = { 0 };
        ev.metadata_id = my_id;
        ev.thread_id = 10;
        ev.timestamp = ts += 5;
        ev.payload = payload;
        ev.payload_size = sizeof payload;
        ev.label_list_id = labels;
        if (format != 6)
            ev.activity_id[0] = 9; /* V6 carries activity ids in the label list */
        W_OK(nt_writer_write_event(w, &ev));
        if (format == 6 && interval == 0)
            W_OK(nt_writer_remove_thread(w, 12));
        W_OK(nt_writer_sequence_point(w, ts, format == 6 ? NT_SP_FLUSH_THREADS : 0));
    }
    finish_and_save(w, &out, name);
}

/* The header's SYSTEMTIME and SyncTimeQPC as written (16 + 8 bytes, little-endian). */
static void clock_bytes(uint8_t *d, const nt_systemtime *t, int64_t qpc)
{
    const uint16_t v[8] = { t->year, t->month, t->day_of_week, t->day, t->hour, t->minute, t->second,
                            t->milliseconds };
    for (int i = 0; i < 8; i++) {
        d[2 * i] = (uint8_t)v[i];
        d[2 * i + 1] = (uint8_t)(v[i] >> 8);
    }
    for (int i = 0; i < 8; i++)
        d[16 + i] = (uint8_t)((uint64_t)qpc >> (8 * i));
}

/* Replace the written header clock (from) with another (to). */
static void patch_clock(nt_membuf *out, const nt_systemtime *from_t, int64_t from_q, const nt_systemtime *to_t,
                        int64_t to_q)
{
    uint8_t from[24], to[24];
    clock_bytes(from, from_t, from_q);
    clock_bytes(to, to_t, to_q);
    uint8_t *at = memmem(out->data, out->len, from, sizeof from);
    if (!at)
        exit(1);
    memcpy(at, to, sizeof to);
}

/* Regressions for the aggregator and exporters: samples whose stacks are all
 * empty (no IP stored at all), and a hostile clock (a sync time in year
 * 65535, samples at the far ends of the tick range) that overflowed signed
 * arithmetic in the pprof wall time and the time weights. */
static void writer_hostile_clock(const char *name, bool empty_only)
{
    nt_membuf out = { 0 };
    nt_writer_options opt = { 0 };
    nt_writer_options_default(&opt);
    /* The writer refuses a header readers cannot take: this one is written valid
     * (a marker) and made hostile afterwards. */
    const nt_systemtime marker_time = { 2001, 2, 3, 4, 5, 6, 7, 8 };
    if (!empty_only) {
        opt.sync_time_utc = marker_time;
        opt.sync_qpc = 0;
    }
    nt_writer *w = nt_writer_new(&opt, nt_membuf_write, &out, NULL);
    if (!w)
        exit(1);
    uint64_t ips[] = { 0x1000 };
    uint32_t s_empty = 0, s_one = 0;
    W_OK(nt_writer_stack(w, ips, 0, &s_empty));
    if (!empty_only)
        W_OK(nt_writer_stack(w, ips, 1, &s_one));
    int64_t times[] = { INT64_MIN + 1, -1, 0, INT64_MAX - 1 };
    for (int i = 0; i < 4; i++) {
        nt_writer_event hdr = { 0 };
        hdr.thread_id = 7;
        hdr.timestamp = empty_only ? 1000 * (i + 1) : times[i];
        hdr.stack_id = empty_only || i % 2 ? s_empty : s_one;
        W_OK(nt_writer_sample(w, &hdr, NT_SAMPLE_MANAGED));
    }
    if (!empty_only) {
        W_OK(nt_writer_flush(w));
        const nt_systemtime hostile = { 65535, 12, 0, 31, 23, 59, 59, 999 };
        patch_clock(&out, &marker_time, 0, &hostile, INT64_MIN);
    }
    finish_and_save(w, &out, name);
}

typedef struct cutter {
    nt_writer *w;
    int methods, modules, assemblies, samples;
} cutter;

/* The first few records of each kind, as the recording has them. */
static int cut_method(void *u, const nt_method *m)
{
    cutter *c = u;
    return c->methods++ < 6 ? (nt_writer_method(c->w, NULL, m), 0) : 0;
}

static int cut_module(void *u, const nt_module *m)
{
    cutter *c = u;
    return c->modules++ < 3 ? (nt_writer_module(c->w, NULL, m), 0) : 0;
}

static int cut_assembly(void *u, const nt_assembly *a)
{
    cutter *c = u;
    return c->assemblies++ < 3 ? (nt_writer_assembly(c->w, NULL, a), 0) : 0;
}

static int cut_sample(void *u, const nt_sample *s)
{
    cutter *c = u;
    if (!s->stack || c->samples >= 10)
        return c->samples >= 10 && c->methods >= 6;
    uint32_t n = s->stack->count < 12 ? s->stack->count : 12;
    nt_writer_event hdr = { 0 };
    hdr.thread_id = s->thread_id;
    hdr.timestamp = s->timestamp;
    if (nt_writer_stack(c->w, s->stack->ips, n, &hdr.stack_id) == NT_OK &&
        nt_writer_sample(c->w, &hdr, s->type) == NT_OK)
        c->samples++;
    return 0;
}

static void seed_from_recording(const char *dir, const char *file, uint32_t format)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    uint8_t *data;
    size_t len;
    if (!ts_read_file(path, &data, &len)) {
        fprintf(stderr, "make_seeds: %s not found, no seed cut from it\n", path);
        return;
    }
    nt_membuf out = { 0 };
    nt_writer_options opt = { 0 };
    nt_writer_options_default(&opt);
    opt.format = format;
    opt.block_bytes = 1024;
    cutter c = { nt_writer_new(&opt, nt_membuf_write, &out, NULL), 0, 0, 0, 0 };
    if (!c.w)
        exit(1);
    nt_callbacks cb = { 0 };
    cb.method = cut_method;
    cb.module = cut_module;
    cb.assembly = cut_assembly;
    cb.sample = cut_sample;
    nt_parse_buffer(data, len, &cb, &c, NULL, NULL, 0);
    free(data);
    char name[512];
    snprintf(name, sizeof name, "cut-v%u-%s", format, file);
    finish_and_save(c.w, &out, name);
}

void fuzz_writer_streams(const char *recorded_dir)
{
    writer_seed(4, 8, false, "writer-v4");
    writer_seed(4, 4, true, "writer-v4-ptr4-uncompressed");
    writer_seed(6, 8, false, "writer-v6");
    writer_seed(6, 4, false, "writer-v6-ptr4");
    writer_hostile_clock("writer-empty-stacks-only", true);
    writer_hostile_clock("writer-hostile-clock", false);
    if (recorded_dir) {
        seed_from_recording(recorded_dir, "spin-threads.nettrace", 4);
        seed_from_recording(recorded_dir, "call-tree.nettrace", 4);
        seed_from_recording(recorded_dir, "call-tree.nettrace", 6);
    }
}
