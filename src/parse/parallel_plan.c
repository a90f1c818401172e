/* Cutting a stream into parts (parallel_internal.h).  A part ends where a
 * sequence point begins, once it holds part_bytes; the sequence point is
 * read by the parser of the part before it (which delivers its callback)
 * and, without callbacks, by the next part's parser, whose tables then
 * start where a sequential parse's would: stacks and label lists empty, the
 * thread table's sequence numbers those the point lists.  Each part also
 * reads every metadata, thread and sequence-point block before it, so the
 * parts are made few enough that those reads stay linear in the stream. */
#include "parse/parallel_internal.h"

#include <string.h>

static bool is_prime_kind(uint8_t kind)
{
    return kind == NT_INDEX_METADATA || kind == NT_INDEX_SEQUENCE_POINT || kind == NT_INDEX_THREAD ||
           kind == NT_INDEX_REMOVE_THREAD;
}

static bool one_part(nt_parallel *pp)
{
    pp->parts = cm_mem_alloc(&pp->mem, sizeof *pp->parts);
    if (!pp->parts)
        return false;
    memset(pp->parts, 0, sizeof *pp->parts);
    pp->parts[0].end = pp->parts[0].sp_end = pp->len;
    pp->nparts = pp->parts_cap = 1;
    return true;
}

/* Bytes a part holds at least: part_bytes, raised so that the blocks read
 * before the parts (about parts * primes / 2) stay under 4 blocks per block
 * of the stream, plus a constant. */
static uint64_t part_target(uint64_t len, size_t blocks, size_t primes, uint64_t part_bytes)
{
    uint64_t target = part_bytes ? part_bytes : NT_DEFAULT_PARALLEL_PART_BYTES;
    uint64_t budget = 8 * (uint64_t)blocks + 65536;
    if (primes && len / target > budget / primes)
        target = len / (budget / primes) + 1;
    return target;
}

bool pp_plan(nt_parallel *pp, const nt_index *ix, uint64_t part_bytes)
{
    size_t n = nt_index_block_count(ix);
    const nt_index_block *b0 = nt_index_block_at(ix, 0);
    if (n < 3 || b0->kind != NT_INDEX_TRACE || b0->end > pp->len)
        return one_part(pp);
    pp->header_end = b0->end;
    size_t primes = 0;
    for (size_t i = 1; i < n; i++)
        primes += is_prime_kind(nt_index_block_at(ix, i)->kind);
    uint64_t target = part_target(pp->len, n, primes, part_bytes);
    /* Parts: at most one per target bytes, plus the first. */
    size_t max_parts = (size_t)(pp->len / target) + 2;
    pp->parts = cm_mem_alloc(&pp->mem, max_parts * sizeof *pp->parts);
    pp->prime = primes ? cm_mem_alloc(&pp->mem, primes * sizeof *pp->prime) : NULL;
    if (!pp->parts || (primes && !pp->prime))
        return false;
    memset(pp->parts, 0, max_parts * sizeof *pp->parts);
    pp->parts_cap = max_parts;
    size_t np = 1;
    for (size_t i = 1; i < n; i++) {
        const nt_index_block *b = nt_index_block_at(ix, i);
        if (is_prime_kind(b->kind))
            pp->prime[pp->nprime++] = (pp_block){ b->offset, b->end, i };
        pp_part *cur = &pp->parts[np - 1];
        const nt_index_block *next = i + 1 < n ? nt_index_block_at(ix, i + 1) : NULL;
        if (b->kind == NT_INDEX_SEQUENCE_POINT && next && next->offset == b->end && b->end < pp->len &&
            b->offset - cur->start >= target && np < max_parts) {
            cur->end = b->offset;
            cur->sp_end = b->end;
            pp->parts[np++] = (pp_part){ .first_block = i + 1, .start = b->end };
        }
    }
    pp->parts[np - 1].end = pp->parts[np - 1].sp_end = pp->len;
    pp->nparts = np;
    return true;
}
