/* The portable (no SSE2) UTF-16 paths, built apart (utf16_portable.c). */
#ifndef NT_TEST_UTF16_PORTABLE_H
#define NT_TEST_UTF16_PORTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether utf16_portable.c was built with SSE2 after all (then the
 * comparison tests nothing and says so). */
bool ts_portable_has_sse2(void);

/* The zero units of the `units` units at p, in order, as the portable
 * nt_utf16_nuls walk finds them: up to max indexes into at; returns how many. */
size_t ts_portable_nuls(const uint8_t *p, size_t units, size_t *at, size_t max);

/* nt_utf16_to_utf8, portable. */
size_t ts_portable_to_utf8(const uint8_t *src, size_t units, char *dst);

#endif
