/* Printing nt_top tables (see top_print.h). */
#include "cli/top_print.h"

#include <inttypes.h>

static double share(uint64_t part, uint64_t total) { return total ? 100.0 * (double)part / (double)total : 0.0; }

static void print_table(FILE *o, const nt_top_table *tb)
{
    fprintf(o, "%10s %7s %10s %7s  %s\n", "exclusive", "share", "inclusive", "share", "method");
    for (size_t i = 0; i < tb->row_count; i++) {
        const nt_top_row *r = &tb->rows[i];
        fprintf(o, "%10" PRIu64 " %6.2f%% %10" PRIu64 " %6.2f%%  %s\n", r->exclusive, share(r->exclusive, tb->samples),
                r->inclusive, share(r->inclusive, tb->samples), r->name);
    }
    if (tb->empty)
        fprintf(o, "%10" PRIu64 " %6.2f%% %10s %7s  (samples with an empty stack)\n", tb->empty,
                share(tb->empty, tb->samples), "", "");
    if (!tb->samples)
        fputs("(no samples)\n", o);
}

void cli_top_print_header(FILE *o, const nt_trace *t)
{
    nt_trace_stats ts;
    nt_trace_stats_get(t, &ts);
    fprintf(o, "samples:  %" PRIu64 " on %" PRIu64 " threads\n", ts.samples, ts.threads);
    fprintf(o, "frames:   %" PRIu64 ", %" PRIu64 " resolved (%.1f%%), %" PRIu64 " unresolved (shown as 0x<ip>)\n",
            ts.frames, ts.resolved_frames, ts.frames ? 100.0 * (double)ts.resolved_frames / (double)ts.frames : 0.0,
            ts.frames - ts.resolved_frames);
    fprintf(o, "methods:  %" PRIu64 " records (%" PRIu64 " JIT, %" PRIu64 " rundown, %" PRIu64 " unloads)\n",
            ts.method_records, ts.jit_records, ts.rundown_records, ts.unload_records);
    if (ts.status == NT_ERR_TRUNCATED)
        fputs("note:     the trace is truncated; counts cover the samples read before the cut\n", o);
}

void cli_top_print(FILE *o, const nt_top *top, bool by_thread)
{
    for (size_t i = 0; i < top->table_count; i++) {
        if (by_thread)
            fprintf(o, "thread %" PRIu64 ":\n", top->tables[i].thread_id);
        print_table(o, &top->tables[i]);
        if (by_thread)
            fputc('\n', o);
    }
}
