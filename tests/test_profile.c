/* The event profiles (nt_profile): known quantities of the ProfileLoad
 * traces in corpus/ (the workload wrote what it did into each trace as
 * Workloads-Profiles Expect(key, value) events), and a written trace with
 * the cases the recordings lack (version-0 allocation ticks, an open
 * contention, a stop without a start, frames resolved like samples). */
#include "ltest.h"
#include "nettrace_profile.h"
#include "nettrace_writer.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- expectations read back from a trace ---- */

typedef struct expect {
    char key[128];
    int64_t value;
} expect;

typedef struct expects {
    expect e[16];
    size_t n;
} expects;

static int on_expect(void *user, const nt_event *ev)
{
    expects *x = user;
    if (!ev->desc || strcmp(ev->desc->provider, "Workloads-Profiles") != 0 || ev->desc->event_id != 1 || x->n == 16)
        return 0;
    nt_field_value k, v;
    cr_assert_eq(nt_event_field(ev, "key", &k), NT_OK, "Expect event without a key");
    cr_assert_eq(nt_event_field(ev, "value", &v), NT_OK, "Expect event without a value");
    snprintf(x->e[x->n].key, sizeof x->e[x->n].key, "%s", k.v.str.ptr);
    x->e[x->n++].value = v.v.i;
    return 0;
}

static void read_expects(const char *file, expects *x)
{
    memset(x, 0, sizeof *x);
    uint8_t *data;
    size_t len;
    cr_assert(ts_read_file(ts_path(ts_own_corpus(), file), &data, &len), "cannot read corpus/%s", file);
    nt_callbacks cb = { .event = on_expect };
    nt_parser *p = nt_parser_new(&cb, x, NULL, NULL);
    cr_assert_eq(nt_parser_feed(p, data, len), NT_OK);
    cr_assert_eq(nt_parser_finish(p), NT_OK);
    nt_parser_free(p);
    free(data);
    cr_assert_gt(x->n, 0, "corpus/%s has no Workloads-Profiles Expect events", file);
}

static nt_profile *load(const char *file, bool keep)
{
    nt_profile_options po = { .keep_events = keep };
    nt_profile *p;
    char msg[256];
    nt_status s = nt_profile_from_file(ts_path(ts_own_corpus(), file), &po, &p, msg, sizeof msg);
    cr_assert_eq(s, NT_OK, "corpus/%s: %s", file, msg);
    return p;
}

/* Sum of the values (or counts) of the records of kind k with this label (and heap, unless -1). */
static int64_t sum(const nt_profile *p, nt_profile_kind k, const char *label, int heap, bool count)
{
    int64_t v = 0;
    for (size_t i = 0; i < nt_profile_record_count(p); i++) {
        nt_profile_record r = nt_profile_record_at(p, i);
        if (r.kind == k && (!label || strcmp(r.label, label) == 0) && (heap < 0 || (int)r.heap == heap) && !r.open)
            v += count ? r.count : r.value;
    }
    return v;
}

LTest(profile, alloc_known_mix)
{
    expects x;
    read_expects("profile-alloc.nettrace", &x);
    nt_profile *p = load("profile-alloc.nettrace", false);
    size_t checked = 0;
    for (size_t i = 0; i < x.n; i++) {
        char type[96], heap[8] = "soh"; /* the workload names the heap only for byte[] */
        if (sscanf(x.e[i].key, "alloc_bytes %95s %7s", type, heap) < 1)
            continue;
        int h = strcmp(heap, "soh") == 0 ? 0 : strcmp(heap, "loh") == 0 ? 1 : 2;
        int64_t got = sum(p, NT_PROFILE_ALLOC, type, h, false), want = x.e[i].value;
        /* A tick reports the ~100 KB allocated since the previous one, so a
         * phase's sampled bytes may be off by about one tick at each end. */
        int64_t tol = 256 * 1024;
        cr_expect(got >= want - tol && got <= want + tol, "%s on the %s: %lld sampled bytes, allocated %lld (+-%lld)",
                  type, heap, (long long)got, (long long)want, (long long)tol);
        checked++;
    }
    cr_expect_eq(checked, 4, "expected 4 alloc_bytes expectations, found %zu", checked);
    /* The workload's own allocations dominate, and each phase's allocations
     * resolve to its own method as the leaf frame. */
    for (size_t i = 0; i < nt_profile_record_count(p); i++) {
        nt_profile_record r = nt_profile_record_at(p, i);
        if (strcmp(r.label, "Workloads.ProfileLoad.Node") != 0)
            continue;
        nt_trace_stack st = nt_trace_stack_at(nt_profile_trace(p), r.stack_index);
        cr_assert_gt(st.frame_count, 0);
        cr_expect_str_eq(nt_trace_frame_at(nt_profile_trace(p), st.frame_ids[0])->method->name, "AllocNodes");
    }
    nt_profile_totals t = { 0 };
    nt_profile_totals_get(p, NT_PROFILE_ALLOC, &t);
    cr_expect_eq(t.events, 840, "allocation ticks: %llu", (unsigned long long)t.events);
    /* Memory follows stacks, not events: 840 ticks in a dozen records. */
    cr_expect_lt(t.records, 20, "records: %llu", (unsigned long long)t.records);
    nt_profile_free(p);
}

LTest(profile, exceptions_known_counts)
{
    expects x;
    read_expects("profile-exceptions.nettrace", &x);
    nt_profile *p = load("profile-exceptions.nettrace", false);
    size_t checked = 0;
    for (size_t i = 0; i < x.n; i++) {
        char type[96];
        if (sscanf(x.e[i].key, "throws %95s", type) != 1)
            continue;
        cr_expect_eq(sum(p, NT_PROFILE_EXCEPTIONS, type, -1, true), x.e[i].value, "%s", type);
        checked++;
    }
    cr_expect_eq(checked, 3);
    cr_expect_eq(sum(p, NT_PROFILE_EXCEPTIONS, NULL, -1, true), 600);
    nt_profile_free(p);
}

LTest(profile, contention_known_waits)
{
    expects x;
    read_expects("profile-contention.nettrace", &x);
    nt_profile *p = load("profile-contention.nettrace", false);
    int64_t count = -1, wait = -1;
    for (size_t i = 0; i < x.n; i++) {
        if (strcmp(x.e[i].key, "contentions") == 0)
            count = x.e[i].value;
        if (strcmp(x.e[i].key, "contention_wait_ns") == 0)
            wait = x.e[i].value;
    }
    cr_assert(count > 0 && wait > 0, "no contention expectations");
    nt_profile_totals t = { 0 };
    nt_profile_totals_get(p, NT_PROFILE_CONTENTION, &t);
    cr_expect_eq((int64_t)t.events, count);
    cr_expect_eq(t.open, 0);
    cr_expect_eq(t.unpaired_stops, 0);
    /* The waiter's Stopwatch brackets the runtime's start and stop events:
     * the traced wait is a little shorter, never longer, by at most 5%. */
    cr_expect(t.value <= wait && t.value >= wait - wait / 20, "traced wait %lld ns, measured %lld ns",
              (long long)t.value, (long long)wait);
    for (size_t i = 0; i < nt_profile_record_count(p); i++) {
        nt_profile_record r = nt_profile_record_at(p, i);
        nt_trace_stack st = nt_trace_stack_at(nt_profile_trace(p), r.stack_index);
        bool found = false;
        for (uint32_t k = 0; k < st.frame_count; k++)
            found = found || strcmp(nt_trace_frame_at(nt_profile_trace(p), st.frame_ids[k])->method->name, "WaitForGate") == 0;
        cr_expect(found, "a contention stack without WaitForGate");
    }
    nt_profile_free(p);
}

LTest(profile, gc_known_generations)
{
    expects x;
    read_expects("profile-gc.nettrace", &x);
    nt_profile *p = load("profile-gc.nettrace", false);
    int64_t per_gen[3] = { 0, 0, 0 };
    for (size_t i = 0; i < nt_profile_gc_count(p); i++) {
        const nt_gc *g = nt_profile_gc_at(p, i);
        cr_assert_lt(g->generation, 3);
        per_gen[g->generation]++;
        cr_expect(g->reason == 1 || g->reason == 10, "GC %u: reason %s, not induced", g->number,
                  nt_gc_reason_name(g->reason));
        cr_expect(g->pause_ns > 0 && g->suspension_ns >= 0 && g->end_ns > g->start_ns, "GC %u timings", g->number);
        cr_expect(g->suspend_begin_ns <= g->start_ns && g->restart_end_ns >= g->end_ns, "GC %u pause bounds",
                  g->number);
        cr_expect_gt(g->heap_after, 0);
    }
    size_t checked = 0;
    for (size_t i = 0; i < x.n; i++) {
        int gen;
        if (sscanf(x.e[i].key, "gcs gen%d", &gen) != 1 || gen < 0 || gen > 2)
            continue;
        cr_expect_eq(per_gen[gen], x.e[i].value, "gen%d: %lld GCs in the trace, the runtime counted %lld", gen,
                     (long long)per_gen[gen], (long long)x.e[i].value);
        checked++;
    }
    cr_expect_eq(checked, 3);
    cr_expect_eq(per_gen[0] + per_gen[1] + per_gen[2], 10);
    nt_profile_free(p);
}

/* One record per event gives the same totals as the merged records. */
LTest(profile, keep_events_same_totals)
{
    const char *files[] = { "profile-alloc.nettrace", "profile-exceptions.nettrace", "profile-contention.nettrace" };
    for (size_t f = 0; f < 3; f++) {
        nt_profile *a = load(files[f], false), *b = load(files[f], true);
        for (int k = NT_PROFILE_ALLOC; k <= NT_PROFILE_CONTENTION; k++) {
            nt_profile_totals ta = { 0 }, tb = { 0 };
            nt_profile_totals_get(a, k, &ta);
            nt_profile_totals_get(b, k, &tb);
            cr_expect_eq(ta.events, tb.events);
            cr_expect_eq(ta.value, tb.value);
            cr_expect_eq(tb.records, tb.events, "%s: one record per event", files[f]);
            cr_expect_eq(sum(a, k, NULL, -1, true), sum(b, k, NULL, -1, true));
        }
        nt_profile_free(a);
        nt_profile_free(b);
    }
}

/* ---- a written trace ---- */

static void define(nt_writer *w, uint32_t id, uint32_t *out)
{
    nt_event_desc d = { 0 };
    d.provider = NT_PROVIDER_RUNTIME;
    d.event_id = id;
    d.version = 0;
    d.level = 4;
    cr_assert_eq(nt_writer_define(w, &d, out), NT_OK, "%s", nt_writer_message(w));
}

static void event(nt_writer *w, uint32_t md, uint64_t thread, int64_t ts, uint32_t stack, const void *payload,
                  uint32_t size)
{
    nt_writer_event e = { .metadata_id = md, .thread_id = thread, .timestamp = ts, .stack_id = stack,
                          .payload = payload, .payload_size = size };
    cr_assert_eq(nt_writer_write_event(w, &e), NT_OK, "%s", nt_writer_message(w));
}

LTest(profile, written_edges)
{
    nt_membuf out = { 0 };
    nt_writer *w = nt_writer_new(NULL, nt_membuf_write, &out, NULL);
    cr_assert(w);
    nt_method m = { .which = NT_METHOD_LOAD, .method_id = 7, .module_id = 1, .start_address = 0x1000, .size = 0x100,
                    .flags = NT_METHOD_FLAG_JITTED, .declaring_type = "T", .name = "Hot", .signature = "",
                    .timestamp = 10 };
    cr_assert_eq(nt_writer_method(w, NULL, &m), NT_OK);
    uint32_t tick, start, stop, sid;
    define(w, 10, &tick);
    define(w, 81, &start);
    define(w, 91, &stop);
    uint64_t ips[] = { 0x1010, 0x1020 };
    cr_assert_eq(nt_writer_stack(w, ips, 2, &sid), NT_OK);
    /* GCAllocationTick V0: AllocationAmount u32, AllocationKind u32. */
    uint8_t small[8] = { 0xe8, 0x03, 0, 0, 0, 0, 0, 0 }, large[8] = { 0xf4, 0x01, 0, 0, 1, 0, 0, 0 };
    event(w, tick, 5, 20, sid, small, 8);
    event(w, tick, 5, 21, sid, large, 8);
    event(w, tick, 5, 22, sid, small, 8);
    /* ContentionStart/Stop V0: ContentionFlags u8, ClrInstanceID u16. */
    uint8_t flags[3] = { 0, 0, 0 };
    event(w, start, 5, 30, sid, flags, 3);
    event(w, stop, 5, 50, 0, flags, 3);
    event(w, stop, 6, 60, 0, flags, 3);  /* no start on thread 6 */
    event(w, start, 7, 70, sid, flags, 3); /* never stopped */
    nt_writer_event hdr = { .thread_id = 5, .timestamp = 80, .stack_id = sid };
    cr_assert_eq(nt_writer_sample(w, &hdr, NT_SAMPLE_MANAGED), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
    nt_writer_free(w);

    nt_profile *p;
    char msg[256];
    cr_assert_eq(nt_profile_from_buffer(out.data, out.len, NULL, &p, msg, sizeof msg), NT_OK, "%s", msg);
    const nt_trace *t = nt_profile_trace(p);
    cr_assert_eq(nt_trace_sample_count(t), 1);
    nt_trace_sample smp = nt_trace_sample_at(t, 0);
    nt_profile_totals at = { 0 }, ct = { 0 };
    nt_profile_totals_get(p, NT_PROFILE_ALLOC, &at);
    nt_profile_totals_get(p, NT_PROFILE_CONTENTION, &ct);
    cr_expect_eq(at.events, 3);
    cr_expect_eq(at.value, 2500);
    cr_expect_eq(at.records, 2, "two heaps, one stack: two records");
    cr_expect_eq(sum(p, NT_PROFILE_ALLOC, "", 0, false), 2000);
    cr_expect_eq(sum(p, NT_PROFILE_ALLOC, "", 1, false), 500);
    cr_expect_eq(ct.events, 2);
    cr_expect_eq(ct.open, 1);
    cr_expect_eq(ct.unpaired_stops, 1);
    cr_expect_eq(ct.value, 20, "the closed wait: 50 - 30 ns");
    bool saw_open = false;
    for (size_t i = 0; i < nt_profile_record_count(p); i++) {
        nt_profile_record r = nt_profile_record_at(p, i);
        nt_trace_stack st = nt_trace_stack_at(t, r.stack_index);
        /* Every event's frames are the sample's: the same records, names and ip - 1 rule. */
        cr_assert_eq(st.frame_count, smp.frame_count);
        for (uint32_t k = 0; k < st.frame_count; k++)
            cr_expect_eq(nt_trace_frame_at(t, st.frame_ids[k])->method_index, nt_trace_frame_at(t, smp.frame_ids[k])->method_index);
        cr_expect_str_eq(nt_trace_frame_at(t, st.frame_ids[0])->method->name, "Hot");
        if (r.kind == NT_PROFILE_CONTENTION && r.open) {
            saw_open = true;
            cr_expect_eq(r.thread_id, 7);
            cr_expect_eq(r.value, 10, "open from 70 to the last event at 80");
        }
    }
    cr_expect(saw_open);
    nt_profile_free(p);
    nt_membuf_free(&out);
}

/* ---- records part where the code at their addresses changed (code_epoch.h) ---- */

static void method_record(nt_writer *w, nt_record_event which, int64_t ts, uint64_t id, uint64_t start, const char *name)
{
    nt_method m = { .which = which, .method_id = id, .module_id = 1, .start_address = start, .size = 0x100,
                    .flags = NT_METHOD_FLAG_JITTED, .declaring_type = "T", .name = name, .signature = "",
                    .timestamp = ts };
    cr_assert_eq(nt_writer_method(w, NULL, &m), NT_OK, "%s", nt_writer_message(w));
}

/* Allocations on one stack around a reload of its code (Hot gives way to
 * Warm at the same address), and a reload of code elsewhere that no stack
 * holds (Far, Farther): the events merge into a record per code version,
 * and only there. */
static void write_reloads(nt_membuf *out)
{
    nt_writer *w = nt_writer_new(NULL, nt_membuf_write, out, NULL);
    cr_assert(w);
    uint32_t tick, sid;
    define(w, 10, &tick);
    uint64_t ips[] = { 0x1010, 0x1020 };
    cr_assert_eq(nt_writer_stack(w, ips, 2, &sid), NT_OK);
    uint8_t small[8] = { 0xe8, 0x03, 0, 0, 0, 0, 0, 0 };
    method_record(w, NT_RECORD_LOAD, 10, 7, 0x1000, "Hot");
    event(w, tick, 5, 20, sid, small, 8);
    event(w, tick, 5, 21, sid, small, 8);
    method_record(w, NT_RECORD_UNLOAD, 30, 7, 0x1000, "Hot");
    method_record(w, NT_RECORD_LOAD, 40, 8, 0x1000, "Warm");
    event(w, tick, 5, 50, sid, small, 8);
    method_record(w, NT_RECORD_LOAD, 60, 9, 0x90000, "Far");
    method_record(w, NT_RECORD_UNLOAD, 61, 9, 0x90000, "Far");
    method_record(w, NT_RECORD_LOAD, 62, 10, 0x90000, "Farther");
    event(w, tick, 5, 70, sid, small, 8);
    nt_writer_event hdr = { .thread_id = 5, .timestamp = 80, .stack_id = sid };
    cr_assert_eq(nt_writer_sample(w, &hdr, NT_SAMPLE_MANAGED), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
    nt_writer_free(w);
}

static void expect_a_record_per_code_version(const nt_profile *p, const char *how)
{
    const nt_trace *t = nt_profile_trace(p);
    cr_assert_eq(nt_profile_record_count(p), 2, "%s: %zu records, one per version of the code at 0x1000", how,
                 nt_profile_record_count(p));
    const char *want[] = { "Hot", "Warm" };
    const int64_t count[] = { 2, 2 };
    for (size_t i = 0; i < 2; i++) {
        nt_profile_record r = nt_profile_record_at(p, i);
        nt_trace_stack st = nt_trace_stack_at(t, r.stack_index);
        const nt_trace_method *m = nt_trace_frame_at(t, st.frame_ids[0])->method;
        cr_expect(m && strcmp(m->name, want[i]) == 0, "%s: record %zu names %s, not %s", how, i, m ? m->name : "nothing",
                  want[i]);
        cr_expect_eq(r.count, count[i], "%s: record %zu merges %lld events", how, i, (long long)r.count);
    }
}

LTest(profile, records_part_only_where_the_code_of_their_stack_changed)
{
    nt_membuf out = { 0 };
    write_reloads(&out);
    nt_profile *p;
    char msg[256];
    cr_assert_eq(nt_profile_from_buffer(out.data, out.len, NULL, &p, msg, sizeof msg), NT_OK, "%s", msg);
    expect_a_record_per_code_version(p, "file");
    nt_profile_free(p);
    nt_membuf_free(&out);
}

/* A window gets its records at its end, after its events: the change of code
 * must still part them where it came in the stream, as in the file. */
LTest(profile, a_window_parts_records_where_the_stream_changed_code)
{
    nt_membuf out = { 0 };
    write_reloads(&out);
    nt_trace_window *w = nt_profile_window_new(NULL, NULL);
    cr_assert(w);
    nt_callbacks cb;
    nt_profile_window_callbacks(&cb);
    nt_parser *ps = nt_parser_new(&cb, w, NULL, NULL);
    cr_assert(ps);
    cr_assert_eq(nt_parser_feed(ps, out.data, out.len), NT_OK);
    cr_assert_eq(nt_parser_finish(ps), NT_OK);
    nt_profile *p;
    cr_assert_eq(nt_profile_window_take(w, &p), NT_OK);
    expect_a_record_per_code_version(p, "window");
    nt_profile_free(p);
    nt_parser_free(ps);
    nt_trace_window_free(w);
    nt_membuf_free(&out);
}
