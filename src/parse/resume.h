/* Starting a parser mid-stream (parser.c), for the parallel parse: blocks
 * fed out of order, each at its own stream offset. */
#ifndef PS_PARSE_RESUME_H
#define PS_PARSE_RESUME_H

#include "parse/context.h"

/* The parser is between blocks, the trace header read, nothing gathered, no failure. */
bool ps_parser_at_block(const nt_parser *p);
/* The next bytes fed begin the block at stream offset `offset` (not before
 * the bytes already consumed); false, and nothing changed, unless at a block. */
bool ps_parser_seek_block(nt_parser *p, uint64_t offset);

#endif
