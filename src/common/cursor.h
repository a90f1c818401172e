/* Bounded little-endian reads and LEB128 varints over a byte span.
 * Every read checks the remaining length; a failed read leaves the cursor
 * where it was and returns false, so callers report "truncated X" at a
 * precise offset. */
#ifndef CM_CURSOR_H
#define CM_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct cm_cursor {
    const uint8_t *p;
    const uint8_t *end;
} cm_cursor;

static inline cm_cursor cm_cursor_make(const uint8_t *p, size_t len)
{
    cm_cursor c = { p, p + len };
    return c;
}

static inline size_t cm_cur_left(const cm_cursor *c) { return (size_t)(c->end - c->p); }

static inline uint16_t cm_le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t cm_le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}
static inline uint64_t cm_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline bool cm_cur_skip(cm_cursor *c, size_t n)
{
    if (cm_cur_left(c) < n)
        return false;
    c->p += n;
    return true;
}
static inline bool cm_cur_u8(cm_cursor *c, uint8_t *v)
{
    if (c->p >= c->end)
        return false;
    *v = *c->p++;
    return true;
}
static inline bool cm_cur_u16(cm_cursor *c, uint16_t *v)
{
    if (cm_cur_left(c) < 2)
        return false;
    *v = cm_le16(c->p);
    c->p += 2;
    return true;
}
static inline bool cm_cur_u32(cm_cursor *c, uint32_t *v)
{
    if (cm_cur_left(c) < 4)
        return false;
    *v = cm_le32(c->p);
    c->p += 4;
    return true;
}
static inline bool cm_cur_u64(cm_cursor *c, uint64_t *v)
{
    if (cm_cur_left(c) < 8)
        return false;
    *v = cm_le64(c->p);
    c->p += 8;
    return true;
}
static inline bool cm_cur_bytes(cm_cursor *c, void *dst, size_t n)
{
    if (cm_cur_left(c) < n)
        return false;
    memcpy(dst, c->p, n);
    c->p += n;
    return true;
}

/* LEB128 without bounds checks, for callers that know at least 5 (32-bit)
 * or 10 (64-bit) bytes remain.  Each byte after the first is added as
 * (b - 1) << shift, which also clears the previous byte's continuation bit,
 * so a byte costs a load, an add and a test.  The first four bytes, the
 * same for both widths, are written out (gcc keeps a loop with a variable
 * shift otherwise; thread ids take three or four bytes, timestamp deltas
 * two or three); after them b, the last byte read, has its continuation
 * bit set when the value goes on.  r, b and n are the caller's variables,
 * r and b of the value's width: a macro so that each width keeps its own
 * arithmetic (a shared 64-bit helper cost 1-2 instructions per event). */
#define CM_LEB_FIRST4(p, r, b, n)                               \
    do {                                                        \
        (r) = (b) = (p)[0], (n) = 1;                            \
        if ((b) >= 0x80) {                                      \
            (b) = (p)[1], (r) += ((b)-1) << 7, (n) = 2;         \
            if ((b) >= 0x80) {                                  \
                (b) = (p)[2], (r) += ((b)-1) << 14, (n) = 3;    \
                if ((b) >= 0x80)                                \
                    (b) = (p)[3], (r) += ((b)-1) << 21, (n) = 4; \
            }                                                   \
        }                                                       \
    } while (0)

/* Returns false (cursor unmoved) when the value is too long for its width. */
static inline bool cm_cur_varu32_roomy(cm_cursor *c, uint32_t *v)
{
    const uint8_t *p = c->p;
    uint32_t r, b;
    unsigned n;
    CM_LEB_FIRST4(p, r, b, n);
    if (b >= 0x80) {
        b = p[4], n = 5;
        if (b >= 0x10) /* bits beyond 32, or a sixth byte */
            return false;
        r += (b - 1) << 28;
    }
    *v = r;
    c->p = p + n;
    return true;
}

static inline bool cm_cur_varu64_roomy(cm_cursor *c, uint64_t *v)
{
    const uint8_t *p = c->p;
    uint64_t r, b;
    unsigned n;
    CM_LEB_FIRST4(p, r, b, n);
    if (b >= 0x80) {
        for (;;) { /* longer values finish in a loop */
            b = p[n];
            if (n == 9) {
                if (b > 1) /* the tenth byte holds bit 63 only */
                    return false;
                r += (b - 1) << 63;
                n = 10;
                break;
            }
            r += (b - 1) << (7 * n);
            n++;
            if (b < 0x80)
                break;
        }
    }
    *v = r;
    c->p = p + n;
    return true;
}

/* LEB128, at most 5 bytes for 32 bits; bits beyond 32 are an error. */
static inline bool cm_cur_varu32(cm_cursor *c, uint32_t *v)
{
    const uint8_t *p = c->p;
    if (p < c->end && !(*p & 0x80)) { /* one-byte fast path: most deltas */
        *v = *p;
        c->p = p + 1;
        return true;
    }
    if (c->end - p >= 5)
        return cm_cur_varu32_roomy(c, v);
    uint32_t r = 0;
    for (unsigned shift = 0; shift < 35; shift += 7) {
        if (p >= c->end)
            return false;
        uint8_t b = *p++;
        if (shift == 28 && (b & 0x70))
            return false;
        r |= (uint32_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            c->p = p;
            return true;
        }
    }
    return false;
}

/* LEB128, at most 10 bytes for 64 bits. */
static inline bool cm_cur_varu64(cm_cursor *c, uint64_t *v)
{
    const uint8_t *p = c->p;
    if (p < c->end && !(*p & 0x80)) {
        *v = *p;
        c->p = p + 1;
        return true;
    }
    if (c->end - p >= 10)
        return cm_cur_varu64_roomy(c, v);
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (p >= c->end)
            return false;
        uint8_t b = *p++;
        if (shift == 63 && (b & 0x7e))
            return false;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            c->p = p;
            return true;
        }
    }
    return false;
}

#endif
