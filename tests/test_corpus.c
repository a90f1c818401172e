/* The parser against real traces: the shared reference corpus (skipped with a
 * message when ../shared/corpus is absent) and the project's own corpus/.
 *
 * Expected values come from the corpus README (counts read by an independent
 * decoder) and from tests/expected/traceevent-counts.tsv, written by the
 * TraceEvent-based oracle in tools/oracle (see its README; checked by test_oracle). */
#include "support.h"

#include "ltest.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


typedef struct expect {
    const char *file;
    nt_status status;
    uint32_t pointer_size;
    int64_t events, samples, methods, stacks; /* -1: not pinned here */
} expect;

/* From ../shared/corpus/README.md. */
static const expect README_FACTS[] = {
    { "perfview__HeartRateMonitor.10068.nettrace", NT_OK, 4, 114565, 921, -1, -1 },
    { "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", NT_OK, 8, -1, 35161, 53, 1762 },
    { "perfview__mixed_managed_external_samples.nettrace", NT_OK, 8, -1, 6331, -1, -1 },
    { "perfview__only_managed_samples.nettrace", NT_OK, 8, -1, 7423, -1, -1 },
    { "perfview__eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace", NT_OK, 8, 3, 0, -1, -1 },
    { "perfview__eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf", NT_ERR_UNSUPPORTED_VERSION, 0, -1, -1, -1, -1 },
    { "dotnetdiag__dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", NT_OK, 8, -1, 5564, 104, -1 },
    { "dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace", NT_OK, 8, -1, 82945, 6885, -1 },
    { "sentry-dotnet__sample.nettrace", NT_OK, 8, -1, 311, 5200, -1 },
    { "dotnet-insights__trace2.nettrace", NT_OK, 8, 14126, 0, 815, 12 },
    { "dotnet-insights__example-cpu-sample.nettrace", NT_OK, 8, -1, 2403, -1, -1 },
    { "RememberCalendar__trace.nettrace", NT_OK, 8, -1, 0, 4080, -1 },
};

static bool load(const char *name, uint8_t **data, size_t *len)
{
    const char *dir = ts_shared_corpus();
    if (!dir)
        cr_skip_test("../shared/corpus is absent: the reference traces are not available here");
    cr_assert(ts_read_file(ts_path(dir, name), data, len), "cannot read %s", name);
    return true;
}

LTest(corpus, readme_facts)
{
    for (size_t i = 0; i < sizeof README_FACTS / sizeof README_FACTS[0]; i++) {
        const expect *e = &README_FACTS[i];
        uint8_t *data;
        size_t len;
        load(e->file, &data, &len);
        ts_digest d;
        ts_digest_init(&d);
        nt_status s = ts_digest_feed(data, len, NULL, 0, NULL, &d, NULL);
        cr_expect_eq(s, e->status, "%s: status %s", e->file, nt_status_name(s));
        if (e->events >= 0)
            cr_expect_eq(d.events, (uint64_t)e->events, "%s: %" PRIu64 " events", e->file, d.events);
        if (e->samples >= 0)
            cr_expect_eq(d.samples, (uint64_t)e->samples, "%s: %" PRIu64 " samples", e->file, d.samples);
        if (e->methods >= 0)
            cr_expect_eq(d.methods, (uint64_t)e->methods, "%s: %" PRIu64 " methods", e->file, d.methods);
        if (e->stacks >= 0)
            cr_expect_eq(d.stacks, (uint64_t)e->stacks, "%s: %" PRIu64 " stacks", e->file, d.stacks);
        free(data);
    }
}

static nt_trace_info g_info;
static int grab_info(void *u, const nt_trace_info *t)
{
    (void)u;
    g_info = *t;
    return 0;
}

/* The NetPerf file is refused, with the version its header says (3). */
LTest(corpus, netperf_version)
{
    uint8_t *data;
    size_t len;
    load("perfview__eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf", &data, &len);
    nt_parser *p = nt_parser_new(NULL, NULL, NULL, NULL);
    cr_assert(p);
    cr_expect_eq(nt_parser_feed(p, data, len), NT_ERR_UNSUPPORTED_VERSION);
    cr_expect_eq(nt_parser_format_version(p), 3);
    nt_parser_free(p);
    free(data);
}

LTest(corpus, objver4_header)
{
    uint8_t *data;
    size_t len;
    load("perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", &data, &len);
    nt_callbacks cb = { 0 };
    cb.trace = grab_info;
    cr_assert_eq(nt_parse_buffer(data, len, &cb, NULL, NULL, NULL, 0), NT_OK);
    cr_expect_eq(g_info.format_major, 4);
    cr_expect_eq(g_info.pointer_size, 8);
    cr_expect_eq(g_info.process_id, 10064);
    cr_expect_eq(g_info.sync_qpc, 100935252313);
    cr_expect_eq(g_info.qpc_frequency, 3124099);
    free(data);
}

/* Every chunk size from 1 to 64 and many random splits give exactly the same
 * callback sequence as the whole buffer.  All sizes on the smaller traces, a
 * handful on the large ones so that make check stays quick. */
LTest(corpus, chunk_invariance, .timeout = 600)
{
    const char *dir = ts_shared_corpus();
    if (!dir)
        cr_skip_test("../shared/corpus is absent: the reference traces are not available here");
    for (size_t i = 0; i < sizeof README_FACTS / sizeof README_FACTS[0]; i++) {
        uint8_t *data;
        size_t len;
        cr_assert(ts_read_file(ts_path(dir, README_FACTS[i].file), &data, &len));
        ts_digest whole;
        ts_digest_init(&whole);
        nt_status ws = ts_digest_feed(data, len, NULL, 0, NULL, &whole, NULL);
        bool small = len < 1000000;
        for (size_t k = 1; k <= 64; k++) {
            if (!small && k != 1 && k != 7 && k != 64)
                continue;
            ts_digest d;
            ts_digest_init(&d);
            nt_status s = ts_digest_feed(data, len, &k, 1, NULL, &d, NULL);
            cr_expect_eq(s, ws, "%s chunk %zu: status", README_FACTS[i].file, k);
            cr_expect_eq(d.h, whole.h, "%s chunk %zu: digest differs", README_FACTS[i].file, k);
        }
        for (uint64_t seed = 1; seed <= (small ? 20u : 3u); seed++) {
            ts_digest d;
            ts_digest_init(&d);
            nt_status s = ts_digest_feed_random(data, len, seed, seed % 2 ? 300 : 200000, NULL, &d, NULL);
            cr_expect_eq(s, ws, "%s seed %" PRIu64 ": status", README_FACTS[i].file, seed);
            cr_expect_eq(d.h, whole.h, "%s seed %" PRIu64 ": digest differs", README_FACTS[i].file, seed);
        }
        free(data);
    }
}

/* Every prefix of a small real trace ends in a clean status, and what a
 * prefix delivers only grows with its length: complete blocks before the cut
 * are always delivered.  Dense sampling of prefixes on a larger trace. */
static void prefixes(const char *name, size_t step)
{
    uint8_t *data;
    size_t len;
    load(name, &data, &len);
    uint64_t last_events = 0, last_samples = 0;
    for (size_t n = 0; n < len; n += step) {
        uint8_t *cut = malloc(n ? n : 1); /* exact-size copy: ASan sees any over-read */
        memcpy(cut, data, n);
        ts_digest d;
        ts_digest_init(&d);
        uint64_t at = 0;
        nt_status s = ts_digest_feed(cut, n, NULL, 0, NULL, &d, &at);
        cr_assert(s == NT_ERR_TRUNCATED || s == NT_ERR_NOT_NETTRACE || s == NT_ERR_NO_EVENTS,
                  "%s prefix %zu: %s", name, n, nt_status_name(s));
        cr_assert_leq(at, n, "%s prefix %zu: error offset %" PRIu64 " beyond the input", name, n, at);
        cr_assert_geq(d.events, last_events, "%s prefix %zu delivered fewer events than a shorter one", name, n);
        cr_assert_geq(d.samples, last_samples);
        last_events = d.events;
        last_samples = d.samples;
        free(cut);
    }
    free(data);
}

LTest(corpus, every_prefix_of_a_small_trace)
{
    prefixes("perfview__eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace", 1);
}

LTest(corpus, dense_prefixes_of_a_sample_trace, .timeout = 300)
{
    prefixes("dotnetdiag__dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", 997);
}
