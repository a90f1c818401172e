/* Windows of a live stream (nt_trace_window).
 *
 * The continuous window is a builder fed the window's samples.  The method,
 * module and assembly records of the whole stream are kept once, in the
 * record store (record_store.c); at the end of a window the builder's
 * sampled addresses ask the store for the records that cover them, which
 * reach the builder in stream order after its samples, as a file's rundown
 * comes after its samples.  Records that cover no sampled address cannot
 * name a frame, so a window resolves exactly as the file trace of its
 * samples and every record would (build.c, records.c, resolve.c): one
 * resolver for the file and the live view, at a cost that follows the
 * window's own addresses.  A profile window (nt_profile_window_new) does the
 * same with a profile builder, so each window is also the file profile of
 * its events.
 *
 * Request windows and the flight recorder cut their traces out of the sample
 * log (sample_log.c), kept from the oldest open request window's start or
 * the recorder's span, whichever reaches further back, within its byte
 * bound: samples are logged once however many windows are open.
 *
 * Loss is counted per thread (loss.c): the continuous window's gaps as they
 * come, a request window's or a cut's from the gap log kept beside the
 * sample log; nt_trace_window_loss_get reads the window handed out last. */
#include "trace/profile_internal.h"
#include "common/abi.h"
#include "trace/build_internal.h"
#include "trace/record_store.h"
#include "trace/sample_log.h"
#include "trace/loss.h"
#include "common/sort.h"

#include <string.h>

#define DEFAULT_MAX_RECORDS (1u << 20)
#define DEFAULT_RECORDER_BYTES (16u * 1024u * 1024u)
#define MAX_REQUESTS 4096u

/* What a window builds: a trace or a profile.  The builder's callbacks, free
 * and finish are its kind's; only starting one and reaching the trace
 * builder inside it differ. */
typedef struct win_type {
    const tr_build_kind *build;
    void *(*start)(const nt_allocator *alloc);
    nt_trace_builder *(*trace_builder)(void *b);
} win_type;

static void *start_trace(const nt_allocator *alloc) { return nt_trace_builder_new(alloc); }
static nt_trace_builder *trace_itself(void *b) { return b; }

static void *start_profile(const nt_allocator *alloc)
{
    static const nt_profile_options events_only = { .events_only = true };
    return nt_profile_builder_new(&events_only, alloc);
}

static nt_trace_builder *profile_trace(void *b) { return pr_builder_trace(b); }

static const win_type TRACE_WINDOW = { &tr_trace_kind, start_trace, trace_itself };
static const win_type PROFILE_WINDOW = { &pr_profile_kind, start_profile, profile_trace };

/* An open request window: a filter over the sample log from its start. */
typedef struct win_request {
    uint32_t gen;             /* bumped at each close: an old handle is refused */
    bool open;
    int64_t from_ns;
    uint64_t *threads;        /* sorted */
    size_t nthreads;
    nt_window_filter f;       /* the labels to match (its thread list is threads) */
} win_request;

struct nt_trace_window {
    cm_mem mem;
    nt_allocator alloc;
    nt_trace_window_config cfg;
    nt_callbacks bcb;          /* the continuous builder's callbacks */
    const win_type *type;
    void *b;                   /* this window's builder (of type); NULL after a failed start or with no_continuous */
    nt_trace_info info;
    bool have_info;
    bool builder_stopped;      /* the builder refused a sample (memory or a table limit) */
    bool nomem;
    rs_store store;
    uint64_t evicted_at_take;  /* store.evicted when the last window was handed out */
    int64_t last_ticks;        /* the stream's position: the newest sample or method record seen */
    int64_t window_began;      /* last_ticks when the continuous window began */
    int64_t horizon;           /* where the window taken last began: continuous windows hold nothing older */
    uint64_t window_dropped;   /* events the sequence points reported lost in this continuous window */
    uint64_t dropped;          /* ... in all */
    int64_t last_ns;           /* the newest sample's trace-clock ns (a gap without a time is placed there) */
    wl_table loss;             /* the continuous window's gaps by thread */
    wl_table loss_out;         /* the loss of the window handed out last ... */
    uint64_t loss_window;      /* ... its number (windows after it), and the gaps of its span the log lacked */
    uint64_t loss_unplaced;
    wl_log gaps;               /* gaps found while the sample log logs */
    uint64_t windows;
    uint64_t last_work;
    size_t peak;               /* most bytes held with a window's builder at its peak */
    sl_log log;
    win_request *reqs;
    size_t nreqs, reqs_cap, nopen;
};

static bool start_window(nt_trace_window *w)
{
    w->builder_stopped = false;
    w->window_dropped = 0;
    if (w->cfg.no_continuous)
        return true;
    w->b = w->type->start(&w->alloc);
    if (!w->b)
        return false;
    nt_trace_builder *tb = w->type->trace_builder(w->b);
    if (w->cfg.sample_labels)
        nt_trace_builder_keep_labels(tb);
    if (w->store.unload)
        tr_builder_code_unloaded_before(tb); /* a later load may replace code (code_epoch.h) */
    if (w->have_info)
        w->bcb.trace(w->b, &w->info);
    return true;
}

static nt_trace_window *window_new(const nt_trace_window_config *cfg, const nt_allocator *alloc,
                                   const win_type *type)
{
    nt_trace_window_config given;
    if (!ABI_IN(nt_trace_window_config, &given, cfg))
        return NULL;
    nt_trace_window *w = CM_MEM_NEW(nt_trace_window, alloc);
    if (!w)
        return NULL;
    w->alloc = w->mem.a;
    w->cfg = given;
    if (!w->cfg.max_records)
        w->cfg.max_records = DEFAULT_MAX_RECORDS;
    if (!w->cfg.recorder_bytes)
        w->cfg.recorder_bytes = DEFAULT_RECORDER_BYTES;
    w->type = type;
    w->horizon = w->window_began = w->last_ticks = w->last_ns = INT64_MIN;
    w->gaps.dropped_through_ns = INT64_MIN;
    rs_init(&w->store, &w->mem, w->cfg.record_budget);
    w->store.max_entries = w->cfg.max_records;
    sl_init(&w->log, &w->mem, w->cfg.recorder_bytes);
    type->build->callbacks(&w->bcb);
    if (!start_window(w)) {
        rs_free(&w->store);
        CM_MEM_DELETE(nt_trace_window, w);
        return NULL;
    }
    return w;
}

nt_trace_window *nt_trace_window_new(const nt_trace_window_config *cfg, const nt_allocator *alloc)
{
    return window_new(cfg, alloc, &TRACE_WINDOW);
}

nt_trace_window *nt_profile_window_new(const nt_trace_window_config *cfg, const nt_allocator *alloc)
{
    return window_new(cfg, alloc, &PROFILE_WINDOW);
}

/* Records are kept by the store: a stream that does not end is never stopped
 * for them.  They reach the builder only at the window's end, but a change
 * of code does now, so that what it merges by stack parts here as a file's
 * builder would (code_epoch.h). */
static int on_method(void *user, const nt_method *m)
{
    nt_trace_window *w = user;
    rs_add_method(&w->store, m);
    if (w->b && !w->builder_stopped)
        tr_builder_code_changed(w->type->trace_builder(w->b), m);
    w->last_ticks = m->timestamp > w->last_ticks ? m->timestamp : w->last_ticks;
    return 0;
}

static int on_module(void *user, const nt_module *mo)
{
    nt_trace_window *w = user;
    rs_add_module(&w->store, mo);
    w->last_ticks = mo->timestamp > w->last_ticks ? mo->timestamp : w->last_ticks;
    return 0;
}

static int on_assembly(void *user, const nt_assembly *a)
{
    nt_trace_window *w = user;
    rs_add_assembly(&w->store, a);
    w->last_ticks = a->timestamp > w->last_ticks ? a->timestamp : w->last_ticks;
    return 0;
}

static int on_trace(void *user, const nt_trace_info *info)
{
    nt_trace_window *w = user;
    w->info = *info;
    w->have_info = true;
    return w->b ? w->bcb.trace(w->b, info) : 0;
}

/* The log keeps samples only while a request window is open or the recorder runs. */
static bool logging(const nt_trace_window *w) { return w->nopen || w->cfg.recorder_ns; }

/* The oldest time the log must keep: the oldest open request's start, and the recorder's span. */
static int64_t log_keep_from(const nt_trace_window *w)
{
    int64_t keep = INT64_MAX;
    for (size_t i = 0; i < w->nreqs; i++)
        if (w->reqs[i].open && w->reqs[i].from_ns < keep)
            keep = w->reqs[i].from_ns;
    int64_t to;
    if (w->cfg.recorder_ns && sl_span(&w->log, &(int64_t){ 0 }, &to)) {
        uint64_t span = w->cfg.recorder_ns > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : w->cfg.recorder_ns;
        int64_t from = to < INT64_MIN + (int64_t)span ? INT64_MIN : to - (int64_t)span;
        keep = from < keep ? from : keep;
    }
    return keep;
}

static void retire(nt_trace_window *w);

/* A stream that does not end must not be stopped by one window's trouble:
 * the window notes it and take() reports it. */
static int on_sample(void *user, const nt_sample *s)
{
    nt_trace_window *w = user;
    if (w->b && !w->builder_stopped && w->bcb.sample(w->b, s) != 0)
        w->builder_stopped = true;
    w->last_ticks = s->timestamp > w->last_ticks ? s->timestamp : w->last_ticks;
    w->last_ns = s->time_ns > w->last_ns ? s->time_ns : w->last_ns;
    if (logging(w)) {
        if (!sl_append(&w->log, s))
            w->nomem = true;
        /* Whole chunks only: the trim costs a look at the oldest chunk, now and then a free. */
        if (w->log.samples % 256 == 0) {
            int64_t keep = log_keep_from(w);
            sl_trim(&w->log, keep);
            wl_log_trim(&w->mem, &w->gaps, keep);
            if (w->cfg.no_continuous)
                retire(w); /* no take comes to do it */
        }
    }
    return 0;
}

/* Events matter to a profile window only (the trace builder takes none). */
static int on_event(void *user, const nt_event *ev)
{
    nt_trace_window *w = user;
    if (w->bcb.event && w->b && !w->builder_stopped && w->bcb.event(w->b, ev) != 0)
        w->builder_stopped = true;
    return 0;
}

/* Loss accounting: what each sequence point says its threads dropped. */
static int on_sequence_point(void *user, const nt_sequence_point *sp)
{
    nt_trace_window *w = user;
    for (uint32_t i = 0; i < sp->thread_count; i++) {
        w->window_dropped += sp->threads[i].dropped;
        w->dropped += sp->threads[i].dropped;
    }
    return w->b ? w->bcb.sequence_point(w->b, sp) : 0;
}

/* Loss per thread: into the continuous window, and into the gap log while request windows or the
 * recorder may ask for the gaps of a span. */
static int on_sequence_gap(void *user, const nt_sequence_gap *g)
{
    nt_trace_window *w = user;
    if (!w->cfg.no_continuous && !wl_table_add(&w->mem, &w->loss, g->capture_thread_id, 1, g->lost))
        w->nomem = true;
    if (logging(w) &&
        !wl_log_add(&w->mem, &w->gaps, g->time_ns != INT64_MIN ? g->time_ns : w->last_ns, g->capture_thread_id,
                    g->lost))
        w->nomem = true;
    return 0;
}

void nt_trace_window_callbacks(nt_callbacks *cb)
{
    const nt_callbacks mine = {
        .trace = on_trace,
        .sample = on_sample,
        .method = on_method,
        .module = on_module,
        .assembly = on_assembly,
        .sequence_point = on_sequence_point,
        .sequence_gap = on_sequence_gap,
    };
    ABI_OUT(nt_callbacks, cb, &mine);
}

/* A trace window sets no event callback (the parser delivers samples faster
 * without one); a profile window needs the events. */
void nt_profile_window_callbacks(nt_callbacks *cb)
{
    nt_trace_window_callbacks(cb);
    cb->event = on_event;
}

/* The records b's sampled addresses can resolve to, into b (through cb, its
 * kind's callbacks); tb is the trace builder in it.  The builder's record
 * counts become the stream's, as if it had been fed every record.  False
 * when the builder stopped. */
static bool feed_records(nt_trace_window *w, void *b, const nt_callbacks *cb, nt_trace_builder *tb)
{
    uint64_t *addrs;
    size_t n, alloc;
    if (!tr_builder_lookup_addrs(tb, &w->mem, &addrs, &n, &alloc)) {
        cm_mem_free(&w->mem, addrs, alloc * sizeof *addrs);
        w->nomem = true;
        return true;
    }
    rs_sink sink = { cb->method, cb->module, cb->assembly, b };
    int rc = rs_feed(&w->store, addrs, n, &sink);
    cm_mem_free(&w->mem, addrs, alloc * sizeof *addrs);
    w->last_work = w->store.work;
    tb->t->jit_records = w->store.jit;
    tb->t->rundown_records = w->store.rundown;
    tb->t->unload_records = w->store.unload;
    return rc == 0;
}

/* Records whose code is gone retire once no window can hold a sample older
 * than their unload: the continuous window (one window of slack: the window
 * just taken began after it), and whatever the sample log holds.  A sample
 * at or after the unload cannot resolve to the record anyway. */
static void retire(nt_trace_window *w)
{
    int64_t h = w->cfg.no_continuous ? INT64_MAX : w->horizon;
    int64_t logged = sl_min_ticks(&w->log);
    rs_retire(&w->store, logged < h ? logged : h);
}

/* The loss of the window being handed out becomes the one nt_trace_window_loss_get reads. */
static void hand_out_loss(nt_trace_window *w, wl_table *t, uint64_t unplaced)
{
    wl_table_free(&w->mem, &w->loss_out);
    wl_table_sort(&w->mem, t);
    w->loss_out = *t;
    *t = (wl_table){ 0 };
    w->loss_unplaced = unplaced;
}

/* After a window is built: what the window noted, and the next window's builder. */
static nt_status window_end(nt_trace_window *w, nt_status st)
{
    if (st == NT_OK && (w->nomem || w->store.nomem))
        st = NT_ERR_NOMEM;
    else if (st == NT_OK && w->store.evicted > w->evicted_at_take)
        st = NT_ERR_LIMIT;
    w->nomem = w->store.nomem = false;
    w->evicted_at_take = w->store.evicted;
    w->windows++;
    w->loss_window = w->windows;
    return st;
}

/* The one take: w must be of type (a trace window does not hand over a
 * profile, nor a profile window a trace). */
static nt_status take(nt_trace_window *w, const win_type *type, void *out)
{
    if (!w || w->type != type || w->cfg.no_continuous)
        return NT_ERR_INVALID_ARG;
    nt_status st = NT_ERR_NOMEM;
    if (w->b) {
        if (!w->builder_stopped && !feed_records(w, w->b, &w->bcb, type->trace_builder(w->b)))
            w->builder_stopped = true;
        nt_trace_builder *tb = type->trace_builder(w->b);
        tb->t->events_dropped = w->window_dropped;
        size_t with_builder = w->mem.used + tb->t->mem.peak;
        w->peak = with_builder > w->peak ? with_builder : w->peak;
        /* A builder that stopped says why through NT_ERR_STOPPED (memory, or a table limit). */
        const nt_trace *built = NULL;
        st = type->build->finish(w->b, NULL, w->builder_stopped ? NT_ERR_STOPPED : NT_OK, out, &built);
        w->b = NULL;
        if (st == NT_OK)
            st = built->status;
    }
    /* A sample older than where the window just taken began comes late by a whole window. */
    w->horizon = w->window_began;
    w->window_began = w->last_ticks;
    retire(w);
    hand_out_loss(w, &w->loss, 0);
    st = window_end(w, st);
    if (!start_window(w) && st == NT_OK)
        st = NT_ERR_NOMEM;
    return st;
}

nt_status nt_trace_window_take(nt_trace_window *w, nt_trace **out)
{
    if (!out)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    return take(w, &TRACE_WINDOW, out);
}

nt_status nt_profile_window_take(nt_trace_window *w, nt_profile **out)
{
    if (!out)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    return take(w, &PROFILE_WINDOW, out);
}

/* ---- request windows and the recorder: traces cut from the sample log ---- */

typedef struct cut_state {
    nt_trace_builder *b;
    nt_callbacks cb;
    const win_request *filter;
    uint32_t stack_id;
} cut_state;

static bool thread_selected(const win_request *f, uint64_t tid)
{
    size_t lo = cm_lower_bound_u64(f->threads, f->nthreads, tid);
    return lo < f->nthreads && f->threads[lo] == tid;
}

static int cut_sample(void *user, const sl_sample *ls, const uint64_t *ips)
{
    cut_state *c = user;
    const win_request *f = c->filter;
    if (f->threads && !thread_selected(f, ls->thread_id))
        return 0;
    const nt_event_labels *l = &ls->labels;
    if (f->f.has_activity && memcmp(f->f.activity_id, l->activity_id, 16) != 0)
        return 0;
    if (f->f.has_trace_id && (!l->has_trace_id || memcmp(f->f.trace_id, l->trace_id, 16) != 0))
        return 0;
    if (f->f.has_span_id && (!l->has_span_id || memcmp(f->f.span_id, l->span_id, 8) != 0))
        return 0;
    /* Each logged stack gets its own id: ids only matter within an interval, and the log has none. */
    nt_stack st = { ++c->stack_id, ls->nframes, ls->nframes ? ips : NULL, 0 };
    nt_sample s = { ls->ticks, ls->time_ns, ls->thread_id, ls->type, st.id, &st, NULL };
    return tr_builder_sample_labeled(c->b, &s, l);
}

static bool loss_thread_selected(const void *f, uint64_t tid) { return thread_selected(f, tid); }

/* A trace of the logged samples in [from_ns, to_ns) that f selects. */
static nt_status cut(nt_trace_window *w, int64_t from_ns, int64_t to_ns, const win_request *f, nt_trace **out)
{
    cut_state c = { nt_trace_builder_new(&w->alloc), { 0 }, f, 0 };
    if (!c.b)
        return window_end(w, NT_ERR_NOMEM);
    nt_trace_builder_callbacks(&c.cb);
    if (w->cfg.sample_labels)
        nt_trace_builder_keep_labels(c.b);
    if (w->have_info)
        c.cb.trace(c.b, &w->info);
    bool stopped = sl_each(&w->log, from_ns, to_ns, cut_sample, &c) != 0;
    if (!stopped && !feed_records(w, c.b, &c.cb, c.b))
        stopped = true;
    /* The trace says what its span lost on its threads, as a continuous window's says what it lost. */
    wl_table loss = { 0 };
    uint64_t unplaced = 0;
    if (!wl_log_count(&w->mem, &w->gaps, from_ns, to_ns, f->threads ? loss_thread_selected : NULL, f, &loss,
                      &unplaced))
        w->nomem = true;
    c.b->t->events_dropped = loss.dropped;
    nt_status st = nt_trace_builder_finish(c.b, NULL, stopped ? NT_ERR_STOPPED : NT_OK, out);
    if (st == NT_OK)
        st = (*out)->status;
    /* Samples of the span dropped from the log (time or bytes) are missing from it. */
    if (st == NT_OK && w->log.dropped_through_ns != INT64_MIN && w->log.dropped_through_ns >= from_ns)
        st = NT_ERR_LIMIT;
    hand_out_loss(w, &loss, unplaced);
    retire(w);
    return window_end(w, st);
}

static int cmp_u64(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* A filter's copy (threads sorted); false when memory is short. */
static bool copy_filter(nt_trace_window *w, win_request *r, const nt_window_filter *f)
{
    r->threads = NULL;
    r->nthreads = 0;
    r->f = f ? *f : (nt_window_filter){ 0 };
    r->f.thread_ids = NULL;
    if (!f || !f->thread_ids)
        return true;
    size_t n = f->thread_count ? f->thread_count : 1;
    r->threads = cm_mem_alloc(&w->mem, 2 * n * sizeof *r->threads);
    if (!r->threads)
        return false;
    memcpy(r->threads, f->thread_ids, f->thread_count * sizeof *r->threads);
    cm_merge_sort(r->threads, r->threads + n, f->thread_count, sizeof *r->threads, cmp_u64, NULL);
    r->nthreads = f->thread_count;
    return true;
}

static void drop_filter(nt_trace_window *w, win_request *r)
{
    size_t n = r->nthreads ? r->nthreads : 1;
    if (r->threads)
        cm_mem_free(&w->mem, r->threads, 2 * n * sizeof *r->threads);
    r->threads = NULL;
}

nt_status nt_trace_window_open(nt_trace_window *w, int64_t from_ns, const nt_window_filter *given,
                               nt_window_id *id)
{
    nt_window_filter fl;
    if (given && !ABI_IN(nt_window_filter, &fl, given))
        return NT_ERR_INVALID_ARG;
    const nt_window_filter *filter = given ? &fl : NULL;
    if (!w || !id || w->type != &TRACE_WINDOW || (filter && filter->thread_count && !filter->thread_ids))
        return NT_ERR_INVALID_ARG;
    size_t k = 0;
    while (k < w->nreqs && w->reqs[k].open)
        k++;
    if (k == w->nreqs) {
        if (w->nreqs >= MAX_REQUESTS)
            return NT_ERR_LIMIT;
        if (!cm_mem_reserve(&w->mem, (void **)&w->reqs, &w->reqs_cap, w->nreqs + 1, sizeof *w->reqs))
            return NT_ERR_NOMEM;
        w->reqs[w->nreqs++] = (win_request){ 0 };
    }
    win_request *r = &w->reqs[k];
    if (!copy_filter(w, r, filter))
        return NT_ERR_NOMEM;
    r->open = true;
    r->from_ns = from_ns;
    w->nopen++;
    *id = (uint64_t)r->gen << 32 | (uint64_t)(k + 1);
    return NT_OK;
}

static win_request *request_of(nt_trace_window *w, nt_window_id id)
{
    uint64_t k = (id & 0xffffffffu) - 1;
    if (!w || k >= w->nreqs || !w->reqs[k].open || w->reqs[k].gen != (uint32_t)(id >> 32))
        return NULL;
    return &w->reqs[k];
}

nt_status nt_trace_window_close(nt_trace_window *w, nt_window_id id, int64_t to_ns, nt_trace **out)
{
    if (out)
        *out = NULL;
    win_request *r = request_of(w, id);
    if (!r || !out)
        return NT_ERR_INVALID_ARG;
    nt_status st = cut(w, r->from_ns, to_ns, r, out);
    drop_filter(w, r);
    r->open = false;
    r->gen++;
    w->nopen--;
    int64_t keep = logging(w) ? log_keep_from(w) : INT64_MAX;
    sl_trim(&w->log, keep);
    wl_log_trim(&w->mem, &w->gaps, keep);
    return st;
}

nt_status nt_trace_window_cut(nt_trace_window *w, int64_t from_ns, int64_t to_ns, const nt_window_filter *given,
                              nt_trace **out)
{
    if (out)
        *out = NULL;
    nt_window_filter fl;
    if (given && !ABI_IN(nt_window_filter, &fl, given))
        return NT_ERR_INVALID_ARG;
    const nt_window_filter *filter = given ? &fl : NULL;
    if (!w || !out || !w->cfg.recorder_ns || w->type != &TRACE_WINDOW ||
        (filter && filter->thread_count && !filter->thread_ids))
        return NT_ERR_INVALID_ARG;
    win_request f = { 0 };
    if (!copy_filter(w, &f, filter))
        return NT_ERR_NOMEM;
    nt_status st = cut(w, from_ns, to_ns, &f, out);
    drop_filter(w, &f);
    return st;
}

bool nt_trace_window_recorder_span(const nt_trace_window *w, int64_t *from_ns, int64_t *to_ns)
{
    return w && from_ns && to_ns && w->cfg.recorder_ns && sl_span(&w->log, from_ns, to_ns);
}

void nt_trace_window_stats_get(const nt_trace_window *w, nt_trace_window_stats *caller)
{
    if (!caller)
        return;
    nt_trace_window_stats st, *out = &st;
    memset(out, 0, sizeof *out);
    if (!w) {
        ABI_OUT(nt_trace_window_stats, caller, out);
        return;
    }
    rs_stats(&w->store, out);
    out->recorder = (nt_window_table){ w->log.samples, w->log.bytes };
    if (w->b) {
        const nt_trace_builder *tb = w->type->trace_builder(w->b);
        out->stacks = (nt_window_table){ tb->nistacks, tb->t->mem.used };
    }
    out->windows = w->windows;
    out->open_windows = w->nopen;
    out->last_window_work = w->last_work;
    out->events_dropped = w->dropped;
    out->memory = w->mem.used + out->stacks.bytes;
    size_t peak = w->peak > w->mem.peak ? w->peak : w->mem.peak;
    out->memory_peak = peak > out->memory ? peak : out->memory;
    ABI_OUT(nt_trace_window_stats, caller, out);
}

void nt_trace_window_loss_get(const nt_trace_window *w, nt_window_loss *caller)
{
    if (!caller)
        return;
    nt_window_loss out = { 0 };
    if (w && w->loss_window) {
        const wl_table *t = &w->loss_out;
        out = (nt_window_loss){ 0, w->loss_window, t->gaps, t->dropped, t->n, t->n ? t->rows : NULL,
                                w->loss_unplaced };
    }
    ABI_OUT(nt_window_loss, caller, &out);
}

void nt_trace_window_free(nt_trace_window *w)
{
    if (!w)
        return;
    if (w->b)
        w->type->build->free(w->b);
    for (size_t i = 0; i < w->nreqs; i++)
        drop_filter(w, &w->reqs[i]);
    cm_mem_free(&w->mem, w->reqs, w->reqs_cap * sizeof *w->reqs);
    sl_free(&w->log);
    wl_table_free(&w->mem, &w->loss);
    wl_table_free(&w->mem, &w->loss_out);
    wl_log_free(&w->mem, &w->gaps);
    rs_free(&w->store);
    CM_MEM_DELETE(nt_trace_window, w);
}
