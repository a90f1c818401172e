/* The event profiles, the GC timeline and the tool's formatters.
 *
 * The input is a stream.  nt_profile_from_buffer builds a profile with
 * options chosen from the input's hash (one record per event, events only,
 * messages in the key, a time window) under small trace limits (GCs, labels,
 * threads), so breaching them is cheap.  Invariants: no GC pause or
 * suspension below -1 (unknown), no allocation or contention value or total
 * below zero.  The profile goes through the folded, speedscope and pprof
 * exporters, and the same stream through the tool's commands that format
 * profiles, times and events (gc, gc --json, info, samples --relative,
 * samples --profile, events, events --json --stacks; two per input, by its
 * hash) on a file, standard output to /dev/null: a signed overflow or a bad
 * read in any of them is a sanitizer report. */
#include "fuzz.h"
#include "nettrace_profile.h"
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int discard(void *user, const void *data, size_t len)
{
    (void)data;
    *(size_t *)user += len;
    return 0;
}

static void check_profile(const nt_profile *p)
{
    for (size_t i = 0; i < nt_profile_gc_count(p); i++) {
        const nt_gc *g = nt_profile_gc_at(p, i);
        if (g->pause_ns < -1 || g->suspension_ns < -1)
            fz_fail("GC %zu: pause %lld, suspension %lld", i, (long long)g->pause_ns, (long long)g->suspension_ns);
    }
    for (size_t i = 0; i < nt_profile_record_count(p); i++) {
        nt_profile_record r = nt_profile_record_at(p, i);
        if (r.value < 0 && r.kind != NT_PROFILE_EXCEPTIONS)
            fz_fail("record %zu of kind %d: value %lld", i, (int)r.kind, (long long)r.value);
    }
    for (int k = NT_PROFILE_ALLOC; k <= NT_PROFILE_CONTENTION; k++) {
        nt_profile_totals t = { 0 };
        nt_profile_totals_get(p, (nt_profile_kind)k, &t);
        if (t.value < 0)
            fz_fail("kind %d: total %lld", k, (long long)t.value);
        nt_profile_export_options eo = { .kind = (nt_profile_kind)k, .with_label = k != NT_PROFILE_CONTENTION };
        size_t n = 0;
        nt_profile_export_folded(p, &eo, discard, &n);
        nt_profile_export_speedscope(p, &eo, discard, &n);
        nt_profile_export_pprof(p, &eo, discard, &n);
    }
}

/* The tool's commands on the input as a file (they read paths). */
static void run_commands(const uint8_t *data, size_t size, uint64_t h)
{
    static char path[64];
    static bool ready;
    if (!ready) {
        snprintf(path, sizeof path, "/tmp/nt-fuzz-profile-%d.nettrace", (int)getpid());
        /* (standard error stays: sanitizer reports go there; a campaign runs with -close_fd_mask=3) */
        if (!freopen("/dev/null", "w", stdout))
            fz_fail("cannot send the commands' output to /dev/null");
        ready = true;
    }
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        fz_fail("cannot write %s", path);
    static const char *const cmds[][6] = {
        { "gc", NULL }, { "gc", "--json", NULL }, { "info", NULL }, { "info", "--json", NULL },
        { "samples", "--relative", NULL }, { "samples", "--profile", "alloc", "--relative", NULL },
        { "samples", "--profile", "contention", NULL }, { "events", NULL }, { "events", "--json", "--stacks", NULL },
    };
    int (*const fns[])(int, char **) = { cmd_gc, cmd_gc, cmd_info, cmd_info, cmd_samples, cmd_samples,
                                          cmd_samples, cmd_events, cmd_events };
    /* a few commands per input, chosen by its hash: the campaign's speed stays that of a parse or two */
    size_t ncmd = sizeof fns / sizeof fns[0];
    for (int pick = 0; pick < 2; pick++) {
        size_t c = (size_t)((h >> (8 * pick)) % ncmd);
        char *argv[8];
        int argc = 0;
        for (; cmds[c][argc]; argc++)
            argv[argc] = (char *)cmds[c][argc];
        argv[argc++] = path;
        argv[argc] = NULL;
        fns[c](argc, argv);
        fflush(stdout);
    }
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t h = fz_hash(data, size);
    nt_limits lim;
    fz_harness_limits(&lim);
    nt_trace_limits tl = { .struct_size = sizeof tl, .max_gcs = 1024, .max_labels = 1024, .max_threads = 256 };
    nt_trace_options to = { .limits = &lim, .trace_limits = &tl };
    nt_profile_options po = { .trace = &to, .keep_events = h & 1, .events_only = h & 2,
                              .exception_messages = h & 4 };
    if (h & 8) {
        po.from = (nt_time_bound){ .set = true, .absolute = h & 16, .ns = (int64_t)(h >> 20) - (int64_t)(1 << 20) };
        po.to = (nt_time_bound){ .set = (h & 32) != 0, .ns = INT64_MAX - (int64_t)(h >> 40) };
    }
    nt_profile *p = NULL;
    char msg[256];
    nt_status s = nt_profile_from_buffer(data, size, &po, &p, msg, sizeof msg);
    if (!fz_parse_status_ok(s))
        fz_fail("status %d", (int)s);
    if (p) {
        check_profile(p);
        nt_profile_free(p);
    }
    run_commands(data, size, h);
    return 0;
}
