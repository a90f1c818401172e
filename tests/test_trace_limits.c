/* What a trace may hold (nt_trace_limits): hostile streams that make the
 * aggregator amplify (one deep stack resolving a new way in every sample)
 * and streams beyond a limit end with NT_ERR_LIMIT, a message naming the
 * limit, and the samples before it delivered. */
#include "nettrace_profile.h"
#include "nettrace_trace.h"
#include "trace/trace_internal.h"
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
    nt_trace_stats st = { 0 };
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

/* Resolved stacks that need their own frame ids (a variant resolving an
 * address to another record) count against max_frames: the amplifier's
 * first sample resolves to the interned array itself, each later one to a
 * copy of DEPTH ids with one new frame. */
LTest(trace_limits, variants_beyond_max_frames_end_the_resolution)
{
    pb p;
    amplifier(&p, 3000);
    nt_trace_limits lim = { .max_frames = DEPTH * 11 };
    char msg[256];
    nt_trace *t = build_with(&p, &lim, NT_ERR_LIMIT, msg, sizeof msg);
    cr_assert(strstr(msg, "max_frames") && strstr(msg, "resolution stopped"), "%s", msg);
    cr_assert_eq(nt_trace_sample_count(t), 11, "the interned array and 10 copies fit in 11 stacks' ids");
    cr_assert_eq(nt_trace_stack_count(t), 11);
    /* One frame per distinct (address, record): DEPTH, and one more for each later variant. */
    cr_assert_eq(nt_trace_frame_count(t), DEPTH + 10);
    for (size_t i = 1; i < nt_trace_sample_count(t); i++) {
        nt_trace_sample a = nt_trace_sample_at(t, i - 1), b = nt_trace_sample_at(t, i);
        uint32_t k = (uint32_t)(i % DEPTH), differ = 0;
        for (uint32_t j = 0; j < DEPTH; j++)
            differ += a.frame_ids[j] != b.frame_ids[j];
        cr_assert_eq(differ, 1, "sample %zu differs from the one before in frame %u only", i, k);
        cr_assert_neq(a.frame_ids[k], b.frame_ids[k]);
        cr_assert_str_eq(nt_trace_frame_at(t, b.frame_ids[k])->method->name, "N");
        cr_assert_eq(nt_trace_frame_at(t, b.frame_ids[k])->ip, nt_trace_frame_at(t, a.frame_ids[k])->ip);
    }
    nt_trace_free(t);
    tb_free(&p.b);
}

/* Deep stacks, each one distinct, over few addresses whose records never
 * change (BenchLoad's allocation ticks): the trace keeps one frame per
 * address and each stack as its interned address ids, 4 bytes a frame, with
 * no second copy -- the memory follows the distinct stacks at a small
 * constant (24 bytes a frame for the resolved frames alone, before). */
LTest(trace_limits, distinct_timeless_stacks_cost_four_bytes_a_frame)
{
    enum { N = 16000, D = 50, CHUNK = 500 };
    pb p;
    pb_begin(&p, 8, 1000000000);
    pb_assembly(&p, 1, ASM, "App");
    pb_module(&p, 1, MOD, ASM, "/app/App.dll");
    for (uint32_t k = 0; k < D; k++)
        pb_method(&p, MD_LOAD, 2, k + 1, MOD, BASE + (uint64_t)k * 0x1000, 0x1000, "App.T", "M");
    static uint64_t ips[CHUNK][D];
    const uint64_t *st[CHUNK];
    uint32_t d[CHUNK];
    for (uint32_t c = 0; c < N / CHUNK; c++) {
        for (uint32_t j = 0; j < CHUNK; j++) {
            uint32_t i = c * CHUNK + j;
            /* Frame k's address says bit k % 14 of i: stacks below 2^14 all differ. */
            for (uint32_t k = 0; k < D; k++)
                ips[j][k] = BASE + (uint64_t)k * 0x1000 + 0x10 + ((i >> (k % 14)) & 1) * 0x100;
            st[j] = ips[j];
            d[j] = D;
        }
        pb_stacks(&p, c * CHUNK + 1, CHUNK, st, d);
        for (uint32_t j = 0; j < CHUNK; j++)
            pb_sample(&p, 7, c * CHUNK + j + 1, 10 + c * CHUNK + j, NT_SAMPLE_MANAGED);
        pb_sp(&p, 10 + (c + 1) * CHUNK);
    }
    pb_end(&p);
    char msg[256];
    nt_trace *t = build_with(&p, NULL, NT_OK, msg, sizeof msg);
    nt_trace_stats sts = { 0 };
    nt_trace_stats_get(t, &sts);
    cr_log_info("%llu stacks, %zu frames, %zu ids; memory %zu, peak %zu", (unsigned long long)sts.stacks,
                nt_trace_frame_count(t), t->nids, sts.memory, sts.memory_peak);
    cr_assert_eq(sts.stacks, N);
    cr_assert_eq(sts.resolved_frames, (uint64_t)N * D);
    cr_assert_eq(nt_trace_frame_count(t), 2 * D, "one frame per distinct address");
    cr_assert_eq(t->nids, (size_t)N * D, "every stack is its interned address ids: no second copy");
    /* 0.8 M frames: 3.2 MB of ids, samples 16 bytes each (0.26 MB); 40 bytes a frame before. */
    cr_assert_lt(sts.memory, (size_t)4 << 20, "memory %zu", sts.memory);
    cr_assert_lt(sts.memory_peak, (size_t)6 << 20, "peak %zu", sts.memory_peak);
    for (size_t i = 0; i < nt_trace_sample_count(t); i += 997) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        cr_assert_eq(s.frame_count, D);
        for (uint32_t k = 0; k < D; k++) {
            const nt_frame *f = nt_trace_frame_at(t, s.frame_ids[k]);
            cr_assert_eq(f->ip, BASE + (uint64_t)k * 0x1000 + 0x10 + ((i >> (k % 14)) & 1) * 0x100);
            cr_assert_eq(f->method_index, k);
        }
    }
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

/* 300 samples, each on its own stack of 10 distinct IPs. */
static void distinct_stacks(pb *p)
{
    pb_begin(p, 8, 1000000000);
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
    pb_stacks(p, 1, N, st, d);
    for (uint32_t i = 0; i < N; i++)
        pb_sample(p, 7, i + 1, 100 + i, NT_SAMPLE_MANAGED);
    pb_end(p);
}

LTest(trace_limits, distinct_stack_ips_beyond_max_frames_end_the_build)
{
    enum { N = 300 };
    pb p;
    distinct_stacks(&p);
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

/* A profile reads through the same steps as a trace: the limits in
 * nt_profile_options.trace hold for its trace, and msg names the limit as
 * nt_trace_from_buffer's does. */
LTest(trace_limits, a_profile_past_max_frames_says_so_like_a_trace)
{
    pb p;
    distinct_stacks(&p);
    nt_trace_limits lim = { .max_frames = 1000 };
    char tmsg[256], pmsg[256] = "untouched";
    nt_trace *t = build_with(&p, &lim, NT_ERR_LIMIT, tmsg, sizeof tmsg);
    nt_trace_options to = { .trace_limits = &lim };
    nt_profile_options po = { .trace = &to };
    nt_profile *prof = NULL;
    nt_status s = nt_profile_from_buffer(p.b.d, p.b.n, &po, &prof, pmsg, sizeof pmsg);
    cr_assert_eq(s, NT_ERR_LIMIT, "status %s (%s)", nt_status_name(s), pmsg);
    cr_assert_not_null(prof, "what was built is delivered");
    cr_assert(strstr(pmsg, "max_frames"), "the message names the limit: %s", pmsg);
    cr_assert_str_eq(pmsg, tmsg);
    cr_assert_str_eq(nt_trace_message(nt_profile_trace(prof)), pmsg);
    cr_assert_eq(nt_trace_sample_count(nt_profile_trace(prof)), nt_trace_sample_count(t));
    nt_profile_free(prof);
    nt_trace_free(t);
    tb_free(&p.b);
}

/* Stacks made to collide under the interning hash the builder used before
 * (four unkeyed multiply lanes, then a fold): 20,000 one-frame stacks that
 * all landed in slot 0 of any table up to 2^20 slots, against 20,000 stacks
 * of code addresses.  Probes are counted, not timed. */
static uint64_t mul_inverse(uint64_t a)
{
    uint64_t x = a;
    for (int i = 0; i < 5; i++)
        x *= 2 - a * x;
    return x;
}

static uint64_t unshift(uint64_t h, int s)
{
    uint64_t x = h;
    for (int i = 0; i < 64 / s + 1; i++)
        x = h ^ (x >> s);
    return x;
}

/* The former hash of a one-IP stack is a bijection of the IP: its inverse. */
static uint64_t ip_for_former_hash(uint64_t h)
{
    const uint64_t k = 0xff51afd7ed558ccdull;
    uint64_t h1 = 0xC2B2AE3D27D4EB4Full, h2 = 0x165667B19E3779F9ull, h3 = 0x27D4EB2F165667C5ull;
    h = unshift(h, 29);
    h *= mul_inverse(k);
    h = unshift(h, 32);
    h ^= (h1 << 17 | h1 >> 47) ^ (h2 << 31 | h2 >> 33) ^ (h3 << 47 | h3 >> 17);
    h *= mul_inverse(k);
    return h ^ (0x9E3779B97F4A7C15ull ^ 1);
}

static uint64_t stack_probes(const uint64_t *ips, uint32_t n)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    const uint64_t **st = malloc(n * sizeof *st);
    uint32_t *d = malloc(n * sizeof *d);
    cr_assert(st && d);
    for (uint32_t i = 0; i < n; i++) {
        st[i] = &ips[i];
        d[i] = 1;
    }
    pb_stacks(&p, 1, n, st, d);
    for (uint32_t i = 0; i < n; i++)
        pb_sample(&p, 7, i + 1, 100 + i, NT_SAMPLE_EXTERNAL);
    pb_end(&p);
    nt_trace *t = NULL;
    cr_assert_eq(nt_trace_from_buffer(p.b.d, p.b.n, NULL, &t, NULL, 0), NT_OK);
    cr_assert_eq(nt_trace_sample_count(t), n);
    uint64_t probes = t->stack_probes;
    nt_trace_free(t);
    tb_free(&p.b);
    free(st);
    free(d);
    return probes;
}

LTest(trace_limits, stacks_colliding_under_the_former_hash_cost_what_others_cost)
{
    enum { N = 20000 };
    uint64_t *bad = malloc(N * sizeof *bad), *control = malloc(N * sizeof *control);
    cr_assert(bad && control);
    for (uint32_t i = 0; i < N; i++) {
        bad[i] = ip_for_former_hash((uint64_t)(i + 1) << 20);
        control[i] = 0x7f0000000000ull + i * 0x40;
    }
    uint64_t pb_bad = stack_probes(bad, N), pb_control = stack_probes(control, N);
    cr_log_info("stack table probes: %llu colliding, %llu control (the former hash: about %llu)",
                (unsigned long long)pb_bad, (unsigned long long)pb_control, (unsigned long long)N * (N - 1) / 2);
    cr_assert_lt(pb_bad, 3 * pb_control + 4 * N, "%llu probes against %llu", (unsigned long long)pb_bad,
                 (unsigned long long)pb_control);
    free(bad);
    free(control);
}
