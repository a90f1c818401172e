/* The writer's tables against keys a converted trace chooses: capture thread
 * ids and stack IPs made to collide under the hashes the writer used before
 * (a multiplicative hash of the thread id; an unseeded FNV-style hash of the
 * IPs, both indexing a power-of-two table) cost the writer what ordinary keys
 * cost.  Work is counted (the common map's probes), not timed. */
#include "ltest.h"
#include "nettrace_writer.h"
#include "write/writer_internal.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

enum { N = 20000 };

/* The inverse of an odd 64-bit multiplier (Newton's iteration). */
static uint64_t inverse(uint64_t a)
{
    uint64_t x = a;
    for (int i = 0; i < 6; i++)
        x *= 2 - a * x;
    return x;
}

/* The former thread slot: (tid * golden) >> 32, masked. */
static size_t old_thread_slot(uint64_t tid, size_t cap) { return (size_t)((tid * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1); }

/* Thread ids whose former slot is 0 in every table up to 2^16 slots. */
static void colliding_tids(uint64_t *tids)
{
    const uint64_t inv = inverse(0x9E3779B97F4A7C15ull);
    for (uint64_t m = 0; m < N; m++)
        tids[m] = ((m + 1) << 48) * inv;
}

/* The former stack hash of a one-frame stack and its inverse in the IP. */
static uint64_t old_stack_hash1(uint64_t ip)
{
    uint64_t h = 0xcbf29ce484222325ull ^ 1;
    h ^= ip;
    h *= 0x100000001b3ull;
    h ^= h >> 29;
    return h;
}

static uint64_t unxorshift29(uint64_t y)
{
    uint64_t x = y;
    for (int i = 0; i < 3; i++)
        x = y ^ (x >> 29);
    return x;
}

/* IPs whose former one-frame stack hash has 16 low zero bits: one slot. */
static void colliding_ips(uint64_t *ips)
{
    const uint64_t inv = inverse(0x100000001b3ull);
    for (uint64_t m = 0; m < N; m++)
        ips[m] = (unxorshift29((m + 1) << 16) * inv) ^ (0xcbf29ce484222325ull ^ 1);
}

/* Within a small factor of the control (the former hashes: about N^2 / 2). */
static void expect_like_control(const char *what, uint64_t p_bad, uint64_t p_control)
{
    cr_expect(p_bad <= 2 * p_control + 1000, "%s: %llu probes, ordinary keys %llu (the former hash: ~%llu)", what,
              (unsigned long long)p_bad, (unsigned long long)p_control, (unsigned long long)N * N / 2);
}

static nt_writer *writer(nt_membuf *out)
{
    memset(out, 0, sizeof *out);
    nt_writer *w = nt_writer_new(NULL, nt_membuf_write, out, NULL);
    cr_assert(w);
    return w;
}

/* Probes of the thread table after N events, one per capture thread. */
static uint64_t thread_probes(const uint64_t *tids)
{
    nt_membuf out;
    nt_writer *w = writer(&out);
    nt_event_desc d = { .provider = "P", .event_id = 1, .event_name = "" };
    uint32_t id;
    cr_assert_eq(nt_writer_define(w, &d, &id), NT_OK);
    for (size_t i = 0; i < N; i++) {
        nt_writer_event e = { .metadata_id = id, .thread_id = tids[i], .timestamp = (int64_t)i };
        cr_assert_eq(nt_writer_write_event(w, &e), NT_OK, "%s", nt_writer_message(w));
    }
    cr_assert_eq(nt_writer_sequence_point(w, N, 0), NT_OK);
    uint64_t p = w->thread_by_tid.probes;
    nt_writer_free(w);
    nt_membuf_free(&out);
    return p;
}

LTest(writer_tables, colliding_capture_threads_cost_what_ordinary_ones_do)
{
    uint64_t *bad = malloc(N * sizeof *bad), *control = malloc(N * sizeof *control);
    cr_assert(bad && control);
    colliding_tids(bad);
    for (size_t i = 0; i < N; i++) {
        control[i] = 1000 + i;
        cr_assert_eq(old_thread_slot(bad[i], 1u << 16), 0, "the adversarial ids must collide under the old hash");
    }
    expect_like_control("colliding thread ids", thread_probes(bad), thread_probes(control));
    free(bad);
    free(control);
}

/* Probes of the stack table after interning N one-frame stacks. */
static uint64_t stack_probes(const uint64_t *ips)
{
    nt_membuf out;
    nt_writer *w = writer(&out);
    for (size_t i = 0; i < N; i++) {
        uint32_t id;
        cr_assert_eq(nt_writer_stack(w, &ips[i], 1, &id), NT_OK, "%s", nt_writer_message(w));
        cr_assert_eq(id, i + 1);
    }
    uint32_t again;
    cr_assert_eq(nt_writer_stack(w, &ips[N / 2], 1, &again), NT_OK);
    cr_assert_eq(again, N / 2 + 1, "an identical stack shares its id");
    uint64_t p = w->stack_by_hash.probes;
    nt_writer_free(w);
    nt_membuf_free(&out);
    return p;
}

LTest(writer_tables, colliding_stacks_cost_what_ordinary_ones_do)
{
    uint64_t *bad = malloc(N * sizeof *bad), *control = malloc(N * sizeof *control);
    cr_assert(bad && control);
    colliding_ips(bad);
    for (size_t i = 0; i < N; i++) {
        control[i] = 0x7f0000000000ull + 16 * i;
        cr_assert_eq(old_stack_hash1(bad[i]) & 0xFFFF, 0, "the adversarial stacks must collide under the old hash");
    }
    expect_like_control("colliding stacks", stack_probes(bad), stack_probes(control));
    free(bad);
    free(control);
}
