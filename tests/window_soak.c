/* The always-on soak: a generated stream, fed straight into the window
 * callbacks (no file), that JIT-compiles 100 methods and makes 100 new stack
 * shapes in every one of its windows -- 10^6 of each over 10,000 windows --
 * while it unloads a share of the methods, never samples another share, and
 * loads and unloads a collectible module's code every 100 windows.  At a
 * record budget the test sets, it checks that
 *  - the window's own peak-memory figure after the last window is within
 *    10 % of its figure after window 100;
 *  - the work counter of the last window (index steps and records fed, the
 *    window's cost counted, not timed) is within 10 % of window 100's;
 *  - every sampled frame is named: the budget keeps what the samples need,
 *    evicting never-sampled and long-unsampled records instead.
 * Usage: window_soak [WINDOWS] (default 10,000; `make check` runs a scaled
 * run, `make bench` the full one).  Prints the figures; exit 0 when they
 * hold, 1 otherwise. */
#include "nettrace_trace.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PER_WINDOW 100u     /* methods compiled and new stack shapes per window */
#define FRAMEWORK 2000u     /* rundown records sampled all the time (callers) */
#define UNLOAD_AFTER 5u     /* windows between a method's JIT and its unload */
#define WINDOW_NS 1000000   /* trace-clock ns per window (ticks: the clock runs at 1 GHz) */
#define BUDGET (2u * 1024u * 1024u)

static nt_callbacks cb;
static uint32_t next_stack_id;

static uint64_t jit_address(uint64_t id) { return 0x100000000ull + id * 0x100; }
static uint64_t framework_address(uint32_t f) { return 0x7f0000000000ull + (uint64_t)f * 0x200; }

static void method(nt_trace_window *w, nt_record_event which, uint64_t id, uint64_t start, uint64_t module,
                   int64_t ticks, const char *type, const char *name)
{
    nt_method m = { .which = which, .method_id = id, .module_id = module, .start_address = start, .size = 0xC0,
                    .declaring_type = type, .name = name, .signature = "void ()", .timestamp = ticks };
    cb.method(w, &m);
}

static void module_event(nt_trace_window *w, nt_record_event which, uint64_t module, int64_t ticks)
{
    nt_module mo = { .which = which, .module_id = module, .assembly_id = module * 10, .timestamp = ticks,
                     .il_path = "/app/Plugin.dll" };
    nt_assembly a = { .which = which, .assembly_id = module * 10, .flags = 0x8 /* collectible */,
                      .name = "Plugin, Version=1.0.0.0", .timestamp = ticks };
    cb.module(w, &mo);
    cb.assembly(w, &a);
}

/* Method j of window k: [0, 40) sampled then unloaded, [40, 70) sampled and
 * kept, [70, 90) never sampled, [90, 100) sampled, in the collectible
 * module of its hundred windows. */
static uint64_t method_id(uint64_t k, uint32_t j) { return 1 + k * PER_WINDOW + j; }
static uint64_t plugin_module(uint64_t k) { return 1000 + k / 100; }

static void window_records(nt_trace_window *w, uint64_t k, int64_t base)
{
    char type[32], name[32];
    snprintf(type, sizeof type, "Gen.T%" PRIu64, k % 50);
    if (k % 100 == 0)
        module_event(w, NT_RECORD_LOAD, plugin_module(k), base);
    for (uint32_t j = 0; j < PER_WINDOW; j++) {
        uint64_t id = method_id(k, j);
        snprintf(name, sizeof name, "M%" PRIu64, id);
        method(w, NT_RECORD_LOAD, id, jit_address(id), j >= 90 ? plugin_module(k) : 7, base + j, type, name);
    }
    if (k >= UNLOAD_AFTER)
        for (uint32_t j = 0; j < 40; j++) {
            uint64_t id = method_id(k - UNLOAD_AFTER, j);
            method(w, NT_RECORD_UNLOAD, id, jit_address(id), 7, base + WINDOW_NS / 2, type, "");
        }
}

/* 100 new shapes: a leaf in this window's code, two framework callers (each framework record is hit
 * every 20 windows at least); each shape sampled twice. */
static void window_samples(nt_trace_window *w, uint64_t k, int64_t base)
{
    for (uint32_t s = 0; s < PER_WINDOW; s++) {
        uint32_t j = s < 70 ? s : 90 + (s - 70) % 10;
        uint64_t ips[3] = { jit_address(method_id(k, j)) + 0x10 + 8 * (s < 70 ? 0 : (s - 70) / 10),
                            framework_address((uint32_t)((s * 20 + k) % FRAMEWORK)) + 0x20,
                            framework_address((s * 13 + 3) % FRAMEWORK) + 0x40 };
        for (int rep = 0; rep < 2; rep++) {
            nt_stack st = { .id = ++next_stack_id, .count = 3, .ips = ips };
            int64_t t = base + 1000 + (int64_t)(s * 2 + (uint32_t)rep) * 4000;
            nt_sample smp = { .timestamp = t, .time_ns = t, .thread_id = 1 + s % 4, .type = NT_SAMPLE_MANAGED,
                              .stack_id = st.id, .stack = &st };
            cb.sample(w, &smp);
        }
    }
    if (k % 100 == 99)
        module_event(w, NT_RECORD_UNLOAD, plugin_module(k), base + WINDOW_NS - 1);
}

static bool within(const char *what, double at_100, double at_end)
{
    double ratio = at_100 > 0 ? at_end / at_100 : 0;
    bool ok = at_100 > 0 && ratio <= 1.10 && ratio >= 0.90;
    printf("%-28s window 100: %12.0f   last window: %12.0f   ratio %.3f %s\n", what, at_100, at_end, ratio,
           ok ? "(within 10 %)" : "(NOT within 10 %)");
    return ok;
}

int main(int argc, char **argv)
{
    uint64_t windows = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000;
    if (windows < 200) {
        fprintf(stderr, "window_soak: at least 200 windows\n");
        return 2;
    }
    nt_trace_window_config cfg = { .struct_size = sizeof cfg, .record_budget = BUDGET };
    nt_trace_window *w = nt_trace_window_new(&cfg, NULL);
    if (!w)
        return 1;
    nt_trace_window_callbacks(&cb);
    nt_trace_info info = { 0 };
    info.qpc_frequency = 1000000000;
    info.pointer_size = 8;
    cb.trace(w, &info);
    module_event(w, NT_RECORD_DC_START, 7, 0);
    for (uint32_t f = 0; f < FRAMEWORK; f++)
        method(w, NT_RECORD_DC_START, 500000000 + f, framework_address(f), 7, 0, "System.Framework", "Call");
    nt_trace_window_stats at100 = { 0 }, last = { 0 };
    uint64_t frames = 0, unnamed = 0, samples = 0;
    bool ok = true;
    for (uint64_t k = 0; k < windows; k++) {
        int64_t base = (int64_t)k * WINDOW_NS;
        window_records(w, k, base);
        window_samples(w, k, base);
        nt_trace *t;
        nt_status st = nt_trace_window_take(w, &t);
        if (!t || (st != NT_OK && st != NT_ERR_LIMIT)) {
            fprintf(stderr, "window_soak: window %" PRIu64 ": %s\n", k + 1, nt_status_describe(st));
            return 1;
        }
        nt_trace_stats ts;
        nt_trace_stats_get(t, &ts);
        frames += ts.frames;
        unnamed += ts.frames - ts.resolved_frames;
        samples += ts.samples;
        if (ts.frames != ts.resolved_frames && ok) {
            fprintf(stderr, "window_soak: window %" PRIu64 ": %" PRIu64 " of %" PRIu64 " frames unnamed\n", k + 1,
                    ts.frames - ts.resolved_frames, ts.frames);
            ok = false;
        }
        nt_trace_free(t);
        if (k + 1 == 100)
            nt_trace_window_stats_get(w, &at100);
    }
    nt_trace_window_stats_get(w, &last);
    printf("windows %" PRIu64 ", methods JIT-compiled %" PRIu64 ", distinct stack shapes %" PRIu64
           ", samples %" PRIu64 ", frames %" PRIu64 " (%" PRIu64 " unnamed)\n",
           windows, windows * PER_WINDOW, windows * PER_WINDOW, samples, frames, unnamed);
    printf("records kept %" PRIu64 " (%" PRIu64 " bytes, budget %" PRIu64 "), retired %" PRIu64 ", evicted %" PRIu64
           " (%" PRIu64 " of them sampled once)\n",
           last.records.entries, last.records.bytes + last.strings.bytes + last.address_index.bytes +
                                     last.modules.bytes,
           last.record_budget, last.records_retired, last.records_evicted, last.records_evicted_sampled);
    ok &= within("peak memory (bytes)", (double)at100.memory_peak, (double)last.memory_peak);
    ok &= within("memory now (bytes)", (double)at100.memory, (double)last.memory);
    ok &= within("work per window (steps)", (double)at100.last_window_work, (double)last.last_window_work);
    if (!last.records_retired || !last.records_evicted) {
        fprintf(stderr, "window_soak: the bound did not act (retired %" PRIu64 ", evicted %" PRIu64 ")\n",
                last.records_retired, last.records_evicted);
        ok = false;
    }
    nt_trace_window_free(w);
    puts(ok ? "window_soak: ok" : "window_soak: FAILED");
    return ok ? 0 : 1;
}
