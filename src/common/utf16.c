#include "common/utf16.h"
#include "common/cursor.h"
#include "common/le_store.h"
#include "nettrace.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Append one code point (from unit u, possibly paired with the next unit). */
static inline char *put_utf8(char *o, uint32_t u)
{
    if (u < 0x80) {
        *o++ = (char)u;
    } else if (u < 0x800) {
        *o++ = (char)(0xC0 | (u >> 6));
        *o++ = (char)(0x80 | (u & 0x3F));
    } else if (u < 0x10000) {
        *o++ = (char)(0xE0 | (u >> 12));
        *o++ = (char)(0x80 | ((u >> 6) & 0x3F));
        *o++ = (char)(0x80 | (u & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (u >> 18));
        *o++ = (char)(0x80 | ((u >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((u >> 6) & 0x3F));
        *o++ = (char)(0x80 | (u & 0x3F));
    }
    return o;
}

static inline uint32_t unit_at(const uint8_t *p) { return cm_le16(p); }

/* One unit (or a surrogate pair) at p < end; returns the code point and
 * advances *pp.  Unpaired surrogates become U+FFFD. */
static inline uint32_t next_cp(const uint8_t **pp, const uint8_t *end)
{
    const uint8_t *p = *pp;
    uint32_t u = unit_at(p);
    p += 2;
    if (u >= 0xD800 && u <= 0xDBFF && end - p >= 2) {
        uint32_t lo = unit_at(p);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            p += 2;
            u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
        }
    }
    if (u >= 0xD800 && u <= 0xDFFF)
        u = 0xFFFD;
    *pp = p;
    return u;
}

#define ASCII4_MASK 0xFF80FF80FF80FF80ull /* four units, each below 0x80 */

#if defined(__SSE2__)
/* Whether the eight units of v are all below 0x80. */
static inline bool ascii8(__m128i v)
{
    return _mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16((short)0xFF80)), _mm_setzero_si128())) ==
           0xFFFF;
}
#endif

size_t cm_utf16_to_utf8(const uint8_t *src, size_t units, char *dst)
{
    char *o = dst;
    const uint8_t *p = src, *end = src + 2 * units;
#if defined(__SSE2__)
    /* ASCII (most names and signatures) a block at a time: each unit below
     * 0x80 is one byte, so the output never outgrows the bound and nothing
     * is read outside the span.  While everything so far was ASCII, output
     * byte k is unit k: the last sixteen units are then converted as one
     * block overlapping the ones done, instead of a unit at a time. */
    while (end - p >= 64) {
        const __m128i *q = (const __m128i *)p;
        __m128i a = _mm_loadu_si128(q), b = _mm_loadu_si128(q + 1), c = _mm_loadu_si128(q + 2),
                d = _mm_loadu_si128(q + 3);
        if (!ascii8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d))))
            break;
        _mm_storeu_si128((__m128i *)o, _mm_packus_epi16(a, b));
        _mm_storeu_si128((__m128i *)(o + 16), _mm_packus_epi16(c, d));
        o += 32;
        p += 64;
    }
    if (end - p >= 32) {
        __m128i a = _mm_loadu_si128((const __m128i *)p), b = _mm_loadu_si128((const __m128i *)p + 1);
        if (ascii8(_mm_or_si128(a, b))) {
            _mm_storeu_si128((__m128i *)o, _mm_packus_epi16(a, b));
            o += 16;
            p += 32;
        }
    }
    if (p != end && end - p < 32 && units >= 16) { /* the rest within the last 16, all before ASCII */
        __m128i a = _mm_loadu_si128((const __m128i *)(end - 32)), b = _mm_loadu_si128((const __m128i *)(end - 16));
        if (ascii8(_mm_or_si128(a, b))) {
            _mm_storeu_si128((__m128i *)(dst + units - 16), _mm_packus_epi16(a, b));
            dst[units] = '\0';
            return units;
        }
    }
#endif
    for (;;) {
#if defined(__SSE2__)
        while (end - p >= 16) {
            __m128i a = _mm_loadu_si128((const __m128i *)p);
            if (!ascii8(a))
                break;
            _mm_storel_epi64((__m128i *)o, _mm_packus_epi16(a, a));
            o += 8;
            p += 16;
        }
#endif
        while (end - p >= 8) {
            uint64_t v = cm_le64(p);
            if (v & ASCII4_MASK)
                break;
            /* four ASCII units: each unit's low byte, the first unit's first */
            uint32_t w = (uint32_t)((v & 0xFF) | ((v >> 8) & 0xFF00) | ((v >> 16) & 0xFF0000) |
                                    ((v >> 24) & 0xFF000000));
            cm_store_le32((uint8_t *)o, w);
            o += 4;
            p += 8;
        }
        if (p >= end)
            break;
        o = put_utf8(o, next_cp(&p, end));
    }
    *o = '\0';
    return (size_t)(o - dst);
}

size_t nt_str16_utf8(nt_str16 s, char *buf, size_t size)
{
    /* With room for the longest result (3 bytes a unit, and the NUL), nothing
     * is cut: the unbounded converter, ASCII a block at a time, writes the same. */
    if (s.count && buf && size && (size - 1) / 3 >= s.count)
        return cm_utf16_to_utf8(s.units, s.count, buf);
    const uint8_t *p = s.units, *end = s.units + 2 * (size_t)s.count;
    size_t len = 0;
    bool room = size > 0;
    while (p < end) {
        char cp[4];
        size_t n = (size_t)(put_utf8(cp, next_cp(&p, end)) - cp);
        if (room && len + n < size)
            memcpy(buf + len, cp, n);
        else if (room) {
            buf[len] = '\0'; /* cut before the character that does not fit */
            room = false;
        }
        len += n;
    }
    if (room)
        buf[len] = '\0';
    return len;
}
