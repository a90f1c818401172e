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
    uint8_t flags;        /**< NT_INDEX_BLOCK_* (known for the event blocks that were walked) */
    uint8_t reserved[2];
    uint32_t next_sample_block; /**< walked event block: the furthest later block holding the next sample of a
                                     thread sampled in it (a sample's wall-time weight runs to its thread's
                                     next sample); 0 = none */
} nt_index_block;

/** nt_index_block.flags: an event block holding method, module or assembly events (JIT, loader,
    rundown), or one whose walk stopped at a bad header (it may hold them).  Set for every walked
    event block: for all of them when summary.estimate_exact. */
#define NT_INDEX_BLOCK_RECORDS 0x1u
/** nt_index_block.flags: a block with NT_INDEX_BLOCK_RECORDS whose every method, module and assembly
    event the index keeps (copied out by the walk, saved in the sidecar): a windowed read hands those
    to the parser in the block's place instead of reading it.  Not set when the walk stopped early in
    the block, when a V6 event of them has a label list, or past 64 MiB of kept records. */
#define NT_INDEX_BLOCK_RECORDS_KEPT 0x2u

/** Limits and options of an index build; zero fields select the defaults. */
typedef struct nt_index_options {
    uint32_t struct_size;      /**< 0, or sizeof(nt_index_options) (see "How structs grow" in nettrace.h) */
    uint32_t max_blocks;       /**< blocks the index holds (default 4,194,304: 192 MiB of entries); past it
                                    NT_ERR_LIMIT */
    uint32_t sample_blocks;    /**< event blocks whose headers are walked for the estimate (default 32;
                                    NT_INDEX_WALK_ALL: every one, which reads every event block and gives
                                    exact counts and every block's NT_INDEX_BLOCK_RECORDS) */
    const nt_allocator *alloc; /**< NULL = malloc */
} nt_index_options;

#define NT_DEFAULT_INDEX_MAX_BLOCKS (4u << 20)
#define NT_DEFAULT_INDEX_SAMPLE_BLOCKS 32u
#define NT_INDEX_WALK_ALL UINT32_MAX

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
    uint64_t kept_records;            /**< method, module and assembly events the index keeps
                                           (NT_INDEX_BLOCK_RECORDS_KEPT) */
    uint64_t kept_record_bytes;       /**< their bytes: headers and payloads, as the sidecar holds them */
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

/** The same over an open regular file, read by pread from offset 0 (the descriptor's position is
 *  not used or moved; the caller keeps and closes it).  With sample_blocks NT_INDEX_WALK_ALL the index
 *  also remembers the file's identity (size, modification time, hashes of its first MiB and last
 *  64 KiB) for nt_index_save. */
NT_API nt_status nt_index_from_fd(int fd, const nt_index_options *opt, nt_index **out, char *msg, size_t msg_size);

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

/**
 * The sidecar: an index saved beside its trace so that later reads skip the
 * scan.  nt_index_save writes ix (built by nt_index_from_fd or _from_file) to
 * w; NT_ERR_INVALID_ARG when ix has no file identity (built from a buffer),
 * NT_ERR_IO when w fails.
 *
 * nt_index_load reads a sidecar's len bytes and checks them against the
 * trace open on trace_fd before anything is believed: its magic, version
 * and checksum; the trace's size, modification time and head and tail
 * hashes as they are now (a stale sidecar: NT_ERR_STATE and a message saying
 * what changed); every block within the file, in order and contiguous, its
 * content inside it, kinds and ranges valid (else NT_ERR_MALFORMED with the
 * sidecar's byte offset); and a spread of the trace's block headers (64,
 * the first and the last among them, and the end-of-stream mark after the
 * last; every header of a trace of up to 66 blocks) framed again, each equal
 * to its entry.  Intervals and the summary's counts are recomputed from the
 * blocks, and the clock is read again from the trace's own header.  The
 * other headers are not read (one read a block was most of a window's cost
 * on a large trace): each block's kind, time range and flags, and the kept
 * records' contents, are believed as the trace's own block headers are (see
 * the top of this file), and a reader that feeds the blocks it selects to a
 * parser has them framed there (nt_parser_feed_window fails with
 * NT_ERR_MALFORMED where the table misplaces a block it reads).  The kept
 * records are checked for their framing (each inside the section, in block
 * order, in a block flagged KEPT, its offset
 * inside that block) and their payloads go through the parser's own checked
 * decoders; their names are what the sidecar says, as a block's are what
 * the trace says.  *out is NULL on failure.
 */
NT_API nt_status nt_index_save(const nt_index *ix, nt_sink_fn w, void *user);
NT_API nt_status nt_index_load(const void *data, size_t len, int trace_fd, const nt_index_options *opt,
                               nt_index **out, char *msg, size_t msg_size);

/**
 * Windowed reads.  With an index that knows every event block's flags
 * (summary.complete and estimate_exact: built with NT_INDEX_WALK_ALL, or
 * loaded from a sidecar), a read of a time window feeds the parser only:
 * the stream header and trace block; every metadata, sequence-point and
 * (V6) thread block; the event blocks whose stated range overlaps the
 * window; the stack and (V6) label-list blocks of the sequence-point
 * intervals those lie in (ids restart at every sequence point); and the
 * method, module and assembly events wherever they are, so that the
 * window's frames resolve as in a full read (JIT and loader events before
 * it, rundown after): from the index's kept records at the place of each
 * block flagged NT_INDEX_BLOCK_RECORDS_KEPT (the event callback and the
 * typed one, as the block's decoder would call them, with the stack and
 * thread ids looked up then, no label list), and by reading the other
 * blocks flagged NT_INDEX_BLOCK_RECORDS, with their intervals' label
 * lists.  Events
 * outside the window do reach the callbacks (they share blocks with those
 * inside): the caller's own time filter selects, as it does in a full read.
 * Sequence numbers are not compared across a skipped gap, so events lost in
 * skipped blocks are not counted as dropped.
 */
typedef struct nt_window_options {
    uint32_t struct_size;         /**< 0, or sizeof(nt_window_options) */
    uint32_t flags;               /**< NT_WINDOW_* (0: none) */
    int64_t from_ns;              /**< the window's start, trace-clock ns (nt_parser_time_ns, nt_time_bound_resolve) */
    int64_t to_ns;                /**< its end (exclusive); 0 = no end */
    const nt_feed_options *feed;  /**< progress over the bytes to read, deadline (checked between reads), chunk
                                       size; NULL = the defaults */
} nt_window_options;

/** nt_window_options.flags: hand over only the kept method records whose code [start, start + size)
    may hold an address of a stack in the window's sequence-point intervals (read ahead from those
    intervals' stack blocks, counted in frame_read_bytes; "may": by 256-byte lines through a hashed
    filter, so every record that holds one is handed over, and a few near one), which are every record
    that can name a frame of the window; module and assembly records all.  For a caller that resolves the window's
    frames (the trace builder): one that counts the method records outside the window leaves it off.
    Without effect past 64 MiB of those stack blocks. */
#define NT_WINDOW_FRAME_RECORDS 0x1u
/** What a windowed read touched. */
typedef struct nt_window_stats {
    uint32_t struct_size;         /**< set before the call: 0, or sizeof(nt_window_stats) */
    uint32_t intervals;           /**< sequence-point intervals holding window event blocks */
    uint64_t bytes_read;          /**< bytes read from the file (header, blocks, end mark) */
    uint64_t file_bytes;          /**< the file's size */
    uint64_t blocks_read;         /**< blocks fed, of nt_index_block_count */
    uint64_t window_event_blocks; /**< event blocks whose range overlaps the window */
    uint64_t record_event_blocks; /**< other event blocks, read for their method, module or assembly records */
    uint64_t stack_blocks;        /**< stack blocks read */
    uint64_t kept_records;        /**< method, module and assembly events handed over from the index's kept
                                       records (NT_INDEX_BLOCK_RECORDS_KEPT) instead of read from their blocks */
    uint64_t kept_record_blocks;  /**< the blocks they stand for, not read */
    uint64_t next_sample_blocks;  /**< event blocks after the window read for the next samples of its threads
                                       (before, counted in record_event_blocks) */
    uint64_t kept_records_cut;    /**< NT_WINDOW_FRAME_RECORDS: kept method records left out (their code holds
                                       no address of the window's stacks) */
    uint64_t frame_read_bytes;    /**< NT_WINDOW_FRAME_RECORDS: stack-block bytes read ahead for those addresses
                                       (read again when fed; counted in bytes_read both times) */
} nt_window_stats;

/**
 * Feed the parser p (new: nothing fed yet) the blocks of fd that the window
 * needs, by pread (fd's position is not used), then finish it.  Returns the
 * parser's status (a block that does not frame where ix says is
 * NT_ERR_MALFORMED: the index is not this file's), NT_ERR_STATE when ix does
 * not know every block's flags or the stream's end (the caller reads in
 * full), NT_ERR_IO (*os_error: errno), NT_ERR_TIMEOUT, NT_ERR_NOMEM.
 * stats may be NULL.
 */
NT_API nt_status nt_parser_feed_window(nt_parser *p, int fd, const nt_index *ix, const nt_window_options *opt,
                                       nt_window_stats *stats, int *os_error);

/** The sidecar's name for the trace at path: path + NT_INDEX_SIDECAR_SUFFIX. */
#define NT_INDEX_SIDECAR_SUFFIX ".ntidx"

/** The kind's short name ("event", "metadata", "stack", "sequence_point", ...). */
NT_API const char *nt_index_kind_name(nt_index_kind kind);

#ifdef __cplusplus
}
#endif

#endif
