/* The one JSON string writer: the tool's JSON (info, top, ps) and the
 * exporters' (speedscope) go through it, so every JSON the project writes
 * escapes the same way and is valid UTF-8 whatever a trace holds:
 *   "  \  and the controls \b \f \n \r \t   as their short escapes
 *   other C0 controls, DEL, C1 controls       as \u00XX
 *   a byte that starts no valid UTF-8 seq.    as \ufffd (the replacement character)
 *   everything else                           as is */
#ifndef CM_JSON_H
#define CM_JSON_H

#include <stddef.h>
#include <stdio.h>

/* Where the bytes go: a FILE, a buffered callback, ... */
typedef void (*cm_json_put)(void *ctx, const char *p, size_t n);

/* Write s as a JSON string literal, quotes included; NULL writes null. */
void cm_json_string(cm_json_put put, void *ctx, const char *s);

/* The same onto a stdio stream. */
void cm_json_fputs(FILE *f, const char *s);

#endif
