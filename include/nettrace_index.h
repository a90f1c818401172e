/*
 * libnettrace — a block index of a NetTrace stream.
 *
 * The index is read from block headers only: each block's kind, where it is,
 * its size and, for event blocks, the smallest and largest timestamp its
 * header states; for sequence points their timestamp.  Block bodies are not
 * read, except metadata blocks (small: they say which metadata id is the
 * sample event) and a few event blocks spread over the file, whose event
 * headers are walked to estimate how many events and samples the whole file
 * holds before anything is decoded (for progress bars and for choosing how to
 * read it).  Over a memory map it touches a page per block, so it costs a
 * small fraction of one read of the file.
 *
 * An index does not decode events and does not check what the parser checks
 * inside blocks: a block the index lists can still fail to parse.  Its timestamps
 * are what the block headers claim; a hostile file can lie in them, and a
 * caller that skips blocks by time range gets the events those claims select.
 */
#ifndef NETTRACE_INDEX_H
#define NETTRACE_INDEX_H

#include "nettrace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What a block is (both format versions). */
typedef enum nt_index_kind {
    NT_INDEX_TRACE = 0,          /**< the trace header object or block */
    NT_INDEX_EVENT = 1,          /**< events */
    NT_INDEX_METADATA = 2,       /**< metadata records */
    NT_INDEX_STACK = 3,          /**< interned stacks */
    NT_INDEX_SEQUENCE_POINT = 4, /**< a sequence point: stack ids (and V6 label lists) restart after it */
    NT_INDEX_THREAD = 5,         /**< V6 thread table rows */
    NT_INDEX_REMOVE_THREAD = 6,  /**< V6 thread removals */
    NT_INDEX_LABEL_LIST = 7,     /**< V6 label lists */
    NT_INDEX_UNKNOWN = 8,        /**< a block the parser skips */
    NT_INDEX_KIND_COUNT = 9
} nt_index_kind;

/** One block. */
typedef struct nt_index_block {
    uint64_t offset;      /**< stream offset of the block's first byte (V4/V5: its BeginPrivateObject tag;
                               V6: its 4-byte block header) */
    uint64_t end;         /**< offset just past it (V4/V5: past its EndObject) */
    uint64_t body_offset; /**< offset of its content (after the size and the padding) */
    uint32_t body_size;   /**< content bytes */
    uint32_t interval;    /**< sequence points before this block: stack ids of blocks with the same interval agree */
    int64_t min_ticks;    /**< event block: the header's smallest timestamp (INT64_MIN, and max_ticks INT64_MAX,
                               when the header's range is inverted: then the block may hold any time);
                               sequence point: its timestamp; else 0 */
    int64_t max_ticks;    /**< event block: the header's largest timestamp; sequence point: its timestamp; else 0 */
    uint8_t kind;         /**< nt_index_kind */
    uint8_t reserved[7];
} nt_index_block;

/** Limits and options of an index build; zero fields select the defaults. */
typedef struct nt_index_options {
    uint32_t struct_size;      /**< 0, or sizeof(nt_index_options) (see "How structs grow" in nettrace.h) */
    uint32_t max_blocks;       /**< blocks the index holds (default 4,194,304: 192 MiB of entries); past it
                                    NT_ERR_LIMIT */
    uint32_t sample_blocks;    /**< event blocks whose headers are walked for the estimate (default 32) */
    const nt_allocator *alloc; /**< NULL = malloc */
} nt_index_options;

#define NT_DEFAULT_INDEX_MAX_BLOCKS (4u << 20)
#define NT_DEFAULT_INDEX_SAMPLE_BLOCKS 32u

/** What the index says of the whole stream. */
typedef struct nt_index_summary {
    uint32_t struct_size;             /**< set before the call: 0, or sizeof(nt_index_summary) */
    uint32_t format_major;            /**< 4 (V4/V5) or 6 */
    uint64_t blocks[NT_INDEX_KIND_COUNT]; /**< blocks by kind */
    uint64_t bytes[NT_INDEX_KIND_COUNT];  /**< bytes by kind, framing included */
    uint64_t stream_bytes;            /**< bytes the index covered (the whole stream when complete) */
    uint64_t bytes_read;              /**< bytes the build read of them (headers, metadata blocks, walked
                                           event blocks); a buffer's bytes are counted as if read */
    bool complete;                    /**< the end-of-stream mark was found and nothing followed it */
    int64_t qpc_frequency;            /**< ticks per second, from the trace header (0 if none was read) */
    int64_t sync_qpc;                 /**< the trace header's clock origin */
    int64_t min_ticks;                /**< smallest event-block min_ticks, blocks of unknown range aside
                                           (0 and max_ticks 0 when there is none) */
    int64_t max_ticks;                /**< largest event-block max_ticks */
    uint64_t sampled_event_blocks;    /**< event blocks whose headers were walked */
    uint64_t sampled_events;          /**< events counted in them */
    uint64_t sampled_samples;         /**< thread samples among them */
    uint64_t events_estimate;         /**< events in the stream: exact when every event block was walked,
                                           else scaled by event-block bytes */
    uint64_t samples_estimate;        /**< thread samples in the stream, estimated the same way */
    bool estimate_exact;              /**< every event block was walked */
} nt_index_summary;

typedef struct nt_index nt_index;

/**
 * Build the index of the len bytes at data.  On success *out is the index.
 * On a damaged or cut stream the status says what was wrong (NT_ERR_MALFORMED,
 * NT_ERR_TRUNCATED, NT_ERR_LIMIT, ...), msg holds a message naming the byte
 * offset, and *out still holds the blocks before the damage (summary.complete
 * false); *out is NULL only for NT_ERR_NOMEM, NT_ERR_INVALID_ARG and a stream
 * that is not NetTrace at all.  The index does not keep data.
 */
NT_API nt_status nt_index_from_buffer(const void *data, size_t len, const nt_index_options *opt, nt_index **out,
                                      char *msg, size_t msg_size);

/** The same over a file: mapped read-only (or read whole when it cannot be mapped). */
NT_API nt_status nt_index_from_file(const char *path, const nt_index_options *opt, nt_index **out, char *msg,
                                    size_t msg_size);

/** Free an index; NULL is accepted. */
NT_API void nt_index_free(nt_index *ix);

/** Blocks in stream order; NULL ix gives 0. */
NT_API size_t nt_index_block_count(const nt_index *ix);
/** Block i (< nt_index_block_count), or NULL. */
NT_API const nt_index_block *nt_index_block_at(const nt_index *ix, size_t i);

/** The summary (zero *out or set its struct_size first); NULL ix fills zeros. */
NT_API void nt_index_summarize(const nt_index *ix, nt_index_summary *out);

/**
 * The event blocks whose stated time range overlaps [from_ticks, to_ticks]
 * (both inclusive, trace clock): calls fn(user, block index) for each in
 * stream order and returns how many there were.  fn may be NULL to count.
 */
NT_API size_t nt_index_event_blocks_in(const nt_index *ix, int64_t from_ticks, int64_t to_ticks,
                                       void (*fn)(void *user, size_t block), void *user);

/** The kind's short name ("event", "metadata", "stack", "sequence_point", ...). */
NT_API const char *nt_index_kind_name(nt_index_kind kind);

#ifdef __cplusplus
}
#endif

#endif
