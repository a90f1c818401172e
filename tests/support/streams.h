/* Byte-level builder for hand-made NetTrace streams: the edge cases a real
 * writer never produces (uncompressed headers, bad lengths, unknown blocks).
 * Valid streams come from nt_writer; the numbers both share are named in
 * src/common/format.h. */
#ifndef TEST_STREAMS_H
#define TEST_STREAMS_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct tb {
    uint8_t *d;
    size_t n, cap;
    size_t base; /* stream offset of d[0], for streams emitted piecewise */
} tb;

void tb_free(tb *b);
void tb_bytes(tb *b, const void *p, size_t n);
void tb_u8(tb *b, uint8_t v);
void tb_u16(tb *b, uint16_t v);
void tb_u32(tb *b, uint32_t v);
void tb_u64(tb *b, uint64_t v);
void tb_varu(tb *b, uint64_t v);
void tb_utf16z(tb *b, const char *utf8); /* UTF-16LE with a terminator, as the writer encodes */
void tb_put32(tb *b, size_t at, uint32_t v);

/* "Nettrace" + FastSerialization header + Trace object. */
void tb_header(tb *b, uint32_t pointer_size, int64_t qpc_freq);
/* Object header for a block type + BlockSize placeholder + padding; returns
 * the position of the size field for tb_block_end. */
size_t tb_block_begin(tb *b, const char *type);
void tb_block_end(tb *b, size_t size_pos);
/* End-of-stream tag. */
void tb_end(tb *b);

/* Event/metadata block content header (20 bytes). */
void tb_event_header(tb *b, uint16_t flags);
/* A metadata record payload into out (V1 field list empty unless given). */
void tb_metadata_payload(tb *out, uint32_t id, const char *provider, uint32_t event_id, uint32_t version);

/* Compressed event blob with every field present. */
typedef struct tb_event {
    uint32_t metadata_id, seq, stack_id, processor;
    uint64_t thread_id, capture_thread_id;
    int64_t timestamp;
    const uint8_t *payload;
    uint32_t payload_size;
} tb_event;
/* prev: the previous event in the block (zeroed at block start). */
void tb_compressed_event(tb *b, const tb_event *e, tb_event *prev);
/* Uncompressed blob (header flags bit 0 clear), 4-byte padded. */
void tb_uncompressed_event(tb *b, const tb_event *e);

/* Whole blocks. */
void tb_metadata_block(tb *b, uint32_t id, const char *provider, uint32_t event_id, uint32_t version);
void tb_stack_block(tb *b, uint32_t first_id, uint32_t count, const uint64_t *const *ips,
                    const uint32_t *depths, uint32_t pointer_size);
void tb_sp_block(tb *b, int64_t ts, uint32_t nthreads, const uint64_t *tids, const uint32_t *seqs);

/* V6 framing (format 6): a block is a u32 of BlockSize | kind << 24, then
 * the body; tb_v6_header writes the magic, the V6 stream header and a Trace
 * block (1 GHz clock, 8-byte pointers). */
void tb_v6_block(tb *b, uint32_t kind, const tb *body);
void tb_v6_header(tb *b);

#endif
