/* nt_parser_feed_window: a time window of a trace file read through its
 * index, feeding the parser only the blocks the window needs (the rule is
 * in nettrace_index.h) and telling it, at every gap, where the next block
 * starts (ps_parser_skip_to), so its offsets, padding and messages stay the
 * file's own.  The parser frames every block fed: an index that does not
 * match the file fails there and reads nothing out of bounds. */
#include "common/abi.h"
#include "common/line_filter.h"
#include "common/clock.h"
#include "parse/context.h"
#include "parse/deliver.h"
#include "parse/index_internal.h"
#include "parse/metadata.h"
#include "parse/threads.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#define WINDOW_CHUNK (1u << 20)

/* Trace-clock ns to ticks: the smallest tick whose ns can be >= ns, and the
 * largest whose ns can be < ns; a tick of margin each way (the parser's
 * conversion is a floor). */
static int64_t ticks_floor(int64_t ns, int64_t freq)
{
    __extension__ typedef __int128 i128;
    i128 t = (i128)ns * freq / 1000000000 - 1;
    return t < INT64_MIN ? INT64_MIN : t > INT64_MAX ? INT64_MAX : (int64_t)t;
}
static int64_t ticks_ceil(int64_t ns, int64_t freq)
{
    __extension__ typedef __int128 i128;
    i128 t = ((i128)ns + 1) * freq / 1000000000 + 2;
    return t < INT64_MIN ? INT64_MIN : t > INT64_MAX ? INT64_MAX : (int64_t)t;
}

typedef struct window_read {
    nt_parser *p;
    int fd;
    uint8_t *buf;
    size_t chunk;
    const nt_feed_options *feed;
    uint64_t run_start, run_end; /* the contiguous bytes gathered so far */
    uint64_t total;              /* bytes the read will take, for progress */
    nt_window_stats st;
    int err;
    /* NT_WINDOW_FRAME_RECORDS: the lines of the window's stacks' addresses (frames_known once read). */
    bool frames_known;
    uint64_t *frames;
} window_read;

/* Feed the bytes [start, end) to parser q, which is at start; bytes_read counts them. */
static nt_status feed_span(window_read *w, nt_parser *q, uint64_t start, uint64_t end)
{
    nt_status s = NT_OK;
    for (uint64_t off = start; s == NT_OK && off < end;) {
        size_t want = end - off < w->chunk ? (size_t)(end - off) : w->chunk;
        ssize_t n = pread(w->fd, w->buf, want, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            w->err = n < 0 ? errno : 0;
            return NT_ERR_IO; /* a file shorter than its index: read in full, the parser says where */
        }
        off += (uint64_t)n;
        w->st.bytes_read += (uint64_t)n;
        s = nt_parser_feed(q, w->buf, (size_t)n);
        if (q == w->p && w->feed && w->feed->progress)
            w->feed->progress(w->feed->progress_user, w->st.bytes_read, w->total);
    }
    return s;
}

/* Feed the run [run_start, run_end) at its place in the stream. */
static nt_status flush(window_read *w)
{
    if (w->run_end == w->run_start)
        return NT_OK;
    if (w->feed && w->feed->deadline_ns && w->feed->deadline_ns != INT64_MAX && cm_clock_ns() > w->feed->deadline_ns)
        return NT_ERR_TIMEOUT;
    nt_status s = ps_parser_skip_to(w->p, w->run_start);
    if (s == NT_OK)
        s = feed_span(w, w->p, w->run_start, w->run_end);
    w->run_start = w->run_end;
    return s;
}

/* NT_WINDOW_FRAME_RECORDS: a kept method record is handed over when its
 * code may hold an address of the window's stacks (common/line_filter.h:
 * every record that holds one, and a few near one); module and assembly
 * records always. */
#define FRAME_HASH_BITS 20 /* 128 KiB of bits: few collisions for a window's lines */
#define FRAME_BYTES (((size_t)1 << FRAME_HASH_BITS) / 8)

static bool needed(const window_read *w, const nt_event *ev)
{
    unsigned kind = ps_desc_what(ev->desc);
    uint64_t start;
    uint32_t size;
    if (kind < NT_KIND_METHOD_LOAD_VERBOSE || kind > NT_KIND_METHOD_DC_END_VERBOSE || !ps_method_extent(ev, &start, &size))
        return true; /* not a method record, or one the parser's decoder is to refuse */
    return cm_line_filter_maybe(w->frames, FRAME_HASH_BITS, start, size);
}

static int collect_stack(void *user, const nt_stack *st)
{
    window_read *w = user;
    for (uint32_t i = 0; i < st->count; i++) {
        uint64_t ip = st->ips[i];
        cm_line_filter_add(w->frames, FRAME_HASH_BITS, ip);
        /* A caller's frame is its return address, and the call is the byte before
         * (ip - 1): on another line only when ip starts one. */
        if ((ip & ((1u << CM_LINE_SHIFT) - 1)) == 0)
            cm_line_filter_add(w->frames, FRAME_HASH_BITS, ip - 1);
    }
    return 0;
}

/* The lines of every stack address in the stack blocks of the window's
 * intervals (want: the blocks read; a superset of the window's frames),
 * read ahead by a parser of their own, one an interval (stack ids restart
 * at each): the stream header and trace block, then the interval's stack
 * blocks, each address's line into the filter.  Skipped, and every record
 * handed over, past FRAME_READ_MAX bytes of them or when anything fails: the
 * filter only ever saves work. */
#define FRAME_READ_MAX ((uint64_t)64 << 20)
static void window_frames(window_read *w, const nt_index *ix, const bool *want)
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < ix->count; i++)
        bytes += want[i] && ix->blocks[i].kind == NT_INDEX_STACK ? ix->blocks[i].end - ix->blocks[i].offset : 0;
    if (bytes > FRAME_READ_MAX || ix->blocks[0].kind != NT_INDEX_TRACE || !(w->frames = cm_mem_alloc(&w->p->mem, FRAME_BYTES)))
        return;
    memset(w->frames, 0, FRAME_BYTES);
    nt_callbacks cb = { .struct_size = sizeof cb, .stack = collect_stack };
    bool ok = true;
    for (size_t first = 0; ok && first < ix->count;) {
        size_t last = first + 1;
        while (last < ix->count && ix->blocks[last].interval == ix->blocks[first].interval)
            last++;
        nt_parser *q = NULL;
        for (size_t i = first; ok && i < last; i++) {
            const nt_index_block *b = &ix->blocks[i];
            if (!want[i] || b->kind != NT_INDEX_STACK)
                continue;
            if (!q) {
                q = nt_parser_new(&cb, w, &w->p->lim, &w->p->mem.a);
                ok = q && feed_span(w, q, 0, ix->blocks[0].end) == NT_OK;
                w->st.frame_read_bytes += ix->blocks[0].end;
            }
            ok = ok && ps_parser_skip_to(q, b->offset) == NT_OK && feed_span(w, q, b->offset, b->end) == NT_OK;
            w->st.frame_read_bytes += b->end - b->offset;
        }
        nt_parser_free(q);
        first = last;
    }
    w->frames_known = ok;
    w->err = 0; /* a failed read ahead only leaves every record to be handed over */
}

/* The kept records of `block` (index_records.c), handed to the parser in
 * the block's place as its decoder hands the block's events: the thread
 * ids, metadata and stack looked up in the parser's tables as they are at
 * that place, then the event callback and the typed one.  *at walks the
 * records in stream order; those of blocks that were read are passed over. */
static nt_status deliver_kept(window_read *w, const nt_index *ix, size_t block, size_t *at)
{
    nt_parser *p = w->p;
    nt_status s = flush(w); /* everything before the block first */
    ix_record r;
    for (size_t next = *at; s == NT_OK && ix_records_next(ix, &next, &r) && r.block <= block; *at = next) {
        if (r.block < block)
            continue;
        nt_event *ev = &r.ev;
        ev->desc = ps_metadata_find(&p->meta, ev->metadata_id);
        if (w->frames_known && !needed(w, ev)) {
            w->st.kept_records_cut++;
            continue;
        }
        ev->field_ctx = &p->fctx;
        p->fctx.has_trace_id = p->fctx.has_span_id = false; /* a kept record has no label list */
        if (p->v6) {
            ps_thread_entry *t = ps_threads_find(&p->threads, r.thread);
            ps_thread_entry *c = ps_threads_find(&p->threads, r.capture);
            if (!t || !c)
                return ps_fail(p, NT_ERR_MALFORMED, ev->offset,
                               "the index's kept record of this event names a thread index the stream has not "
                               "defined here (the sidecar is not this trace's)");
            ev->thread_id = t->os_tid;
            ev->capture_thread_id = c->os_tid;
        } else {
            ev->thread_id = r.thread;
            ev->capture_thread_id = r.capture;
        }
        unsigned what = ps_desc_what(ev->desc) | ps_event_find_stack(p, ev);
        nt_sample sample = { .event = ev };
        s = ps_event_deliver(p, ev, what, &sample);
        w->st.kept_records++;
    }
    w->st.kept_record_blocks++;
    return s;
}

/* Add [off, end) to the read: joined to the run when it follows it. */
static nt_status take(window_read *w, uint64_t off, uint64_t end, bool count)
{
    nt_status s = NT_OK;
    if (off != w->run_end) {
        s = flush(w);
        w->run_start = off;
    }
    w->run_end = end;
    w->st.blocks_read += count;
    return s;
}

/* A block read for its method, module or assembly events: those the index did not keep. */
static bool read_for_records(const nt_index_block *b)
{
    return (b->flags & (NT_INDEX_BLOCK_RECORDS | NT_INDEX_BLOCK_RECORDS_KEPT)) == NT_INDEX_BLOCK_RECORDS;
}

/* Which blocks of interval [first, last) the window needs; kinds the rule
 * names.  want[i] is set for each; returns whether the interval holds
 * window event blocks. */
static bool choose(const nt_index *ix, size_t first, size_t last, int64_t lo, int64_t hi, bool *want,
                   nt_window_stats *st)
{
    bool window = false, records = false;
    for (size_t i = first; i < last; i++) {
        const nt_index_block *b = &ix->blocks[i];
        if (b->kind != NT_INDEX_EVENT)
            continue;
        bool in = b->max_ticks >= lo && b->min_ticks <= hi;
        window |= in;
        records |= !in && read_for_records(b);
    }
    for (size_t i = first; i < last; i++) {
        const nt_index_block *b = &ix->blocks[i];
        bool in = b->max_ticks >= lo && b->min_ticks <= hi;
        switch (b->kind) {
        case NT_INDEX_EVENT:
            want[i - first] = in || read_for_records(b);
            st->window_event_blocks += in;
            st->record_event_blocks += !in && read_for_records(b);
            break;
        case NT_INDEX_STACK:
            want[i - first] = window; /* only the window's events are looked up by their stacks */
            st->stack_blocks += window;
            break;
        case NT_INDEX_LABEL_LIST: want[i - first] = window || records; break;
        case NT_INDEX_UNKNOWN: want[i - first] = false; break;
        default: want[i - first] = true; break; /* trace, metadata, sequence point, thread tables */
        }
    }
    return window;
}

nt_status nt_parser_feed_window(nt_parser *p, int fd, const nt_index *ix, const nt_window_options *opt,
                                nt_window_stats *stats, int *os_error)
{
    if (os_error)
        *os_error = 0;
    nt_window_options o;
    if (!p || fd < 0 || !ix || !ABI_IN(nt_window_options, &o, opt) || p->offset != 0)
        return NT_ERR_INVALID_ARG;
    const nt_index_summary *sum = &ix->sum;
    if (!sum->complete || !sum->estimate_exact || sum->qpc_frequency <= 0 || ix->count == 0)
        return NT_ERR_STATE;
    window_read w = { .p = p, .fd = fd, .feed = o.feed, .st = { .file_bytes = ix->sum.stream_bytes } };
    w.chunk = o.feed && o.feed->chunk_bytes ? o.feed->chunk_bytes : WINDOW_CHUNK;
    int64_t lo = ticks_floor(o.from_ns, sum->qpc_frequency);
    int64_t hi = o.to_ns ? ticks_ceil(o.to_ns, sum->qpc_frequency) : INT64_MAX;

    cm_mem m;
    cm_mem_init(&m, &p->mem.a);
    bool *want = cm_mem_alloc(&m, ix->count * sizeof *want);
    w.buf = cm_mem_alloc(&m, w.chunk);
    nt_status s = want && w.buf ? NT_OK : NT_ERR_NOMEM;
    /* The choice first (its total drives the progress), then the reads. */
    for (size_t first = 0; s == NT_OK && first < ix->count;) {
        size_t last = first + 1;
        while (last < ix->count && ix->blocks[last].interval == ix->blocks[first].interval)
            last++;
        w.st.intervals += choose(ix, first, last, lo, hi, want + first, &w.st);
        first = last;
    }
    /* The blocks holding the next samples of the threads sampled in the
     * window (their wall-time weights), and every event block before them:
     * the next sample of each is in one of these. */
    size_t reach = 0;
    for (size_t i = 0; s == NT_OK && i < ix->count; i++)
        if (want[i] && ix->blocks[i].kind == NT_INDEX_EVENT && ix->blocks[i].max_ticks >= lo &&
            ix->blocks[i].min_ticks <= hi && ix->blocks[i].next_sample_block > reach)
            reach = ix->blocks[i].next_sample_block;
    for (size_t i = 0; s == NT_OK && i <= reach && i < ix->count; i++)
        if (ix->blocks[i].kind == NT_INDEX_EVENT && ix->blocks[i].min_ticks > hi && !want[i]) {
            want[i] = true;
            w.st.next_sample_blocks++;
        }
    /* A window that no event block overlaps still reads one, as a full read
     * would find events: the parser reports a stream without any as such. */
    bool any = false;
    for (size_t i = 0; s == NT_OK && i < ix->count && !any; i++)
        any = want[i] && ix->blocks[i].kind == NT_INDEX_EVENT;
    for (size_t i = 0; s == NT_OK && i < ix->count && !any; i++)
        if (ix->blocks[i].kind == NT_INDEX_EVENT)
            any = want[i] = true;
    if (s == NT_OK && (o.flags & NT_WINDOW_FRAME_RECORDS))
        window_frames(&w, ix, want);
    w.total = ix->blocks[0].offset + (sum->stream_bytes - ix->blocks[ix->count - 1].end);
    for (size_t i = 0; s == NT_OK && i < ix->count; i++)
        w.total += want[i] ? ix->blocks[i].end - ix->blocks[i].offset : 0;
    w.st.blocks_read = 0;
    if (s == NT_OK)
        s = take(&w, 0, ix->blocks[0].offset, false); /* the stream header */
    size_t kept_at = 0;
    for (size_t i = 0; s == NT_OK && i < ix->count; i++)
        if (want[i])
            s = take(&w, ix->blocks[i].offset, ix->blocks[i].end, true);
        else if (ix->blocks[i].flags & NT_INDEX_BLOCK_RECORDS_KEPT)
            s = deliver_kept(&w, ix, i, &kept_at);
    if (s == NT_OK)
        s = take(&w, ix->blocks[ix->count - 1].end, sum->stream_bytes, false); /* the end mark */
    if (s == NT_OK)
        s = flush(&w);
    if (s == NT_OK)
        s = nt_parser_finish(p);
    cm_mem_free(&m, want, ix->count * sizeof *want);
    cm_mem_free(&m, w.buf, w.chunk);
    if (w.frames)
        cm_mem_free(&p->mem, w.frames, FRAME_BYTES);
    if (os_error)
        *os_error = w.err;
    if (stats)
        ABI_OUT(nt_window_stats, stats, &w.st);
    return s;
}
