/* The hot-method tables as 'nettrace top' prints them, for a file and for a
 * live process alike. */
#ifndef CLI_TOP_PRINT_H
#define CLI_TOP_PRINT_H

#include "cli/select.h"
#include "nettrace_trace.h"

#include <stdio.h>

/* The lines above the tables: samples and threads (with a filter, how many
 * of them it selected: sel, NULL when unfiltered), how many frames resolved,
 * the method records, and a note when the stream was cut. */
void cli_top_print_header(FILE *o, const nt_trace *t, const cli_selected *sel);
/* What the thread samples say and how far to trust them, under the header:
 * the profile's name and what it counts, the managed / external shares of
 * the samples in f's thread and time window (f NULL: all), the measured
 * rate (samples per thread per second, from each sample's distance to its
 * thread's next) beside the trace's nominal interval, and a hint when
 * external samples (blocked, waiting or native) dominate a count that
 * includes them.  managed_only: only managed samples are counted; wall: the
 * wall profile.  Nothing when the trace has no samples. */
void cli_top_print_profile(FILE *o, const nt_trace *t, const cli_filter *f, bool managed_only, bool wall);
/* The same as one JSON object: the header's counts and "tables" with their
 * rows (by_time: the wall profile, "weight": "wall_ns", its numbers ns). */
void cli_top_print_json(FILE *o, const char *path, const nt_trace *t, const cli_selected *sel, const nt_top *top,
                        bool by_time);
/* Every table of top; with by_thread each under a "thread ID:" line (by_time:
 * the wall profile, in ns).  Names are printed with common/text_escape.h's escaping. */
void cli_top_print(FILE *o, const nt_top *top, bool by_thread, bool by_time);

/* Whether top's -n VALUE counts rows (the old spelling of --top N): VALUE
 * looks like a number (a digit first, or a sign and a digit); any other VALUE
 * is a process name, as collect's -n takes (a name that starts with a digit
 * needs --name). */
bool cli_top_n_is_rows(const char *value);

#endif
