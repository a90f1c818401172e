/* The block index's object and the two passes that fill it (index_scan.c:
 * the framing of both format versions, block headers only; index_estimate.c:
 * metadata names and a walk of a few event blocks' headers). */
#ifndef NT_INDEX_INTERNAL_H
#define NT_INDEX_INTERNAL_H

#include "common/alloc.h"
#include "nettrace_index.h"

#include <stdint.h>

/* Sample metadata ids remembered for the estimate: a stream defines the
 * sample event once (V6 may define it again after a metadata flush). */
#define IX_MAX_SAMPLE_IDS 8

struct nt_index {
    nt_mem mem;
    nt_index_block *blocks;
    size_t count, cap;
    nt_index_summary sum;
    uint32_t sample_ids[IX_MAX_SAMPLE_IDS];
    uint32_t sample_id_count;
    uint64_t spanned; /* event blocks whose stated range is in the summary's span */
};

/* What a build reads and reports through. */
typedef struct ix_build {
    nt_index *ix;
    const uint8_t *data;
    size_t len;
    uint32_t max_blocks;
    char *msg;
    size_t msg_size;
} ix_build;

/* Framing: every block from the stream's start to its end or the damage. */
nt_status ix_scan(ix_build *b);
/* Metadata block body: remember which ids are the sample event. */
void ix_note_metadata(ix_build *b, const nt_index_block *blk);
/* Walk a spread of event blocks' headers and fill the estimate. */
void ix_estimate(ix_build *b, uint32_t sample_blocks);
/* A failure message naming the offset; returns s. */
nt_status ix_fail(ix_build *b, nt_status s, uint64_t off, const char *what);

#endif
