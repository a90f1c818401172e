/* Keys for cm_hash_u64 (hash.h). */
#if !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* getentropy */
#endif
#include "common/cursor.h"
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

uint64_t cm_hash_bytes(const cm_hash_key *k, const void *data, size_t n)
{
    const uint8_t *p = data;
    uint64_t v0 = k->v0, v1 = k->v1, v2 = k->v2, v3 = k->v3;
    size_t whole = n & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = cm_le64(p + i);
        v3 ^= m;
        CM_HASH_ROUND_(v0, v1, v2, v3);
        v0 ^= m;
    }
    /* The last word: the tail bytes and the length's low byte on top, as SipHash pads. */
    uint64_t last = (uint64_t)n << 56;
    for (size_t i = whole; i < n; i++)
        last |= (uint64_t)p[i] << (8 * (i - whole));
    v3 ^= last;
    CM_HASH_ROUND_(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    CM_HASH_ROUND_(v0, v1, v2, v3);
    CM_HASH_ROUND_(v0, v1, v2, v3);
    CM_HASH_ROUND_(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}
