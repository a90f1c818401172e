/* UTF-16LE strings as they appear in payloads and V4/V5 metadata:
 * NUL-terminated, no length prefix. */
#ifndef NT_UTF16_H
#define NT_UTF16_H

#include "common/cursor.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Find the terminator of the string at c.  On success *start and *units describe
 * the string (terminator excluded) and c moves past the terminator.  Inline:
 * rundown records hold three strings each, and lazy names only scan them. */
static inline bool nt_utf16z_scan(nt_cursor *c, const uint8_t **start, size_t *units)
{
    const uint8_t *p = c->p;
    size_t n = nt_cur_left(c) / 2, i = 0;
#if defined(__SSE2__)
    /* Sixteen units at a time (two compares packed into one mask of a bit
     * per unit): names and signatures run to dozens of units. */
    const __m128i z = _mm_setzero_si128();
    for (; i + 16 <= n; i += 16) {
        const __m128i *q = (const __m128i *)(p + 2 * i);
        __m128i a = _mm_cmpeq_epi16(_mm_loadu_si128(q), z), b = _mm_cmpeq_epi16(_mm_loadu_si128(q + 1), z);
        unsigned nul = (unsigned)_mm_movemask_epi8(_mm_packs_epi16(a, b));
        if (nul) {
            i += (unsigned)__builtin_ctz(nul);
            goto found;
        }
    }
    /* The rest: the last sixteen units of the span, which overlap units
     * already known not to be NUL, so its first NUL is the terminator. */
    if (i < n && n >= 16) {
        const __m128i *q = (const __m128i *)(p + 2 * (n - 16));
        __m128i a = _mm_cmpeq_epi16(_mm_loadu_si128(q), z), b = _mm_cmpeq_epi16(_mm_loadu_si128(q + 1), z);
        unsigned nul = (unsigned)_mm_movemask_epi8(_mm_packs_epi16(a, b));
        if (!nul)
            return false;
        i = n - 16 + (unsigned)__builtin_ctz(nul);
        goto found;
    }
#endif
    for (; i < n; i++)
        if ((p[2 * i] | p[2 * i + 1]) == 0)
            goto found;
    return false;
found:
    *start = p;
    *units = i;
    c->p = p + 2 * i + 2;
    return true;
}

/* Worst-case UTF-8 bytes for `units` UTF-16 code units, plus the NUL. */
static inline size_t nt_utf8_bound(size_t units) { return units * 3 + 1; }

/* Convert to UTF-8 (unpaired surrogates become U+FFFD) and NUL-terminate.
 * dst must hold nt_utf8_bound(units) bytes.  Returns bytes written, NUL excluded. */
size_t nt_utf16_to_utf8(const uint8_t *src, size_t units, char *dst);

/* Bytes past the converted string that nt_utf16z_to_utf8 may scribble on. */
#define NT_UTF8_SLACK 8

/* Scan and convert in one pass: the string at c, up to its terminator, into
 * dst (which must hold nt_utf8_bound(nt_cur_left(c) / 2) + NT_UTF8_SLACK bytes).  On success
 * *len is the UTF-8 length and c moves past the terminator. */
bool nt_utf16z_to_utf8(nt_cursor *c, char *dst, size_t *len);

#endif
