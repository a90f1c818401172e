/* The live windows: nt_trace_window over a stream that does not end.
 *
 * The input is a stream, fed in chunks (sizes from the input's hash).
 * Between chunks the harness acts as an always-on agent would, each action
 * drawn from the hash: take the continuous window, open a request window (all
 * threads, or the threads of samples seen so far), close one, cut the flight
 * recorder, read the stats and the loss.  Half the inputs run under a tiny
 * record budget and record count (eviction, the page index's limits), some
 * with no continuous window, some keeping labels.
 *
 * Every trace handed out is walked (fz_walk_trace) and checked against the
 * samples the stream delivered, counted by a callback chained in front of
 * the window's:
 *  - a continuous window that ended NT_OK or NT_ERR_LIMIT (records evicted,
 *    samples kept) holds exactly the samples delivered since the last take;
 *  - a request window or a cut holds only samples of its span on the threads
 *    it selects; a request opened with nothing else logging (no recorder, no
 *    other request) that ended NT_OK holds every such sample delivered while
 *    it was open;
 *  - every window is also counted for top and exported as pprof, as an agent does;
 *  - differential: when the whole stream is one window (a quarter of the
 *    inputs, default budget), its folded export is byte-identical to that of
 *    nt_trace_from_buffer: a live window names and counts what a file read
 *    does.
 * A quarter of the inputs run a profile window (nt_profile_window_new)
 * instead: its takes hand over profiles of the events only (their traces
 * hold no sample), request windows and cuts are refused, and the one window
 * of a whole stream exports every event kind byte-identical to
 * nt_profile_from_buffer with events_only. */
#include "fuzz.h"
#include "nettrace_profile.h"
#include "nettrace_trace.h"
#include "trace_checks.h"

#include <stdlib.h>
#include <string.h>

#define MAX_REQS 8
#define MAX_TIDS 4

typedef struct request {
    nt_window_id id;
    int64_t from;
    uint64_t tids[MAX_TIDS];
    size_t ntids;         /* 0: every thread */
    bool alone;           /* nothing else was logging when it opened */
    uint64_t expected;    /* samples delivered while open, in its span so far (to = +inf) */
    bool open;
} request;

typedef struct agent {
    nt_trace_window *w;
    nt_callbacks wcb;     /* the window's own callbacks */
    nt_trace_window_config cfg;
    bool profile;         /* a profile window: takes hand over profiles */
    uint64_t since_take;  /* samples delivered since the last continuous take */
    int64_t last_ns;      /* the latest sample time seen */
    uint64_t tids[MAX_TIDS];
    size_t ntids;
    request reqs[MAX_REQS];
    size_t nopen;
} agent;

/* a + b without overflow (b >= 0). */
static int64_t add_sat(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

static bool selects(const request *r, uint64_t tid)
{
    if (!r->ntids)
        return true;
    for (size_t i = 0; i < r->ntids; i++)
        if (r->tids[i] == tid)
            return true;
    return false;
}

static int count_sample(void *user, const nt_sample *s)
{
    agent *a = user;
    a->since_take++;
    a->last_ns = s->time_ns > a->last_ns ? s->time_ns : a->last_ns;
    bool known = false;
    for (size_t i = 0; i < a->ntids; i++)
        known |= a->tids[i] == s->thread_id;
    if (!known && a->ntids < MAX_TIDS)
        a->tids[a->ntids++] = s->thread_id;
    /* A close's end is past every sample seen but no later than INT64_MAX, which no [from, to) holds. */
    for (size_t i = 0; i < MAX_REQS; i++)
        if (a->reqs[i].open && s->time_ns >= a->reqs[i].from && s->time_ns < INT64_MAX &&
            selects(&a->reqs[i], s->thread_id))
            a->reqs[i].expected++;
    return a->wcb.sample(a->w, s);
}

/* Every other callback goes to the window unchanged. */
#define FORWARD(name, type)                                                                                  \
    static int fwd_##name(void *user, const type *x)                                                          \
    {                                                                                                         \
        agent *a = user;                                                                                      \
        return a->wcb.name ? a->wcb.name(a->w, x) : 0;                                                        \
    }
FORWARD(trace, nt_trace_info)
FORWARD(metadata, nt_event_desc)
FORWARD(event, nt_event)
FORWARD(stack, nt_stack)
FORWARD(method, nt_method)
FORWARD(module, nt_module)
FORWARD(assembly, nt_assembly)
FORWARD(sequence_point, nt_sequence_point)
FORWARD(sequence_gap, nt_sequence_gap)

/* What an agent does with each window it is handed: walk it, count its hot methods per thread (as
 * nettrace top --live does) and export it as pprof. */
static void use_window(const nt_trace *t)
{
    fz_walk_trace(t);
    nt_top_options to = NT_STRUCT_INIT(nt_top_options);
    to.by_thread = nt_trace_sample_count(t) & 1;
    nt_top *top = NULL;
    nt_status s = nt_top_build(t, &to, &top);
    if (s != NT_OK && s != NT_ERR_NOMEM)
        fz_fail("top of a window: status %d", (int)s);
    nt_top_free(top);
    fz_sink pb = { 0 };
    s = nt_export_pprof(t, NULL, fz_sink_write, &pb);
    if (s == NT_OK && pb.n && (pb.n < 18 || pb.d[0] != 0x1f || pb.d[1] != 0x8b))
        fz_fail("a window's pprof is not gzip");
    free(pb.d);
}

static int window_status_ok(nt_status s)
{
    return s == NT_OK || s == NT_ERR_LIMIT || s == NT_ERR_NOMEM || s == NT_ERR_STOPPED;
}

/* A request's or a cut's trace: only samples of [from, to) on the selected threads. */
static void check_span(const nt_trace *t, int64_t from, int64_t to, const request *sel, const char *what)
{
    for (size_t i = 0; i < nt_trace_sample_count(t); i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        if (s.time_ns < from || s.time_ns >= to)
            fz_fail("%s holds a sample at %lld ns outside [%lld, %lld)", what, (long long)s.time_ns,
                    (long long)from, (long long)to);
        if (sel && !selects(sel, s.thread_id))
            fz_fail("%s holds a sample of thread %llu it does not select", what, (unsigned long long)s.thread_id);
    }
}

static uint64_t samples_of(const nt_trace *t)
{
    nt_trace_stats st = NT_STRUCT_INIT(nt_trace_stats);
    nt_trace_stats_get(t, &st);
    return st.samples;
}

/* A profile: its trace walked, and every event kind exported and totalled. */
static void check_profile(const nt_profile *p)
{
    fz_walk_trace(nt_profile_trace(p));
    for (nt_profile_kind k = NT_PROFILE_ALLOC; k <= NT_PROFILE_CONTENTION; k++) {
        nt_profile_export_options o = NT_STRUCT_INIT(nt_profile_export_options);
        o.kind = k;
        fz_sink out = { 0 };
        nt_status s = nt_profile_export_folded(p, &o, fz_sink_write, &out);
        if (s != NT_OK && s != NT_ERR_NOMEM)
            fz_fail("a profile window's %s export: status %d", nt_profile_kind_name(k), (int)s);
        free(out.d);
        nt_profile_totals tot = NT_STRUCT_INIT(nt_profile_totals);
        nt_profile_totals_get(p, k, &tot);
    }
}

static void take_profile(agent *a)
{
    nt_profile *p = NULL;
    nt_status s = nt_profile_window_take(a->w, &p);
    if (!window_status_ok(s))
        fz_fail("profile take: status %d", (int)s);
    nt_trace *t = NULL;
    if (nt_trace_window_take(a->w, &t) != NT_ERR_INVALID_ARG || t)
        fz_fail("a profile window handed out a trace");
    if (p) {
        check_profile(p);
        if (samples_of(nt_profile_trace(p)))
            fz_fail("a profile window (events only) holds %llu samples", (unsigned long long)samples_of(nt_profile_trace(p)));
        nt_profile_free(p);
    }
    a->since_take = 0;
}

static void take(agent *a)
{
    if (a->profile) {
        take_profile(a);
        return;
    }
    nt_trace *t = NULL;
    nt_status s = nt_trace_window_take(a->w, &t);
    if (a->cfg.no_continuous) {
        if (s != NT_ERR_INVALID_ARG || t)
            fz_fail("a take without a continuous window gave %d", (int)s);
        return;
    }
    if (!window_status_ok(s))
        fz_fail("take: status %d", (int)s);
    if (t) {
        use_window(t);
        if ((s == NT_OK || s == NT_ERR_LIMIT) && samples_of(t) != a->since_take)
            fz_fail("a continuous window holds %llu samples of the %llu delivered since the last take",
                    (unsigned long long)samples_of(t), (unsigned long long)a->since_take);
        nt_trace_free(t);
    }
    a->since_take = 0;
}

static void open_request(agent *a, uint64_t *rng)
{
    size_t k = 0;
    while (k < MAX_REQS && a->reqs[k].open)
        k++;
    if (k == MAX_REQS)
        return;
    request *r = &a->reqs[k];
    memset(r, 0, sizeof *r);
    /* From after every sample seen, or from a little before (then samples already delivered may fall in it). */
    r->from = fz_next(rng) & 1 ? add_sat(a->last_ns, 1) : a->last_ns - (int64_t)(fz_next(rng) % 1000);
    if (fz_next(rng) & 1)
        for (size_t i = 0; i < a->ntids; i++)
            if (fz_next(rng) & 1)
                r->tids[r->ntids++] = a->tids[i];
    r->alone = a->nopen == 0 && !a->cfg.recorder_ns && r->from > a->last_ns;
    nt_window_filter f = NT_STRUCT_INIT(nt_window_filter);
    f.thread_ids = r->ntids ? r->tids : NULL;
    f.thread_count = r->ntids;
    nt_status s = nt_trace_window_open(a->w, r->from, r->ntids || (fz_next(rng) & 1) ? &f : NULL, &r->id);
    if (a->profile) {
        if (s != NT_ERR_INVALID_ARG)
            fz_fail("a profile window opened a request window (%d)", (int)s);
        return;
    }
    if (s != NT_OK)
        fz_fail("opening request %zu: status %d", k, (int)s);
    r->open = true;
    a->nopen++;
}

static void close_request(agent *a, uint64_t *rng)
{
    if (!a->nopen)
        return;
    size_t k = (size_t)(fz_next(rng) % MAX_REQS);
    while (!a->reqs[k].open)
        k = (k + 1) % MAX_REQS;
    request *r = &a->reqs[k];
    /* Closing at a time past every sample seen: the count of delivered samples is then the span's. */
    int64_t to = add_sat(a->last_ns, 1 + (int64_t)(fz_next(rng) % 1000));
    nt_trace *t = NULL;
    nt_status s = nt_trace_window_close(a->w, r->id, to, &t);
    if (!window_status_ok(s))
        fz_fail("closing request %zu: status %d", k, (int)s);
    if (t) {
        use_window(t);
        check_span(t, r->from, to, r, "a request window");
        if (r->alone && s == NT_OK && samples_of(t) != r->expected)
            fz_fail("a request window holds %llu samples of the %llu delivered in its span while it was open",
                    (unsigned long long)samples_of(t), (unsigned long long)r->expected);
        nt_trace_free(t);
    }
    if (nt_trace_window_close(a->w, r->id, to, &t) != NT_ERR_INVALID_ARG || t)
        fz_fail("a closed request window was closed again");
    r->open = false;
    a->nopen--;
}

static void cut(agent *a, uint64_t *rng)
{
    int64_t from = a->last_ns - (int64_t)(fz_next(rng) % 100000), to = add_sat(from, 1 + (int64_t)(fz_next(rng) % 200000));
    request sel = { 0 };
    if (fz_next(rng) & 1 && a->ntids) {
        sel.tids[0] = a->tids[fz_next(rng) % a->ntids];
        sel.ntids = 1;
    }
    nt_window_filter f = NT_STRUCT_INIT(nt_window_filter);
    f.thread_ids = sel.ntids ? sel.tids : NULL;
    f.thread_count = sel.ntids;
    nt_trace *t = NULL;
    nt_status s = nt_trace_window_cut(a->w, from, to, &f, &t);
    if (!a->cfg.recorder_ns || a->profile) {
        if (s != NT_ERR_INVALID_ARG || t)
            fz_fail("a cut without a recorder gave %d", (int)s);
        return;
    }
    if (!window_status_ok(s))
        fz_fail("cut: status %d", (int)s);
    if (t) {
        use_window(t);
        check_span(t, from, to, &sel, "a recorder cut");
        nt_trace_free(t);
    }
}

static void read_stats(const agent *a)
{
    nt_trace_window_stats st = NT_STRUCT_INIT(nt_trace_window_stats);
    nt_trace_window_stats_get(a->w, &st);
    if (st.open_windows != a->nopen)
        fz_fail("the stats count %llu open request windows, %zu are", (unsigned long long)st.open_windows, a->nopen);
    nt_window_loss l = NT_STRUCT_INIT(nt_window_loss);
    nt_trace_window_loss_get(a->w, &l);
    uint64_t dropped = 0;
    for (uint64_t i = 0; i < l.thread_count; i++)
        dropped += l.threads[i].dropped;
    if (dropped != l.dropped)
        fz_fail("the loss's threads drop %llu events, its total says %llu", (unsigned long long)dropped,
                (unsigned long long)l.dropped);
}

static void act(agent *a, uint64_t *rng)
{
    switch (fz_next(rng) % 8) {
    case 0: case 1: take(a); break;
    case 2: case 3: open_request(a, rng); break;
    case 4: case 5: close_request(a, rng); break;
    case 6: cut(a, rng); break;
    default: read_stats(a); break;
    }
}

static void folded_of(const nt_trace *t, fz_sink *out)
{
    memset(out, 0, sizeof *out);
    nt_status s = nt_export_folded(t, NULL, fz_sink_write, out);
    if (s != NT_OK && s != NT_ERR_NOMEM)
        fz_fail("folded export: status %d", (int)s);
}

static void same_sinks(const fz_sink *x, const fz_sink *y, const char *what)
{
    if (x->n != y->n || (x->n && memcmp(x->d, y->d, x->n)))
        fz_fail("one window of the whole stream: %s of %zu bytes, the file read's of %zu (or they differ)", what,
                x->n, y->n);
}

/* The whole stream as one profile window against the file's profile. */
static void same_profile_as_file(const uint8_t *data, size_t size, const nt_limits *lim, const nt_profile *window)
{
    nt_trace_options to = NT_STRUCT_INIT(nt_trace_options);
    to.limits = lim;
    nt_profile_options po = NT_STRUCT_INIT(nt_profile_options);
    po.trace = &to;
    po.events_only = true; /* as a profile window keeps them */
    nt_profile *file = NULL;
    nt_profile_from_buffer(data, size, &po, &file, NULL, 0);
    if (!file)
        return;
    fz_sink x, y;
    folded_of(nt_profile_trace(window), &x);
    folded_of(nt_profile_trace(file), &y);
    same_sinks(&x, &y, "a profile's samples folded");
    free(x.d);
    free(y.d);
    for (nt_profile_kind k = NT_PROFILE_ALLOC; k <= NT_PROFILE_CONTENTION; k++) {
        nt_profile_export_options o = NT_STRUCT_INIT(nt_profile_export_options);
        o.kind = k;
        fz_sink u = { 0 }, v = { 0 };
        nt_status su = nt_profile_export_folded(window, &o, fz_sink_write, &u);
        nt_status sv = nt_profile_export_folded(file, &o, fz_sink_write, &v);
        if (su == NT_OK && sv == NT_OK)
            same_sinks(&u, &v, nt_profile_kind_name(k));
        free(u.d);
        free(v.d);
    }
    nt_profile_free(file);
}

/* The whole stream as one window against the file read of it. */
static void same_as_file(const uint8_t *data, size_t size, const nt_limits *lim, nt_trace *window)
{
    nt_trace_options opt = NT_STRUCT_INIT(nt_trace_options);
    opt.limits = lim;
    nt_trace *file = NULL;
    nt_trace_from_buffer(data, size, &opt, &file, NULL, 0);
    if (!file)
        return;
    fz_sink x, y;
    folded_of(window, &x);
    folded_of(file, &y);
    same_sinks(&x, &y, "the folded export");
    free(x.d);
    free(y.d);
    nt_trace_free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t h = fz_hash(data, size), rng = h | 1;
    bool one_window = (h & 3) == 0;
    agent a;
    memset(&a, 0, sizeof a);
    a.profile = ((h >> 7) & 3) == 0;
    a.last_ns = 0;
    a.cfg = (nt_trace_window_config)NT_STRUCT_INIT(nt_trace_window_config);
    if (!one_window) {
        if ((h >> 2) & 1) {
            a.cfg.max_records = 1 + (uint32_t)((h >> 8) % 64);
            a.cfg.record_budget = 512 + (h >> 16) % 8192;
        }
        if ((h >> 3) & 1) {
            a.cfg.recorder_ns = 1 + (h >> 24) % 10000000;
            a.cfg.recorder_bytes = (h >> 4) & 1 ? 256 + (h >> 32) % 4096 : 0;
        }
        a.cfg.no_continuous = !a.profile && ((h >> 5) & 7) == 0; /* a profile window has only its takes */
        a.cfg.sample_labels = (h >> 6) & 1;
    }
    a.w = a.profile ? nt_profile_window_new(&a.cfg, NULL) : nt_trace_window_new(&a.cfg, NULL);
    if (!a.w)
        fz_fail("nt_trace_window_new refused a valid configuration");
    a.wcb = (nt_callbacks)NT_STRUCT_INIT(nt_callbacks);
    if (a.profile)
        nt_profile_window_callbacks(&a.wcb);
    else
        nt_trace_window_callbacks(&a.wcb);
    nt_callbacks cb = NT_STRUCT_INIT(nt_callbacks);
    cb.trace = fwd_trace;
    cb.metadata = fwd_metadata;
    cb.event = fwd_event;
    cb.stack = fwd_stack;
    cb.sample = count_sample;
    cb.method = fwd_method;
    cb.module = fwd_module;
    cb.assembly = fwd_assembly;
    cb.sequence_point = fwd_sequence_point;
    cb.sequence_gap = fwd_sequence_gap;
    nt_limits lim = { 0 };
    fz_harness_limits(&lim);
    nt_parser *p = nt_parser_new(&cb, &a, &lim, NULL);
    if (!p)
        fz_fail("nt_parser_new failed");

    size_t off = 0, max = 1 + (size_t)(h % 509);
    nt_status s = NT_OK;
    while (off < size && s == NT_OK) {
        size_t n = 1 + (size_t)(fz_next(&rng) % max);
        n = n > size - off ? size - off : n;
        s = nt_parser_feed(p, data + off, n);
        off += n;
        if (!one_window)
            act(&a, &rng);
    }
    if (s == NT_OK)
        s = nt_parser_finish(p);
    if (!fz_parse_status_ok(s))
        fz_fail("the window's parse ended %d", (int)s);
    /* What was read before any damage is still handed out. */
    if (one_window && a.profile) {
        nt_profile *pr = NULL;
        nt_status st = nt_profile_window_take(a.w, &pr);
        if (!window_status_ok(st) || (st == NT_OK && !pr))
            fz_fail("one profile window of the whole stream: status %d", (int)st);
        if (pr)
            check_profile(pr);
        if (st == NT_OK)
            same_profile_as_file(data, size, &lim, pr);
        nt_profile_free(pr);
    } else if (one_window) {
        nt_trace *t = NULL;
        nt_status st = nt_trace_window_take(a.w, &t);
        if (!window_status_ok(st) || (st == NT_OK && !t))
            fz_fail("one window of the whole stream: status %d", (int)st);
        if (t)
            fz_walk_trace(t);
        if (st == NT_OK && samples_of(t) != a.since_take)
            fz_fail("one window holds %llu of the %llu samples delivered", (unsigned long long)samples_of(t),
                    (unsigned long long)a.since_take);
        if (st == NT_OK)
            same_as_file(data, size, &lim, t);
        nt_trace_free(t);
    } else {
        while (a.nopen)
            close_request(&a, &rng);
        take(&a);
        read_stats(&a);
    }
    nt_parser_free(p);
    nt_trace_window_free(a.w);
    return 0;
}
