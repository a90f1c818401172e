/* The portable (no SSE2) UTF-16 paths, built apart (utf16_portable.c). */
#ifndef TEST_UTF16_PORTABLE_H
#define TEST_UTF16_PORTABLE_H

#include "common/utf16.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The zero units of the `units` units at p, in order, as the cm_utf16_nuls
 * walk of the including file's build finds them: up to max indexes into at;
 * returns how many. */
static inline size_t ts_walk_nuls(const uint8_t *p, size_t units, size_t *at, size_t max)
{
    cm_utf16_nuls z = cm_utf16_nuls_begin(p, units);
    const uint8_t *u;
    size_t n = 0;
    while (n < max && cm_utf16_nuls_next(&z, p, &u))
        at[n++] = (size_t)(u - p) / 2;
    return n;
}

/* Whether utf16_portable.c was built with SSE2 after all (then the
 * comparison tests nothing and says so). */
bool ts_portable_has_sse2(void);

/* ts_walk_nuls built without SSE2. */
size_t ts_portable_nuls(const uint8_t *p, size_t units, size_t *at, size_t max);

/* cm_utf16_to_utf8, portable. */
size_t ts_portable_to_utf8(const uint8_t *src, size_t units, char *dst);

#endif
