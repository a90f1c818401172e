/* UTF-16LE strings as they appear in payloads and V4/V5 metadata:
 * NUL-terminated, no length prefix. */
#ifndef CM_UTF16_H
#define CM_UTF16_H

#include "common/compiler.h"
#include "common/cursor.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Index of the lowest set bit of m (m != 0). */
static inline unsigned cm_utf16_ctz(unsigned m)
{
#if defined(__GNUC__)
    return (unsigned)__builtin_ctz(m);
#else
    unsigned k = 0;
    for (; !(m & 1u); m >>= 1)
        k++;
    return k;
#endif
}

/* A bit per unit of the `count` (at most 32) units at q, set where the
 * unit is zero: the portable form, and the SSE2 path's short spans. */
static inline uint32_t cm_utf16_nul_bits(const uint8_t *q, size_t count)
{
    uint32_t m = 0;
    for (size_t k = 0; k < count; k++)
        m |= (uint32_t)((q[2 * k] | q[2 * k + 1]) == 0) << k;
    return m;
}

#if defined(__SSE2__)
/* The same for the sixteen units at q: two compares packed into one mask. */
static inline uint32_t cm_utf16_nul_mask16(const uint8_t *q)
{
    const __m128i z = _mm_setzero_si128();
    __m128i a = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)q), z);
    __m128i b = _mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(q + 16)), z);
    return (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(a, b));
}
#endif

/* A bit per unit of the 32 units at q, set where the unit is zero: the
 * step of the walk below.  (An AVX2 step, chosen at run time, cut
 * HeartRateMonitor's parse by 28 instructions per event but not its time:
 * dropped.) */
#if defined(__GNUC__)
CC_ALWAYS_INLINE
#endif
static inline uint32_t cm_utf16_nul_mask32(const uint8_t *q)
{
#if defined(__SSE2__)
    return cm_utf16_nul_mask16(q) | cm_utf16_nul_mask16(q + 32) << 16;
#else
    return cm_utf16_nul_bits(q, 32);
#endif
}

/* A walk over the zero units of a span, in order: the terminators of the
 * strings stored one after another there.  Names are short (a rundown
 * method record's three average 45, 16 and 52 units), so the strings are
 * scanned in one pass, thirty-two units a step, each step's terminators
 * all taken from its one mask, rather than with a loop (and its set-up)
 * per string.  Whole steps run from the start and the span's last 32 units
 * end it, shifted past those scanned: taking the short step first instead
 * saved 15 instructions per record but made the whole parse of a
 * rundown-heavy trace 20% slower (likely because whether the first
 * terminator fell in it was no longer predictable).  The state stays in
 * registers once inlined. */
typedef struct cm_utf16_nuls {
    const uint8_t *next; /* first byte not yet scanned */
    const uint8_t *full; /* where the whole 32-unit steps from the start end */
    const uint8_t *end;  /* the span's end (an even number of bytes from its start) */
    const uint8_t *base; /* the unit of bit 0 of mask */
    uint32_t mask;       /* zero units scanned and not yet handed out */
} cm_utf16_nuls;

static inline cm_utf16_nuls cm_utf16_nuls_begin(const uint8_t *p, size_t units)
{
    cm_utf16_nuls z = { p, p + 64 * (units / 32), p + 2 * units, p, 0 };
    return z;
}

/* Scans the rest of the span (past z->full: fewer than 32 units).  Out of
 * line of the step loop: reached once per record. */
static inline void cm_utf16_nuls_tail(cm_utf16_nuls *z, const uint8_t *start)
{
    unsigned left = (unsigned)((size_t)(z->end - z->full) / 2);
    if (z->full != start) {
        /* the span's last 32 units, shifted past those already scanned */
        z->mask = cm_utf16_nul_mask32(z->end - 64) >> (32 - left);
    } else {
#if defined(__SSE2__)
        if (left >= 16) /* sixteen units, then the last sixteen shifted past the overlap */
            z->mask = cm_utf16_nul_mask16(start) | (cm_utf16_nul_mask16(z->end - 32) >> (32 - left)) << 16;
        else
#endif
            z->mask = cm_utf16_nul_bits(start, left);
    }
    z->base = z->full;
    z->next = z->full = z->end; /* scanned to the end: no more steps */
}

/* The next zero unit into *at (its address); false when the span has no
 * more.  start is the span's first byte. */
#if defined(__GNUC__)
CC_ALWAYS_INLINE /* once per string, inlined: a call cost more than the scan */
#endif
static inline bool cm_utf16_nuls_next(cm_utf16_nuls *z, const uint8_t *start, const uint8_t **at)
{
    while (z->mask == 0) {
        if (z->next != z->full) {
            z->mask = cm_utf16_nul_mask32(z->next);
            z->base = z->next;
            z->next += 64;
        } else if (z->next != z->end) {
            cm_utf16_nuls_tail(z, start);
        } else {
            return false;
        }
    }
    *at = z->base + 2 * cm_utf16_ctz(z->mask);
    z->mask &= z->mask - 1;
    return true;
}

/* Find the terminator of the string at c.  On success *start and *units describe
 * the string (terminator excluded) and c moves past the terminator. */
static inline bool cm_utf16z_scan(cm_cursor *c, const uint8_t **start, size_t *units)
{
    cm_utf16_nuls z = cm_utf16_nuls_begin(c->p, cm_cur_left(c) / 2);
    const uint8_t *end;
    if (!cm_utf16_nuls_next(&z, c->p, &end))
        return false;
    *start = c->p;
    *units = (size_t)(end - c->p) / 2;
    c->p = end + 2;
    return true;
}

/* Worst-case UTF-8 bytes for `units` UTF-16 code units, plus the NUL. */
static inline size_t cm_utf8_bound(size_t units) { return units * 3 + 1; }

/* Convert to UTF-8 (unpaired surrogates become U+FFFD) and NUL-terminate.
 * dst must hold cm_utf8_bound(units) bytes.  Returns bytes written, NUL excluded. */
size_t cm_utf16_to_utf8(const uint8_t *src, size_t units, char *dst);

#endif
