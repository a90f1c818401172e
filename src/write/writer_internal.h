/* The writer object, shared by the block writer (writer.c), the metadata and
 * payload encoders (writer_encode.c) and the typed events (writer_typed.c). */
#ifndef NT_WRITER_INTERNAL_H
#define NT_WRITER_INTERNAL_H

#include "common/alloc.h"
#include "nettrace_writer.h"

/* A growable byte buffer; a failed append sets `failed` and drops the bytes,
 * so encoders can append freely and check once. */
typedef struct wbuf {
    nt_mem *mem;
    uint8_t *d;
    size_t n, cap;
    bool failed;
} wbuf;

void wb_bytes(wbuf *b, const void *p, size_t n);
void wb_u8(wbuf *b, uint8_t v);
void wb_u16(wbuf *b, uint16_t v);
void wb_u32(wbuf *b, uint32_t v);
void wb_u64(wbuf *b, uint64_t v);
void wb_varu(wbuf *b, uint64_t v);
/* UTF-8 -> UTF-16LE with a 2-byte terminator (invalid bytes become U+FFFD). */
void wb_utf16z(wbuf *b, const char *s);
/* V6 string: varuint32 byte length + UTF-8. */
void wb_str8(wbuf *b, const char *s);
void wb_put16(wbuf *b, size_t at, uint16_t v);
void wb_put32(wbuf *b, size_t at, uint32_t v);
void wb_free(wbuf *b);

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
    wbuf body;
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
    bool used;
} wthread;

/* Interned stack of the current interval. */
typedef struct wstack {
    uint64_t hash;
    uint32_t id;
    uint32_t count;
    size_t start;        /* into ips */
} wstack;

/* Metadata the typed calls defined: (provider, event id, version) -> id. */
typedef struct wtyped {
    const char *provider; /* one of the NT_PROVIDER_* literals */
    uint32_t event_id, version, metadata_id;
} wtyped;

struct nt_writer {
    nt_mem mem;
    nt_writer_options opt;
    nt_write_fn write;
    void *user;

    nt_status status;
    char msg[200];
    uint64_t offset;
    bool header_done, finished;

    wblock meta, stacks, events, threads, labels;
    wbuf scratch;        /* one encoded blob or label list */
    wbuf payload;        /* one typed event's payload */

    /* metadata ids defined (open addressing, 0 = empty) */
    uint32_t *ids;
    size_t ids_cap, ids_count;
    uint32_t next_id;

    /* stacks of the interval */
    wstack *stk;
    size_t stk_cap, stk_count;     /* hash table of interned stacks */
    uint64_t *ips;
    size_t ips_len, ips_cap;
    uint32_t next_stack_id;
    uint32_t next_label_id;
    uint32_t act_label;  /* V6: label list made for act_ids in this interval (0 = none) */
    uint8_t act_ids[32];

    /* threads (open addressing on tid) */
    wthread *thr;
    size_t thr_cap, thr_count;
    uint64_t next_thread_index;

    wtyped *typed;
    size_t typed_count, typed_cap;
};

/* Record a sticky error and return it. */
nt_status nt_wfail(nt_writer *w, nt_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Encode a metadata record (V4/V5 payload) or row (V6 row, without RowSize) into b. */
nt_status nt_wencode_metadata(nt_writer *w, wbuf *b, const nt_event_desc *d, uint32_t id);

#endif
