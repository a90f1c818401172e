/* One parser for the times and durations the commands take (time_opt.h). */
#include "cli/time_opt.h"
#include "common/duration.h"

#include <inttypes.h>
#include <stdio.h>

bool cli_duration_parse(const char *s, int64_t default_unit_ns, int64_t max_ns, int64_t *out)
{
    int64_t ns, unit;
    if (!cm_duration_read(s, default_unit_ns, &ns, &unit) || ns > max_ns)
        return false;
    *out = ns;
    return true;
}

bool cli_time_option(const char *cmd, const char *opt, const char *arg, cli_time *out)
{
    if (nt_time_bound_parse(arg, out))
        return true;
    fprintf(stderr,
            "nettrace %s: %s: bad time '%s': give a unit, relative to the trace's start (2s, +1.5ms,\n"
            "  250us, 40ns, 3m), or '@' and trace-clock ns (@864741168641)\n",
            cmd, opt, arg);
    return false;
}

int64_t cli_trace_start_ns(const nt_trace_info *ti)
{
    return ti ? nt_ticks_to_ns(ti->sync_qpc, ti->qpc_frequency) : 0;
}

void cli_format_duration(char *buf, size_t size, int64_t ns)
{
    const char *sign = ns < 0 ? "-" : "";
    uint64_t v = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    if (v >= 1000000000u)
        snprintf(buf, size, "%s%.3f s", sign, (double)v / 1e9);
    else if (v >= 1000000u)
        snprintf(buf, size, "%s%.3f ms", sign, (double)v / 1e6);
    else if (v >= 1000u)
        snprintf(buf, size, "%s%.3f us", sign, (double)v / 1e3);
    else
        snprintf(buf, size, "%s%" PRIu64 " ns", sign, v);
}

void cli_format_utc(char *buf, size_t size, const nt_systemtime *t)
{
    snprintf(buf, size, "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ", t->year, t->month, t->day, t->hour, t->minute,
             t->second, t->milliseconds);
}
