/* What selects and weighs the profiles beyond the records themselves, on
 * traces written with the writer so every expected number is worked out by
 * hand: --from/--to windows applied per event (merged records hold only the
 * events inside; a contention wait counts by its start), the wall profile's
 * weights (ns to the thread's next sample, managed and external alike),
 * exception messages as an optional label, and the memory of an allocation
 * profile, which follows its distinct stacks, not the number of ticks. */
#include "ltest.h"
#include "nettrace_profile.h"
#include "nettrace_writer.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

/* Runtime event ids. */
enum { EV_ALLOC = 10, EV_EXCEPTION = 80, EV_CONTENTION_START = 81, EV_CONTENTION_STOP = 91 };

static nt_writer *open_writer(nt_membuf *out, int64_t sync_qpc)
{
    nt_writer_options wo = { 0 };
    nt_writer_options_default(&wo);
    wo.sync_qpc = sync_qpc; /* the trace starts at sync_qpc ns (frequency 1 GHz) */
    nt_writer *w = nt_writer_new(&wo, nt_membuf_write, out, NULL);
    cr_assert(w);
    return w;
}

static uint32_t define(nt_writer *w, uint32_t id, uint32_t version)
{
    nt_event_desc d = { 0 };
    d.provider = NT_PROVIDER_RUNTIME;
    d.event_id = id;
    d.version = version;
    d.level = 4;
    uint32_t md;
    cr_assert_eq(nt_writer_define(w, &d, &md), NT_OK, "%s", nt_writer_message(w));
    return md;
}

static void event(nt_writer *w, uint32_t md, uint64_t thread, int64_t ts, uint32_t stack, const void *payload,
                  uint32_t size)
{
    nt_writer_event e = { .metadata_id = md, .thread_id = thread, .timestamp = ts, .stack_id = stack,
                          .payload = payload, .payload_size = size };
    cr_assert_eq(nt_writer_write_event(w, &e), NT_OK, "%s", nt_writer_message(w));
}

/* A method "name" covering [start, start + 0x100), loaded at time 1. */
static void method(nt_writer *w, uint64_t id, uint64_t start, const char *name)
{
    nt_method m = { .which = NT_RECORD_LOAD, .method_id = id, .module_id = 1, .start_address = start, .size = 0x100,
                    .flags = NT_METHOD_FLAG_JITTED, .declaring_type = "T", .name = name, .signature = "",
                    .timestamp = 1 };
    cr_assert_eq(nt_writer_method(w, NULL, &m), NT_OK, "%s", nt_writer_message(w));
}

static uint32_t stack1(nt_writer *w, uint64_t ip)
{
    uint32_t id;
    cr_assert_eq(nt_writer_stack(w, &ip, 1, &id), NT_OK);
    return id;
}

/* GCAllocationTick V0: AllocationAmount u32, AllocationKind u32. */
static void alloc_tick(nt_writer *w, uint32_t md, uint64_t thread, int64_t ts, uint32_t stack, uint32_t bytes,
                       uint32_t heap)
{
    uint8_t p[8];
    memcpy(p, &bytes, 4); /* little-endian hosts only, as the writer's own tests */
    memcpy(p + 4, &heap, 4);
    event(w, md, thread, ts, stack, p, 8);
}

static nt_profile *build(const nt_membuf *b, const nt_profile_options *po)
{
    nt_profile *p;
    char msg[256];
    cr_assert_eq(nt_profile_from_buffer(b->data, b->len, po, &p, msg, sizeof msg), NT_OK, "%s", msg);
    return p;
}

/* ---- time windows ---- */

/* The trace starts at 1000 ns.  Ticks of 100..400 bytes at 1100..1400 on one
 * stack merge into one record; a window keeps only its own ticks. */
static void write_window_trace(nt_membuf *out)
{
    nt_writer *w = open_writer(out, 1000);
    method(w, 7, 0x1000, "Hot");
    uint32_t tick = define(w, EV_ALLOC, 0), exc = define(w, EV_EXCEPTION, 0);
    uint32_t start = define(w, EV_CONTENTION_START, 0), stop = define(w, EV_CONTENTION_STOP, 0);
    uint32_t sid = stack1(w, 0x1010);
    for (int i = 1; i <= 4; i++)
        alloc_tick(w, tick, 5, 1000 + 100 * i, sid, 100u * (uint32_t)i, 0);
    event(w, exc, 5, 1250, sid, NULL, 0);
    event(w, exc, 5, 1500, sid, NULL, 0);
    uint8_t flags[3] = { 0, 0, 0 }; /* ContentionStart/Stop V0: ContentionFlags u8, ClrInstanceID u16 */
    event(w, start, 8, 1100, sid, flags, 3);  /* starts before the window: not counted */
    event(w, start, 9, 1300, sid, flags, 3);  /* starts inside, stops after it: counted whole */
    event(w, stop, 10, 1320, 0, flags, 3);    /* no start, inside the window: unpaired */
    event(w, start, 12, 1340, sid, flags, 3); /* starts inside, never stops: open */
    event(w, stop, 8, 1500, 0, flags, 3);     /* pairs with 8's start: not unpaired */
    event(w, stop, 11, 1700, 0, flags, 3);    /* no start, outside: not counted */
    event(w, stop, 9, 2000, 0, flags, 3);
    nt_writer_event hdr = { .thread_id = 5, .timestamp = 3000, .stack_id = sid };
    cr_assert_eq(nt_writer_sample(w, &hdr, NT_SAMPLE_MANAGED), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
    nt_writer_free(w);
}

static void check_window(const nt_profile *p)
{
    nt_profile_totals at = { 0 }, et = { 0 }, ct = { 0 };
    nt_profile_totals_get(p, NT_PROFILE_ALLOC, &at);
    nt_profile_totals_get(p, NT_PROFILE_EXCEPTIONS, &et);
    nt_profile_totals_get(p, NT_PROFILE_CONTENTION, &ct);
    cr_expect_eq(at.events, 2, "ticks at 1200 and 1300 only: %llu", (unsigned long long)at.events);
    cr_expect_eq(at.value, 500);
    cr_expect_eq(at.records, 1);
    cr_expect_eq(et.events, 1, "the throw at 1250 only");
    cr_expect_eq(ct.events, 2, "the waits starting at 1300 and 1340: %llu", (unsigned long long)ct.events);
    cr_expect_eq(ct.value, 700, "the closed wait 1300 -> 2000 counts whole: %lld", (long long)ct.value);
    cr_expect_eq(ct.open, 1);
    cr_expect_eq(ct.unpaired_stops, 1, "only the stop at 1320");
    size_t alloc_records = 0;
    for (size_t i = 0; i < nt_profile_record_count(p); i++) {
        nt_profile_record r = nt_profile_record_at(p, i);
        if (r.kind == NT_PROFILE_ALLOC) {
            alloc_records++;
            cr_expect_eq(r.value, 500, "the merged record holds only the ticks inside: %lld", (long long)r.value);
            cr_expect_eq(r.count, 2);
            cr_expect_eq(r.time_ns, 1200, "its first event inside");
        } else if (r.kind == NT_PROFILE_CONTENTION) {
            cr_expect(r.thread_id == 9 || r.thread_id == 12, "wait of thread %llu", (unsigned long long)r.thread_id);
            if (r.thread_id == 12)
                cr_expect(r.open && r.value == 3000 - 1340);
        }
    }
    cr_expect_eq(alloc_records, 1);
}

/* The window [from, to) checked on the written trace; the profile is returned for more checks. */
static nt_profile *windowed(const nt_membuf *out, nt_time_bound from, nt_time_bound to)
{
    nt_profile_options po = { .from = from, .to = to };
    nt_profile *p = build(out, &po);
    check_window(p);
    return p;
}

LTest(profile_select, window_relative_absolute_and_mixed)
{
    nt_membuf out = { 0 };
    write_window_trace(&out);
    /* 150 and 350 ns after the start at 1000, on the trace clock, and one end of each. */
    nt_profile_free(windowed(&out, (nt_time_bound){ true, false, 150 }, (nt_time_bound){ true, false, 350 }));
    nt_profile_free(windowed(&out, (nt_time_bound){ true, true, 1150 }, (nt_time_bound){ true, true, 1350 }));
    nt_profile *p = windowed(&out, (nt_time_bound){ true, true, 1150 }, (nt_time_bound){ true, false, 350 });
    /* The window does not cut the span or the samples. */
    int64_t first, last;
    nt_profile_span(p, &first, &last);
    cr_expect_leq(first, 1100, "the first event read (a method load at 1), not the window's");
    cr_expect_eq(last, 3000);
    cr_expect_eq(nt_trace_sample_count(nt_profile_trace(p)), 1);
    nt_profile_free(p);
    /* Without a window: everything. */
    p = build(&out, NULL);
    nt_profile_totals at = { 0 };
    nt_profile_totals_get(p, NT_PROFILE_ALLOC, &at);
    cr_expect_eq(at.value, 1000);
    nt_profile_free(p);
    nt_membuf_free(&out);
}

LTest(profile_select, window_with_keep_events_gives_the_same_events)
{
    nt_membuf out = { 0 };
    write_window_trace(&out);
    nt_profile_options po = { .keep_events = true, .from = { true, false, 150 }, .to = { true, false, 350 } };
    nt_profile *p = build(&out, &po);
    size_t ticks = 0;
    for (size_t i = 0; i < nt_profile_record_count(p); i++) {
        nt_profile_record r = nt_profile_record_at(p, i);
        if (r.kind == NT_PROFILE_ALLOC) {
            cr_expect(r.time_ns >= 1150 && r.time_ns < 1350, "tick at %lld", (long long)r.time_ns);
            ticks++;
        }
    }
    cr_expect_eq(ticks, 2);
    nt_profile_free(p);
    nt_membuf_free(&out);
}

LTest(profile_select, time_bound_resolves_from_the_header)
{
    nt_trace_info info = { 0 };
    info.sync_qpc = 2000;
    info.qpc_frequency = 1000; /* 2 s after the clock's origin */
    nt_time_bound rel = { true, false, 1500 }, abs_ = { true, true, 1500 }, unset = { false, false, 1500 };
    cr_expect_eq(nt_time_bound_resolve(&rel, &info), 2000000000 + 1500);
    cr_expect_eq(nt_time_bound_resolve(&abs_, &info), 1500);
    cr_expect_eq(nt_time_bound_resolve(&unset, &info), 0);
    nt_time_bound huge = { true, false, INT64_MAX - 5 };
    cr_expect_eq(nt_time_bound_resolve(&huge, &info), INT64_MAX, "saturates");
}

/* ---- the wall profile ---- */

/* Thread 1: managed at 1000, external at 1300, managed at 1700 (gaps 300,
 * 400, then the sampling interval 1 ms); thread 2: external at 1100 and 1200
 * (gap 100, then 1 ms).  Managed samples are in Run, external ones in Wait. */
static nt_trace *wall_trace(bool counted, const nt_membuf **keep)
{
    static nt_membuf out;
    memset(&out, 0, sizeof out);
    nt_writer *w = open_writer(&out, 0);
    method(w, 1, 0x1000, "Run");
    method(w, 2, 0x2000, "Wait");
    uint32_t run = stack1(w, 0x1010), wait = stack1(w, 0x2010);
    const struct { uint64_t thread; int64_t ts; bool managed; } s[] = {
        { 1, 1000, true }, { 2, 1100, false }, { 2, 1200, false }, { 1, 1300, false }, { 1, 1700, true },
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        nt_writer_event h = { .thread_id = s[i].thread, .timestamp = s[i].ts, .stack_id = s[i].managed ? run : wait };
        cr_assert_eq(nt_writer_sample(w, &h, s[i].managed ? NT_SAMPLE_MANAGED : NT_SAMPLE_EXTERNAL), NT_OK);
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
    nt_writer_free(w);
    nt_trace_options o = { .aggregate = counted };
    nt_trace *t;
    cr_assert_eq(nt_trace_from_buffer(out.data, out.len, &o, &t, NULL, 0), NT_OK);
    *keep = &out;
    return t;
}

static const nt_top_row *row(const nt_top_table *tb, const char *name)
{
    for (size_t i = 0; i < tb->row_count; i++)
        if (strstr(tb->rows[i].name, name))
            return &tb->rows[i];
    cr_assert_fail("no row %s", name);
    return NULL;
}

LTest(profile_select, wall_weights_are_gaps_to_the_threads_next_sample)
{
    const nt_membuf *out;
    nt_trace *t = wall_trace(false, &out);
    cr_assert_eq(nt_trace_sample_count(t), 5);
    int64_t wall[5];
    cr_assert_eq(nt_trace_wall_ns(t, wall), NT_OK);
    const int64_t want[5] = { 300, 100, 1000000, 400, 1000000 };
    for (size_t i = 0; i < 5; i++)
        cr_expect_eq(wall[i], want[i], "sample %zu (at %lld): %lld ns", i, (long long)nt_trace_sample_at(t, i).time_ns,
                     (long long)wall[i]);
    nt_top_options to = { .weight = NT_WEIGHT_TIME };
    nt_top *top;
    cr_assert_eq(nt_top_build(t, &to, &top), NT_OK);
    const nt_top_table *tb = &top->tables[0];
    cr_expect_eq(tb->samples, 300 + 100 + 1000000 + 400 + 1000000);
    cr_expect_eq(row(tb, "Run")->exclusive, 300 + 1000000, "managed samples of thread 1");
    cr_expect_eq(row(tb, "Wait")->exclusive, 400 + 100 + 1000000, "external samples of both threads");
    cr_expect_str_eq(tb->rows[0].name, "?!T.Wait", "Wait weighs most by time though Run has as many samples");
    nt_top_free(top);
    /* Counted by sample the same trace ranks by sample count: Wait 3, Run 2. */
    to.weight = NT_WEIGHT_SAMPLES;
    cr_assert_eq(nt_top_build(t, &to, &top), NT_OK);
    cr_expect_eq(top->tables[0].samples, 5);
    cr_expect_eq(row(&top->tables[0], "Run")->exclusive, 2);
    nt_top_free(top);
    /* A window keeps a sample's full gap even when the next sample lies outside it. */
    to = (nt_top_options){ .weight = NT_WEIGHT_TIME, .filter = { .from = { true, true, 1150 }, .to = { true, true, 1350 } } };
    cr_assert_eq(nt_top_build(t, &to, &top), NT_OK);
    cr_expect_eq(top->tables[0].samples, 1000000 + 400, "samples at 1200 (thread 2's last) and 1300");
    nt_top_free(top);
    nt_trace_free(t);
    nt_membuf_free((nt_membuf *)out);
}

LTest(profile_select, wall_weights_of_a_counted_trace_are_the_same)
{
    const nt_membuf *out;
    nt_trace *full = wall_trace(false, &out);
    nt_membuf_free((nt_membuf *)out);
    nt_trace *counted = wall_trace(true, &out);
    nt_membuf_free((nt_membuf *)out);
    nt_top_options to = { .weight = NT_WEIGHT_TIME, .by_thread = true };
    nt_top *a, *b;
    cr_assert_eq(nt_top_build(full, &to, &a), NT_OK);
    cr_assert_eq(nt_top_build(counted, &to, &b), NT_OK);
    cr_assert_eq(a->table_count, 2);
    cr_assert_eq(b->table_count, 2);
    for (size_t i = 0; i < 2; i++) {
        cr_expect_eq(a->tables[i].samples, b->tables[i].samples, "thread table %zu", i);
        cr_expect_eq(a->tables[i].thread_id, b->tables[i].thread_id);
    }
    cr_expect_eq(a->tables[0].samples, 300 + 400 + 1000000, "thread 1");
    cr_expect_eq(a->tables[1].samples, 100 + 1000000, "thread 2");
    nt_top_free(a);
    nt_top_free(b);
    /* A time window over counted samples cannot be served. */
    to.filter.from.set = true;
    nt_top *none;
    cr_expect_eq(nt_top_build(counted, &to, &none), NT_ERR_INVALID_ARG);
    cr_expect_null(none);
    nt_trace_free(full);
    nt_trace_free(counted);
}

/* ---- exception messages ---- */

/* ExceptionThrown_V1: ExceptionType, ExceptionMessage (UTF-16, NUL-ended),
 * ExceptionEIP (pointer), ExceptionHRESULT u32, ExceptionFlags u16, ClrInstanceID u16. */
static uint32_t throw_payload(uint8_t *p, const char *type, const char *message)
{
    uint32_t n = 0;
    for (const char *s = type;; s++) {
        p[n++] = (uint8_t)*s;
        p[n++] = 0;
        if (!*s)
            break;
    }
    for (const char *s = message;; s++) {
        p[n++] = (uint8_t)*s;
        p[n++] = 0;
        if (!*s)
            break;
    }
    memset(p + n, 0, 8 + 4 + 2 + 2);
    return n + 16;
}

LTest(profile_select, exception_messages_are_an_optional_label)
{
    nt_membuf out = { 0 };
    nt_writer *w = open_writer(&out, 0);
    method(w, 7, 0x1000, "Thrower");
    uint32_t exc = define(w, EV_EXCEPTION, 1), sid = stack1(w, 0x1010);
    const char *messages[] = { "bad a", "bad b", "bad a", "bad a" };
    for (int i = 0; i < 4; i++) {
        uint8_t p[256];
        event(w, exc, 5, 100 + i, sid, p, throw_payload(p, "System.Exception", messages[i]));
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
    nt_writer_free(w);

    nt_profile *p = build(&out, NULL);
    cr_expect_eq(nt_profile_record_count(p), 1, "by default throws of one type merge");
    nt_profile_record r = nt_profile_record_at(p, 0);
    cr_expect_str_eq(r.label, "System.Exception");
    cr_expect_str_eq(r.message, "");
    cr_expect_eq(r.count, 4);
    nt_profile_free(p);

    nt_profile_options po = { .exception_messages = true };
    p = build(&out, &po);
    cr_assert_eq(nt_profile_record_count(p), 2, "by type and message");
    for (size_t i = 0; i < 2; i++) {
        r = nt_profile_record_at(p, i);
        cr_expect_str_eq(r.label, "System.Exception");
        cr_expect_eq(r.count, strcmp(r.message, "bad a") == 0 ? 3 : 1, "%s", r.message);
    }
    /* The labels as folded shows them with --by-label. */
    nt_membuf folded = { 0 };
    nt_profile_export_options eo = { .kind = NT_PROFILE_EXCEPTIONS, .with_label = true };
    cr_assert_eq(nt_profile_export_folded(p, &eo, nt_membuf_write, &folded), NT_OK);
    cr_assert_eq(nt_membuf_write(&folded, "", 1), 0);
    cr_expect_str_eq((const char *)folded.data,
                     "System.Exception: bad a;?!T.Thrower 3\nSystem.Exception: bad b;?!T.Thrower 1\n");
    nt_membuf_free(&folded);
    nt_profile_free(p);
    nt_membuf_free(&out);
}

/* ---- memory ---- */

static int fd_write(void *user, const void *data, size_t len)
{
    return write(*(int *)user, data, len) == (ssize_t)len ? 0 : 1;
}

/* n allocation ticks over 4 stacks, 2 heaps and 2 threads, into a file. */
static void write_ticks(const char *path, uint32_t n)
{
    int fd = open(path, O_WRONLY | O_TRUNC);
    cr_assert_geq(fd, 0);
    nt_writer *w = nt_writer_new(NULL, fd_write, &fd, NULL);
    cr_assert(w);
    method(w, 7, 0x1000, "Allocator");
    uint32_t tick = define(w, EV_ALLOC, 0), ids[4];
    for (uint32_t s = 0; s < 4; s++) {
        uint64_t ips[8];
        for (uint32_t k = 0; k < 8; k++)
            ips[k] = 0x1010 + s * 0x20 + k;
        cr_assert_eq(nt_writer_stack(w, ips, 8, &ids[s]), NT_OK);
    }
    for (uint32_t i = 0; i < n; i++)
        alloc_tick(w, tick, 100 + i % 2, 1000 + (int64_t)i * 10, ids[(i / 2) % 4], 100000, (i / 8) % 2);
    cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
    nt_writer_free(w);
    close(fd);
}

static size_t alloc_profile_peak(const char *path, uint32_t n)
{
    write_ticks(path, n);
    nt_profile_options po = { .events_only = true }; /* as 'nettrace top --profile alloc' builds it */
    nt_profile *p;
    char msg[256];
    cr_assert_eq(nt_profile_from_file(path, &po, &p, msg, sizeof msg), NT_OK, "%s", msg);
    nt_profile_totals at = { 0 };
    nt_profile_totals_get(p, NT_PROFILE_ALLOC, &at);
    cr_assert_eq(at.events, n);
    cr_assert_eq(at.records, 16, "4 stacks x 2 heaps x 2 threads");
    size_t peak = nt_profile_memory_peak(p);
    cr_log_info("%u ticks: peak %zu bytes", n, peak);
    nt_profile_free(p);
    return peak;
}

LTest(profile_select, alloc_profile_memory_is_flat_in_trace_length)
{
    char path[] = "/tmp/nettrace-ticks-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    size_t small = alloc_profile_peak(path, 20000), large = alloc_profile_peak(path, 200000);
    unlink(path);
    cr_expect_gt(small, 0, "the profile reports its memory");
    /* Ten times the ticks, the same records: the peak must not follow the
     * ticks (one byte per tick more would already be 180 KB). */
    cr_expect_leq(large, small + small / 20, "20000 ticks: %zu bytes at the peak; 200000 ticks: %zu", small, large);
}
