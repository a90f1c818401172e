/* The parser object, shared by the framing state machine (parser.c), the
 * block decoders (blocks.c) and the payload decoders (clr_events.c). */
#ifndef NT_PARSER_INTERNAL_H
#define NT_PARSER_INTERNAL_H

#include "common/alloc.h"
#include "common/cursor.h"
#include "parse/fields.h"
#include "parse/metadata.h"
#include "parse/stacks.h"

typedef enum nt_block_type {
    NT_BLOCK_UNKNOWN = 0,
    NT_BLOCK_EVENT,
    NT_BLOCK_METADATA,
    NT_BLOCK_STACK,
    NT_BLOCK_SP,
    NT_BLOCK_TRACE
} nt_block_type;

typedef struct nt_thread_seq {
    uint64_t tid;
    uint32_t last_seq;  /* 0: nothing seen yet */
    uint32_t dropped;   /* since the last sequence point */
    bool used;
} nt_thread_seq;

/* A metadata field before its name is converted to UTF-8. */
typedef struct nt_raw_field {
    const uint8_t *name; /* UTF-16LE, not terminated */
    size_t units;
    uint32_t type, element_type, depth;
} nt_raw_field;

#define NT_SMALL_UNIT 256 /* units up to this size are gathered in a fixed buffer */

struct nt_parser {
    nt_mem mem;
    nt_callbacks cb;
    void *user;
    nt_limits lim;

    /* sticky status */
    nt_status status;
    uint64_t err_offset;
    char msg[256];

    /* framing */
    int state;
    size_t need;            /* bytes the current unit needs */
    size_t have;            /* bytes of it gathered so far */
    uint64_t offset;        /* bytes consumed from the stream */
    uint64_t unit_off;      /* stream offset of the current unit's first byte */
    uint8_t small[NT_SMALL_UNIT];
    uint8_t *big;           /* gather buffer for block content, bounded by max_block_bytes */
    size_t big_cap;
    nt_block_type btype;    /* block being framed */
    uint32_t obj_version;
    uint32_t block_size;    /* BlockSize of the block being framed */
    uint64_t trailing;      /* bytes after the end-of-stream tag (ignored) */
    bool have_trace;
    bool ended;             /* end-of-stream tag seen */

    nt_trace_info info;
    int64_t ns_per_tick;    /* 1e9 / qpc_frequency when that divides exactly, else 0 */
    int64_t tick_min, tick_max; /* ticks whose product with ns_per_tick fits in 64 bits */

    /* tables */
    nt_metadata_table meta;
    nt_stack_table stacks;
    nt_thread_seq *threads; /* open addressing on tid */
    size_t thread_cap, thread_count;
    nt_thread_seq *last_thread; /* one-entry cache */
    nt_sp_thread *sp_threads;   /* scratch for the sequence-point callback */
    size_t sp_threads_cap;

    /* UTF-8 scratch for payload strings; reset per event */
    char *str;
    size_t str_cap;
    /* field scratch for metadata parsing */
    nt_raw_field *fields;
    size_t fields_cap;

    nt_parser_stats stats;

    struct nt_field_ctx fctx; /* what events hand to nt_event_fields_begin */

    struct nt_v6 *v6;       /* V6 tables (blocks_v6.c); NULL for V4/V5 */
};

/* Record a sticky error; the message gets " at byte N" appended. */
nt_status nt_fail(nt_parser *p, nt_status s, uint64_t offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Block decoders (blocks.c).  content_off is the stream offset of content[0]. */
nt_status nt_decode_event_block(nt_parser *p, const uint8_t *content, size_t size,
                                uint64_t content_off, bool metadata_block);
nt_status nt_decode_stack_block(nt_parser *p, const uint8_t *content, size_t size,
                                uint64_t content_off);
nt_status nt_decode_sp_block(nt_parser *p, const uint8_t *content, size_t size,
                             uint64_t content_off);

/* Metadata record payload (V3-V5) -> table + callback. */
/* Stores a description whose strings are in the metadata arena (provider or
 * event_name NULL when the arena refused them: NT_ERR_LIMIT or NT_ERR_NOMEM,
 * as the arena says), classifies it and hands it to the metadata callback. */
nt_status nt_metadata_commit(nt_parser *p, nt_event_desc *d, uint64_t off);
nt_status nt_parse_metadata_record(nt_parser *p, const uint8_t *payload, size_t size,
                                   uint64_t payload_off);

/* Typed payload decoders (clr_events.c); ev->desc is non-NULL. */
nt_status nt_dispatch_typed(nt_parser *p, const nt_event *ev);

/* Make the UTF-8 scratch hold at least n bytes. */
bool nt_scratch_reserve(nt_parser *p, size_t n);

/* Ticks to ns on the per-sample path: one multiplication for the common
 * clocks (1 GHz, 10 MHz), the exact general conversion otherwise. */
static inline int64_t nt_parser_ticks_to_ns(const nt_parser *p, int64_t ticks)
{
    if (p->ns_per_tick && ticks <= p->tick_max && ticks >= p->tick_min)
        return ticks * p->ns_per_tick;
    return nt_ticks_to_ns(ticks, p->info.qpc_frequency);
}

/* Set once the trace's clock is known: the divisions happen here, not per
 * sample (they were a seventh of decoding a sample-heavy event block). */
static inline void nt_parser_set_clock(nt_parser *p, int64_t frequency)
{
    p->ns_per_tick = frequency > 0 && 1000000000 % frequency == 0 ? 1000000000 / frequency : 0;
    p->tick_max = p->ns_per_tick ? INT64_MAX / p->ns_per_tick : 0;
    p->tick_min = p->ns_per_tick ? INT64_MIN / p->ns_per_tick : 0;
}

#define NT_CALL(p, member, ...)                                                              \
    ((p)->cb.member && (p)->cb.member((p)->user, __VA_ARGS__)                                \
         ? nt_fail((p), NT_ERR_STOPPED, (p)->unit_off, "stopped by the " #member " callback") \
         : NT_OK)

/* SampleProfiler ThreadSample, on the per-event path (inlined into the block
 * decoder).  The payload is a u32 sample type; an empty payload (early
 * runtimes) carries no type and is reported as NT_SAMPLE_ERROR. */
static inline nt_status nt_decode_sample(nt_parser *p, const nt_event *ev)
{
    p->stats.samples++;
    if (!p->cb.sample)
        return NT_OK;
    nt_sample s;
    s.type = ev->payload_size >= 4 ? nt_le32(ev->payload) : NT_SAMPLE_ERROR;
    s.timestamp = ev->timestamp;
    s.time_ns = nt_parser_ticks_to_ns(p, ev->timestamp);
    s.thread_id = ev->thread_id;
    s.stack_id = ev->stack_id;
    s.stack = ev->stack;
    s.event = ev;
    return NT_CALL(p, sample, &s);
}

/* Hands a decoded event (ev->desc set, NULL when undefined) to the callbacks:
 * its stack looked up, the event callback, then the typed decoder.  Shared
 * by the V4 and V6 block decoders; inline because it runs once per event. */
static inline nt_status nt_event_deliver(nt_parser *p, nt_event *ev)
{
    if (!ev->desc)
        p->stats.unknown_metadata_refs++;
    ev->field_ctx = &p->fctx;
    nt_stack stk;
    ev->stack = NULL;
    if (ev->stack_id) {
        if (nt_stacks_find(&p->stacks, ev->stack_id, &stk))
            ev->stack = &stk;
        else
            p->stats.unknown_stack_refs++;
    }
    p->stats.events++;
    nt_status s = NT_CALL(p, event, ev);
    if (s)
        return s;
    if (ev->desc && ev->desc->kind != NT_KIND_OTHER)
        return ev->desc->kind == NT_KIND_THREAD_SAMPLE ? nt_decode_sample(p, ev) : nt_dispatch_typed(p, ev);
    return NT_OK;
}

#endif
