/* Stacks: interned per sequence-point interval (identical IP sequences share
 * an id) and written into the stack block. */
#include "write/writer_internal.h"

#include <string.h>

/* The stack's content hash, seeded per writer: a converted trace chooses the
 * IPs, but without the seed it cannot choose stacks whose hashes collide. */
static uint64_t stack_hash(const nt_writer *w, const uint64_t *ips, uint32_t count)
{
    uint64_t h = w->stack_key.v0 ^ count;
    for (uint32_t i = 0; i < count; i++) {
        h ^= ips[i];
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h;
}

nt_status nt_writer_stack(nt_writer *w, const uint64_t *ips, uint32_t count, uint32_t *id_out)
{
    nt_status s = wr_usable(w);
    if (s)
        return s;
    if (count && !ips)
        return wr_fail(w, NT_ERR_INVALID_ARG, "NULL IPs");
    const uint32_t ptr = w->opt.pointer_size;
    if (ptr == 4)
        for (uint32_t i = 0; i < count; i++)
            if (ips[i] > UINT32_MAX)
                return wr_fail(w, NT_ERR_INVALID_ARG, "IP 0x%llx does not fit a 4-byte pointer",
                                (unsigned long long)ips[i]);
    uint64_t h = stack_hash(w, ips, count);
    uint64_t *first = cm_map_put(&w->mem, &w->stack_by_hash, h, NULL);
    if (!first)
        return wr_fail(w, NT_ERR_NOMEM, "cannot grow the stack table");
    for (uint32_t k = (uint32_t)*first; k; k = w->stk[k - 1].next) {
        const wstack *e = &w->stk[k - 1];
        if (e->hash == h && e->count == count &&
            (count == 0 || memcmp(w->ips + e->start, ips, count * sizeof *ips) == 0)) {
            if (id_out)
                *id_out = k; /* a stack's id is its index + 1 */
            return NT_OK;
        }
    }
    if ((uint64_t)count * ptr > MAX_BLOCK_CONTENT - 64)
        return wr_fail(w, NT_ERR_INVALID_ARG, "a stack of %u frames does not fit a block", count);
    if (w->stk_count >= NT_DEFAULT_MAX_STACKS - 1 || w->ips_len + count > NT_DEFAULT_MAX_STACK_FRAMES)
        return wr_fail(w, NT_ERR_LIMIT, "too many stacks in one sequence-point interval (write a sequence point)");
    if (!cm_mem_reserve(&w->mem, (void **)&w->stk, &w->stk_cap, w->stk_count + 1, sizeof *w->stk))
        return wr_fail(w, NT_ERR_NOMEM, "cannot grow the stack table");
    if (!cm_mem_reserve(&w->mem, (void **)&w->ips, &w->ips_cap, w->ips_len + count + 1, sizeof *w->ips))
        return wr_fail(w, NT_ERR_NOMEM, "cannot store a stack");
    wblock *b = &w->stacks;
    if (b->count && b->body.n + 4 + (size_t)count * ptr > w->opt.block_bytes) {
        if ((s = wr_flush_stacks(w)))
            return s;
    }
    uint32_t id = w->next_stack_id++; /* == stk_count + 1 */
    cm_buf_u32(&b->body, count * ptr);
    for (uint32_t i = 0; i < count; i++) {
        if (ptr == 8)
            cm_buf_u64(&b->body, ips[i]);
        else
            cm_buf_u32(&b->body, (uint32_t)ips[i]);
    }
    if (b->body.failed)
        return wr_fail(w, NT_ERR_NOMEM, "cannot buffer a stack");
    b->count++;
    first = cm_map_get(&w->stack_by_hash, h); /* (put above, not moved since) */
    w->stk[w->stk_count] = (wstack){ h, count, (uint32_t)*first, w->ips_len };
    *first = id;
    if (count)
        memcpy(w->ips + w->ips_len, ips, count * sizeof *ips);
    w->ips_len += count;
    w->stk_count++;
    if (id_out)
        *id_out = id;
    return NT_OK;
}

/* A sequence point: stack ids restart at 1. */
void wr_stacks_forget(nt_writer *w)
{
    w->next_stack_id = 1;
    w->stacks.first_id = 1;
    w->stk_count = 0;
    w->ips_len = 0;
    cm_map_free(&w->mem, &w->stack_by_hash);
}
