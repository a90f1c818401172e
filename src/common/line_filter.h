/* A filter of code addresses by the 256-byte lines they lie in, hashed into
 * a bitmap of 2^hash_bits bits: "may [start, start + size) hold an address
 * added?"  It never answers no for code that holds one; it may answer maybe
 * for code that holds none (a line's other bytes, hash collisions, extents
 * of more than CM_LINE_SPAN lines, which are not looked up).  The trace
 * builder asks it which records can name a sample (records.c); a windowed
 * read, which method records can name a frame of the window (feed_window.c). */
#ifndef CM_LINE_FILTER_H
#define CM_LINE_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#define CM_LINE_SHIFT 8
#define CM_LINE_SPAN 32u

static inline uint32_t cm_line_hash(uint64_t line, unsigned hash_bits)
{
    return (uint32_t)((line * 0x9E3779B97F4A7C15ull) >> (64 - hash_bits));
}

/* bits: 2^hash_bits / 64 words. */
static inline void cm_line_filter_add(uint64_t *bits, unsigned hash_bits, uint64_t addr)
{
    uint32_t h = cm_line_hash(addr >> CM_LINE_SHIFT, hash_bits);
    bits[h / 64] |= 1ull << (h % 64);
}

static inline bool cm_line_filter_maybe(const uint64_t *bits, unsigned hash_bits, uint64_t start, uint64_t size)
{
    if (!size)
        return false; /* an empty extent covers nothing */
    uint64_t last = start > UINT64_MAX - (size - 1) ? UINT64_MAX : start + (size - 1);
    uint64_t p0 = start >> CM_LINE_SHIFT, p1 = last >> CM_LINE_SHIFT;
    if (p1 - p0 >= CM_LINE_SPAN)
        return true;
    for (uint64_t p = p0; p <= p1; p++) {
        uint32_t h = cm_line_hash(p, hash_bits);
        if (bits[h / 64] >> (h % 64) & 1)
            return true;
    }
    return false;
}

#endif
