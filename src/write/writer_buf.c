/* The writer's growable byte buffer and its little-endian, varint and string
 * encoders.  A failed append marks the buffer failed and drops the bytes, so
 * encoders append freely and check once. */
#include "write/writer_internal.h"

#include <string.h>

static bool wb_reserve(wbuf *b, size_t more)
{
    if (b->failed)
        return false;
    if (more > SIZE_MAX / 2 - b->n) {
        b->failed = true;
        return false;
    }
    if (b->n + more <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + more)
        cap *= 2;
    if (!nt_mem_resize(b->mem, (void **)&b->d, b->cap, cap)) {
        b->failed = true;
        return false;
    }
    b->cap = cap;
    return true;
}

void wb_bytes(wbuf *b, const void *p, size_t n)
{
    if (!n || !wb_reserve(b, n))
        return;
    memcpy(b->d + b->n, p, n);
    b->n += n;
}

void wb_u8(wbuf *b, uint8_t v) { wb_bytes(b, &v, 1); }

void wb_u16(wbuf *b, uint16_t v)
{
    uint8_t x[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
    wb_bytes(b, x, 2);
}

void wb_u32(wbuf *b, uint32_t v)
{
    uint8_t x[4];
    for (int i = 0; i < 4; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    wb_bytes(b, x, 4);
}

void wb_u64(wbuf *b, uint64_t v)
{
    uint8_t x[8];
    for (int i = 0; i < 8; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    wb_bytes(b, x, 8);
}

void wb_varu(wbuf *b, uint64_t v)
{
    uint8_t x[10];
    size_t n = 0;
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        x[n++] = (uint8_t)(c | (v ? 0x80 : 0));
    } while (v);
    wb_bytes(b, x, n);
}

void wb_put16(wbuf *b, size_t at, uint16_t v)
{
    if (b->failed || at + 2 > b->n)
        return;
    b->d[at] = (uint8_t)v;
    b->d[at + 1] = (uint8_t)(v >> 8);
}

void wb_put32(wbuf *b, size_t at, uint32_t v)
{
    if (b->failed || at + 4 > b->n)
        return;
    for (int i = 0; i < 4; i++)
        b->d[at + i] = (uint8_t)(v >> (8 * i));
}

void wb_free(wbuf *b)
{
    nt_mem_free(b->mem, b->d, b->cap);
    b->d = NULL;
    b->n = b->cap = 0;
    b->failed = false;
}

/* Decode one UTF-8 sequence; invalid input yields U+FFFD and consumes one byte. */
static uint32_t utf8_next(const unsigned char **ps)
{
    const unsigned char *s = *ps;
    uint32_t c = s[0];
    size_t n = 0;
    uint32_t min = 0;
    if (c < 0x80) {
        *ps = s + 1;
        return c;
    } else if ((c & 0xE0) == 0xC0) {
        n = 1, c &= 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 2, c &= 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 3, c &= 0x07, min = 0x10000;
    } else {
        *ps = s + 1;
        return 0xFFFD;
    }
    for (size_t i = 1; i <= n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *ps = s + 1;
            return 0xFFFD;
        }
        c = (c << 6) | (s[i] & 0x3F);
    }
    *ps = s + 1 + n;
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0xFFFD;
    return c;
}

void wb_utf16z(wbuf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        uint32_t c = utf8_next(&p);
        if (c >= 0x10000) {
            c -= 0x10000;
            wb_u16(b, (uint16_t)(0xD800 | (c >> 10)));
            wb_u16(b, (uint16_t)(0xDC00 | (c & 0x3FF)));
        } else {
            wb_u16(b, (uint16_t)c);
        }
    }
    wb_u16(b, 0);
}

void wb_str8(wbuf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    wb_varu(b, n);
    wb_bytes(b, s, n);
}
