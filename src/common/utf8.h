/* Checking UTF-8 as it is written out: the one decoder the output
 * formats share (the JSON writer and the text escaper). */
#ifndef NT_UTF8_H
#define NT_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the well-formed UTF-8 sequence at s (1..4; no overlongs, no
 * surrogates, nothing above U+10FFFF), 0 when s does not start one.  *cp gets
 * the scalar value.  Reads no byte after a NUL. */
size_t nt_utf8_decode(const unsigned char *s, uint32_t *cp);

#endif
