/* The one little-endian byte writer (byte_buf.h): growth or fixed storage,
 * and the encodings over cm_store_le16/32/64. */
#include "common/byte_buf.h"
#include "common/le_store.h"

#include <string.h>

static bool reserve(cm_buf *b, size_t more)
{
    if (b->failed)
        return false;
    if (more > SIZE_MAX / 2 - b->n) {
        b->failed = true;
        return false;
    }
    if (b->n + more <= b->cap)
        return true;
    if (!b->mem) { /* fixed storage: full */
        b->failed = true;
        return false;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + more)
        cap *= 2;
    if (!cm_mem_resize(b->mem, (void **)&b->d, b->cap, cap)) {
        b->failed = true;
        return false;
    }
    b->cap = cap;
    return true;
}

void cm_buf_bytes(cm_buf *b, const void *p, size_t n)
{
    if (!n || !reserve(b, n))
        return;
    memcpy(b->d + b->n, p, n);
    b->n += n;
}

void cm_buf_u8(cm_buf *b, uint8_t v) { cm_buf_bytes(b, &v, 1); }

void cm_buf_u16(cm_buf *b, uint16_t v)
{
    uint8_t x[2];
    cm_store_le16(x, v);
    cm_buf_bytes(b, x, 2);
}

void cm_buf_u32(cm_buf *b, uint32_t v)
{
    uint8_t x[4];
    cm_store_le32(x, v);
    cm_buf_bytes(b, x, 4);
}

void cm_buf_u64(cm_buf *b, uint64_t v)
{
    uint8_t x[8];
    cm_store_le64(x, v);
    cm_buf_bytes(b, x, 8);
}

void cm_buf_varu(cm_buf *b, uint64_t v)
{
    uint8_t x[10];
    size_t n = 0;
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        x[n++] = (uint8_t)(c | (v ? 0x80 : 0));
    } while (v);
    cm_buf_bytes(b, x, n);
}

size_t cm_utf16_units(const char *s, cm_utf8_policy policy)
{
    size_t units = 0;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        uint32_t cp = cm_utf8_next(&p, policy);
        if (cp == CM_UTF8_INVALID)
            return SIZE_MAX;
        units += cp >= 0x10000 ? 2 : 1;
    }
    return units;
}

void cm_buf_utf16z(cm_buf *b, const char *s, cm_utf8_policy policy)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        uint32_t cp = cm_utf8_next(&p, policy);
        if (cp == CM_UTF8_INVALID) {
            b->failed = true;
            return;
        }
        uint16_t u[2];
        unsigned n = cm_utf16_encode(cp, u);
        for (unsigned k = 0; k < n; k++)
            cm_buf_u16(b, u[k]);
    }
    cm_buf_u16(b, 0);
}

void cm_buf_str8(cm_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    cm_buf_varu(b, n);
    cm_buf_bytes(b, s, n);
}

void cm_buf_put16(cm_buf *b, size_t at, uint16_t v)
{
    if (b->failed || at > b->n || b->n - at < 2)
        return;
    cm_store_le16(b->d + at, v);
}

void cm_buf_put32(cm_buf *b, size_t at, uint32_t v)
{
    if (b->failed || at > b->n || b->n - at < 4)
        return;
    cm_store_le32(b->d + at, v);
}

void cm_buf_free(cm_buf *b)
{
    if (b->mem)
        cm_mem_free(b->mem, b->d, b->cap);
    b->d = NULL;
    b->n = b->cap = 0;
    b->failed = false;
}
