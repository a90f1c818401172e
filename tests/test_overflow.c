/* Signed overflow on hostile numbers (issue 21, item 6): a trace whose clock
 * runs from near INT64_MIN to near INT64_MAX and whose GC heap sizes and
 * allocation amounts are near INT64_MAX.  The GC timeline, the event
 * profiles, nt_time_bound_resolve and the tool's gc, info, samples and
 * profile formatters saturate (as nt_ticks_to_ns does) instead of
 * overflowing: under the sanitizer build an overflow aborts the test, and the
 * printed values are checked to be the clamped ones, never negative pauses. */
#include <criterion/criterion.h>

#include "cli_run.h"
#include "support.h"
#include "nettrace_profile.h"
#include "nettrace_writer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LO (INT64_MIN + ((int64_t)1 << 40))
#define HI (INT64_MAX - 1000)
#define SYNC_MARKER 0x5EC05EC0

static void le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t define(nt_writer *w, uint32_t id, uint32_t version)
{
    nt_event_desc d = { .provider = NT_PROVIDER_RUNTIME, .event_id = id, .version = version, .level = 4 };
    uint32_t md;
    cr_assert_eq(nt_writer_define(w, &d, &md), NT_OK, "%s", nt_writer_message(w));
    return md;
}

static void event(nt_writer *w, uint32_t md, int64_t ts, uint32_t stack, const void *payload, uint32_t size)
{
    nt_writer_event e = { .metadata_id = md, .thread_id = 5, .timestamp = ts, .stack_id = stack, .payload = payload,
                          .payload_size = size, .is_sorted = false };
    cr_assert_eq(nt_writer_write_event(w, &e), NT_OK, "%s", nt_writer_message(w));
}

/* The hostile trace, in memory (*len bytes). */
static uint8_t *hostile_trace(size_t *len)
{
    nt_membuf out = { 0 };
    nt_writer_options o;
    nt_writer_options_default(&o);
    /* The trace "starts" at the top of the clock, so relative times run to -2^64: the writer refuses a
     * header readers cannot take, so the sync is written as a marker and patched below. */
    o.sync_qpc = SYNC_MARKER;
    nt_writer *w = nt_writer_new(&o, nt_membuf_write, &out, NULL);
    cr_assert(w);
    uint32_t stack;
    uint64_t ips[] = { 0x1010 };
    cr_assert_eq(nt_writer_stack(w, ips, 1, &stack), NT_OK);
    uint32_t gc_start = define(w, 1, 1), gc_end = define(w, 2, 1), heap = define(w, 4, 1), tick = define(w, 10, 2),
             c_start = define(w, 81, 0), c_stop = define(w, 91, 0);
    uint8_t start1[18] = { 0 }, end1[10] = { 0 }, start2[18] = { 0 }, stats[94] = { 0 }, alloc[34] = { 0 },
            flags[3] = { 0 };
    le(start1, 1, 4); /* Count 1, Depth 2 */
    le(start1 + 4, 2, 4);
    le(end1, 1, 4);
    le(start2, 2, 4);
    for (int k = 0; k < 8; k++) /* GenerationSize0..3 and TotalPromotedSize0..3 */
        le(stats + 8 * k, (uint64_t)INT64_MAX, 8);
    le(alloc + 10, (uint64_t)INT64_MAX, 8); /* AllocationAmount64 */
    alloc[26] = 'T';                        /* TypeName "T" */
    event(w, c_start, LO, stack, flags, 3);
    event(w, gc_start, LO, 0, start1, sizeof start1);
    event(w, gc_end, HI, 0, end1, sizeof end1); /* a pause of ~2^64 ns */
    event(w, heap, HI, 0, stats, sizeof stats);  /* a heap of 8 x INT64_MAX */
    event(w, tick, HI, stack, alloc, sizeof alloc);
    event(w, tick, HI, stack, alloc, sizeof alloc); /* 2 x INT64_MAX allocated */
    event(w, gc_start, HI, 0, start2, sizeof start2); /* heap before: the heap after plus the allocations */
    event(w, c_stop, HI, 0, flags, 3);                 /* a contention of ~2^64 ns */
    nt_writer_event hdr = { .thread_id = 5, .timestamp = LO, .stack_id = stack };
    cr_assert_eq(nt_writer_sample(w, &hdr, NT_SAMPLE_MANAGED), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
    nt_writer_free(w);
    uint8_t marker[8], hi[8];
    le(marker, SYNC_MARKER, 8);
    le(hi, (uint64_t)HI, 8);
    uint8_t *at = memmem(out.data, out.len, marker, 8);
    cr_assert(at, "the header's sync_qpc");
    memcpy(at, hi, 8);
    *len = out.len;
    return out.data;
}

Test(overflow, the_gc_timeline_and_profiles_saturate)
{
    size_t len;
    uint8_t *d = hostile_trace(&len);
    nt_profile *p;
    char msg[256];
    cr_assert_eq(nt_profile_from_buffer(d, len, NULL, &p, msg, sizeof msg), NT_OK, "%s", msg);
    cr_assert_eq(nt_profile_gc_count(p), 2);
    const nt_gc *g1 = nt_profile_gc_at(p, 0), *g2 = nt_profile_gc_at(p, 1);
    cr_expect_eq(g1->pause_ns, INT64_MAX, "a pause past INT64_MAX saturates: %" PRId64, g1->pause_ns);
    cr_expect_eq(g1->heap_after, INT64_MAX, "%" PRId64, g1->heap_after);
    cr_expect_eq(g1->promoted, INT64_MAX, "%" PRId64, g1->promoted);
    cr_expect_eq(g2->heap_before, INT64_MAX, "%" PRId64, g2->heap_before);
    nt_profile_totals at, ct;
    nt_profile_totals_get(p, NT_PROFILE_ALLOC, &at);
    nt_profile_totals_get(p, NT_PROFILE_CONTENTION, &ct);
    cr_expect_eq(at.events, 2);
    cr_expect_eq(at.value, INT64_MAX, "%" PRId64, at.value);
    cr_expect_eq(ct.events, 1);
    cr_expect_eq(ct.value, INT64_MAX, "%" PRId64, ct.value);
    for (size_t i = 0; i < nt_profile_record_count(p); i++)
        cr_expect_geq(nt_profile_record_at(p, i).value, 0);
    nt_profile_free(p);
    free(d);
}

Test(overflow, time_bounds_saturate_before_a_negative_start)
{
    nt_trace_info info = { .qpc_frequency = 1000000000, .sync_qpc = -4000000000000000000 };
    nt_time_bound b;
    cr_assert(nt_time_bound_parse("+9000000000s", &b)); /* 9e18 ns after a start at -4e18 */
    cr_expect_eq(nt_time_bound_resolve(&b, &info), 5000000000000000000);
    info.sync_qpc = INT64_MAX;
    cr_expect_eq(nt_time_bound_resolve(&b, &info), INT64_MAX);
    info.sync_qpc = INT64_MIN;
    cr_assert(nt_time_bound_parse("-9000000000s", &b) || nt_time_bound_parse("0s", &b));
    cr_expect_leq(nt_time_bound_resolve(&b, &info), INT64_MIN + 9000000000000000000);
}

/* Every formatter over the hostile trace exits 0 with no sanitizer report, and no pause or span is negative. */
Test(overflow, the_formatters_saturate)
{
    size_t len;
    uint8_t *d = hostile_trace(&len);
    char path[64];
    snprintf(path, sizeof path, "/tmp/nt-overflow-%d.nettrace", (int)getpid());
    cr_assert(ts_write_file(path, d, len), "%s", path);
    free(d);
    const char *cmds[][6] = { { "gc", path }, { "gc", "--json", path }, { "info", path }, { "info", "--json", path },
                              { "samples", "--relative", path }, { "samples", "--profile", "alloc", path },
                              { "samples", "--profile", "contention", "--relative", path }, { "top", "--profile", "alloc", path },
                              { "events", path } };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        cli_run r = cli_run_nettrace(cmds[i], true);
        cr_expect_eq(r.status, 0, "%s %s: exit %d: %s", cmds[i][0], cmds[i][1], r.status, r.err);
        cr_expect(!strstr(r.err, "runtime error"), "%s %s: %s", cmds[i][0], cmds[i][1], r.err);
        if (i == 1) {
            cr_expect(strstr(r.out, "\"pause_total_ns\":9223372036854775807"), "%s", r.out);
            cr_expect(!strstr(r.out, "\"paused_percent\":-"), "%s", r.out);
        }
        if (i == 4)
            cr_expect(strstr(r.out, "-9223372036854775808 5 M"), "the relative time clamps: %s", r.out);
        cli_run_free(&r);
    }
    unlink(path);
}
