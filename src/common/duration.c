/* The one reader of durations people write (duration.h). */
#include "common/duration.h"

#include <errno.h>
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

bool cm_duration_read(const char *s, int64_t default_unit, int64_t *value_ns, int64_t *unit)
{
    if (!s || *s < '0' || *s > '9') /* no sign, no space, no "inf" */
        return false;
    char *end;
    errno = 0;
    unsigned long long whole = strtoull(s, &end, 10);
    bool integer = *end != '.' && *end != 'e' && *end != 'E';
    /* "0.355609123s", as the tool prints times: read exactly, digit by digit
     * (a double's rounding would move the time off the event it names). */
    const char *frac = NULL, *fend = end;
    if (*end == '.' && !errno) {
        frac = end + 1;
        for (fend = frac; *fend >= '0' && *fend <= '9'; fend++)
            ;
        integer = *fend != 'e' && *fend != 'E';
        if (integer)
            end = (char *)fend;
    }
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
        int64_t place = mul; /* a digit's ns; digits past 1 ns are dropped */
        for (const char *d = frac; d && d < fend && place >= 10; d++) {
            place /= 10;
            if (*value_ns > INT64_MAX - (*d - '0') * place)
                return false;
            *value_ns += (*d - '0') * place;
        }
        return true;
    }
    double ns = real * (double)mul;
    if (!(ns >= 0 && ns < 9.2e18))
        return false;
    *value_ns = (int64_t)ns;
    return true;
}
