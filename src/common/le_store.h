/* Little-endian stores: the counterparts of cursor.h's cm_le16/32/64 loads.
 * byte_buf.c (the one byte writer) appends with them; code that fills a
 * fixed header in place (the gzip exporter's stored blocks, utf16.c's ASCII
 * path) stores with them directly. */
#ifndef CM_LE_STORE_H
#define CM_LE_STORE_H

#include <stdint.h>
#include <string.h>

static inline void cm_store_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void cm_store_le32(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    memcpy(p, &v, 4);
}

static inline void cm_store_le64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, 8);
}

#endif
