/* Keys for cm_hash_u64 (hash.h). */
#if !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* getentropy */
#endif
#include "common/hash.h"

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/random.h>
#endif

void cm_hash_key_set(cm_hash_key *k, uint64_t k0, uint64_t k1)
{
    k->v0 = k0 ^ 0x736f6d6570736575ull;
    k->v1 = k1 ^ 0x646f72616e646f6dull;
    k->v2 = k0 ^ 0x6c7967656e657261ull;
    k->v3 = k1 ^ 0x7465646279746573ull;
}

/* splitmix64's finalizer: spreads the weak fallback inputs over all bits. */
static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

void cm_hash_seed(uint64_t out[2], const void *owner, uint64_t salt)
{
    uint64_t w[2] = { 0, 0 };
#if defined(__linux__)
    bool drawn = getrandom(w, sizeof w, GRND_NONBLOCK) == (ssize_t)sizeof w; /* never waits at boot */
#else
    bool drawn = getentropy(w, sizeof w) == 0;
#endif
    if (!drawn || (w[0] == 0 && w[1] == 0)) {
        int local = 0;
        struct timespec ts = { 0, 0 };
        clock_gettime(CLOCK_MONOTONIC, &ts);
        w[0] = mix((uint64_t)(uintptr_t)owner ^ mix((uint64_t)(uintptr_t)&local) ^ (uint64_t)ts.tv_nsec);
        w[1] = mix(w[0] ^ ((uint64_t)ts.tv_sec << 20) ^ mix(salt));
    }
    out[0] = w[0];
    out[1] = w[1];
}

void cm_hash_key_init(cm_hash_key *k, const void *owner)
{
    uint64_t w[2];
    cm_hash_seed(w, owner, 0);
    cm_hash_key_set(k, w[0], w[1]);
}
