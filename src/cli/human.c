/* The tool's human numbers (human.h). */
#include "cli/human.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Copy the digits of `digits` into out with a comma before every group of
 * three from the right; out has room for any uint64's 26 characters. */
static void group(char *out, const char *digits)
{
    size_t n = strlen(digits), k = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0)
            out[k++] = ',';
        out[k++] = digits[i];
    }
    out[k] = '\0';
}

cli_num cli_count(uint64_t v)
{
    char d[24];
    cli_num r;
    snprintf(d, sizeof d, "%" PRIu64, v);
    group(r.s, d);
    return r;
}

cli_num cli_count_signed(int64_t v)
{
    if (v >= 0)
        return cli_count((uint64_t)v);
    cli_num m = cli_count((uint64_t)0 - (uint64_t)v), r;
    r.s[0] = '-';
    memcpy(r.s + 1, m.s, strlen(m.s) + 1); /* at most 26 + 1 of the 40 */
    return r;
}

cli_num cli_fixed(double v, int decimals)
{
    cli_num r;
    if (!(v > -1e18 && v < 1e18)) { /* NaN, or past what groups into 40 characters */
        snprintf(r.s, sizeof r.s, "%.*g", decimals + 1, v);
        return r;
    }
    char d[48];
    snprintf(d, sizeof d, "%.*f", decimals, v);
    const char *digits = d[0] == '-' ? d + 1 : d;
    /* a value that rounds to zero has no sign to show ("-0.000") */
    bool neg = d[0] == '-' && strspn(digits, "0.") != strlen(digits);
    char *dot = strchr(d, '.');
    char frac[24] = "";
    if (dot) {
        snprintf(frac, sizeof frac, "%s", dot);
        *dot = '\0';
    }
    /* below 1e18: at most 24 grouped digits, a sign and the fraction */
    size_t k = 0;
    if (neg)
        r.s[k++] = '-';
    group(r.s + k, digits);
    k = strlen(r.s);
    size_t fl = strlen(frac);
    if (k + fl >= sizeof r.s)
        fl = sizeof r.s - 1 - k;
    memcpy(r.s + k, frac, fl);
    r.s[k + fl] = '\0';
    return r;
}

cli_num cli_bytes(uint64_t bytes)
{
    static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    cli_num r;
    if (bytes < 1024) {
        snprintf(r.s, sizeof r.s, "%" PRIu64 " B", bytes);
        return r;
    }
    double v = (double)bytes / 1024.0;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024.0;
        u++;
    }
    snprintf(r.s, sizeof r.s, "%.1f %s", v, units[u]);
    return r;
}

cli_num cli_ms(int64_t ns) { return cli_fixed((double)ns / 1e6, 3); }
