/* The writer's growable byte buffer and its little-endian, varint and string
 * encoders.  A failed append marks the buffer failed and drops the bytes, so
 * encoders append freely and check once. */
#include "write/writer_internal.h"
#include "common/le_store.h"
#include "common/utf8.h"

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
    if (!cm_mem_resize(b->mem, (void **)&b->d, b->cap, cap)) {
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
    uint8_t x[2];
    cm_store_le16(x, v);
    wb_bytes(b, x, 2);
}

void wb_u32(wbuf *b, uint32_t v)
{
    uint8_t x[4];
    cm_store_le32(x, v);
    wb_bytes(b, x, 4);
}

void wb_u64(wbuf *b, uint64_t v)
{
    uint8_t x[8];
    cm_store_le64(x, v);
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
    cm_store_le16(b->d + at, v);
}

void wb_put32(wbuf *b, size_t at, uint32_t v)
{
    if (b->failed || at + 4 > b->n)
        return;
    cm_store_le32(b->d + at, v);
}

void wb_free(wbuf *b)
{
    cm_mem_free(b->mem, b->d, b->cap);
    b->d = NULL;
    b->n = b->cap = 0;
    b->failed = false;
}

/* UTF-8 (invalid bytes become U+FFFD, as common/utf8 decodes them) to UTF-16LE. */
void wb_utf16z(wbuf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        uint16_t u[2];
        unsigned n = cm_utf16_encode(cm_utf8_next(&p, CM_UTF8_REPLACE), u);
        for (unsigned k = 0; k < n; k++)
            wb_u16(b, u[k]);
    }
    wb_u16(b, 0);
}

void wb_str8(wbuf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    wb_varu(b, n);
    wb_bytes(b, s, n);
}
