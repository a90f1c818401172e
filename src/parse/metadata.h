/* The metadata table: metadata id -> event description (provider, event id,
 * version, name, fields), with the typed-event kind resolved once at
 * definition time so the per-event path is a switch.
 *
 * Ids come from the input.  The runtime numbers them from 1, so ids below
 * PS_META_DIRECT_IDS index an array directly (one load per lookup, nothing
 * to collide); larger ids go to a hash table keyed with a per-table secret
 * (common/hash.h), so no id set can be chosen to collide.  Their number is
 * capped by max_metadata. */
#ifndef PS_METADATA_H
#define PS_METADATA_H

#include "common/alloc.h"
#include "common/hash.h"

typedef struct ps_arena_chunk ps_arena_chunk;

#define PS_META_DIRECT_IDS (1u << 17) /* 512 KiB of direct slots at most */

typedef struct ps_metadata_table {
    cm_mem *mem;
    nt_event_desc *descs;      /* dense, in definition order */
    size_t count, cap;
    uint32_t *direct;          /* ids below direct_cap: index+1, 0 = undefined */
    size_t direct_cap;         /* grows to cover the largest small id defined, at most PS_META_DIRECT_IDS */
    uint32_t *slots;           /* larger ids: open addressing, index+1, 0 = empty */
    size_t slot_cap;           /* power of two */
    size_t hashed;             /* entries in the hash table */
    cm_hash_key key;           /* ids come from the input: a per-table secret decides their slots */
    uint64_t probes;           /* slots visited past the first (tests bound it) */
    ps_arena_chunk *chunks;    /* strings and field arrays; never moved */
    size_t arena_bytes;        /* counted against max_metadata_bytes */
    bool over_budget;          /* the last refused arena request met the budget, not an allocation failure */
} ps_metadata_table;

void ps_metadata_init(ps_metadata_table *t, cm_mem *mem);
void ps_metadata_clear(ps_metadata_table *t); /* V6 metadata flush */
void ps_metadata_free(ps_metadata_table *t);

static inline size_t ps_metadata_slot(const ps_metadata_table *t, uint32_t id, size_t cap)
{
    return (size_t)cm_hash_u64(&t->key, id) & (cap - 1);
}

static inline const nt_event_desc *ps_metadata_find(ps_metadata_table *t, uint32_t id)
{
    if (id < PS_META_DIRECT_IDS) {
        uint32_t s = id < t->direct_cap ? t->direct[id] : 0;
        return s ? &t->descs[s - 1] : NULL;
    }
    if (!t->slot_cap)
        return NULL;
    size_t mask = t->slot_cap - 1;
    for (size_t i = ps_metadata_slot(t, id, t->slot_cap);; i = (i + 1) & mask) {
        uint32_t s = t->slots[i];
        if (!s)
            return NULL;
        if (t->descs[s - 1].metadata_id == id)
            return &t->descs[s - 1];
        t->probes++;
    }
}

/* Copy bytes into the arena (NUL appended); NULL when out of memory or over
 * budget, and over_budget then says which (NT_ERR_LIMIT vs NT_ERR_NOMEM). */
char *ps_metadata_strdup(ps_metadata_table *t, const char *s, size_t len, size_t budget);
void *ps_metadata_alloc(ps_metadata_table *t, size_t size, size_t budget);

/* Add a description whose strings already live in the arena.  Returns the
 * stored copy, or NULL when out of memory (the id is assumed new). */
nt_event_desc *ps_metadata_add(ps_metadata_table *t, const nt_event_desc *d);

nt_event_kind ps_classify_event(const char *provider, uint32_t event_id);

#endif
