/* The block decoders the framing machine (parser.c) calls.  Each gets one
 * whole block in memory and walks it with a bounded cursor. */
#ifndef PS_BLOCKS_H
#define PS_BLOCKS_H

#include "parse/context.h"

/* V4/V5 (blocks_v4.c): the content of a block of type p->btype whose first
 * byte is at stream offset p->unit_off. */
nt_status ps_v4_decode_block(nt_parser *p, const uint8_t *content, size_t size);

/* A V4/V5 metadata event's payload (metadata id, provider, then the event's
 * description and V5 tags) at stream offset off, into p's metadata table
 * (blocks_v4.c; payload.c reads a caller's metadata blob with it). */
nt_status ps_v4_metadata_record(nt_parser *p, const uint8_t *payload, size_t size, uint64_t off);

/* Stack blocks, the same in both versions (stack_block.c). */
nt_status ps_decode_stack_block(nt_parser *p, const uint8_t *content, size_t size, uint64_t content_off);

/* V6 (blocks_v6.c), with its own tables (label lists). */

/* What the framing does after a V6 block header. */
typedef enum ps_v6_next {
    PS_V6_BODY,   /* gather BlockSize bytes and call ps_v6_decode_block */
    PS_V6_SKIP,   /* unknown kind: skip BlockSize bytes */
    PS_V6_END     /* EndOfStream */
} ps_v6_next;

/* Allocate the V6 state (after a major version 6 header). */
nt_status ps_v6_begin(nt_parser *p);
void ps_v6_free(nt_parser *p);

/* Decode a 4-byte block header at u (stream offset p->unit_off). */
nt_status ps_v6_block_header(nt_parser *p, const uint8_t *u, uint32_t *size, ps_v6_next *next);

/* Decode the content of the block whose header was read last. */
nt_status ps_v6_decode_block(nt_parser *p, const uint8_t *content, size_t size);

#endif
