/* make bench-trace: the aggregator and its exporters against the parser
 * alone, on the largest traces at hand.
 *
 * For each trace (held in memory, fed in 1 MiB chunks like a file read):
 *   parse    the parser with the callbacks the aggregator sets, each reading
 *            its arguments: the same decoding work (the baseline)
 *   parse-bare  the parser with no callbacks (it then skips decoding)
 *   build    nt_trace_from_buffer: parser + aggregator + frame resolution
 *   folded / speedscope / pprof: one export of the built trace to a sink
 * Times are the best of several runs.  Memory is the peak of everything
 * allocated (parser and trace together) through a counting allocator, against
 * the file's size.  Goals: build at no less than half the parser's speed,
 * peak below the file size. */
#include "nettrace_trace.h"

#include <dirent.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK (1u << 20)
#define RUNS 5       /* at least; more while a measurement has taken under a second */
#define MAX_RUNS 40

static size_t g_used, g_peak;

static void *count_realloc(void *ctx, void *p, size_t n)
{
    (void)ctx;
    size_t old = p ? malloc_usable_size(p) : 0;
    void *q = realloc(p, n);
    if (!q)
        return NULL;
    g_used = g_used - old + malloc_usable_size(q);
    if (g_used > g_peak)
        g_peak = g_used;
    return q;
}

static void count_free(void *ctx, void *p)
{
    (void)ctx;
    if (p)
        g_used -= malloc_usable_size(p);
    free(p);
}

static const nt_allocator COUNTING = { count_realloc, count_free, NULL };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t g_sink_bytes;
static int sink(void *user, const void *data, size_t len)
{
    (void)user;
    (void)data;
    g_sink_bytes += len;
    return 0;
}

static bool read_file(const char *path, uint8_t **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *data = malloc(n > 0 ? (size_t)n : 1);
    *len = n > 0 ? (size_t)n : 0;
    bool ok = *data && fread(*data, 1, *len, f) == *len;
    fclose(f);
    return ok;
}

/* Callbacks that read what the aggregator reads, so the parser does the same
 * decoding work for them as for the aggregator. */
static volatile uint64_t g_sink;
static int cb_sample(void *u, const nt_sample *s)
{
    (void)u;
    g_sink += s->thread_id + (uint64_t)s->timestamp + (s->stack ? s->stack->count : 0);
    return 0;
}
static int cb_method(void *u, const nt_method *m) { (void)u; g_sink += m->start_address + strlen(m->name); return 0; }
static int cb_module(void *u, const nt_module *m) { (void)u; g_sink += m->module_id; return 0; }
static int cb_assembly(void *u, const nt_assembly *a) { (void)u; g_sink += a->assembly_id; return 0; }
static const nt_callbacks AGG_CALLBACKS = { .sample = cb_sample, .method = cb_method, .module = cb_module,
                                            .assembly = cb_assembly };

static double parse_once(const uint8_t *d, size_t n, const nt_callbacks *cb)
{
    double t0 = now();
    nt_parser *p = nt_parser_new(cb, NULL, NULL, &COUNTING);
    for (size_t off = 0; off < n; off += CHUNK)
        nt_parser_feed(p, d + off, n - off < CHUNK ? n - off : CHUNK);
    nt_parser_finish(p);
    nt_parser_free(p);
    return now() - t0;
}

static double build_once(const uint8_t *d, size_t n, nt_trace **out)
{
    nt_trace_options o = { 0 };
    o.alloc = &COUNTING;
    double t0 = now();
    nt_trace_from_buffer(d, n, &o, out, NULL, 0);
    return now() - t0;
}

typedef nt_status (*export_fn)(const nt_trace *, const nt_export_options *, nt_sink_fn, void *);

static void bench_file(const char *path)
{
    uint8_t *d;
    size_t n;
    if (!read_file(path, &d, &n)) {
        printf("%s: cannot read\n", path);
        return;
    }
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    double tp = 1e9, tb = 1e9, tn = 1e9;
    g_used = g_peak = 0;
    double spent = 0;
    for (int r = 0; r < RUNS || (r < MAX_RUNS && spent < 1.0); r++) {
        double t = parse_once(d, n, &AGG_CALLBACKS);
        spent += t;
        tp = t < tp ? t : tp;
        t = parse_once(d, n, NULL);
        tn = t < tn ? t : tn;
    }
    size_t peak_parse = g_peak;
    nt_trace *t = NULL;
    spent = 0;
    for (int r = 0; r < RUNS || (r < MAX_RUNS && spent < 1.0); r++) {
        nt_trace_free(t);
        g_used = g_peak = 0;
        double x = build_once(d, n, &t);
        spent += x;
        tb = x < tb ? x : tb;
    }
    size_t peak_build = g_peak;
    if (!t) {
        printf("%s: no trace\n", name);
        free(d);
        return;
    }
    nt_trace_stats st = { 0 };
    nt_trace_stats_get(t, &st);
    double mb = (double)n / 1048576.0;
    printf("%s (%.1f MB, %llu samples, %llu method records, %.1f%% frames resolved)\n", name, mb,
           (unsigned long long)st.samples, (unsigned long long)st.method_records,
           st.frames ? 100.0 * (double)st.resolved_frames / (double)st.frames : 100.0);
    printf("  %-11s %8.1f MB/s  %6.3f s  (no callbacks: it skips decoding what nobody asked for)\n", "parse-bare",
           mb / tn, tn);
    printf("  %-11s %8.1f MB/s  %6.3f s  speed 1.00  peak %8.2f MB (%.2f of file)  <- baseline\n", "parse",
           mb / tp, tp, (double)peak_parse / 1048576.0, (double)peak_parse / (double)n);
    printf("  %-11s %8.1f MB/s  %6.3f s  speed %.2f  peak %8.2f MB (%.2f of file)  %s\n", "build", mb / tb, tb,
           tp / tb, (double)peak_build / 1048576.0, (double)peak_build / (double)n,
           tp / tb >= 0.5 && peak_build < n ? "goals met" : "GOAL MISSED");
    static const char *const names[] = { "folded", "speedscope", "pprof" };
    const export_fn fns[] = { nt_export_folded, nt_export_speedscope, nt_export_pprof };
    for (int e = 0; e < 3; e++) {
        double te = 1e9;
        size_t base = g_used, peak = 0;
        for (int r = 0; r < RUNS; r++) {
            g_peak = g_used;
            g_sink_bytes = 0;
            nt_export_options eo = { 0 };
            eo.weight = NT_WEIGHT_TIME;
            double t0 = now();
            fns[e](t, &eo, sink, NULL);
            double x = now() - t0;
            te = x < te ? x : te;
            peak = g_peak - base > peak ? g_peak - base : peak;
        }
        printf("  %-11s %8.1f MB/s  %6.3f s  speed %.2f  peak %8.2f MB (trace %.2f + export %.2f; %.2f of file)"
               "  %llu bytes out\n",
               names[e], mb / te, te, tp / te, (double)(base + peak) / 1048576.0, (double)base / 1048576.0,
               (double)peak / 1048576.0, (double)(base + peak) / (double)n, (unsigned long long)g_sink_bytes);
    }
    nt_trace_free(t);
    free(d);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            bench_file(argv[i]);
        return 0;
    }
    /* The largest traces at hand: the shared reference corpus and our own. */
    const char *env = getenv("NETTRACE_SHARED_CORPUS");
    const char *top = getenv("top_srcdir");
    char shared[4096], own[4096];
    snprintf(shared, sizeof shared, "%s", env && *env ? env : "");
    if (!*shared)
        snprintf(shared, sizeof shared, "%s/../shared/corpus", top && *top ? top : ".");
    snprintf(own, sizeof own, "%s/corpus", top && *top ? top : ".");
    static const char *const largest[] = { "perfview__HeartRateMonitor.10068.nettrace",
                                           "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
                                           "dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace",
                                           "sentry-dotnet__sample.nettrace" };
    int done = 0;
    for (size_t i = 0; i < sizeof largest / sizeof largest[0]; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", shared, largest[i]);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        fclose(f);
        bench_file(path);
        done++;
    }
    if (!done)
        printf("../shared/corpus is absent (set NETTRACE_SHARED_CORPUS): benchmarking corpus/ only\n");
    static const char *const mine[] = { "spin-threads.nettrace", "call-tree.nettrace" };
    for (size_t i = 0; i < 2; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", own, mine[i]);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        fclose(f);
        bench_file(path);
    }
    return 0;
}
