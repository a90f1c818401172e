/* The one little-endian byte writer: a buffer that grows through a cm_mem
 * (the NetTrace writer's blocks) or fills fixed storage (a diagnostics IPC
 * request), with the integer, varint and string encodings both formats use.
 * A failed append (no memory, no room, a string refused by its UTF-8
 * policy) sets `failed` and drops the bytes, so encoders append freely and
 * check once.  Its reader is cursor.h; the primitives are le_store.h. */
#ifndef CM_BYTE_BUF_H
#define CM_BYTE_BUF_H

#include "common/alloc.h"
#include "common/utf8.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cm_buf {
    cm_mem *mem;  /* what it grows by; NULL: fixed storage of cap bytes */
    uint8_t *d;
    size_t n, cap;
    bool failed;
} cm_buf;

/* A buffer over the caller's storage: it never grows, and a write beyond
 * size bytes fails the buffer. */
static inline cm_buf cm_buf_over(uint8_t *storage, size_t size)
{
    cm_buf b = { NULL, storage, 0, size, false };
    return b;
}

void cm_buf_bytes(cm_buf *b, const void *p, size_t n);
void cm_buf_u8(cm_buf *b, uint8_t v);
void cm_buf_u16(cm_buf *b, uint16_t v);
void cm_buf_u32(cm_buf *b, uint32_t v);
void cm_buf_u64(cm_buf *b, uint64_t v);
/* LEB128, as cursor.h's cm_cur_varu64 reads it. */
void cm_buf_varu(cm_buf *b, uint64_t v);
/* UTF-8 (NULL is "") to UTF-16LE with a 2-byte terminator.  CM_UTF8_REPLACE
 * writes invalid bytes as U+FFFD; CM_UTF8_REJECT fails the buffer on them. */
void cm_buf_utf16z(cm_buf *b, const char *s, cm_utf8_policy policy);
/* How many UTF-16 units cm_buf_utf16z writes for s, the terminator not
 * counted; SIZE_MAX when the policy is CM_UTF8_REJECT and s is not UTF-8. */
size_t cm_utf16_units(const char *s, cm_utf8_policy policy);
/* A varint byte length, then the UTF-8 bytes (NetTrace V6 strings). */
void cm_buf_str8(cm_buf *b, const char *s);
/* Overwrite bytes already written at offset at (a size known only at the end). */
void cm_buf_put16(cm_buf *b, size_t at, uint16_t v);
void cm_buf_put32(cm_buf *b, size_t at, uint32_t v);
/* Release grown storage (nothing for fixed storage) and empty the buffer. */
void cm_buf_free(cm_buf *b);

#endif
