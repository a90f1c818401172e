/* Printing nt_top tables (see top_print.h). */
#include "cli/top_print.h"

#include "common/json.h"
#include "common/text_escape.h"

#include <inttypes.h>
#include <stdlib.h>

static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

/* A name from the trace: data, never layout or a terminal command. */
static void print_name(FILE *o, const char *name)
{
    char small[1024];
    size_t n = nt_text_escape(small, sizeof small, name, "");
    char *big = n < sizeof small ? NULL : malloc(n + 1);
    if (big)
        nt_text_escape(big, n + 1, name, "");
    fputs(big ? big : small, o);
    free(big);
}

static double share(uint64_t part, uint64_t total) { return total ? 100.0 * (double)part / (double)total : 0.0; }

/* by_time: the wall profile, whose rows hold ns (wider columns, named so). */
static void print_table(FILE *o, const nt_top_table *tb, bool by_time)
{
    int wd = by_time ? 14 : 10;
    fprintf(o, "%*s %7s %*s %7s  %s\n", wd, by_time ? "exclusive_ns" : "exclusive", "share", wd,
            by_time ? "inclusive_ns" : "inclusive", "share", "method");
    for (size_t i = 0; i < tb->row_count; i++) {
        const nt_top_row *r = &tb->rows[i];
        fprintf(o, "%*" PRIu64 " %6.2f%% %*" PRIu64 " %6.2f%%  ", wd, r->exclusive, share(r->exclusive, tb->samples),
                wd, r->inclusive, share(r->inclusive, tb->samples));
        print_name(o, r->name);
        fputc('\n', o);
    }
    if (tb->empty)
        fprintf(o, "%*" PRIu64 " %6.2f%% %*s %7s  (samples with an empty stack)\n", wd, tb->empty,
                share(tb->empty, tb->samples), wd, "", "");
    if (!tb->samples)
        fputs("(no samples)\n", o);
}

void cli_top_print_header(FILE *o, const nt_trace *t, const cli_selected *sel)
{
    nt_trace_stats ts = { 0 };
    nt_trace_stats_get(t, &ts);
    if (sel)
        fprintf(o, "samples:  %" PRIu64 " selected of %" PRIu64 " (on %" PRIu64 " of %" PRIu64 " thread%s)\n",
                sel->samples, ts.samples, sel->threads, ts.threads, plural(ts.threads));
    else
        fprintf(o, "samples:  %" PRIu64 " on %" PRIu64 " thread%s\n", ts.samples, ts.threads, plural(ts.threads));
    fprintf(o, "frames:   %" PRIu64 ", %" PRIu64 " resolved (%.1f%%), %" PRIu64 " unresolved (shown as 0x<ip>)\n",
            ts.frames, ts.resolved_frames, ts.frames ? 100.0 * (double)ts.resolved_frames / (double)ts.frames : 0.0,
            ts.frames - ts.resolved_frames);
    /* Records kept are those frames can resolve to, not the sum of what was read. */
    fprintf(o,
            "methods:  %" PRIu64 " record%s kept to name frames (read: %" PRIu64 " JIT, %" PRIu64
            " rundown, %" PRIu64 " unload event%s)\n",
            ts.method_records, plural(ts.method_records), ts.jit_records, ts.rundown_records, ts.unload_records,
            plural(ts.unload_records));
    if (ts.status == NT_ERR_TRUNCATED)
        fputs("note:     the trace is truncated; counts cover the samples read before the cut\n", o);
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
    nt_json_fputs(o, path);
    fputs(",\n  \"status\": ", o);
    nt_json_fputs(o, nt_status_name(ts.status));
    fputs(",\n  \"message\": ", o);
    nt_json_fputs(o, ts.status == NT_OK ? NULL : nt_trace_message(t));
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
            nt_json_fputs(o, tb->rows[r].name);
            fprintf(o, ", \"exclusive\": %" PRIu64 ", \"inclusive\": %" PRIu64 "}", tb->rows[r].exclusive,
                    tb->rows[r].inclusive);
        }
        fputs(tb->row_count ? "\n    ]}" : "]}", o);
    }
    fputs(top->table_count ? "\n  ]\n}\n" : "]\n}\n", o);
}
