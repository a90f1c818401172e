/* The decoder context: the parser object and what every block decoder, V4/V5
 * and V6 alike, does with it — fail with an offset, call a callback, borrow
 * the string scratch, convert the clock, hand over the trace header and a
 * sequence point.  It sits below the decoders (blocks_v4.c, blocks_v6.c),
 * the shared tables (threads.c, fields.c, stack_block.c) and the typed
 * payload decoders (clr_events.c); none of those calls up into the framing
 * machine (parser.c), which is the only unit that calls them all. */
#ifndef PS_CONTEXT_H
#define PS_CONTEXT_H

#include "common/compiler.h"
#include "common/alloc.h"
#include "common/cursor.h"
#include "parse/field_decode.h"
#include "parse/fields.h"
#include "parse/metadata.h"
#include "parse/stacks.h"
#include "parse/threads.h"

typedef enum ps_block_type {
    PS_BLOCK_UNKNOWN = 0,
    PS_BLOCK_EVENT,
    PS_BLOCK_METADATA,
    PS_BLOCK_STACK,
    PS_BLOCK_SP,
    PS_BLOCK_TRACE
} ps_block_type;

#define PS_SMALL_UNIT 256 /* units up to this size are gathered in a fixed buffer */

/* Byte offset in the stream of a cursor's position inside a unit that starts at base_off. */
#define PS_OFF(c, base, base_off) ((base_off) + (uint64_t)((c)->p - (base)))

struct nt_parser {
    cm_mem mem;
    nt_callbacks cb;
    void *user;
    nt_limits lim;

    /* sticky status */
    nt_status status;
    uint64_t err_offset;
    char msg[256];

    /* framing (parser.c) */
    int state;
    size_t need;            /* bytes the current unit needs */
    size_t have;            /* bytes of it gathered so far */
    uint64_t offset;        /* bytes consumed from the stream */
    uint64_t unit_off;      /* stream offset of the current unit's first byte */
    uint8_t small[PS_SMALL_UNIT];
    uint8_t *big;           /* gather buffer for block content, bounded by max_block_bytes */
    size_t big_cap;
    ps_block_type btype;    /* block being framed */
    uint32_t obj_version;
    uint32_t block_size;    /* BlockSize of the block being framed */
    uint64_t trailing;      /* bytes after the end-of-stream tag (ignored) */
    bool have_trace;
    bool netperf;           /* the stream began as NetPerf (refused at its Trace object) */
    bool ended;             /* end-of-stream tag seen */

    nt_trace_info info;
    /* ticks -> ns (ps_parser_ticks_to_ns), set up once the frequency is known:
     * 1e9 = ns_q f + ns_r; ns_m = floor(2^64 ns_r / f), 0 when ns_r is */
    uint64_t ns_fast_end;   /* ticks in [0, ns_fast_end) take the fast route (0: none) */
    uint64_t ns_q, ns_r, ns_m;

    /* tables */
    ps_metadata_table meta;
    ps_stack_table stacks;
    ps_thread_table threads;    /* V4/V5: capture thread ids; V6: thread indexes */
    nt_sp_thread *sp_threads;   /* scratch for the sequence-point callback */
    size_t sp_threads_cap;
    ps_field_scratch fields;    /* a metadata record's fields before they are stored */

    /* UTF-8 scratch for payload strings; reset per event */
    char *str;
    size_t str_cap;
    bool lazy_names;        /* records carry names as nt_str16 only (nt_parser_set_lazy_names) */
    uint64_t names_converted; /* record strings converted to UTF-8 (tests: none with lazy names) */

    nt_parser_stats stats;

    struct nt_field_ctx fctx; /* what events hand to nt_event_fields_begin */

    struct ps_v6 *v6;       /* V6 tables (blocks_v6.c); NULL for V4/V5 */
};

/* Record a sticky error; the message gets " at byte N" appended. */
nt_status ps_fail(nt_parser *p, nt_status s, uint64_t offset, const char *fmt, ...)
#if defined(__GNUC__)
    CC_PRINTF(4, 5)
#endif
    ;

#define PS_CALL(p, member, ...)                                                              \
    ((p)->cb.member && (p)->cb.member((p)->user, __VA_ARGS__)                                \
         ? ps_fail((p), NT_ERR_STOPPED, (p)->unit_off, "stopped by the " #member " callback") \
         : NT_OK)

/* The next byte fed is the stream's byte `off` (>= the parser's offset): the
 * blocks between were skipped by a windowed read (feed_window.c).  Only
 * between blocks after the trace header; else NT_ERR_MALFORMED (the index
 * that placed the block does not match the stream). */
nt_status ps_parser_skip_to(nt_parser *p, uint64_t off);

/* Make the UTF-8 scratch hold at least n bytes. */
bool ps_scratch_reserve(nt_parser *p, size_t n);

/* The trace header read into p->info: its pointer size is 4 or 8 (else the
 * error at off), then ps_trace_commit sets the clock and calls the trace
 * callback. */
nt_status ps_trace_check_pointer_size(nt_parser *p, uint64_t off);
nt_status ps_trace_commit(nt_parser *p);

/* A sequence point of `count` threads: ps_sp_reserve makes room in
 * p->sp_threads (the decoder then fills each with ps_sp_set_thread), and
 * ps_sp_deliver counts it, calls the callback and ends the stack interval. */
nt_status ps_sp_reserve(nt_parser *p, uint32_t count, uint64_t off);
nt_status ps_sp_deliver(nt_parser *p, int64_t timestamp, uint32_t flags, uint32_t count);

/* A gap in thread t's sequence numbers found at off (ticks: the time of the
 * event or point; INT64_MIN for none): lost events from first on, counted in
 * the stats and handed to the sequence_gap callback. */
nt_status ps_gap_report(nt_parser *p, const ps_thread_entry *t, uint32_t first, uint32_t lost, int64_t ticks,
                        uint64_t off, uint32_t found_at);

/* Entry i of the sequence point at ticks: thread t at sequence number seq
 * (read at off), with the events it lost since the previous sequence point. */
static inline nt_status ps_sp_set_thread(nt_parser *p, uint32_t i, ps_thread_entry *t, uint32_t seq, int64_t ticks,
                                         uint64_t off)
{
    uint32_t last = t->last_seq, late = ps_seq_point(t, seq);
    p->sp_threads[i] = (nt_sp_thread){ t->os_tid, seq, t->dropped + late };
    t->dropped = 0;
    return late ? ps_gap_report(p, t, last + 1, late, ticks, off, NT_GAP_AT_SEQUENCE_POINT) : NT_OK;
}

/* The start of an event or metadata block (both versions): u16 header size,
 * u16 flags; the cursor is placed after the header.  `what` names the block. */
nt_status ps_event_block_begin(nt_parser *p, cm_cursor *c, const uint8_t *content, size_t size, uint64_t off,
                               const char *what, bool *compressed);

/* Ticks to ns on the per-sample path, exactly nt_ticks_to_ns: with
 * 1e9 = q f + r, t 1e9 / f = t q + t r / f.  The second term's estimate
 * t m / 2^64 (m = floor(2^64 r / f), so low by less than one) is corrected
 * by its remainder t r - est f, which lies in [0, 2f): its low 64 bits are
 * all of it.  For the clocks whose period is whole ns (1 GHz, 10 MHz) r is
 * 0 and one multiplication is all; for the others (a 3.1 MHz QPC) three
 * more, instead of a 128-bit division per sample.  One unsigned comparison
 * sends negative ticks and results beyond int64 to the general conversion. */
static inline int64_t ps_parser_ticks_to_ns(const nt_parser *p, int64_t ticks)
{
    uint64_t t = (uint64_t)ticks;
    if (t < p->ns_fast_end) {
        uint64_t ns = t * p->ns_q;
#if defined(__SIZEOF_INT128__)
        if (p->ns_m) {
            __extension__ typedef unsigned __int128 u128;
            uint64_t f = (uint64_t)p->info.qpc_frequency;
            uint64_t est = (uint64_t)(((u128)t * p->ns_m) >> 64);
            ns += est + (t * p->ns_r - est * f >= f);
        }
#endif
        return (int64_t)ns;
    }
    return nt_ticks_to_ns(ticks, p->info.qpc_frequency);
}

#endif
