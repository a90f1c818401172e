/* What each profile asks the runtime for.  Method names come from JIT
 * (0x10) and Loader (0x8) events at Verbose level, which every profile with
 * stacks needs; the rundown at the end names code compiled earlier. */
#include "cli/profile_presets.h"

#include <stdio.h>
#include <string.h>

#define RUNTIME "Microsoft-Windows-DotNETRuntime"
#define SAMPLER "Microsoft-DotNETCore-SampleProfiler"
#define KW_GC 0x1ull
#define KW_NAMES 0x18ull /* Loader 0x8 + JIT 0x10 */
#define KW_CONTENTION 0x4000ull
#define KW_EXCEPTION 0x8000ull

typedef struct preset {
    const char *profile;
    const char *provider;
    uint64_t keywords;
    uint32_t level;
    const char *events; /* for the table */
} preset;

/* A profile may need several providers: one row each. */
static const preset PRESETS[] = {
    { "thread-time", SAMPLER, 0, 5, "every thread's stack, running or blocked, nominally every 1 ms" },
    { "thread-time", RUNTIME, KW_NAMES, 5, "method and module names" },
    { "wall", SAMPLER, 0, 5, "thread samples every 1 ms" },
    { "wall", RUNTIME, KW_NAMES, 5, "method and module names" },
    { "alloc", RUNTIME, KW_GC | KW_NAMES, 5, "GCAllocationTick (Verbose) every ~100 KB, with stacks" },
    { "exceptions", RUNTIME, KW_EXCEPTION | KW_NAMES, 5, "ExceptionThrown_V1, with stacks" },
    { "contention", RUNTIME, KW_CONTENTION | KW_NAMES, 5, "ContentionStart / ContentionStop, with stacks" },
    { "gc", RUNTIME, KW_GC, 4, "GCStart/End, SuspendEE/RestartEE, GCHeapStats (no allocation ticks)" },
};

void cli_profile_table_print(FILE *f)
{
    for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++)
        fprintf(f, "  %-11s %s:0x%llx:%u  %s\n", PRESETS[i].profile, PRESETS[i].provider,
                (unsigned long long)PRESETS[i].keywords, PRESETS[i].level, PRESETS[i].events);
    fputs("  (managed-cpu, the samples in managed code, and cpu, thread-time's old name, record\n"
          "  what thread-time does)\n", f);
}

/* The names that record what another profile records. */
static bool same_profile(const char *profile, const char *name, size_t n)
{
    if (strlen(profile) == n && strncmp(profile, name, n) == 0)
        return true;
    return strcmp(profile, "thread-time") == 0 &&
           ((n == 3 && strncmp(name, "cpu", 3) == 0) || (n == 11 && strncmp(name, "managed-cpu", 11) == 0));
}

static bool add(cli_providers *out, const preset *p, char *err, size_t errsize)
{
    for (size_t i = 0; i < out->count; i++) {
        nt_provider *q = &out->list[i];
        if (strcmp(q->name, p->provider) != 0)
            continue;
        q->keywords |= p->keywords;
        if (nt_provider_level(q) < p->level)
            q->level = p->level;
        return true;
    }
    if (out->count == CLI_MAX_PROVIDERS) {
        snprintf(err, errsize, "more than %d providers", CLI_MAX_PROVIDERS);
        return false;
    }
    out->list[out->count++] = (nt_provider){ .name = p->provider, .keywords = p->keywords, .level = p->level };
    return true;
}

bool cli_profile_providers(const char *names, cli_providers *out, char *err, size_t errsize)
{
    const char *s = names;
    bool any = false;
    while (*s) {
        size_t n = strcspn(s, ",");
        bool found = false;
        for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++) {
            if (!same_profile(PRESETS[i].profile, s, n))
                continue;
            found = true;
            if (!add(out, &PRESETS[i], err, errsize))
                return false;
        }
        if (!found) {
            snprintf(err, errsize, "unknown profile '%.*s' (thread-time, managed-cpu, wall, alloc, exceptions, contention, gc)", (int)n, s);
            return false;
        }
        any = true;
        s += n;
        if (*s == ',')
            s++;
    }
    if (!any) {
        snprintf(err, errsize, "no profile named");
        return false;
    }
    return true;
}
