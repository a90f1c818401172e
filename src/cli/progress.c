/* The job's progress line (progress.h). */
#include "cli/progress.h"

#include "common/clock.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SHOW_AFTER_NS 500000000ll
#define REDRAW_NS 100000000ll

static struct {
    bool started, enabled, shown;
    int64_t start, last;
    const char *label;
} g;

void cli_progress_start(void)
{
    if (g.started)
        return;
    g.started = true;
    g.enabled = isatty(2) && getenv("NETTRACE_NO_PROGRESS") == NULL;
    g.start = g.last = cm_clock_ns();
    g.label = "reading";
}

static bool due(bool force)
{
    if (!g.enabled)
        return false;
    int64_t t = cm_clock_ns();
    if (t - g.start < SHOW_AFTER_NS || (!force && t - g.last < REDRAW_NS))
        return false;
    g.last = t;
    g.shown = true;
    return true;
}

void cli_progress_phase(const char *label)
{
    g.label = label;
    if (due(true))
        fprintf(stderr, "\r\033[K%s...", label);
}

void cli_progress_update(uint64_t done, uint64_t total, int bytes)
{
    if (!due(false))
        return;
    if (total) {
        int pct = (int)(done * 100 / total);
        fprintf(stderr, "\r\033[K%s [%-25.*s] %3d%%", g.label, pct / 4, "#########################", pct);
        if (bytes)
            fprintf(stderr, " %llu MB", (unsigned long long)(done >> 20));
    } else if (bytes) {
        fprintf(stderr, "\r\033[K%s %llu MB", g.label, (unsigned long long)(done >> 20));
    } else {
        fprintf(stderr, "\r\033[K%s %llu", g.label, (unsigned long long)done);
    }
}

void cli_progress_clear(void)
{
    if (g.shown)
        fputs("\r\033[K", stderr);
    g.shown = false;
}
