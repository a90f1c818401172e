/* One parser for the times and durations the commands take (time_opt.h). */
#include "cli/time_opt.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t unit_ns(const char *u)
{
    static const struct { const char *name; int64_t ns; } UNITS[] = {
        { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 }, { "m", 60000000000 },
    };
    for (size_t i = 0; i < sizeof UNITS / sizeof UNITS[0]; i++)
        if (strcmp(u, UNITS[i].name) == 0)
            return UNITS[i].ns;
    return 0;
}

/* A non-negative number with an optional unit: *unit is 0 when there is none.
 * Integers are exact (trace clocks count ns since boot, beyond a double's 2^53). */
static bool number_with_unit(const char *s, int64_t *value_ns, int64_t *unit, int64_t default_unit)
{
    if (*s < '0' || *s > '9') /* no sign, no space, no "inf" */
        return false;
    char *end;
    errno = 0;
    unsigned long long whole = strtoull(s, &end, 10);
    bool integer = *end != '.' && *end != 'e' && *end != 'E';
    double real = 0;
    if (!integer) {
        errno = 0;
        real = strtod(s, &end);
    }
    if (errno)
        return false;
    *unit = *end ? unit_ns(end) : 0;
    if (*end && !*unit)
        return false;
    int64_t mul = *unit ? *unit : default_unit;
    if (integer) {
        if (whole > (unsigned long long)(INT64_MAX / mul))
            return false;
        *value_ns = (int64_t)whole * mul;
        return true;
    }
    double ns = real * (double)mul;
    if (!(ns >= 0 && ns < 9.2e18))
        return false;
    *value_ns = (int64_t)ns;
    return true;
}

bool cli_time_parse(const char *s, cli_time *out)
{
    cli_time t = { .set = true };
    int64_t unit;
    if (*s == '@') {
        t.absolute = true;
        if (!number_with_unit(s + 1, &t.ns, &unit, 1))
            return false;
    } else {
        if (*s == '+')
            s++;
        if (!number_with_unit(s, &t.ns, &unit, 1) || !unit)
            return false;
    }
    *out = t;
    return true;
}

bool cli_duration_parse(const char *s, int64_t default_unit_ns, int64_t max_ns, int64_t *out)
{
    int64_t ns, unit;
    if (!number_with_unit(s, &ns, &unit, default_unit_ns) || ns > max_ns)
        return false;
    *out = ns;
    return true;
}

bool cli_time_option(const char *cmd, const char *opt, const char *arg, cli_time *out)
{
    if (cli_time_parse(arg, out))
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
