#include "parse/stacks.h"

#include <string.h>

void ps_stacks_init(ps_stack_table *t, cm_mem *mem)
{
    memset(t, 0, sizeof *t);
    t->mem = mem;
}

/* Sequence points end the interval: ids restart.  Buffers are kept for reuse
 * (they are bounded by the limits), but trimmed when one interval was huge so
 * that a single burst does not pin its memory for the rest of the stream. */
void ps_stacks_clear(ps_stack_table *t)
{
    t->interval++;
    t->n = 0;
    t->base = 0;
    t->ips_len = 0;
    if (t->ips_cap > (1u << 20)) {
        cm_mem_free(t->mem, t->ips, t->ips_cap * sizeof *t->ips);
        t->ips = NULL;
        t->ips_cap = 0;
    }
    if (t->ent_cap > (1u << 18)) {
        cm_mem_free(t->mem, t->ent, t->ent_cap * sizeof *t->ent);
        t->ent = NULL;
        t->ent_cap = 0;
    }
}

void ps_stacks_free(ps_stack_table *t)
{
    cm_mem_free(t->mem, t->ips, t->ips_cap * sizeof *t->ips);
    cm_mem_free(t->mem, t->ent, t->ent_cap * sizeof *t->ent);
    memset(t, 0, sizeof *t);
}
