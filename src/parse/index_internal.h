/* The block index's object and the two passes that fill it (index_scan.c:
 * the framing of both format versions, block headers only; index_estimate.c:
 * metadata names and a walk of a few event blocks' headers). */
#ifndef PS_INDEX_INTERNAL_H
#define PS_INDEX_INTERNAL_H

#include "common/alloc.h"
#include "nettrace_index.h"

#include <stdint.h>

/* Sample metadata ids remembered for the estimate: a stream defines the
 * sample event once (V6 may define it again after a metadata flush). */
#define IX_MAX_SAMPLE_IDS 8
/* Metadata ids of method, module and assembly events (JIT, loader, rundown):
 * fifteen kinds, each defined once or again after a V6 metadata flush.  Past
 * the cap every walked block is flagged (more read, never less). */
#define IX_MAX_RECORD_IDS 64
/* Longest provider name compared (the runtime's are 38 bytes). */
#define IX_MAX_PROVIDER_NAME 64

/* The file an index was built from, as a sidecar names it: what a later
 * read compares before believing the sidecar (index_sidecar.c). */
typedef struct ix_identity {
    bool known;          /* built from a file (not a buffer) */
    uint64_t size;
    int64_t mtime_ns;
    uint64_t head_hash;  /* of the first IX_HEAD_BYTES (or the whole file) */
    uint64_t tail_hash;  /* of the last IX_TAIL_BYTES (or the whole file) */
} ix_identity;

#define IX_HEAD_BYTES (1u << 20)
/* Block headers of the trace framed again when a sidecar is loaded, spread
 * between its first and last block (index_sidecar.c): every header of a
 * trace of up to IX_SPOT_CHECKS + 2 blocks. */
#define IX_SPOT_CHECKS 64u
#define IX_TAIL_BYTES (64u << 10)

struct nt_index {
    cm_mem mem;
    nt_index_block *blocks;
    size_t count, cap;
    nt_index_summary sum;
    uint32_t sample_ids[IX_MAX_SAMPLE_IDS];
    uint32_t sample_id_count;
    uint32_t record_ids[IX_MAX_RECORD_IDS];
    uint32_t record_id_count;
    bool records_everywhere;
    uint64_t spanned; /* event blocks whose stated range is in the summary's span */
    ix_identity id;
    /* The kept records (index_records.c): the method, module and assembly
     * events of the blocks flagged NT_INDEX_BLOCK_RECORDS_KEPT, in stream
     * order, IX_REC_FIXED bytes each plus the payload padded to 8. */
    uint8_t *rec;
    size_t rec_len, rec_cap;
    uint64_t rec_count;
};

/* A kept record's fixed part (little-endian, as the sidecar stores it):
 *   0 u32 block   4 u32 metadata id   8 u32 sequence number  12 u32 processor
 *  16 u64 thread (V4/V5: the OS id; V6: the thread index)
 *  24 u64 capture thread (the same)   32 u32 stack id   36 u32 payload size
 *  40 i64 timestamp   48 u64 event offset in the stream
 *  56 activity id[16]  72 related activity id[16]  88 u8 is_sorted, 7 bytes 0
 * then the payload, padded with zeros to a multiple of 8. */
#define IX_REC_FIXED 96u
/* The kept records of one index stay under this; a trace with more keeps
 * the rest in its blocks (flagged RECORDS and not KEPT: read for them). */
#define IX_REC_MAX_BYTES ((size_t)64 << 20)

/* One kept record decoded (pointers into the records' bytes). */
typedef struct ix_record {
    uint32_t block;
    nt_event ev;     /* header fields and payload; desc, stack, thread ids are the parser's to fill */
    uint64_t thread, capture; /* as the header holds them (V6: thread indexes) */
} ix_record;

/* Append ev (walked in block `block`, V6 label list label_list) to the kept
 * records; false when it cannot be kept (a V6 label list, the cap, memory):
 * the caller then leaves the block to be read. */
bool ix_records_add(nt_index *ix, uint32_t block, const nt_event *ev, uint64_t thread, uint64_t capture,
                    uint32_t label_list);
/* Drop the records appended since the kept length was `len` (a block that could not be kept whole). */
void ix_records_truncate(nt_index *ix, size_t len);
/* The record at *at of ix's kept records into *r and *at past it; false at the end. */
bool ix_records_next(const nt_index *ix, size_t *at, ix_record *r);
/* Take a sidecar's n bytes of records into ix after checking each against
 * ix's blocks (every record in a block flagged KEPT, in block order, its
 * offset inside that block's content, its payload inside the section):
 * NT_OK, or NT_ERR_MALFORMED with *bad the section's offset of the first bad byte. */
nt_status ix_records_adopt(nt_index *ix, const uint8_t *d, size_t n, size_t *bad);

/* What a build reads and reports through.  The stream is either a buffer
 * (data) or a file read by pread (fd >= 0), so that only what the scan asks
 * for is read: a few dozen bytes a block, and the bodies of metadata blocks
 * and of the event blocks the estimate walks (bytes_read counts it all). */
typedef struct ix_build {
    nt_index *ix;
    const uint8_t *data; /* NULL when reading fd */
    int fd;
    uint64_t len;
    /* fd: the last two header reads, 128 bytes from head_off[k] (head_len[k] of them), the older replaced
     * first: a block's header read also holds its body's first bytes, and the read of a V4/V5 block's
     * EndObject the next block's header, so a scan makes about one pread a block. */
    uint8_t head[2][128];
    uint64_t head_off[2];
    size_t head_len[2];
    unsigned head_older;
    uint8_t *body;       /* fd: the last body read, body_cap bytes held */
    size_t body_cap;
    uint32_t max_blocks;
    char *msg;
    size_t msg_size;
} ix_build;

/* A header read: the `want` bytes at off (at most the 128 of head), or as
 * many as the stream holds there (*got); NULL when the read fails.  Valid
 * until the next header read. */
const uint8_t *ix_at(ix_build *b, uint64_t off, size_t want, size_t *got);
/* A block's whole content, or NULL (read failed, out of memory, or larger
 * than NT_DEFAULT_MAX_BLOCK_BYTES, which the parser would refuse too); valid
 * until the next body read. */
const uint8_t *ix_body(ix_build *b, const nt_index_block *blk);

/* The identity of the file on fd (size and mtime from st); false when a read fails. */
bool ix_identify(ix_build *b, int64_t mtime_ns, ix_identity *out);

/* b's new, empty index (b->ix) and its limits from given (*sample_blocks:
 * the walk's, unless NULL); NT_ERR_INVALID_ARG, NT_ERR_NOMEM. */
nt_status ix_build_start(ix_build *b, const nt_index_options *given, uint32_t *sample_blocks);
/* One build over b (a buffer or a file), scanning and then walking
 * sample_blocks event blocks (0: none); *out as nt_index_from_buffer says. */
nt_status ix_build_run(ix_build *b, const nt_index_options *given, bool estimate, nt_index **out);

/* The checksum a sidecar ends with, over its n bytes before it (the fuzz
 * harness re-seals a mutated sidecar with it, to reach the checks behind it). */
uint64_t ix_sidecar_checksum(const uint8_t *p, size_t n);

/* The longest V4/V5 object header before a block's content: tags, the type
 * header, a 64-byte type name, EndObject, the size and its padding. */
#define IX_V4_HEADER_MAX 87u

/* Framing: every block from the stream's start to its end or the damage. */
nt_status ix_scan(ix_build *b);
/* The stream header: sets the summary's format_major and *first, the offset of the first block. */
nt_status ix_stream_head(ix_build *b, uint64_t *first);
/* The one block at off framed as the scan frames it, its header's time range
 * read (the trace block's clock goes into the summary); *end_mark when off
 * holds the end-of-stream mark (blk->end is past it).  Needs format_major. */
nt_status ix_frame_at(ix_build *b, uint64_t off, nt_index_block *blk, bool *end_mark);
/* Add blk to the summary's counts, bytes and span (the scan, and a sidecar's table when loaded). */
void ix_count_block(nt_index *ix, const nt_index_block *blk);
/* Metadata block body: remember which ids are the sample event. */
void ix_note_metadata(ix_build *b, const nt_index_block *blk);
/* Walk a spread of event blocks' headers and fill the estimate. */
void ix_estimate(ix_build *b, uint32_t sample_blocks);
/* A failure message naming the offset; returns s. */
nt_status ix_fail(ix_build *b, nt_status s, uint64_t off, const char *what);

#endif
