#include "parse/metadata.h"

#include <string.h>

struct ps_arena_chunk {
    ps_arena_chunk *next;
    size_t size, used;
    /* data follows, max_align_t aligned */
};

#define CHUNK_HDR ((sizeof(ps_arena_chunk) + 15) & ~(size_t)15)
#define CHUNK_MIN (64u * 1024u)

void ps_metadata_init(ps_metadata_table *t, cm_mem *mem)
{
    memset(t, 0, sizeof *t);
    t->mem = mem;
    cm_hash_key_init(&t->key, t);
}

static void free_chunks(ps_metadata_table *t)
{
    ps_arena_chunk *c = t->chunks;
    while (c) {
        ps_arena_chunk *n = c->next;
        cm_mem_free(t->mem, c, CHUNK_HDR + c->size);
        c = n;
    }
    t->chunks = NULL;
    t->arena_bytes = 0;
}

/* The slot holding entry k, which is in the hash table: found by value, not
 * stopping at empty slots, so slots can be cleared in any order. */
static size_t slot_holding(const ps_metadata_table *t, size_t k)
{
    size_t i = ps_metadata_slot(t, t->descs[k].metadata_id, t->slot_cap);
    while (t->slots[i] != k + 1)
        i = (i + 1) & (t->slot_cap - 1);
    return i;
}

/* Only the slots in use are cleared: a flush costs what its interval defined,
 * not the size the tables once grew to (tiny flushes after one big interval
 * stay cheap). */
void ps_metadata_clear(ps_metadata_table *t)
{
    free_chunks(t);
    for (size_t k = 0; k < t->count; k++) {
        uint32_t id = t->descs[k].metadata_id;
        if (id < PS_META_DIRECT_IDS)
            t->direct[id] = 0;
        else
            t->slots[slot_holding(t, k)] = 0;
    }
    t->count = t->hashed = 0;
}

void ps_metadata_free(ps_metadata_table *t)
{
    free_chunks(t);
    cm_mem_free(t->mem, t->descs, t->cap * sizeof *t->descs);
    cm_mem_free(t->mem, t->slots, t->slot_cap * sizeof *t->slots);
    cm_mem_free(t->mem, t->direct, t->direct_cap * sizeof *t->direct);
    t->descs = NULL;
    t->slots = NULL;
    t->direct = NULL;
    t->cap = t->slot_cap = t->count = t->direct_cap = t->hashed = 0;
}

void *ps_metadata_alloc(ps_metadata_table *t, size_t size, size_t budget)
{
    size = (size + 15) & ~(size_t)15;
    t->over_budget = size > budget || t->arena_bytes > budget - size;
    if (t->over_budget)
        return NULL;
    ps_arena_chunk *c = t->chunks;
    if (!c || c->size - c->used < size) {
        size_t csize = size > CHUNK_MIN ? size : CHUNK_MIN;
        c = cm_mem_alloc(t->mem, CHUNK_HDR + csize);
        if (!c)
            return NULL;
        c->size = csize;
        c->used = 0;
        c->next = t->chunks;
        t->chunks = c;
    }
    void *r = (uint8_t *)c + CHUNK_HDR + c->used;
    c->used += size;
    t->arena_bytes += size;
    return r;
}

char *ps_metadata_strdup(ps_metadata_table *t, const char *s, size_t len, size_t budget)
{
    char *d = ps_metadata_alloc(t, len + 1, budget);
    if (!d)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

static bool rehash(ps_metadata_table *t, size_t ncap)
{
    uint32_t *ns = NULL;
    if (!cm_mem_resize(t->mem, (void **)&ns, 0, ncap * sizeof *ns))
        return false;
    memset(ns, 0, ncap * sizeof *ns);
    for (size_t k = 0; k < t->count; k++) {
        if (t->descs[k].metadata_id < PS_META_DIRECT_IDS)
            continue;
        size_t i = ps_metadata_slot(t, t->descs[k].metadata_id, ncap);
        while (ns[i])
            i = (i + 1) & (ncap - 1);
        ns[i] = (uint32_t)(k + 1);
    }
    cm_mem_free(t->mem, t->slots, t->slot_cap * sizeof *t->slots);
    t->slots = ns;
    t->slot_cap = ncap;
    return true;
}

/* Make the direct array cover id (< PS_META_DIRECT_IDS). */
static bool direct_cover(ps_metadata_table *t, uint32_t id)
{
    if (id < t->direct_cap)
        return true;
    size_t ncap = t->direct_cap ? t->direct_cap : 64;
    while (ncap <= id)
        ncap *= 2;
    if (!cm_mem_resize(t->mem, (void **)&t->direct, t->direct_cap * sizeof *t->direct, ncap * sizeof *t->direct))
        return false;
    memset(t->direct + t->direct_cap, 0, (ncap - t->direct_cap) * sizeof *t->direct);
    t->direct_cap = ncap;
    return true;
}

nt_event_desc *ps_metadata_add(ps_metadata_table *t, const nt_event_desc *d)
{
    if (!cm_mem_reserve(t->mem, (void **)&t->descs, &t->cap, t->count + 1, sizeof *t->descs))
        return NULL;
    uint32_t id = d->metadata_id;
    if (id < PS_META_DIRECT_IDS) {
        if (!direct_cover(t, id))
            return NULL;
        t->direct[id] = (uint32_t)(t->count + 1);
    } else {
        if ((t->hashed + 1) * 2 > t->slot_cap && !rehash(t, t->slot_cap ? t->slot_cap * 2 : 64))
            return NULL;
        size_t i = ps_metadata_slot(t, id, t->slot_cap);
        while (t->slots[i])
            i = (i + 1) & (t->slot_cap - 1);
        t->slots[i] = (uint32_t)(t->count + 1);
        t->hashed++;
    }
    t->descs[t->count] = *d;
    return &t->descs[t->count++];
}

nt_event_kind ps_classify_event(const char *provider, uint32_t id)
{
    if (strcmp(provider, NT_PROVIDER_SAMPLE_PROFILER) == 0)
        return id == 0 ? NT_KIND_THREAD_SAMPLE : NT_KIND_OTHER;
    if (strcmp(provider, NT_PROVIDER_RUNTIME) == 0) {
        switch (id) {
        case 143: return NT_KIND_METHOD_LOAD_VERBOSE;
        case 144: return NT_KIND_METHOD_UNLOAD_VERBOSE;
        case 151: return NT_KIND_DOMAIN_MODULE_LOAD;
        case 152: return NT_KIND_MODULE_LOAD;
        case 153: return NT_KIND_MODULE_UNLOAD;
        case 154: return NT_KIND_ASSEMBLY_LOAD;
        case 155: return NT_KIND_ASSEMBLY_UNLOAD;
        default: return NT_KIND_OTHER;
        }
    }
    if (strcmp(provider, NT_PROVIDER_RUNDOWN) == 0) {
        switch (id) {
        case 143: return NT_KIND_METHOD_DC_START_VERBOSE;
        case 144: return NT_KIND_METHOD_DC_END_VERBOSE;
        case 151: return NT_KIND_DOMAIN_MODULE_DC_START;
        case 152: return NT_KIND_DOMAIN_MODULE_DC_END;
        case 153: return NT_KIND_MODULE_DC_START;
        case 154: return NT_KIND_MODULE_DC_END;
        case 155: return NT_KIND_ASSEMBLY_DC_START;
        case 156: return NT_KIND_ASSEMBLY_DC_END;
        default: return NT_KIND_OTHER;
        }
    }
    return NT_KIND_OTHER;
}
