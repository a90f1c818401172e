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

struct nt_index {
    cm_mem mem;
    nt_index_block *blocks;
    size_t count, cap;
    nt_index_summary sum;
    uint32_t sample_ids[IX_MAX_SAMPLE_IDS];
    uint32_t sample_id_count;
    uint64_t spanned; /* event blocks whose stated range is in the summary's span */
};

/* What a build reads and reports through.  The stream is either a buffer
 * (data) or a file read by pread (fd >= 0), so that only what the scan asks
 * for is read: a few dozen bytes a block, and the bodies of metadata blocks
 * and of the event blocks the estimate walks (bytes_read counts it all). */
typedef struct ix_build {
    nt_index *ix;
    const uint8_t *data; /* NULL when reading fd */
    int fd;
    uint64_t len;
    uint8_t head[128];   /* fd: the last header read */
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

/* Framing: every block from the stream's start to its end or the damage. */
nt_status ix_scan(ix_build *b);
/* Metadata block body: remember which ids are the sample event. */
void ix_note_metadata(ix_build *b, const nt_index_block *blk);
/* Walk a spread of event blocks' headers and fill the estimate. */
void ix_estimate(ix_build *b, uint32_t sample_blocks);
/* A failure message naming the offset; returns s. */
nt_status ix_fail(ix_build *b, nt_status s, uint64_t off, const char *what);

#endif
