#include "common/utf16.h"
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

static inline uint32_t unit_at(const uint8_t *p) { return (uint32_t)p[0] | ((uint32_t)p[1] << 8); }

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

size_t nt_utf16_to_utf8(const uint8_t *src, size_t units, char *dst)
{
    char *o = dst;
    const uint8_t *p = src, *end = src + 2 * units;
    while (p < end)
        o = put_utf8(o, next_cp(&p, end));
    *o = '\0';
    return (size_t)(o - dst);
}

#define ASCII4_MASK 0xFF80FF80FF80FF80ull /* four units, each below 0x80 */
#define LANE_HI 0x0080008000800080ull
#define LANE_7F 0x007F007F007F007Full

bool nt_utf16z_to_utf8(nt_cursor *c, char *dst, size_t *len)
{
    const uint8_t *p = c->p, *end = c->p + (nt_cur_left(c) & ~(size_t)1);
    char *o = dst;
    for (;;) {
#if defined(__SSE2__)
        /* Eight ASCII units at a time: most names and signatures are ASCII.
         * The terminator usually sits in the last window: when everything
         * before it is ASCII, finish there instead of unit by unit. */
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)p);
            __m128i z = _mm_setzero_si128();
            __m128i non_ascii = _mm_and_si128(v, _mm_set1_epi16((short)0xFF80));
            unsigned ascii = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi16(non_ascii, z)); /* 2 bits per unit */
            unsigned nul = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi16(v, z));
            if (ascii == 0xFFFF && nul == 0) {
                _mm_storel_epi64((__m128i *)o, _mm_packus_epi16(v, v));
                o += 8;
                p += 16;
                continue;
            }
            unsigned first_nul = nul ? (unsigned)__builtin_ctz(nul) / 2 : 8;
            unsigned first_wide = ascii != 0xFFFF ? (unsigned)__builtin_ctz(~ascii & 0xFFFF) / 2 : 8;
            if (first_nul < 8 && first_nul <= first_wide) {
                /* writes 8 bytes, keeps first_nul: the scratch has NT_UTF8_SLACK bytes to spare */
                _mm_storel_epi64((__m128i *)o, _mm_packus_epi16(v, v));
                o += first_nul;
                *o = '\0';
                *len = (size_t)(o - dst);
                c->p = p + 2 * first_nul + 2;
                return true;
            }
            break; /* a non-ASCII unit first: take the careful path */
        }
#endif
        /* Four ASCII units at a time. */
        while (end - p >= 8) {
            uint64_t v;
            memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            v = __builtin_bswap64(v);
#endif
            /* all four units ASCII and non-zero (adding 0x7F sets bit 7 of a lane iff it is non-zero) */
            if ((v & ASCII4_MASK) || ((v + LANE_7F) & LANE_HI) != LANE_HI)
                break;
            uint32_t w = (uint32_t)((v & 0xFF) | ((v >> 8) & 0xFF00) | ((v >> 16) & 0xFF0000) |
                                    ((v >> 24) & 0xFF000000));
            memcpy(o, &w, 4);
            o += 4;
            p += 8;
        }
        if (end - p < 2)
            return false; /* no terminator */
        if (p[0] == 0 && p[1] == 0) {
            *o = '\0';
            *len = (size_t)(o - dst);
            c->p = p + 2;
            return true;
        }
        o = put_utf8(o, next_cp(&p, end));
    }
}

size_t nt_str16_utf8(nt_str16 s, char *buf, size_t size)
{
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
