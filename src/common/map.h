/* The one u64 -> u64 map of the library and the tool.
 *
 * Open addressing with linear probing, at most half full.  Its keys often
 * come from the input (addresses, thread ids, metadata ids), so the slot of a
 * key is a keyed hash: each map draws a random key when it first allocates,
 * and a file cannot be made to put its keys in one probe run.  Should a run
 * still grow long (a weak random source), the map draws a new key and
 * rebuilds.  Every allocation goes through the owner's cm_mem.  A zeroed
 * cm_map is an empty map. */
#ifndef CM_MAP_H
#define CM_MAP_H

#include "common/alloc.h"

typedef struct cm_map_slot {
    uint64_t key; /* 0 = empty slot (key 0 itself lives in zero_val) */
    uint64_t val;
} cm_map_slot;

typedef struct cm_map {
    cm_map_slot *slot;
    size_t cap, count;     /* count includes key 0 */
    bool has_zero;
    uint64_t zero_val;
    uint64_t k0, k1;       /* the hash key */
    uint64_t probes;       /* slots examined by cm_map_put, so tests can bound the work */
    uint32_t rekeys;
} cm_map;

/* The value of key, or NULL when absent.  Valid until the next put. */
uint64_t *cm_map_get(const cm_map *m, uint64_t key);
/* The value of key as an index (a map of indices below UINT32_MAX):
 * UINT32_MAX when key is absent. */
static inline uint32_t cm_map_index(const cm_map *m, uint64_t key)
{
    const uint64_t *v = cm_map_get(m, key);
    return v ? (uint32_t)*v : UINT32_MAX;
}
/* The value of key, inserted as 0 when absent (*added says which; may be
 * NULL).  NULL when memory is short.  Valid until the next put. */
uint64_t *cm_map_put(cm_mem *mem, cm_map *m, uint64_t key, bool *added);
/* Set key to val; false when memory is short. */
bool cm_map_set(cm_mem *mem, cm_map *m, uint64_t key, uint64_t val);
/* Remove key (backward-shift deletion: no tombstones, so a map whose keys
 * come and go holds only its live keys).  False when key was absent. */
bool cm_map_del(cm_map *m, uint64_t key);
void cm_map_free(cm_mem *mem, cm_map *m);

/* Entries found by their content (an interned stack's addresses, an event
 * record's merge key), which the caller keeps in an array of its own: the
 * map holds, under a 64-bit hash of a content, the number of its entry.
 * The caller hashes with a secret key of its own (cm_hash_key), so which
 * contents share a hash cannot be chosen by the input; should two ever share
 * one (by chance, about once in 2^64 pairs), the later is filed under the
 * next hash up, and a lookup walks hash, hash + 1, ... to the first one
 * absent.  same(ctx, val) says whether entry val holds the content sought. */
typedef bool cm_map_same_fn(const void *ctx, uint64_t val);
/* The value (entry) holding the content of hash, or NULL.  Valid until the next put. */
uint64_t *cm_map_find(const cm_map *m, uint64_t hash, cm_map_same_fn *same, const void *ctx);
/* File val under hash, for a content that cm_map_find did not find (the
 * caller stored its entry in between); false when memory is short. */
bool cm_map_add(cm_mem *mem, cm_map *m, uint64_t hash, uint64_t val);
/* The slot a key's probe run starts at (m->cap > 0): for tests of the hash. */
size_t cm_map_first_slot(const cm_map *m, uint64_t key);

#endif
