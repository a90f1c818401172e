/* The common u64 map: values, key 0, growth, and flooding.  The flooding
 * keys are made against the multiplicative hash the aggregator's address map
 * used before (a murmur finalizer on the key, low bits as the slot): every
 * one of them landed in slot 0 of any table up to 2^24 slots, so inserting n
 * of them cost n^2/2 probes.  The map's keyed hash must spread them like any
 * other keys: probes are counted, not timed. */
#include <criterion/criterion.h>

#include "common/map.h"

#include <stdlib.h>
#include <string.h>

#define N_KEYS 80000u

/* The inverse of x -> x ^ (x >> 33) is itself; the multiplier's inverse mod 2^64 by Newton's iteration. */
static uint64_t inverse_of(uint64_t a)
{
    uint64_t x = a; /* correct to 3 bits for odd a */
    for (int i = 0; i < 5; i++)
        x *= 2 - a * x;
    return x;
}

static uint64_t old_mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

static uint64_t old_unmix(uint64_t h)
{
    h ^= h >> 33;
    h *= inverse_of(0xff51afd7ed558ccdull);
    h ^= h >> 33;
    return h;
}

static uint64_t probes_to_insert(const uint64_t *keys, size_t n, uint32_t *rekeys)
{
    cm_mem mem;
    cm_mem_init(&mem, NULL);
    cm_map m = { 0 };
    for (size_t i = 0; i < n; i++)
        cr_assert(cm_map_set(&mem, &m, keys[i], i + 1));
    for (size_t i = 0; i < n; i++) {
        uint64_t *v = cm_map_get(&m, keys[i]);
        cr_assert(v && *v == i + 1, "key %zu", i);
    }
    uint64_t p = m.probes;
    *rekeys = m.rekeys;
    cm_map_free(&mem, &m);
    cr_assert_eq(mem.used, 0);
    return p;
}

Test(map, values_key_zero_and_growth)
{
    cm_mem mem;
    cm_mem_init(&mem, NULL);
    cm_map m = { 0 };
    cr_assert_null(cm_map_get(&m, 5), "a zeroed map is empty");
    bool added;
    uint64_t *v = cm_map_put(&mem, &m, 0, &added);
    cr_assert(v && added && *v == 0);
    *v = 42;
    for (uint64_t k = 1; k <= 10000; k++)
        cr_assert(cm_map_set(&mem, &m, k * 4096, k));
    cr_assert_eq(*cm_map_get(&m, 0), 42, "key 0 is a key like the others");
    cr_assert_eq(m.count, 10001);
    for (uint64_t k = 1; k <= 10000; k++)
        cr_assert_eq(*cm_map_get(&m, k * 4096), k);
    cr_assert_null(cm_map_get(&m, 4095));
    v = cm_map_put(&mem, &m, 4096, &added);
    cr_assert(v && !added && *v == 1, "put of a present key finds it");
    cm_map_free(&mem, &m);
    cr_assert_eq(mem.used, 0);
}

Test(map, keys_colliding_under_the_old_hash_cost_what_other_keys_cost)
{
    uint64_t *bad = malloc(N_KEYS * sizeof *bad), *control = malloc(N_KEYS * sizeof *control);
    cr_assert(bad && control);
    for (uint64_t i = 0; i < N_KEYS; i++) {
        bad[i] = old_unmix((i + 1) << 24);
        cr_assert_eq(old_mix(bad[i]) & ((1u << 24) - 1), 0, "the attack key set is right");
        control[i] = 0x7f0000000000ull + i * 0x40; /* code addresses, as a trace has them */
    }
    uint32_t rk_bad, rk_control;
    uint64_t p_bad = probes_to_insert(bad, N_KEYS, &rk_bad), p_control = probes_to_insert(control, N_KEYS, &rk_control);
    cr_log_info("probes: %llu for the colliding keys, %llu for the control (rekeys %u, %u); the old hash: %llu",
                (unsigned long long)p_bad, (unsigned long long)p_control, rk_bad, rk_control,
                (unsigned long long)N_KEYS * (N_KEYS - 1) / 2);
    cr_assert_lt(p_bad, 3 * p_control + 4 * N_KEYS, "the colliding keys cost %llu probes, the control %llu",
                 (unsigned long long)p_bad, (unsigned long long)p_control);
    cr_assert_lt(p_bad, 20ull * N_KEYS, "linear, not quadratic");
    free(bad);
    free(control);
}

/* Even a known key cannot make a run long: the map draws a new one. */
Test(map, a_long_probe_run_draws_a_new_key)
{
    cm_mem mem;
    cm_mem_init(&mem, NULL);
    cm_map m = { 0 };
    cr_assert(cm_map_set(&mem, &m, 1, 1)); /* the key is drawn */
    /* Pretend the key leaked: find 300 keys that share a slot under it. */
    uint64_t want = 0, found[300];
    size_t n = 0;
    cm_map probe = m; /* the same key over 4096 slots: keys sharing a slot there share it in any smaller table */
    probe.cap = 4096;
    for (uint64_t k = 2; n < 300 && k < 100000000; k++) {
        size_t slot = cm_map_first_slot(&probe, k);
        if (n == 0)
            want = slot;
        if (slot == want)
            found[n++] = k;
    }
    cr_assert_eq(n, 300);
    for (size_t i = 0; i < n; i++)
        cr_assert(cm_map_set(&mem, &m, found[i], i));
    cr_assert_gt(m.rekeys, 0, "the long run was noticed");
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(*cm_map_get(&m, found[i]), i);
    cm_map_free(&mem, &m);
}

/* Keys that come and go (the live window's records): deleting keeps every
 * other key findable, and a map whose keys churn holds only its live ones. */
Test(map, deleted_keys_leave_no_trace)
{
    cm_mem mem;
    cm_mem_init(&mem, NULL);
    cm_map m = { 0 };
    cr_assert_not(cm_map_del(&m, 7), "nothing to delete in an empty map");
    const uint64_t live = 5000;
    for (uint64_t k = 0; k < live; k++)
        cr_assert(cm_map_set(&mem, &m, k, k + 1));
    size_t cap = m.cap;
    /* Churn: each round deletes the oldest key and adds a new one. */
    for (uint64_t k = live; k < 50 * live; k++) {
        cr_assert(cm_map_del(&m, k - live), "key %llu", (unsigned long long)(k - live));
        cr_assert_not(cm_map_del(&m, k - live), "a key is deleted once");
        cr_assert(cm_map_set(&mem, &m, k, k + 1));
    }
    cr_assert_eq(m.count, live);
    cr_assert_eq(m.cap, cap, "churn does not grow the table");
    for (uint64_t k = 0; k < 49 * live; k++)
        cr_assert_null(cm_map_get(&m, k));
    for (uint64_t k = 49 * live; k < 50 * live; k++) {
        uint64_t *v = cm_map_get(&m, k);
        cr_assert(v && *v == k + 1, "key %llu", (unsigned long long)k);
    }
    cm_map_free(&mem, &m);
    cr_assert_eq(mem.used, 0);
}

/* Entries found by content (cm_map_find / cm_map_add): the caller's entries
 * here are strings, and the "hash" is chosen so that contents collide, as a
 * weak hash would make them: every content must still be found, as itself. */
static const char *const WORDS[] = { "alpha", "beta", "gamma", "delta", "epsilon", "zeta" };

static bool same_word(const void *ctx, uint64_t val)
{
    return strcmp(WORDS[val], ctx) == 0;
}

Test(map, contents_sharing_a_hash_are_each_found)
{
    cm_mem mem;
    cm_mem_init(&mem, NULL);
    cm_map m = { 0 };
    cr_assert_null(cm_map_find(&m, 7, same_word, "alpha"), "nothing in an empty map");
    /* alpha, beta, gamma share hash 7; delta has 8, the hash beta was moved to. */
    const uint64_t hash[] = { 7, 7, 7, 8, 0, 0 };
    for (uint64_t i = 0; i < 6; i++) {
        cr_assert_null(cm_map_find(&m, hash[i], same_word, WORDS[i]), "%s is new", WORDS[i]);
        cr_assert(cm_map_add(&mem, &m, hash[i], i));
    }
    cr_assert_eq(m.count, 6, "one key each");
    for (uint64_t i = 0; i < 6; i++) {
        uint64_t *v = cm_map_find(&m, hash[i], same_word, WORDS[i]);
        cr_assert(v && *v == i, "%s found as entry %llu", WORDS[i], (unsigned long long)(v ? *v : 99));
    }
    cr_assert_null(cm_map_find(&m, 7, same_word, "eta"), "an absent content of a shared hash");
    cr_assert_null(cm_map_find(&m, 0, same_word, "alpha"), "a content under another hash");
    cm_map_free(&mem, &m);
    cr_assert_eq(mem.used, 0);
}
