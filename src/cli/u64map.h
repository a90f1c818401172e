/* A small open-addressing map from u64 keys to u64 values for the tool's
 * counters (distinct threads, counts per metadata id).  The keys come from
 * the trace, so slots are picked by a mixer keyed with an address-derived
 * seed: keys crafted to share one probe chain under a known multiplier do
 * not collide here. */
#ifndef NT_CLI_U64MAP_H
#define NT_CLI_U64MAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct u64map {
    uint64_t *keys;
    uint64_t *vals;
    bool *used;
    size_t cap, count;
    uint64_t seed;
} u64map;

static inline size_t u64map_slot(uint64_t k, uint64_t seed, size_t cap)
{
    /* splitmix64's finalizer over the seeded key */
    uint64_t x = k + seed;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return (size_t)(x ^ (x >> 31)) & (cap - 1);
}

static inline void u64map_free(u64map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    m->keys = m->vals = NULL;
    m->used = NULL;
    m->cap = m->count = 0;
}

/* Returns the value slot for k, inserting 0 if absent; NULL when out of memory. */
static inline uint64_t *u64map_get(u64map *m, uint64_t k)
{
    if ((m->count + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        u64map n = { calloc(ncap, sizeof(uint64_t)), calloc(ncap, sizeof(uint64_t)), calloc(ncap, sizeof(bool)),
                     ncap, 0, m->seed };
        if (!m->cap) /* ASLR makes heap and stack addresses differ from run to run */
            n.seed = ((uint64_t)(uintptr_t)n.keys * 0x9E3779B97F4A7C15ull) ^ (uint64_t)(uintptr_t)&ncap;
        if (!n.keys || !n.vals || !n.used) {
            u64map_free(&n);
            return NULL;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->used[i])
                continue;
            size_t j = u64map_slot(m->keys[i], n.seed, ncap);
            while (n.used[j])
                j = (j + 1) & (ncap - 1);
            n.used[j] = true;
            n.keys[j] = m->keys[i];
            n.vals[j] = m->vals[i];
            n.count++;
        }
        u64map_free(m);
        *m = n;
    }
    size_t i = u64map_slot(k, m->seed, m->cap);
    while (m->used[i]) {
        if (m->keys[i] == k)
            return &m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    m->used[i] = true;
    m->keys[i] = k;
    m->vals[i] = 0;
    m->count++;
    return &m->vals[i];
}

#endif
