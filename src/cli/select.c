/* The sample filter shared by top, stacks and samples (select.h). */
#include "cli/select.h"
#include "cli/stream_read.h"
#include "cli/opts.h"
#include "common/sat.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int cli_filter_option(cli_filter *f, const char *cmd, int c, const char *arg)
{
    switch (c) {
    case CLI_FILTER_MANAGED: f->managed_only = true; return 1;
    case CLI_FILTER_THREAD:
        if (!cli_u64_option(cmd, "--thread", arg, 0, UINT64_MAX, &f->thread_id))
            return -1;
        f->has_thread = true;
        return 1;
    case CLI_FILTER_FROM: return cli_time_option(cmd, "--from", arg, &f->from) ? 1 : -1;
    case CLI_FILTER_TO: return cli_time_option(cmd, "--to", arg, &f->to) ? 1 : -1;
    case CLI_FILTER_JOBS: return cli_parse_jobs(arg, cmd) ? 1 : -1;
    default: return 0;
    }
}

bool cli_filter_option_or_usage(cli_filter *f, const char *cmd, int c, const char *arg, void (*usage)(FILE *))
{
    int r = cli_filter_option(f, cmd, c, arg);
    (void)usage; /* getopt named the option; the hint, not the whole help */
    if (r == 0)
        fprintf(stderr, "nettrace %s: 'nettrace %s --help' lists the options\n", cmd, cmd);
    return r > 0;
}

bool cli_filter_active(const cli_filter *f)
{
    return f->managed_only || f->has_thread || f->from.set || f->to.set;
}

void cli_filter_export(const cli_filter *f, nt_export_options *eo) { eo->filter = *f; }

void cli_keep_init(cli_keep *k, const cli_filter *f, const nt_trace *t)
{
    const nt_trace_info *ti = nt_trace_header(t);
    k->f = *f;
    k->from_ns = nt_time_bound_resolve(&f->from, ti);
    k->to_ns = nt_time_bound_resolve(&f->to, ti);
}

bool cli_filter_keeps(const cli_keep *k, const nt_trace_sample *s)
{
    const cli_filter *f = &k->f;
    return !(f->managed_only && s->type != NT_SAMPLE_MANAGED) && !(f->has_thread && s->thread_id != f->thread_id) &&
           !(f->from.set && s->time_ns < k->from_ns) && !(f->to.set && s->time_ns >= k->to_ns);
}

/* What the trace holds, for the "selects nothing" message. */
static void explain_empty(const cli_filter *f, const nt_trace *t, const cli_keep *k, const char *cmd)
{
    size_t n = nt_trace_sample_count(t);
    nt_trace_stats ts = { 0 };
    nt_trace_stats_get(t, &ts); /* a counted trace's entries stand for several samples each */
    fprintf(stderr, "nettrace %s: the filter selects none of the trace's %" PRIu64 " samples", cmd, ts.samples);
    bool thread_known = false;
    for (size_t i = 0; f->has_thread && i < nt_trace_thread_count(t); i++)
        thread_known |= nt_trace_thread_id(t, i) == f->thread_id;
    if (f->has_thread && !thread_known) {
        fprintf(stderr, ": thread %" PRIu64 " has none (threads:", f->thread_id);
        size_t nt = nt_trace_thread_count(t);
        for (size_t i = 0; i < nt && i < 10; i++)
            fprintf(stderr, " %" PRIu64, nt_trace_thread_id(t, i));
        fputs(nt > 10 ? " ...)" : ")", stderr);
    }
    if ((f->from.set || f->to.set) && n) {
        int64_t start = cli_trace_start_ns(nt_trace_header(t));
        char a[32], b[32];
        cli_format_duration(a, sizeof a, cm_sat_sub(nt_trace_sample_at(t, 0).time_ns, start));
        cli_format_duration(b, sizeof b, cm_sat_sub(nt_trace_sample_at(t, n - 1).time_ns, start));
        fprintf(stderr, "; its samples lie between +%s and +%s after its start", a, b);
        if (f->from.set && f->to.set && k->from_ns >= k->to_ns)
            fputs(" (and --from is not before --to)", stderr);
    }
    fputc('\n', stderr);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

bool cli_filter_count(const cli_filter *f, const nt_trace *t, const char *cmd, cli_selected *out)
{
    cli_keep keep;
    cli_keep_init(&keep, f, t);
    size_t nth = nt_trace_thread_count(t), n = nt_trace_sample_count(t);
    /* Distinct threads among the selected samples: a sorted id table. */
    uint64_t *ids = calloc(nth ? nth : 1, sizeof *ids);
    unsigned char *seen = calloc(nth ? nth : 1, 1);
    if (!ids || !seen) {
        free(ids);
        free(seen);
        return false;
    }
    for (size_t i = 0; i < nth; i++)
        ids[i] = nt_trace_thread_id(t, i);
    if (nth)
        qsort(ids, nth, sizeof *ids, cmp_u64);
    *out = (cli_selected){ 0, 0 };
    for (size_t i = 0; i < n; i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        if (!cli_filter_keeps(&keep, &s))
            continue;
        out->samples += s.count ? s.count : 1; /* an aggregated trace's sample stands for count */
        const uint64_t *at = bsearch(&s.thread_id, ids, nth, sizeof *ids, cmp_u64);
        if (at && !seen[at - ids]) {
            seen[at - ids] = 1;
            out->threads++;
        }
    }
    free(ids);
    free(seen);
    if (!out->samples && n && cli_filter_active(f))
        explain_empty(f, t, &keep, cmd);
    return true;
}
