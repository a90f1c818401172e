/* NetTrace V6: block framing decisions and block decoders, with the V6-only
 * tables (thread index -> OS thread, label lists).  The framing state machine
 * in parser.c calls in here once it has read a V6 version header; the
 * metadata and stack tables and the typed payload decoders are shared with
 * V4/V5, so consumers get the same callbacks whatever the version. */
#ifndef NT_BLOCKS_V6_H
#define NT_BLOCKS_V6_H

#include "parse/parser_internal.h"

/* What the framing does after a block header. */
typedef enum nt_v6_next {
    NT_V6_BODY,   /* gather BlockSize bytes and call nt_v6_decode_block */
    NT_V6_SKIP,   /* unknown kind: skip BlockSize bytes */
    NT_V6_END     /* EndOfStream */
} nt_v6_next;

/* Allocate the V6 state (after a major version 6 header). */
nt_status nt_v6_begin(nt_parser *p);
void nt_v6_free(nt_parser *p);

/* Decode a 4-byte block header at u (stream offset p->unit_off). */
nt_status nt_v6_block_header(nt_parser *p, const uint8_t *u, uint32_t *size, nt_v6_next *next);

/* Decode the content of the block whose header was read last. */
nt_status nt_v6_decode_block(nt_parser *p, const uint8_t *content, size_t size);

#endif
