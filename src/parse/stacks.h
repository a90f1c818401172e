/* Stacks of the current sequence-point interval: id -> IPs (widened to 64
 * bits); the interval's number goes with every stack handed out.  Ids are
 * dense from the interval's first id; a gap is filled with
 * "missing" entries that count against max_stacks, so a hostile first id
 * costs nothing and a hostile gap hits the limit instead of memory. */
#ifndef NT_STACKS_H
#define NT_STACKS_H

#include "common/alloc.h"
#include "nettrace.h"

#define NT_STACK_MISSING UINT32_MAX

typedef struct nt_stack_table {
    nt_mem *mem;
    uint32_t base;            /* id of ent[0] */
    uint32_t n;               /* entries in use */
    nt_stack *ent;            /* ready to hand out: count NT_STACK_MISSING for an id inside a gap;
                               ips point into `ips` (rebased when it moves) or are NULL when empty */
    uint32_t interval;        /* sequence points so far: the ids' scope (nt_stack.interval) */
    size_t ent_cap;
    uint64_t *ips;
    size_t ips_len, ips_cap;
} nt_stack_table;

void nt_stacks_init(nt_stack_table *t, nt_mem *mem);
void nt_stacks_clear(nt_stack_table *t);
void nt_stacks_free(nt_stack_table *t);

/* The stack of an id, or NULL when the interval does not hold it: the
 * table's entry itself, so an event's lookup copies nothing. */
static inline const nt_stack *nt_stacks_find(const nt_stack_table *t, uint32_t id)
{
    uint32_t k = id - t->base;
    if (k >= t->n || t->ent[k].count == NT_STACK_MISSING)
        return NULL;
    return &t->ent[k];
}

#endif
