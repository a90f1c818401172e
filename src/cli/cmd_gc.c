/* nettrace gc FILE [--json]: the GC timeline of a trace, one line per GC,
 * and a summary like PerfView's GCStats: GCs per generation, total / mean /
 * max pause, share of the trace's time paused, allocation rate.  Sizes in
 * MiB (1024 x 1024 bytes), starts in s since the trace's start. */
#include "cli/human.h"
#include "cli/opts.h"
#include "cli/profile_cli.h"
#include "common/json.h"
#include "common/sat.h"

#include <getopt.h>
#include <inttypes.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace gc [--json] [--from T] [--to T] [--absolute] FILE\n"
          "\n"
          "One line per GC (from GCStart, GCEnd, the GC's SuspendEE/RestartEE,\n"
          "GCHeapStats and GCPerHeapHistory events; collect them with 'nettrace\n"
          "collect --profile gc'):\n"
          "  number, generation, reason, type, start (s since the trace's start, as\n"
          "  --from/--to count; --absolute: trace-clock ns), pause (SuspendEEBegin to\n"
          "  RestartEEEnd, ms), suspension (SuspendEEBegin to SuspendEEEnd, ms), heap\n"
          "  before and after (MiB, 1024 x 1024 bytes), promoted (MiB).\n"
          "Heap after: the generation sizes of GCHeapStats; before: the previous GC's\n"
          "heap after plus the bytes allocation ticks reported in between, or, in a\n"
          "trace without allocation ticks, the GC's GCPerHeapHistory sizes before it.\n"
          "'-' when an event was not in the trace.  Then the summary per generation.\n"
          "\n"
          "  --json       one JSON object: {\"gcs\":[...],\"summary\":{...}} (raw ns and\n"
          "                 bytes, every GC)\n"
          "  --from T     only GCs that start at or after T, and before --to T: relative\n"
          "  --to T         to the trace's start with a unit (2s, +1.5ms) or '@' and\n"
          "                 trace-clock ns; the summary covers those GCs\n"
          "  --absolute   start times on the trace clock (ns) instead of the trace's start\n"
          "  -h, --help   this help\n",
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

static void mib(char *buf, size_t size, int64_t bytes)
{
    if (bytes < 0)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.3f", (double)bytes / 1048576.0);
}

/* One GC's line of the table; origin: the start column's zero (trace start, or 0 for --absolute). */
static void print_row(FILE *o, const nt_gc *g, int64_t origin, bool absolute)
{
    char a[32], b[32], d[32], e[32], f[32], h[32];
    if (absolute)
        snprintf(a, sizeof a, "%" PRId64, g->start_ns);
    else
        snprintf(a, sizeof a, "%.6f", (double)cm_sat_sub(g->start_ns, origin) / 1e9);
    ms(b, sizeof b, g->pause_ns);
    ms(d, sizeof d, g->suspension_ns);
    mib(e, sizeof e, g->heap_before);
    mib(f, sizeof f, g->heap_after);
    mib(h, sizeof h, g->promoted);
    fprintf(o, "%6" PRIu32 " %3" PRIu32 " %-18s %-10s %16s %10s %10s %10s %10s %10s\n", g->number, g->generation,
            nt_gc_reason_name(g->reason), nt_gc_type_name(g->type), a, b, d, e, f, h);
}

/* The options: -1 to go on, else the exit code. */
static int gc_args(int argc, char **argv, bool *json, bool *absolute, cli_time *from, cli_time *to, const char **path)
{
    static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
                                           { "from", required_argument, NULL, 'F' },
                                           { "to", required_argument, NULL, 'T' },
                                           { "absolute", no_argument, NULL, 'a' },
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': *json = true; break;
        case 'a': *absolute = true; break;
        case 'F':
        case 'T':
            if (!cli_time_option("gc", c == 'F' ? "--from" : "--to", optarg, c == 'F' ? from : to))
                return CLI_EXIT_USAGE;
            break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default: return cli_usage_hint(argv[0]);
        }
    }
    *path = cli_file_operand(argc, argv, usage);
    return *path ? -1 : CLI_EXIT_USAGE;
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
    bool json = false, absolute = false;
    cli_time from = { 0 }, to = { 0 };
    const char *path = NULL;
    int rc = gc_args(argc, argv, &json, &absolute, &from, &to, &path);
    if (rc >= 0)
        return rc;
    nt_profile *p;
    rc = cli_profile_load(path, NULL, &p);
    if (!p)
        return rc;
    size_t n = nt_profile_gc_count(p);
    if (!n)
        fputs("nettrace gc: the trace holds no GC events (GCStart, GCEnd): 'nettrace collect --profile gc'\n"
              "          records them\n", stderr);
    const nt_trace_info *info = nt_trace_header(nt_profile_trace(p));
    int64_t lo = from.set ? nt_time_bound_resolve(&from, info) : INT64_MIN;
    int64_t hi = to.set ? nt_time_bound_resolve(&to, info) : INT64_MAX;
    int64_t origin = absolute ? 0 : cli_trace_start_ns(info);
    gen_sum gens[3] = { { 0, 0, 0 } }, all = { 0, 0, 0 };
    FILE *o = stdout;
    if (json)
        fputs("{\"gcs\":[", o);
    else if (n)
        fprintf(o, "%6s %3s %-18s %-10s %16s %10s %10s %10s %10s %10s\n", "gc", "gen", "reason", "type",
                absolute ? "start_ns" : "start_s", "pause_ms", "suspend_ms", "before_mib", "after_mib", "promo_mib");
    for (size_t i = 0; i < n; i++) {
        const nt_gc *g = nt_profile_gc_at(p, i);
        if (g->start_ns < lo || g->start_ns >= hi)
            continue;
        int64_t pause = g->pause_ns;
        gen_sum *s = &gens[g->generation < 3 ? g->generation : 2];
        s->count++;
        all.count++;
        if (pause > 0) {
            s->pause_total = cm_sat_add(s->pause_total, pause);
            all.pause_total = cm_sat_add(all.pause_total, pause);
            s->pause_max = pause > s->pause_max ? pause : s->pause_max;
            all.pause_max = pause > all.pause_max ? pause : all.pause_max;
        }
        if (json) {
            fprintf(o, "%s\n{\"number\":%" PRIu32 ",\"generation\":%" PRIu32 ",\"reason\":", all.count > 1 ? "," : "",
                    g->number, g->generation);
            cm_json_fputs(o, nt_gc_reason_name(g->reason));
            fputs(",\"type\":", o);
            cm_json_fputs(o, nt_gc_type_name(g->type));
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
        print_row(o, g, origin, absolute);
    }
    if (n && !all.count)
        fprintf(stderr, "nettrace gc: --from/--to select none of the trace's %zu GCs\n", n);
    /* The trace's span: its first to last event. */
    int64_t first, last;
    nt_profile_span(p, &first, &last);
    int64_t span = cm_sat_sub(last, first);
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
        /* Counts and ms grouped by three as in the other human tables (human.h). */
        fprintf(o, "%sGCs: %s (gen0 %s, gen1 %s, gen2 %s)\n", n ? "\n" : "", cli_count(all.count).s,
                cli_count(gens[0].count).s, cli_count(gens[1].count).s, cli_count(gens[2].count).s);
        for (int k = 0; k < 3; k++)
            if (gens[k].count)
                fprintf(o, "  gen%d: pause total %s ms, mean %s ms, max %s ms\n", k,
                        cli_fixed((double)gens[k].pause_total / 1e6, 3).s,
                        cli_fixed((double)gens[k].pause_total / 1e6 / (double)gens[k].count, 3).s,
                        cli_fixed((double)gens[k].pause_max / 1e6, 3).s);
        fprintf(o, "pause: total %s ms, mean %s ms, max %s ms; %.2f%% of %s s paused\n",
                cli_fixed((double)all.pause_total / 1e6, 3).s,
                cli_fixed(all.count ? (double)all.pause_total / 1e6 / (double)all.count : 0.0, 3).s,
                cli_fixed((double)all.pause_max / 1e6, 3).s, paused, cli_fixed((double)span / 1e9, 3).s);
        if (at.events)
            fprintf(o, "allocated (allocation ticks): %s MiB, %s MiB/s\n", cli_fixed((double)at.value / 1048576.0, 3).s,
                    cli_fixed(rate, 1).s);
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
