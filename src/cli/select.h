/* Which samples a command covers: --managed-only, --thread, --from, --to,
 * parsed once for top, stacks and samples, applied the way the exporters
 * select (time in [from, to) on the trace clock). */
#ifndef CLI_SELECT_H
#define CLI_SELECT_H

#include "cli/time_opt.h"
#include "nettrace_trace.h"

#include <getopt.h>
#include <stdio.h>

/* The library's one sample filter, as the options fill it. */
typedef nt_sample_filter cli_filter;

/* getopt_long entries for the filter options (their values are the CLI_FILTER_* codes). */
enum { CLI_FILTER_MANAGED = 0x1000, CLI_FILTER_THREAD, CLI_FILTER_FROM, CLI_FILTER_TO, CLI_FILTER_JOBS };
#define CLI_FILTER_LONGOPTS                                                                   \
    { "managed-only", no_argument, NULL, CLI_FILTER_MANAGED },                                \
        { "thread", required_argument, NULL, CLI_FILTER_THREAD },                             \
        { "from", required_argument, NULL, CLI_FILTER_FROM },                                 \
        { "to", required_argument, NULL, CLI_FILTER_TO },                                     \
        { "jobs", required_argument, NULL, CLI_FILTER_JOBS } /* how the file is read (stream_read.h) */

#define CLI_FILTER_HELP                                                                       \
    "      --managed-only only samples taken in managed code\n"                              \
    "      --thread ID    only this thread\n" CLI_TIME_HELP                                     \
    "      --jobs N       threads parsing the file (default: one per processor for\n"        \
    "                       files of 32 MiB or more, else one; 1 = one, as for a\n"         \
    "                       pipe); the output is the same\n"

/* 1: c was a filter option and its value is good; 0: not a filter option;
 * -1: a bad value (the usage error is printed). */
int cli_filter_option(cli_filter *f, const char *cmd, int c, const char *arg);

/* The default case of a command's getopt loop: true when c was a filter
 * option with a good value; false when the command must exit with a usage
 * error (printed, with usage(stderr) when c is no option of the command). */
bool cli_filter_option_or_usage(cli_filter *f, const char *cmd, int c, const char *arg, void (*usage)(FILE *));

bool cli_filter_active(const cli_filter *f);

/* Fill eo's selection (managed_only, thread, time window) from f. */
void cli_filter_export(const cli_filter *f, nt_export_options *eo);

/* f with its window on t's clock, for selecting samples one by one by the exporters' rule. */
typedef struct cli_keep {
    cli_filter f;
    int64_t from_ns, to_ns;
} cli_keep;
void cli_keep_init(cli_keep *k, const cli_filter *f, const nt_trace *t);
/* Whether sample s is selected. */
bool cli_filter_keeps(const cli_keep *k, const nt_trace_sample *s);

typedef struct cli_selected {
    uint64_t samples;   /* selected samples */
    uint64_t threads;   /* distinct threads among them */
} cli_selected;

/* Count what f selects in t.  When the filter selects nothing from a trace
 * that has samples, say so on stderr ("nettrace CMD: ..."), naming what the
 * trace does hold.  Returns false when memory is short. */
bool cli_filter_count(const cli_filter *f, const nt_trace *t, const char *cmd, cli_selected *out);

#endif
