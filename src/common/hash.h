/* A keyed hash for tables whose keys come from the input (thread ids,
 * metadata ids, addresses).  With a fixed hash an attacker can pick keys
 * that all land in one probe chain and make every lookup linear (a few MB
 * of such keys cost minutes); with a key drawn per table owner and a strong
 * mixing function, the keys that collide cannot be known in advance.
 *
 * The function is SipHash-1-3 on one 64-bit word: a keyed pseudo-random
 * function, about 70 instructions.  Tables keep a one-entry cache in front
 * of it where consecutive lookups repeat (the capture thread of a run of
 * events), so the per-event path rarely pays it. */
#ifndef CM_HASH_H
#define CM_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct cm_hash_key {
    uint64_t v0, v1, v2, v3; /* SipHash's initial state for this key */
} cm_hash_key;

/* Two fresh secret words for one table owner: the one source of hash keys
 * of the library (the keyed map draws its keys here too).  Operating-system
 * entropy when there is some, else the owner's address (ASLR), the clock and
 * salt, which a file cannot know either.  Never global state. */
void cm_hash_seed(uint64_t out[2], const void *owner, uint64_t salt);

/* A fresh SipHash key for one table owner (from cm_hash_seed). */
void cm_hash_key_init(cm_hash_key *k, const void *owner);

/* The same key from two given words (tests: reproducible keys). */
void cm_hash_key_set(cm_hash_key *k, uint64_t k0, uint64_t k1);

#define CM_HASH_ROTL_(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define CM_HASH_ROUND_(v0, v1, v2, v3)                                                                       \
    do {                                                                                                     \
        v0 += v1; v1 = CM_HASH_ROTL_(v1, 13); v1 ^= v0; v0 = CM_HASH_ROTL_(v0, 32);                         \
        v2 += v3; v3 = CM_HASH_ROTL_(v3, 16); v3 ^= v2;                                                     \
        v0 += v3; v3 = CM_HASH_ROTL_(v3, 21); v3 ^= v0;                                                     \
        v2 += v1; v1 = CM_HASH_ROTL_(v1, 17); v1 ^= v2; v2 = CM_HASH_ROTL_(v2, 32);                         \
    } while (0)

/* SipHash-1-3 of the 8 little-endian bytes of x. */
static inline uint64_t cm_hash_u64(const cm_hash_key *k, uint64_t x)
{
    uint64_t v0 = k->v0, v1 = k->v1, v2 = k->v2, v3 = k->v3;
    v3 ^= x;
    CM_HASH_ROUND_(v0, v1, v2, v3);
    v0 ^= x;
    const uint64_t len = 8ull << 56;
    v3 ^= len;
    CM_HASH_ROUND_(v0, v1, v2, v3);
    v0 ^= len;
    v2 ^= 0xff;
    CM_HASH_ROUND_(v0, v1, v2, v3);
    CM_HASH_ROUND_(v0, v1, v2, v3);
    CM_HASH_ROUND_(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

/* SipHash-1-3 of n bytes: for fingerprints of file contents (the index's
 * sidecar names the trace it describes by hashes of its head and tail), with
 * a fixed key there, since a fingerprint must be the same in every run. */
uint64_t cm_hash_bytes(const cm_hash_key *k, const void *data, size_t n);

#endif
