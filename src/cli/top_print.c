/* Printing nt_top tables (see top_print.h). */
#include "cli/top_print.h"

#include "cli/human.h"
#include "common/json.h"
#include "common/text_escape.h"

#include <inttypes.h>
#include <stdlib.h>

static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

/* A name from the trace: data, never layout or a terminal command. */
static void print_name(FILE *o, const char *name)
{
    char small[1024];
    size_t n = cm_text_escape(small, sizeof small, name, "");
    char *big = n < sizeof small ? NULL : malloc(n + 1);
    if (big)
        cm_text_escape(big, n + 1, name, "");
    fputs(big ? big : small, o);
    free(big);
}

static double share(uint64_t part, uint64_t total) { return total ? 100.0 * (double)part / (double)total : 0.0; }

/* A row's weight: a count of samples, or with by_time ns shown as ms. */
static cli_num weight(uint64_t v, bool by_time)
{
    return by_time ? cli_ms(v > INT64_MAX ? INT64_MAX : (int64_t)v) : cli_count(v);
}

/* by_time: the wall profile, whose rows hold ns, printed as ms (wider columns, named so). */
static void print_table(FILE *o, const nt_top_table *tb, bool by_time)
{
    int wd = by_time ? 14 : 10;
    fprintf(o, "%*s %7s %*s %7s  %s\n", wd, by_time ? "exclusive_ms" : "exclusive", "share", wd,
            by_time ? "inclusive_ms" : "inclusive", "share", "method");
    for (size_t i = 0; i < tb->row_count; i++) {
        const nt_top_row *r = &tb->rows[i];
        fprintf(o, "%*s %6.2f%% %*s %6.2f%%  ", wd, weight(r->exclusive, by_time).s,
                share(r->exclusive, tb->samples), wd, weight(r->inclusive, by_time).s,
                share(r->inclusive, tb->samples));
        print_name(o, r->name);
        fputc('\n', o);
    }
    if (tb->empty)
        fprintf(o, "%*s %6.2f%% %*s %7s  (samples with an empty stack)\n", wd, weight(tb->empty, by_time).s,
                share(tb->empty, tb->samples), wd, "", "");
    if (!tb->samples)
        fputs("(no samples)\n", o);
}

void cli_top_print_header(FILE *o, const nt_trace *t, const cli_selected *sel)
{
    nt_trace_stats ts = { 0 };
    nt_trace_stats_get(t, &ts);
    if (sel)
        fprintf(o, "samples:  %s selected of %s (on %s of %s thread%s)\n", cli_count(sel->samples).s,
                cli_count(ts.samples).s, cli_count(sel->threads).s, cli_count(ts.threads).s, plural(ts.threads));
    else
        fprintf(o, "samples:  %s on %s thread%s\n", cli_count(ts.samples).s, cli_count(ts.threads).s,
                plural(ts.threads));
    fprintf(o, "frames:   %s, %s resolved (%.1f%%), %s unresolved (shown as 0x<ip>)\n", cli_count(ts.frames).s,
            cli_count(ts.resolved_frames).s,
            ts.frames ? 100.0 * (double)ts.resolved_frames / (double)ts.frames : 0.0,
            cli_count(ts.frames - ts.resolved_frames).s);
    /* Records kept are those frames can resolve to, not the sum of what was read. */
    fprintf(o,
            "methods:  %s record%s kept to name frames (read: %s JIT, %s rundown, %s unload event%s)\n",
            cli_count(ts.method_records).s, plural(ts.method_records), cli_count(ts.jit_records).s,
            cli_count(ts.rundown_records).s, cli_count(ts.unload_records).s, plural(ts.unload_records));
    if (ts.status == NT_ERR_TRUNCATED)
        fputs("note:     the trace is truncated; counts cover the samples read before the cut\n", o);
}

void cli_top_print_profile(FILE *o, const nt_trace *t, const cli_filter *f, bool managed_only, bool wall)
{
    cli_filter every = { 0 };
    cli_keep keep;
    cli_keep_init(&keep, f ? f : &every, t);
    keep.f.managed_only = false; /* the split is of what the threads did */
    size_t n = nt_trace_sample_count(t);
    int64_t *wall_ns = n ? malloc(n * sizeof *wall_ns) : NULL;
    if (wall_ns && nt_trace_wall_ns(t, wall_ns) != NT_OK) {
        free(wall_ns);
        wall_ns = NULL;
    }
    uint64_t managed = 0, external = 0, other = 0;
    double weighed_ns = 0;
    for (size_t i = 0; i < n; i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        if (!cli_filter_keeps(&keep, &s))
            continue;
        uint64_t c = s.count ? s.count : 1;
        if (s.type == NT_SAMPLE_MANAGED)
            managed += c;
        else if (s.type == NT_SAMPLE_EXTERNAL)
            external += c;
        else
            other += c;
        if (wall_ns)
            weighed_ns += (double)wall_ns[i];
    }
    free(wall_ns);
    uint64_t all = managed + external + other;
    if (!all)
        return;
    if (wall)
        fputs("profile:  wall: each thread sample weighs the ns to its thread's next one, running or blocked\n", o);
    else if (managed_only)
        fputs("profile:  managed-cpu: only the samples in managed code (the thread was running .NET code)\n", o);
    else
        fputs("profile:  thread-time: every thread sampled, running or blocked (not CPU time)\n", o);
    fprintf(o, "kinds:    %s managed (%.1f%%), %s external (%.1f%%: blocked, waiting or in native code)",
            cli_count(managed).s, share(managed, all), cli_count(external).s, share(external, all));
    if (other)
        fprintf(o, ", %s other (%.1f%%)", cli_count(other).s, share(other, all));
    fputc('\n', o);
    uint32_t nominal = nt_trace_header(t)->sampling_interval_ns;
    if (weighed_ns > 0) {
        /* Each sample stands for the time to its thread's next: their sum is the threads' sampled time. */
        double rate = (double)all * 1e9 / weighed_ns;
        fprintf(o, "rate:     %s samples per thread per second measured (one every %.2f ms", cli_fixed(rate, 0).s, 1e3 / rate);
        if (nominal)
            fprintf(o, "; the trace's nominal interval: %.2f ms", (double)nominal / 1e6);
        fputs(")\n", o);
    }
    if (!managed_only && external * 2 > all)
        fputs("note:     most samples are external (threads blocked, waiting or in native code): --profile\n"
              "          managed-cpu counts only running managed code; --profile wall weighs the time spent\n",
              o);
}

void cli_top_print(FILE *o, const nt_top *top, bool by_thread, bool by_time)
{
    for (size_t i = 0; i < top->table_count; i++) {
        if (by_thread)
            fprintf(o, "thread %" PRIu64 ":\n", top->tables[i].thread_id);
        print_table(o, &top->tables[i], by_time);
        if (by_thread)
            fputc('\n', o);
    }
}

void cli_top_print_json(FILE *o, const char *path, const nt_trace *t, const cli_selected *sel, const nt_top *top,
                        bool by_time)
{
    nt_trace_stats ts = { 0 };
    nt_trace_stats_get(t, &ts);
    fputs("{\n  \"file\": ", o);
    cm_json_fputs(o, path);
    fputs(",\n  \"status\": ", o);
    cm_json_fputs(o, nt_status_name(ts.status));
    fputs(",\n  \"message\": ", o);
    cm_json_fputs(o, ts.status == NT_OK ? NULL : nt_trace_message(t));
    fprintf(o,
            ",\n  \"samples\": %" PRIu64 ",\n  \"selected_samples\": %" PRIu64 ",\n  \"threads\": %" PRIu64
            ",\n  \"selected_threads\": %" PRIu64 ",\n  \"frames\": %" PRIu64 ",\n  \"resolved_frames\": %" PRIu64
            ",\n  \"method_records\": %" PRIu64 ",\n  \"jit_records\": %" PRIu64 ",\n  \"rundown_records\": %" PRIu64
            ",\n  \"unload_records\": %" PRIu64 ",\n  \"events_dropped\": %" PRIu64 ",\n  %s\"tables\": [",
            ts.samples, sel ? sel->samples : ts.samples, ts.threads, sel ? sel->threads : ts.threads, ts.frames,
            ts.resolved_frames, ts.method_records, ts.jit_records, ts.rundown_records, ts.unload_records,
            ts.events_dropped, by_time ? "\"weight\": \"wall_ns\",\n  " : "");
    for (size_t i = 0; i < top->table_count; i++) {
        const nt_top_table *tb = &top->tables[i];
        fprintf(o, "%s\n    {\"thread_id\": %" PRIu64 ", \"samples\": %" PRIu64 ", \"empty_stack_samples\": %" PRIu64
                   ", \"methods\": [",
                i ? "," : "", tb->thread_id, tb->samples, tb->empty);
        for (size_t r = 0; r < tb->row_count; r++) {
            fputs(r ? ",\n      {\"name\": " : "\n      {\"name\": ", o);
            cm_json_fputs(o, tb->rows[r].name);
            fprintf(o, ", \"exclusive\": %" PRIu64 ", \"inclusive\": %" PRIu64 "}", tb->rows[r].exclusive,
                    tb->rows[r].inclusive);
        }
        fputs(tb->row_count ? "\n    ]}" : "]}", o);
    }
    fputs(top->table_count ? "\n  ]\n}\n" : "]\n}\n", o);
}

bool cli_top_n_is_rows(const char *v)
{
    if (*v == '-' || *v == '+')
        v++;
    return *v >= '0' && *v <= '9';
}
