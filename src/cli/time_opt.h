/* Times on the command line: --from / --to, and durations such as
 * collect's --duration, all read by one parser so every command takes the
 * same spellings.
 *
 *   2s  +2s  1.5ms  250us  40ns  3m     relative to the trace's start (its
 *                                       header's sync time, the moment the
 *                                       session began); '+' is optional
 *   @864741168641  @864741.168641s      absolute: trace-clock ns ('@' marks
 *                                       it; the unit is optional, ns)
 *
 * A relative value needs a unit: "--to 2" is refused rather than guessed. */
#ifndef CLI_TIME_OPT_H
#define CLI_TIME_OPT_H

#include "nettrace_profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A --from / --to value: the library's window end (absolute: ns is on the
 * trace clock, else relative to the start), so the library resolves it the
 * same way where only the builder sees the header (nt_time_bound_resolve). */
typedef nt_time_bound cli_time;

/* Parse a duration: a number with a unit (ns, us, ms, s, m), or a bare number
 * of default_unit_ns (e.g. seconds for --duration).  Non-negative, at most
 * max_ns.  false otherwise. */
bool cli_duration_parse(const char *s, int64_t default_unit_ns, int64_t max_ns, int64_t *out);

/* The parsing of a --from / --to option for command cmd ("stacks"): on a
 * bad value, prints "nettrace CMD: --OPT: ..." and returns false. */
bool cli_time_option(const char *cmd, const char *opt, const char *arg, cli_time *out);

/* The trace's start in trace-clock ns (the header's sync time). */
int64_t cli_trace_start_ns(const nt_trace_info *ti);

/* "2.064 s", "15.2 ms", "830 us", "12 ns": a duration for people. */
void cli_format_duration(char *buf, size_t size, int64_t ns);

/* "2026-03-01T12:34:56.789Z" */
void cli_format_utc(char *buf, size_t size, const nt_systemtime *t);

/* The help lines every command with --from/--to prints. */
#define CLI_TIME_HELP                                                                     \
    "      --from T       only samples at or after T, and before --to T.  T is\n"        \
    "      --to T           relative to the trace's start with a unit (2s, +1.5ms,\n"    \
    "                       250us, 40ns, 3m) or, after '@', trace-clock ns\n"            \
    "                       (@864741168641)\n"

#endif
