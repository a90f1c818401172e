/* nettrace gc FILE [--json]: the GC timeline of a trace, one line per GC,
 * and a summary like PerfView's GCStats: GCs per generation, total / mean /
 * max pause, share of the trace's time paused, allocation rate. */
#include "cli/opts.h"
#include "cli/profile_cli.h"
#include "common/json.h"

#include <inttypes.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace gc [--json] FILE\n"
          "\n"
          "One line per GC (from GCStart, GCEnd, the GC's SuspendEE/RestartEE and\n"
          "GCHeapStats events; collect them with 'nettrace collect --profile gc'):\n"
          "  number, generation, reason, type, start (ms since the first GC), pause\n"
          "  (SuspendEEBegin to RestartEEEnd, ms), suspension (SuspendEEBegin to\n"
          "  SuspendEEEnd, ms), heap before and after (MB), promoted (MB).\n"
          "Heap after: the generation sizes of GCHeapStats; before: the previous GC's\n"
          "heap after plus the bytes allocation ticks reported in between.  '-' when\n"
          "an event was not in the trace.  Then the summary per generation.\n"
          "\n"
          "  --json     one JSON object: {\"gcs\":[...],\"summary\":{...}}\n"
          "  -h, --help this help\n",
          f);
}

typedef struct gen_sum {
    uint64_t count;
    int64_t pause_total, pause_max;
} gen_sum;

static void ms(char *buf, size_t size, int64_t ns)
{
    if (ns < 0)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.3f", (double)ns / 1e6);
}

static void mb(char *buf, size_t size, int64_t bytes)
{
    if (bytes < 0)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.3f", (double)bytes / 1048576.0);
}

static void json_num(FILE *o, const char *key, int64_t v, bool last)
{
    if (v < 0)
        fprintf(o, "\"%s\":null%s", key, last ? "" : ",");
    else
        fprintf(o, "\"%s\":%" PRId64 "%s", key, v, last ? "" : ",");
}

int cmd_gc(int argc, char **argv)
{
    bool json;
    const char *path;
    int rc = cli_json_file_args(argc, argv, usage, &json, &path);
    if (rc >= 0)
        return rc;
    nt_profile *p;
    rc = cli_profile_load(path, NULL, &p);
    if (!p)
        return rc;
    size_t n = nt_profile_gc_count(p);
    gen_sum gens[3] = { { 0, 0, 0 } }, all = { 0, 0, 0 };
    int64_t t0 = n ? nt_profile_gc_at(p, 0)->start_ns : 0;
    FILE *o = stdout;
    if (json)
        fputs("{\"gcs\":[", o);
    else if (n)
        fprintf(o, "%6s %3s %-18s %-10s %12s %10s %10s %10s %10s %10s\n", "gc", "gen", "reason", "type", "start_ms",
                "pause_ms", "suspend_ms", "before_mb", "after_mb", "promo_mb");
    for (size_t i = 0; i < n; i++) {
        const nt_gc *g = nt_profile_gc_at(p, i);
        int64_t pause = g->pause_ns;
        gen_sum *s = &gens[g->generation < 3 ? g->generation : 2];
        s->count++;
        all.count++;
        if (pause > 0) {
            s->pause_total += pause;
            all.pause_total += pause;
            s->pause_max = pause > s->pause_max ? pause : s->pause_max;
            all.pause_max = pause > all.pause_max ? pause : all.pause_max;
        }
        if (json) {
            fprintf(o, "%s\n{\"number\":%" PRIu32 ",\"generation\":%" PRIu32 ",\"reason\":", i ? "," : "", g->number,
                    g->generation);
            nt_json_fputs(o, nt_gc_reason_name(g->reason));
            fputs(",\"type\":", o);
            nt_json_fputs(o, nt_gc_type_name(g->type));
            fprintf(o, ",\"thread_id\":%" PRIu64 ",", g->thread_id);
            json_num(o, "start_ns", g->start_ns, false);
            json_num(o, "end_ns", g->end_ns, false);
            json_num(o, "suspend_begin_ns", g->suspend_begin_ns, false);
            json_num(o, "suspend_end_ns", g->suspend_end_ns, false);
            json_num(o, "restart_end_ns", g->restart_end_ns, false);
            json_num(o, "suspension_ns", g->suspension_ns, false);
            json_num(o, "pause_ns", g->pause_ns, false);
            json_num(o, "heap_before", g->heap_before, false);
            json_num(o, "heap_after", g->heap_after, false);
            json_num(o, "promoted", g->promoted, false);
            fputs("\"generation_sizes\":[", o);
            for (int k = 0; k < 5; k++)
                fprintf(o, k ? ",%" PRId64 : "%" PRId64, g->gen_size[k]);
            fputs("]}", o);
            continue;
        }
        char a[32], b[32], d[32], e[32], f[32], h[32];
        ms(a, sizeof a, g->start_ns - t0);
        ms(b, sizeof b, g->pause_ns);
        ms(d, sizeof d, g->suspension_ns);
        mb(e, sizeof e, g->heap_before);
        mb(f, sizeof f, g->heap_after);
        mb(h, sizeof h, g->promoted);
        fprintf(o, "%6" PRIu32 " %3" PRIu32 " %-18s %-10s %12s %10s %10s %10s %10s %10s\n", g->number, g->generation,
                nt_gc_reason_name(g->reason), nt_gc_type_name(g->type), a, b, d, e, f, h);
    }
    /* The trace's span: its first to last event. */
    int64_t first, last;
    nt_profile_span(p, &first, &last);
    int64_t span = last - first;
    nt_profile_totals at = { 0 };
    nt_profile_totals_get(p, NT_PROFILE_ALLOC, &at);
    double paused = span > 0 ? 100.0 * (double)all.pause_total / (double)span : 0.0;
    double rate = span > 0 && at.events ? (double)at.value / 1048576.0 / ((double)span / 1e9) : 0.0;
    if (json) {
        fputs("],\n\"summary\":{", o);
        fprintf(o, "\"gcs\":%" PRIu64 ",\"pause_total_ns\":%" PRId64 ",\"pause_max_ns\":%" PRId64 ","
                   "\"pause_mean_ns\":%" PRId64 ",\"span_ns\":%" PRId64 ",\"paused_percent\":%.3f,"
                   "\"allocated_bytes\":%" PRId64 ",\"allocation_mb_per_s\":%.3f,\"generations\":[",
                all.count, all.pause_total, all.pause_max, all.count ? all.pause_total / (int64_t)all.count : 0, span,
                paused, at.value, rate);
        for (int k = 0; k < 3; k++)
            fprintf(o, "%s{\"generation\":%d,\"gcs\":%" PRIu64 ",\"pause_total_ns\":%" PRId64 ",\"pause_max_ns\":%" PRId64 "}",
                    k ? "," : "", k, gens[k].count, gens[k].pause_total, gens[k].pause_max);
        fputs("]}}\n", o);
    } else {
        fprintf(o, "%sGCs: %" PRIu64 " (gen0 %" PRIu64 ", gen1 %" PRIu64 ", gen2 %" PRIu64 ")\n", n ? "\n" : "",
                all.count, gens[0].count, gens[1].count, gens[2].count);
        for (int k = 0; k < 3; k++)
            if (gens[k].count)
                fprintf(o, "  gen%d: pause total %.3f ms, mean %.3f ms, max %.3f ms\n", k,
                        (double)gens[k].pause_total / 1e6, (double)gens[k].pause_total / 1e6 / (double)gens[k].count,
                        (double)gens[k].pause_max / 1e6);
        fprintf(o, "pause: total %.3f ms, mean %.3f ms, max %.3f ms; %.2f%% of %.3f s paused\n",
                (double)all.pause_total / 1e6, all.count ? (double)all.pause_total / 1e6 / (double)all.count : 0.0,
                (double)all.pause_max / 1e6, paused, (double)span / 1e9);
        if (at.events)
            fprintf(o, "allocated (allocation ticks): %.3f MB, %.1f MB/s\n", (double)at.value / 1048576.0, rate);
        else
            fputs("allocated: no allocation ticks in the trace (collect with --profile alloc)\n", o);
    }
    if (fflush(o) != 0 || ferror(o)) {
        fprintf(stderr, "nettrace: writing standard output failed\n");
        rc = CLI_EXIT_ERROR;
    }
    nt_profile_free(p);
    return rc;
}
