/* The writer object and the writer's internal calls, by unit.  Units call
 * down this list, never back up:
 *
 *   writer_typed.c     typed runtime events            -> writer.c, writer_metadata.c
 *   writer.c           new/free, events, flush, finish -> labels, threads, metadata, blocks
 *   writer_sp.c        sequence points                 -> threads, stacks, metadata, blocks
 *   writer_labels.c    V6 label lists                  -> blocks
 *   writer_stacks.c    interned stacks                 -> blocks
 *   writer_threads.c   thread table, RemoveThread      -> blocks
 *   writer_metadata.c  metadata ids, define            -> encode, blocks
 *   writer_encode.c    metadata records                -> status
 *   writer_blocks.c    framing, flushes, event blobs   -> status
 *   writer_status.c    the sticky status               (nothing of the writer)
 *
 * Every unit encodes bytes with common/byte_buf.h (cm_buf). */
#ifndef WR_WRITER_INTERNAL_H
#define WR_WRITER_INTERNAL_H

#include "common/compiler.h"
#include "common/alloc.h"
#include "common/byte_buf.h"
#include "common/format.h"
#include "common/hash.h"
#include "common/map.h"
#include "nettrace_writer.h"

#define DEFAULT_BLOCK_BYTES (100u * 1024u)
/* A block's content must fit V6's 24-bit size, and the parser's default block limit. */
#define MAX_BLOCK_CONTENT CM_V6_BLOCK_SIZE_MASK

/* Previous compressed header in the current event block. */
typedef struct whdr {
    uint32_t metadata_id, seq, stack_id, processor, label_list_id, payload_size;
    uint64_t thread, capture;
    int64_t timestamp;
    uint8_t act[16], rel[16];
} whdr;

/* One buffered block of a kind: content (after any fixed inner header) and
 * counters the inner header needs. */
typedef struct wblock {
    cm_buf body;
    uint32_t count;
    uint32_t first_id;   /* stacks and label lists */
    int64_t min_ts, max_ts;
    whdr prev;
} wblock;

/* A thread the writer has seen: its sequence numbers and (V6) its index. */
typedef struct wthread {
    uint64_t tid;
    uint64_t index;      /* V6 index, 0 = none in the current thread table */
    uint32_t seq;        /* last sequence number written as capture thread */
    bool capture;        /* has written events (listed in sequence points) */
} wthread;

/* Interned stack of the current interval. */
typedef struct wstack {
    uint64_t hash;
    uint32_t count;
    uint32_t next;       /* index + 1 of the next stack with the same hash, 0 = none */
    size_t start;        /* into ips */
} wstack;

/* Metadata the typed calls defined: (provider, event id, version) -> id. */
typedef struct wtyped {
    const char *provider; /* one of the NT_PROVIDER_* literals */
    uint32_t event_id, version, metadata_id;
} wtyped;

struct nt_writer {
    cm_mem mem;
    nt_writer_options opt;
    nt_sink_fn write;
    void *user;

    nt_status status;
    char msg[200];
    int64_t ts_lo, ts_hi; /* event timestamps readers can place (wr_clock_range) */
    uint64_t offset;
    bool header_done, finished;

    wblock meta, stacks, events, threads, labels;
    cm_buf scratch;        /* one encoded blob or label list */
    cm_buf payload;        /* one typed event's payload */

    /* The tables are keyed by values a converted trace controls (thread ids,
     * IPs): the common keyed map, and a stack hash seeded per writer. */
    cm_map ids;          /* metadata ids defined (value unused) */
    uint32_t next_id;

    /* stacks of the interval: stk[id - 1], found by content hash */
    cm_hash_key stack_key;
    cm_map stack_by_hash; /* hash -> index + 1 in stk of the last stack with it */
    wstack *stk;
    size_t stk_cap, stk_count;
    uint64_t *ips;
    size_t ips_len, ips_cap;
    uint32_t next_stack_id;
    uint32_t next_label_id;
    uint32_t act_label;  /* V6: label list made for act_ids in this interval (0 = none) */
    uint8_t act_ids[32];

    /* threads in the order first seen (the order sequence points list them) */
    cm_map thread_by_tid; /* tid -> index + 1 in thr */
    wthread *thr;
    size_t thr_cap, thr_count;
    uint64_t next_thread_index;

    wtyped *typed;
    size_t typed_count, typed_cap;
};

/* ---- writer_clock.c ---- */

/* A SYSTEMTIME readers turn into a DateTime: 1601-01-01 to 9999-12-31, every field in range. */
bool wr_clock_valid(const nt_systemtime *t);
/* A zero sync_time_utc becomes 1970-01-01T00:00:00Z. */
void wr_clock_defaults(nt_writer_options *o);
/* The event timestamps readers can place on their calendar from this header: [*lo, *hi]. */
void wr_clock_range(const nt_writer_options *o, int64_t *lo, int64_t *hi);

/* ---- writer_status.c ---- */

/* Record a sticky error and return it. */
nt_status wr_fail(nt_writer *w, nt_status s, const char *fmt, ...)
#if defined(__GNUC__)
    CC_PRINTF(3, 4)
#endif
    ;
/* The entry check of every public call: NULL, a sticky error, or finished. */
nt_status wr_usable(nt_writer *w);

/* ---- writer_blocks.c ---- */

/* Hand bytes to the sink (counted in w->offset). */
nt_status wr_emit(nt_writer *w, const void *p, size_t n);
/* Write the stream header once, before the first block. */
nt_status wr_ensure_header(nt_writer *w);
/* Frame one block: the V4 object header named v4_name or the V6 kind, then
 * `head` (the block's inner header) and `body`. */
nt_status wr_emit_block(nt_writer *w, const char *v4_name, uint32_t v6_kind, const void *head, size_t head_len,
                         const cm_buf *body);
void wr_block_reset(wblock *b);
nt_status wr_flush_stacks(nt_writer *w);
nt_status wr_flush_threads(nt_writer *w);
nt_status wr_flush_labels(nt_writer *w);
/* Every pending block, the event block last. */
nt_status wr_flush_all(nt_writer *w);
/* Encode one event blob against blk->prev into out (and update prev). */
void wr_encode_blob(nt_writer *w, wblock *blk, cm_buf *out, const whdr *h, bool sorted, const void *payload);
/* Widen the block's timestamp range to ts. */
void wr_note_ts(wblock *b, int64_t ts);
/* Append one encoded metadata record to the metadata block. */
nt_status wr_append_metadata(nt_writer *w, const cm_buf *rec);

/* ---- writer_encode.c ---- */

/* Encode a metadata record (V4/V5 payload) or row (V6 row, without RowSize) into b. */
nt_status wr_encode_metadata(nt_writer *w, cm_buf *b, const nt_event_desc *d, uint32_t id);

/* ---- writer_metadata.c ---- */

bool wr_meta_defined(const nt_writer *w, uint32_t id);
void wr_meta_forget(nt_writer *w);

/* ---- writer_threads.c ---- */

/* The thread's entry or NULL; and the same, added on first sight (NULL with a
 * sticky error).  Entries move when one is added. */
wthread *wr_thread_find(nt_writer *w, uint64_t tid);
wthread *wr_thread_get(nt_writer *w, uint64_t tid);
/* V6: the thread's index, introducing it in a Thread block row on first use. */
nt_status wr_thread_index(nt_writer *w, wthread *t);

/* ---- writer_stacks.c ---- */

void wr_stacks_forget(nt_writer *w);

#endif
