/* What building a trace costs, counted rather than timed: address lookups
 * during resolution.  A frame no record covers resolves the same way at every
 * time, so it must cost no lookup per sample, and a stack of such frames must
 * be resolved once, not in every sample. */
#include "nettrace_trace.h"
#include "trace/trace_internal.h"
#include "ltest.h"
#include "support.h"
#include "trace_build.h"

#include <criterion/criterion.h>

static const uint64_t MOD = 0x7700, ASM = 0x8800;

static nt_trace *build(pb *p)
{
    nt_trace *t = NULL;
    char msg[256];
    nt_status s = nt_trace_from_buffer(p->b.d, p->b.n, NULL, &t, msg, sizeof msg);
    cr_assert_eq(s, NT_OK, "status %s (%s)", nt_status_name(s), msg);
    return t;
}

#define DEPTH 20u
#define SAMPLES 5000u

LTest(trace_cost, unresolved_frames_cost_no_lookup_per_sample)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    uint64_t a[DEPTH], b[DEPTH];
    for (uint32_t k = 0; k < DEPTH; k++) {
        a[k] = 0x700000 + k * 0x40; /* native code: no record covers it */
        b[k] = 0x800000 + k * 0x40;
    }
    const uint64_t *st[] = { a, b };
    const uint32_t d[] = { DEPTH, DEPTH };
    pb_stacks(&p, 1, 2, st, d);
    for (uint32_t i = 0; i < SAMPLES; i++)
        pb_sample(&p, 7, 1 + i % 2, 100 + i, NT_SAMPLE_EXTERNAL);
    pb_end(&p);
    nt_trace *t = build(&p);
    nt_trace_stats ts = { 0 };
    nt_trace_stats_get(t, &ts);
    cr_assert_eq(ts.samples, SAMPLES);
    cr_assert_eq(ts.resolved_frames, 0);
    cr_assert_eq(ts.stacks, 2, "each stack resolved once");
    cr_log_info("%llu lookups for %u samples of %u unresolved frames", (unsigned long long)t->symbol_lookups, SAMPLES,
                DEPTH);
    cr_assert_eq(t->symbol_lookups, 0, "the former code made one per frame of every sample (100,000)");
    nt_trace_free(t);
    tb_free(&p.b);
}

/* One frame whose code is unloaded during the trace depends on time; the
 * unresolved frames around it must not be looked up again with it. */
LTest(trace_cost, only_time_dependent_frames_are_looked_up_per_sample)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    uint64_t a[DEPTH];
    a[0] = 0x5010; /* the JIT code, unloaded halfway */
    for (uint32_t k = 1; k < DEPTH; k++)
        a[k] = 0x700000 + k * 0x40;
    const uint64_t *st[] = { a };
    const uint32_t d[] = { DEPTH };
    pb_stacks(&p, 1, 1, st, d);
    pb_assembly(&p, 1, ASM, "App");
    pb_module(&p, 1, MOD, ASM, "/app/App.dll");
    pb_method(&p, MD_LOAD, 10, 0x42, MOD, 0x5000, 0x40, "App.T", "Hot");
    for (uint32_t i = 0; i < SAMPLES; i++) {
        if (i == SAMPLES / 2)
            pb_method(&p, MD_UNLOAD, 101 + i, 0x42, MOD, 0x5000, 0x40, "App.T", "Hot");
        pb_sample(&p, 7, 1, 101 + i, NT_SAMPLE_MANAGED);
    }
    pb_end(&p);
    nt_trace *t = build(&p);
    nt_trace_stats ts = { 0 };
    nt_trace_stats_get(t, &ts);
    cr_assert_eq(ts.samples, SAMPLES);
    cr_assert_eq(ts.stacks, 2, "named while loaded, unnamed after the unload");
    cr_assert_eq(ts.resolved_frames, SAMPLES / 2);
    cr_log_info("%llu lookups", (unsigned long long)t->symbol_lookups);
    cr_assert_leq(t->symbol_lookups, SAMPLES, "one lookup per sample, not %u", SAMPLES * DEPTH);
    nt_trace_free(t);
    tb_free(&p.b);
}
