/* Stacks of the current sequence-point interval: id -> IPs (widened to 64
 * bits); the interval's number goes with every stack handed out.  Ids are dense from the interval's first id; a gap is filled with
 * "missing" entries that count against max_stacks, so a hostile first id
 * costs nothing and a hostile gap hits the limit instead of memory. */
#ifndef NT_STACKS_H
#define NT_STACKS_H

#include "common/alloc.h"

#define NT_STACK_MISSING UINT32_MAX

typedef struct nt_stack_entry {
    uint32_t start;  /* index into ips */
    uint32_t count;  /* NT_STACK_MISSING for an id inside a gap */
} nt_stack_entry;

typedef struct nt_stack_table {
    nt_mem *mem;
    uint32_t base;            /* id of ent[0] */
    uint32_t n;               /* entries in use */
    uint32_t interval;        /* sequence points so far: the ids' scope (nt_stack.interval) */
    nt_stack_entry *ent;
    size_t ent_cap;
    uint64_t *ips;
    size_t ips_len, ips_cap;
} nt_stack_table;

void nt_stacks_init(nt_stack_table *t, nt_mem *mem);
void nt_stacks_clear(nt_stack_table *t);
void nt_stacks_free(nt_stack_table *t);

static inline bool nt_stacks_find(const nt_stack_table *t, uint32_t id, nt_stack *out)
{
    uint32_t k = id - t->base;
    if (k >= t->n || t->ent[k].count == NT_STACK_MISSING)
        return false;
    out->id = id;
    out->interval = t->interval;
    out->count = t->ent[k].count;
    out->ips = out->count ? t->ips + t->ent[k].start : NULL; /* an empty stack may precede any IP storage */
    return true;
}

#endif
