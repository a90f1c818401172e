/* UTF-16LE strings as they appear in payloads and V4/V5 metadata:
 * NUL-terminated, no length prefix. */
#ifndef NT_UTF16_H
#define NT_UTF16_H

#include "common/cursor.h"

/* Find the terminator of the string at c.  On success *start and *units describe
 * the string (terminator excluded) and c moves past the terminator. */
bool nt_utf16z_scan(nt_cursor *c, const uint8_t **start, size_t *units);

/* Worst-case UTF-8 bytes for `units` UTF-16 code units, plus the NUL. */
static inline size_t nt_utf8_bound(size_t units) { return units * 3 + 1; }

/* Convert to UTF-8 (unpaired surrogates become U+FFFD) and NUL-terminate.
 * dst must hold nt_utf8_bound(units) bytes.  Returns bytes written, NUL excluded. */
size_t nt_utf16_to_utf8(const uint8_t *src, size_t units, char *dst);

/* Bytes past the converted string that nt_utf16z_to_utf8 may scribble on. */
#define NT_UTF8_SLACK 8

/* Scan and convert in one pass: the string at c, up to its terminator, into
 * dst (which must hold nt_utf8_bound(nt_cur_left(c) / 2) + NT_UTF8_SLACK bytes).  On success
 * *len is the UTF-8 length and c moves past the terminator. */
bool nt_utf16z_to_utf8(nt_cursor *c, char *dst, size_t *len);

#endif
