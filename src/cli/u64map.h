/* A small open-addressing map from u64 keys to u64 values for the tool's
 * counters (distinct threads, counts per metadata id). */
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
} u64map;

static inline size_t u64map_slot(uint64_t k, size_t cap)
{
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
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
                     ncap, 0 };
        if (!n.keys || !n.vals || !n.used) {
            u64map_free(&n);
            return NULL;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->used[i])
                continue;
            size_t j = u64map_slot(m->keys[i], ncap);
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
    size_t i = u64map_slot(k, m->cap);
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
