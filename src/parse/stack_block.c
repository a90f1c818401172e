/* Stack blocks, the same in both versions: u32 first id, u32 count, then per
 * stack u32 byte size and the IPs at the trace's pointer size.  Ids are dense
 * within a sequence-point interval (stacks.h). */
#include "common/compiler.h"
#include "parse/blocks.h"

#include <string.h>

/* Widen (or copy) `frames` IPs of `ptr` bytes each (a constant in each
 * caller's copy). */
CC_ALWAYS_INLINE static inline void copy_ips(uint64_t *dst, const uint8_t *src, uint32_t frames,
                                                           uint32_t ptr)
{
    if (ptr == 8) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (frames) /* dst is NULL for an empty stack before any IP storage */
            memcpy(dst, src, (size_t)frames * 8);
#else
        for (uint32_t k = 0; k < frames; k++)
            dst[k] = cm_le64(src + 8 * k);
#endif
    } else {
        for (uint32_t k = 0; k < frames; k++)
            dst[k] = cm_le32(src + 4 * k);
    }
}

/* The IP storage moved: point the entries into it again.  Entries hold
 * their IPs in order, so each one's start is the sum of the counts before
 * it.  The storage grows geometrically, so this costs O(1) per stack. */
static void rebase(ps_stack_table *t)
{
    size_t at = 0;
    for (uint32_t k = 0; k < t->n; k++) {
        nt_stack *s = &t->ent[k];
        if (s->count == PS_STACK_MISSING)
            continue;
        s->ips = s->count ? t->ips + at : NULL;
        at += s->count;
    }
}

/* The stacks of a block whose tables are reserved, specialised on the
 * pointer size (a constant in each copy: the IPs' size divides by a shift,
 * and their copy is inlined) and on `limits`: false when the block cannot
 * reach max_stacks or max_stack_frames whatever it holds, so that no stack
 * tests them. */
CC_ALWAYS_INLINE static inline nt_status read_stacks(nt_parser *p, cm_cursor *cur, const uint8_t *content,
                                                                   uint64_t content_off, uint32_t first, uint32_t count,
                                                                   const uint32_t ptr, const bool limits)
{
    ps_stack_table *t = &p->stacks;
    cm_cursor c = *cur; /* a copy whose address never escapes */
    const unsigned shift = ptr == 8 ? 3 : 2;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *at = c.p; /* the stack's offset, computed only for its errors */
        uint32_t bytes;
        if (!cm_cur_u32(&c, &bytes) || bytes > cm_cur_left(&c))
            return ps_fail(p, NT_ERR_MALFORMED, content_off + (uint64_t)(at - content), "stack %u truncated", first + i);
        if (bytes & (ptr - 1))
            return ps_fail(p, NT_ERR_MALFORMED, content_off + (uint64_t)(at - content),
                           "stack of %u bytes is not a whole number of %u-byte IPs", bytes, ptr);
        uint32_t frames = bytes >> shift;
        if (limits && t->n >= p->lim.max_stacks)
            return ps_fail(p, NT_ERR_LIMIT, content_off + (uint64_t)(at - content),
                           "more than max_stacks (%u) stacks in one interval", p->lim.max_stacks);
        if (limits && frames > p->lim.max_stack_frames - t->ips_len)
            return ps_fail(p, NT_ERR_LIMIT, content_off + (uint64_t)(at - content),
                           "more than max_stack_frames (%u) IPs in one interval", p->lim.max_stack_frames);
        uint64_t *dst = t->ips ? t->ips + t->ips_len : NULL; /* empty stacks before any IP: no table yet */
        copy_ips(dst, c.p, frames, ptr);
        c.p += bytes;
        nt_stack *s = &t->ent[t->n++];
        *s = (nt_stack){ first + i, frames, frames ? dst : NULL, t->interval };
        t->ips_len += frames;
        p->stats.stacks++;
        if (p->cb.stack) {
            nt_status st = PS_CALL(p, stack, s);
            if (st)
                return st;
        }
    }
    *cur = c;
    return NT_OK;
}

nt_status ps_decode_stack_block(nt_parser *p, const uint8_t *content, size_t size, uint64_t content_off)
{
    cm_cursor c = cm_cursor_make(content, size);
    uint32_t first, count;
    if (!cm_cur_u32(&c, &first) || !cm_cur_u32(&c, &count))
        return ps_fail(p, NT_ERR_MALFORMED, content_off, "stack block header truncated");
    ps_stack_table *t = &p->stacks;
    if (t->n == 0)
        t->base = first;
    uint32_t expected = t->base + t->n;
    if (first - t->base < t->n)
        return ps_fail(p, NT_ERR_MALFORMED, content_off, "stack id %u defined twice in one interval", first);
    if ((uint64_t)first + count > UINT32_MAX + 1ull)
        return ps_fail(p, NT_ERR_MALFORMED, content_off, "stack ids overflow 32 bits");
    /* Ids are dense: a gap becomes "missing" entries, which count against max_stacks. */
    uint64_t gap = (uint32_t)(first - expected);
    if ((uint64_t)t->n + gap > p->lim.max_stacks)
        return ps_fail(p, NT_ERR_LIMIT, content_off, "stack id %u exceeds max_stacks (%u) in one interval", first,
                       p->lim.max_stacks);
    if (gap) {
        if (!cm_mem_reserve(&p->mem, (void **)&t->ent, &t->ent_cap, t->n + gap, sizeof *t->ent))
            return ps_fail(p, NT_ERR_NOMEM, content_off, "cannot grow the stack table");
        for (uint64_t k = 0; k < gap; k++)
            t->ent[t->n++] = (nt_stack){ 0, PS_STACK_MISSING, NULL, 0 };
    }
    const uint32_t ptr = p->info.pointer_size;
    /* Room for the whole block at once (each stack needs at least its 4-byte
     * size, each IP ptr bytes), within what the limits let it hold: the
     * loop below then never grows the tables. */
    size_t stacks = count < cm_cur_left(&c) / 4 ? count : cm_cur_left(&c) / 4;
    size_t frames_max = cm_cur_left(&c) / ptr;
    if (stacks > (size_t)p->lim.max_stacks - t->n)
        stacks = (size_t)p->lim.max_stacks - t->n;
    if (frames_max > (size_t)p->lim.max_stack_frames - t->ips_len)
        frames_max = (size_t)p->lim.max_stack_frames - t->ips_len;
    uintptr_t ips_was = (uintptr_t)t->ips;
    if (!cm_mem_reserve(&p->mem, (void **)&t->ent, &t->ent_cap, t->n + stacks, sizeof *t->ent) ||
        !cm_mem_reserve(&p->mem, (void **)&t->ips, &t->ips_cap, t->ips_len + frames_max, sizeof *t->ips))
        return ps_fail(p, NT_ERR_NOMEM, content_off, "cannot grow the stack table");
    if ((uintptr_t)t->ips != ips_was)
        rebase(t);
    /* Each stack takes at least its 4-byte size and each IP ptr bytes. */
    bool within = (uint64_t)t->n + count <= p->lim.max_stacks &&
                  (uint64_t)t->ips_len + cm_cur_left(&c) / ptr <= p->lim.max_stack_frames;
    nt_status st = ptr != 8 ? read_stacks(p, &c, content, content_off, first, count, 4, true)
                   : within ? read_stacks(p, &c, content, content_off, first, count, 8, false)
                            : read_stacks(p, &c, content, content_off, first, count, 8, true);
    if (st)
        return st;
    if (c.p != c.end)
        return ps_fail(p, NT_ERR_MALFORMED, PS_OFF(&c, content, content_off), "%zu stray bytes after the stacks",
                       cm_cur_left(&c));
    return NT_OK;
}
