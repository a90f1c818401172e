/* Names from a trace in the text formats (samples, top, folded, info,
 * events): a name is data, never layout or a terminal command.  Each byte of
 *   a C0 control (0x00-0x1F), DEL (0x7F), a C1 control (U+0080-U+009F),
 *   a byte that starts no valid UTF-8 sequence, or one of the format's
 *   separators (e.g. ';' and ' ' in a samples line)
 * is written as \xHH (two upper-case hex digits); every other byte as is.
 * So one sample stays one line and no byte of a trace reaches a terminal as
 * a control sequence. */
#ifndef CM_TEXT_ESCAPE_H
#define CM_TEXT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Escape src into dst (at most size bytes, NUL included); returns the length
 * the whole escaped text needs (NUL excluded), like snprintf.  seps may be "" */
size_t cm_text_escape(char *dst, size_t size, const char *src, const char *seps);
/* The same escaping written to f; returns the bytes written (asked to be). */
size_t cm_text_escape_fputs(FILE *f, const char *src, const char *seps);

/* A name in a cell of a human table (top's labels and sites, --messages,
 * --signatures): read as it is, not as \x20s.  A name with a space or a '"'
 * (or an empty one) is written in double quotes with '"' and '\\' inside as
 * \" and \\\\; every name has its controls and invalid bytes as \xHH, as
 * above.  Machine formats (samples, folded, JSON) keep their own escaping. */
size_t cm_text_quote(char *dst, size_t size, const char *src);

#endif
