/* What a trace may hold (nt_trace_limits): hostile streams that make the
 * aggregator amplify (one deep stack resolving a new way in every sample)
 * and streams beyond a limit end with NT_ERR_LIMIT, a message naming the
 * limit, and the samples before it delivered. */
#include "nettrace_trace.h"
#include "ltest.h"
#include "support.h"
#include "trace_build.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static const uint64_t MOD = 0x7700, ASM = 0x8800;

#define DEPTH 200u
#define BASE 0x100000ull

static uint64_t frame_ip(uint32_t k) { return BASE + (uint64_t)k * 0x1000 + 0x10; }

/* One deep stack; before each sample a JIT load at an address that stack
 * already uses, so every sample resolves one frame differently. */
static void amplifier(pb *p, uint32_t samples)
{
    pb_begin(p, 8, 1000000000);
    uint64_t ips[DEPTH];
    for (uint32_t k = 0; k < DEPTH; k++)
        ips[k] = frame_ip(k);
    const uint64_t *st[] = { ips };
    const uint32_t d[] = { DEPTH };
    pb_stacks(p, 1, 1, st, d);
    pb_assembly(p, 1, ASM, "App");
    pb_module(p, 1, MOD, ASM, "/app/App.dll");
    for (uint32_t k = 0; k < DEPTH; k++)
        pb_method(p, MD_LOAD, 2, k + 1, MOD, BASE + (uint64_t)k * 0x1000, 0x100, "App.T", "M");
    for (uint32_t i = 0; i < samples; i++) {
        uint32_t k = i % DEPTH;
        pb_method(p, MD_LOAD, 10 + 2 * (int64_t)i, 100000 + i, MOD, BASE + (uint64_t)k * 0x1000, 0x100, "App.T", "N");
        pb_sample(p, 7, 1, 11 + 2 * (int64_t)i, NT_SAMPLE_MANAGED);
    }
    pb_end(p);
}

static nt_trace *build_with(pb *p, const nt_trace_limits *lim, nt_status want, char *msg, size_t msg_size)
{
    nt_trace_options opt = { .trace_limits = lim };
    nt_trace *t = NULL;
    nt_status s = nt_trace_from_buffer(p->b.d, p->b.n, &opt, &t, msg, msg_size);
    cr_assert_eq(s, want, "status %s (%s)", nt_status_name(s), msg);
    cr_assert_not_null(t, "what was built is delivered");
    return t;
}

LTest(trace_limits, one_stack_resolving_a_new_way_every_sample_is_capped)
{
    pb p;
    amplifier(&p, 3000);
    char msg[256];
    nt_trace *t = build_with(&p, NULL, NT_ERR_LIMIT, msg, sizeof msg);
    nt_trace_stats st;
    nt_trace_stats_get(t, &st);
    cr_log_info("%s; %llu samples, %llu stacks, %llu frames, peak %zu bytes", msg, (unsigned long long)st.samples,
                (unsigned long long)st.stacks, (unsigned long long)st.frames, st.memory_peak);
    cr_assert(strstr(msg, "max_variants"), "the message names the limit: %s", msg);
    cr_assert_str_eq(nt_trace_message(t), msg);
    cr_assert_eq(st.status, NT_ERR_LIMIT);
    cr_assert_eq(st.stacks, 1024, "at most 1,024 ways of one stack (default max_variants)");
    cr_assert_eq(nt_trace_sample_count(t), 1024, "the samples before the limit are delivered");
    cr_assert_eq(st.frames, 1024 * DEPTH);
    for (size_t i = 0; i < nt_trace_sample_count(t); i++)
        cr_assert_eq(nt_trace_sample_at(t, i).frame_count, DEPTH);
    /* 3,000 samples would hold 600,000 resolved frames (14 MB). */
    cr_assert_lt(st.memory, (size_t)8 << 20, "memory %zu", st.memory);
    nt_trace_free(t);

    /* A caller may allow more or less. */
    nt_trace_limits lim = { .max_variants = 64 };
    t = build_with(&p, &lim, NT_ERR_LIMIT, msg, sizeof msg);
    cr_assert_eq(nt_trace_sample_count(t), 64);
    nt_trace_free(t);
    tb_free(&p.b);
}

LTest(trace_limits, samples_beyond_max_samples_end_the_build)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    const uint64_t a[] = { 0x1010 };
    const uint64_t *st[] = { a };
    const uint32_t d[] = { 1 };
    pb_stacks(&p, 1, 1, st, d);
    for (int i = 0; i < 5000; i++)
        pb_sample(&p, 7, 1, 100 + i, NT_SAMPLE_MANAGED);
    pb_end(&p);
    nt_trace_limits lim = { .max_samples = 1500 };
    char msg[256];
    nt_trace *t = build_with(&p, &lim, NT_ERR_LIMIT, msg, sizeof msg);
    cr_assert(strstr(msg, "max_samples"), "%s", msg);
    cr_assert_eq(nt_trace_sample_count(t), 1500);
    cr_assert_eq(nt_trace_sample_at(t, 1499).timestamp, 100 + 1499);
    nt_trace_free(t);
    tb_free(&p.b);
}

LTest(trace_limits, distinct_stack_ips_beyond_max_frames_end_the_build)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    enum { N = 300, D = 10 };
    static uint64_t ips[N][D];
    const uint64_t *st[N];
    uint32_t d[N];
    for (uint32_t i = 0; i < N; i++) {
        for (uint32_t k = 0; k < D; k++)
            ips[i][k] = 0x10000 + i * 0x100 + k;
        st[i] = ips[i];
        d[i] = D;
    }
    pb_stacks(&p, 1, N, st, d);
    for (uint32_t i = 0; i < N; i++)
        pb_sample(&p, 7, i + 1, 100 + i, NT_SAMPLE_MANAGED);
    pb_end(&p);
    nt_trace_limits lim = { .max_frames = 1000 };
    char msg[256];
    nt_trace *t = build_with(&p, &lim, NT_ERR_LIMIT, msg, sizeof msg);
    cr_assert(strstr(msg, "max_frames"), "%s", msg);
    cr_assert_eq(nt_trace_sample_count(t), 100, "100 stacks of 10 IPs fit in 1,000");
    nt_trace_free(t);
    /* The defaults hold it all. */
    t = build_with(&p, NULL, NT_OK, msg, sizeof msg);
    cr_assert_eq(nt_trace_sample_count(t), N);
    nt_trace_free(t);
    tb_free(&p.b);
}
