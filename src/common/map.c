/* The keyed u64 map (see map.h). */
#include "common/map.h"
#include "common/hash.h"

#include <string.h>

/* A probe run this long in a table at most half full (by chance about once
 * in 10^10 insertions) means the key is known to whoever chose the input:
 * draw another. */
#define MAP_LONG_RUN 128u
#define MAP_MAX_REKEYS 8u

static void draw_key(cm_map *m)
{
    uint64_t k[2];
    cm_hash_seed(k, m->slot ? (const void *)m->slot : (const void *)m, m->rekeys);
    m->k0 = k[0];
    m->k1 = k[1] | 1;
}

/* Two rounds of multiply and fold with the key mixed in before each: the
 * top bits of the result index the table. */
size_t cm_map_first_slot(const cm_map *m, uint64_t key)
{
    uint64_t h = (key ^ m->k0) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    h = (h ^ m->k1) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    return (size_t)(h * 0x9E3779B97F4A7C15ull >> 32) & (m->cap - 1);
}

uint64_t *cm_map_get(const cm_map *m, uint64_t key)
{
    if (key == 0)
        return m->has_zero ? (uint64_t *)&m->zero_val : NULL;
    if (!m->cap)
        return NULL;
    for (size_t i = cm_map_first_slot(m, key);; i = (i + 1) & (m->cap - 1)) {
        if (m->slot[i].key == key)
            return &m->slot[i].val;
        if (m->slot[i].key == 0)
            return NULL;
    }
}

/* Move every entry into a table of ncap slots under the current key.
 * Returns the longest probe run the rebuild saw, or SIZE_MAX when memory is
 * short (the map is then unchanged). */
static size_t rebuild(cm_mem *mem, cm_map *m, size_t ncap)
{
    cm_map_slot *ns = cm_mem_alloc(mem, ncap * sizeof *ns);
    if (!ns)
        return SIZE_MAX;
    memset(ns, 0, ncap * sizeof *ns);
    cm_map_slot *old = m->slot;
    size_t ocap = m->cap, longest = 0;
    m->slot = ns;
    m->cap = ncap;
    for (size_t i = 0; i < ocap; i++) {
        if (!old[i].key)
            continue;
        size_t j = cm_map_first_slot(m, old[i].key), run = 0;
        while (ns[j].key) {
            j = (j + 1) & (ncap - 1);
            run++;
        }
        m->probes += run + 1;
        longest = run > longest ? run : longest;
        ns[j] = old[i];
    }
    cm_mem_free(mem, old, ocap * sizeof *old);
    return longest;
}

/* A new key and a rebuild, as long as a rebuild keeps finding long runs. */
static bool rekey(cm_mem *mem, cm_map *m)
{
    while (m->rekeys < MAP_MAX_REKEYS) {
        m->rekeys++;
        draw_key(m);
        size_t longest = rebuild(mem, m, m->cap);
        if (longest == SIZE_MAX)
            return false;
        if (longest < MAP_LONG_RUN)
            break;
    }
    return true;
}

uint64_t *cm_map_put(cm_mem *mem, cm_map *m, uint64_t key, bool *added)
{
    bool dummy;
    added = added ? added : &dummy;
    *added = false;
    if (key == 0) {
        if (!m->has_zero) {
            m->has_zero = true;
            m->zero_val = 0;
            m->count++;
            *added = true;
        }
        return &m->zero_val;
    }
    if (!m->cap)
        draw_key(m);
    if ((m->count + 1) * 2 > m->cap && rebuild(mem, m, m->cap ? m->cap * 2 : 64) == SIZE_MAX)
        return NULL;
    size_t i = cm_map_first_slot(m, key), run = 0;
    for (;; i = (i + 1) & (m->cap - 1), run++) {
        if (m->slot[i].key == key) {
            m->probes += run + 1;
            return &m->slot[i].val;
        }
        if (m->slot[i].key == 0)
            break;
    }
    m->probes += run + 1;
    m->slot[i].key = key;
    m->slot[i].val = 0;
    m->count++;
    *added = true;
    if (run >= MAP_LONG_RUN) {
        if (!rekey(mem, m))
            return NULL;
        return cm_map_get(m, key);
    }
    return &m->slot[i].val;
}

bool cm_map_set(cm_mem *mem, cm_map *m, uint64_t key, uint64_t val)
{
    uint64_t *v = cm_map_put(mem, m, key, NULL);
    if (!v)
        return false;
    *v = val;
    return true;
}

bool cm_map_del(cm_map *m, uint64_t key)
{
    if (key == 0) {
        if (!m->has_zero)
            return false;
        m->has_zero = false;
        m->count--;
        return true;
    }
    if (!m->cap)
        return false;
    size_t mask = m->cap - 1, i = cm_map_first_slot(m, key);
    while (m->slot[i].key != key) {
        if (m->slot[i].key == 0)
            return false;
        i = (i + 1) & mask;
    }
    /* Pull each later entry of the run back into the hole unless its home
     * slot lies cyclically in (hole, its slot]: probing then still finds it. */
    for (size_t j = (i + 1) & mask; m->slot[j].key; j = (j + 1) & mask) {
        size_t home = cm_map_first_slot(m, m->slot[j].key);
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            m->slot[i] = m->slot[j];
            i = j;
        }
    }
    m->slot[i].key = 0;
    m->slot[i].val = 0;
    m->count--;
    return true;
}

void cm_map_free(cm_mem *mem, cm_map *m)
{
    cm_mem_free(mem, m->slot, m->cap * sizeof *m->slot);
    memset(m, 0, sizeof *m);
}

uint64_t *cm_map_find(const cm_map *m, uint64_t hash, cm_map_same_fn *same, const void *ctx)
{
    for (;; hash++) {
        uint64_t *v = cm_map_get(m, hash);
        if (!v || same(ctx, *v))
            return v;
    }
}

bool cm_map_add(cm_mem *mem, cm_map *m, uint64_t hash, uint64_t val)
{
    for (;; hash++) {
        bool added;
        uint64_t *v = cm_map_put(mem, m, hash, &added);
        if (!v)
            return false;
        if (added) {
            *v = val;
            return true;
        }
    }
}
