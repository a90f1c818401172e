/* Stacks of the current sequence-point interval: id -> IPs (widened to 64
 * bits); the interval's number goes with every stack handed out.  Ids are
 * dense from the interval's first id; a gap is filled with
 * "missing" entries that count against max_stacks, so a hostile first id
 * costs nothing and a hostile gap hits the limit instead of memory. */
#ifndef PS_STACKS_H
#define PS_STACKS_H

#include "common/alloc.h"
#include "nettrace.h"

#define PS_STACK_MISSING UINT32_MAX

typedef struct ps_stack_table {
    cm_mem *mem;
    uint32_t base;            /* id of ent[0] */
    uint32_t n;               /* entries in use */
    nt_stack *ent;            /* ready to hand out: count PS_STACK_MISSING for an id inside a gap;
                               ips point into `ips` (rebased when it moves) or are NULL when empty */
    uint32_t interval;        /* sequence points so far: the ids' scope (nt_stack.interval) */
    size_t ent_cap;
    uint64_t *ips;
    size_t ips_len, ips_cap;
} ps_stack_table;

void ps_stacks_init(ps_stack_table *t, cm_mem *mem);
void ps_stacks_clear(ps_stack_table *t);
void ps_stacks_free(ps_stack_table *t);

/* The stack of an id, or NULL when the interval does not hold it: the
 * table's entry itself, so an event's lookup copies nothing. */
static inline const nt_stack *ps_stacks_find(const ps_stack_table *t, uint32_t id)
{
    uint32_t k = id - t->base;
    if (k >= t->n || t->ent[k].count == PS_STACK_MISSING)
        return NULL;
    return &t->ent[k];
}

#endif
