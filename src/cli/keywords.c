/* Keyword names of the runtime providers (keywords.h). */
#include "cli/keywords.h"
#include "cli/opts.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct keyword {
    const char *name;
    uint64_t value;
} KEYWORDS[] = {
    { "gc", 0x1ull },
    { "gchandle", 0x2ull },
    { "binder", 0x4ull },
    { "loader", 0x8ull },
    { "jit", 0x10ull },
    { "ngen", 0x20ull },
    { "startenumeration", 0x40ull },
    { "endenumeration", 0x80ull },
    { "security", 0x400ull },
    { "appdomainresourcemanagement", 0x800ull },
    { "jittracing", 0x1000ull },
    { "interop", 0x2000ull },
    { "contention", 0x4000ull },
    { "exception", 0x8000ull },
    { "threading", 0x10000ull },
    { "jittedmethodiltonativemap", 0x20000ull },
    { "overrideandsuppressngenevents", 0x40000ull },
    { "type", 0x80000ull },
    { "gcheapdump", 0x100000ull },
    { "gcsampledobjectallocationhigh", 0x200000ull },
    { "gcheapsurvivalandmovement", 0x400000ull },
    { "gcheapcollect", 0x800000ull },
    { "gcheapandtypenames", 0x1000000ull },
    { "gcsampledobjectallocationlow", 0x2000000ull },
    { "perftrack", 0x20000000ull },
    { "stack", 0x40000000ull },
    { "threadtransfer", 0x80000000ull },
    { "debugger", 0x100000000ull },
    { "monitoring", 0x200000000ull },
    { "codesymbols", 0x400000000ull },
    { "eventsource", 0x800000000ull },
    { "compilation", 0x1000000000ull },
    { "compilationdiagnostic", 0x2000000000ull },
    { "methoddiagnostic", 0x4000000000ull },
    { "typediagnostic", 0x8000000000ull },
    { "jitinstrumentationdata", 0x10000000000ull },
    { "profiler", 0x20000000000ull },
    { "waithandle", 0x40000000000ull },
    { "allocationsampling", 0x80000000000ull },
};
#define NKEYWORDS (sizeof KEYWORDS / sizeof KEYWORDS[0])

/* The providers whose keywords the table names (the rundown provider shares the runtime's bits it uses). */
static bool named(const char *provider)
{
    return strcasecmp(provider, "Microsoft-Windows-DotNETRuntime") == 0 ||
           strcasecmp(provider, "Microsoft-Windows-DotNETRuntimeRundown") == 0;
}

bool cli_keywords_parse(const char *provider, const char *s, uint64_t *out, char *err, size_t errsize)
{
    if (cli_parse_u64(s, UINT64_MAX, out))
        return true;
    if (!named(provider)) {
        snprintf(err, errsize, "provider %s: keywords '%s' are not a number (names are known for "
                               "Microsoft-Windows-DotNETRuntime only)", provider, s);
        return false;
    }
    *out = 0;
    for (const char *p = s; *p;) {
        size_t n = strcspn(p, "+|");
        size_t i = 0;
        while (i < NKEYWORDS && (strlen(KEYWORDS[i].name) != n || strncasecmp(KEYWORDS[i].name, p, n) != 0))
            i++;
        if (i == NKEYWORDS) {
            snprintf(err, errsize, "provider %s: unknown keyword '%.*s' (gc, loader, jit, exception, contention, "
                                   "threading, type, gcheapandtypenames, ...; see nettrace(1))", provider, (int)n, p);
            return false;
        }
        *out |= KEYWORDS[i].value;
        p += n;
        if (*p)
            p++;
    }
    return true;
}

void cli_keywords_names(const char *provider, uint64_t mask, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    if (!named(provider) || !mask)
        return;
    uint64_t rest = mask;
    for (size_t i = 0; i < NKEYWORDS && len < size; i++) {
        if (!(mask & KEYWORDS[i].value))
            continue;
        int n = snprintf(buf + len, size - len, "%s%s", len ? "+" : "", KEYWORDS[i].name);
        len += n > 0 ? (size_t)n : 0;
        rest &= ~KEYWORDS[i].value;
    }
    if (rest && len < size)
        snprintf(buf + len, size - len, "%s0x%llx", len ? "+" : "", (unsigned long long)rest);
}
