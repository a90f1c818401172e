/* The parallel parse (nettrace_parallel.h) against the sequential one: the
 * same callbacks with the same arguments (ts_digest, plus each event's labels
 * and description), the same status, error offset, message and counts, with
 * 1, 2, 3 and 7 jobs and parts small enough that every trace is cut many
 * times: on every trace of corpus/ and ../shared/corpus (skipped when
 * absent), on writer-built V4 and V6 traces with many sequence points (label
 * lists, removed threads, flushes, lost events), on those traces cut short
 * and damaged, and when a callback stops the parse.  The writer-built traces
 * must also be delivered mostly from the parts' own parses (else the test
 * would only compare the sequential parse with itself), and a sequence point
 * that leaves a thread out must send its part to the sequential fallback.
 * The trace builder as a part consumer (nt_trace_builder_parallel) must
 * build the sequential build's trace -- every sample, stack, frame id,
 * record, count and export the same, counted or not, lazy names or not --
 * on the same traces, cut and damaged, and under limits that stop it, with
 * the writer-built traces' parts mostly merged, not parsed again. */
#include "nettrace_parallel.h"
#include "nettrace_trace.h"
#include "nettrace_writer.h"
#include "ltest.h"
#include "support.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ts_digest and, beside it, what it leaves out: labels and descriptions. */
typedef struct both {
    ts_digest d;
    nt_callbacks inner;
    uint64_t h;
    bool sparse; /* no event, stack or metadata callback: the samples' and records' events are digested instead */
    uint64_t gaps;
} both;

static void mixb(both *b, const void *p, size_t n)
{
    const uint8_t *s = p;
    for (size_t i = 0; i < n; i++)
        b->h = (b->h ^ s[i]) * 0x100000001b3ull;
}

static int on_event(void *u, const nt_event *ev)
{
    both *b = u;
    nt_event_labels l;
    nt_status s = nt_event_labels_get(ev, &l);
    mixb(b, &s, sizeof s);
    mixb(b, &l, sizeof l);
    if (ev->desc) {
        mixb(b, &ev->desc->opcode, sizeof ev->desc->opcode);
        mixb(b, &ev->desc->keywords, sizeof ev->desc->keywords);
        mixb(b, ev->desc->event_name, strlen(ev->desc->event_name));
        mixb(b, ev->desc->provider, strlen(ev->desc->provider));
    }
    return b->inner.event(&b->d, ev);
}

#define FWD(name, type)                                                                                            \
    static int fwd_##name(void *u, type a)                                                                         \
    {                                                                                                              \
        both *b = u;                                                                                               \
        return b->inner.name(&b->d, a);                                                                            \
    }
FWD(trace, const nt_trace_info *)
FWD(metadata, const nt_event_desc *)
FWD(stack, const nt_stack *)
FWD(sequence_point, const nt_sequence_point *)

/* Gaps: not in ts_digest, so mixed here, with the call counted there. */
static int fwd_sequence_gap(void *u, const nt_sequence_gap *g)
{
    both *b = u;
    mixb(b, &g->capture_thread_id, sizeof g->capture_thread_id);
    mixb(b, &g->first, sizeof g->first);
    mixb(b, &g->lost, sizeof g->lost);
    mixb(b, &g->timestamp, sizeof g->timestamp);
    mixb(b, &g->time_ns, sizeof g->time_ns);
    mixb(b, &g->offset, sizeof g->offset);
    mixb(b, &g->found_at, sizeof g->found_at);
    b->d.calls++;
    b->gaps++;
    return b->d.stop_after && b->d.calls >= b->d.stop_after;
}

/* The event a sample or record points to, when no event callback saw it. */
#define FWD_EVENT(name, type)                                                                                      \
    static int fwd_##name(void *u, type a)                                                                         \
    {                                                                                                              \
        both *b = u;                                                                                               \
        if (b->sparse && on_event(b, a->event))                                                                    \
            return 1;                                                                                              \
        return b->inner.name(&b->d, a);                                                                            \
    }
FWD_EVENT(sample, const nt_sample *)
FWD_EVENT(method, const nt_method *)
FWD_EVENT(module, const nt_module *)
FWD_EVENT(assembly, const nt_assembly *)

static void both_init(both *b, nt_callbacks *cb, bool sparse)
{
    memset(b, 0, sizeof *b);
    ts_digest_init(&b->d);
    ts_digest_callbacks(&b->inner);
    b->h = 0xcbf29ce484222325ull;
    *cb = (nt_callbacks){ .struct_size = sizeof(nt_callbacks), .trace = fwd_trace, .metadata = fwd_metadata, .event = on_event, .stack = fwd_stack,
                          .sample = fwd_sample, .method = fwd_method, .module = fwd_module,
                          .assembly = fwd_assembly, .sequence_point = fwd_sequence_point,
                          .sequence_gap = fwd_sequence_gap };
    b->sparse = sparse;
    if (sparse)
        cb->event = NULL, cb->stack = NULL, cb->metadata = NULL;
}

/* What a parse leaves: its digests, status, offset, message and counts. */
typedef struct outcome {
    uint64_t h, h2, calls, gaps;
    nt_status st;
    uint64_t err_off;
    char msg[256];
    nt_parser_stats ps;
    nt_parallel_stats pst;
} outcome;

static void settle(outcome *o, const both *b, nt_status st, const nt_parser *p)
{
    o->h = b->d.h;
    o->h2 = b->h;
    o->calls = b->d.calls;
    o->gaps = b->gaps;
    o->st = st;
    o->err_off = nt_parser_error_offset(p);
    snprintf(o->msg, sizeof o->msg, "%s", nt_parser_message(p));
    nt_parser_stats_get(p, &o->ps);
}

static void run_sequential(const uint8_t *data, size_t len, uint64_t stop_after, bool lazy, bool sparse, outcome *o)
{
    both b;
    nt_callbacks cb;
    both_init(&b, &cb, sparse);
    b.d.stop_after = stop_after;
    nt_parser *p = nt_parser_new(&cb, &b, NULL, NULL);
    cr_assert_not_null(p);
    nt_parser_set_lazy_names(p, lazy);
    nt_status st = nt_parser_feed(p, data, len);
    if (st == NT_OK)
        st = nt_parser_finish(p);
    settle(o, &b, st, p);
    nt_parser_free(p);
}

static void run_parallel(const uint8_t *data, size_t len, uint32_t jobs, uint64_t part_bytes, uint64_t stop_after,
                         bool lazy, bool sparse, outcome *o)
{
    both b;
    nt_callbacks cb;
    both_init(&b, &cb, sparse);
    b.d.stop_after = stop_after;
    nt_parallel_options opt = { .jobs = jobs, .part_bytes = part_bytes, .lazy_names = lazy };
    nt_parallel *pp = NULL;
    char msg[256];
    nt_status st = nt_parse_parallel(data, len, NULL, &cb, &b, &opt, &pp, msg, sizeof msg);
    cr_assert_not_null(pp);
    cr_assert_not_null(nt_parallel_parser(pp));
    settle(o, &b, st, nt_parallel_parser(pp));
    cr_assert_str_eq(msg, o->msg);
    o->pst.struct_size = sizeof o->pst;
    nt_parallel_stats_get(pp, &o->pst);
    nt_parallel_free(pp);
}

/* The caller's threads: parts decoded last first, then delivered in order. */
static void run_caller_threads(const uint8_t *data, size_t len, uint64_t part_bytes, outcome *o)
{
    both b;
    nt_callbacks cb;
    both_init(&b, &cb, false);
    nt_parallel_options opt = { .part_bytes = part_bytes };
    nt_parallel *pp = NULL;
    cr_assert_eq(nt_parallel_new(data, len, NULL, &cb, &b, &opt, &pp), NT_OK);
    size_t n = nt_parallel_part_count(pp);
    for (size_t k = n; k-- > 0;)
        cr_assert_eq(nt_parallel_decode(pp, k), NT_OK);
    cr_assert_eq(nt_parallel_decode(pp, 0), NT_ERR_STATE, "a part decoded twice");
    nt_status st = NT_OK;
    for (size_t k = 0; k < n && st == NT_OK; k++)
        st = nt_parallel_deliver(pp, k);
    settle(o, &b, st, nt_parallel_parser(pp));
    nt_parallel_free(pp);
}

#define STAT_EQ(f) cr_assert_eq(a->ps.f, b->ps.f, "%s: " #f " %llu sequentially, %llu in parallel", what, \
                                (unsigned long long)a->ps.f, (unsigned long long)b->ps.f)

static void same(const outcome *a, const outcome *b, const char *what)
{
    cr_assert_eq(a->st, b->st, "%s: status %s sequentially, %s in parallel (%s)", what, nt_status_name(a->st),
                 nt_status_name(b->st), b->msg);
    cr_assert_eq(a->err_off, b->err_off, "%s: error offset %llu / %llu", what, (unsigned long long)a->err_off,
                 (unsigned long long)b->err_off);
    cr_assert_str_eq(a->msg, b->msg, "%s: message", what);
    cr_assert_eq(a->calls, b->calls, "%s: %llu callbacks sequentially, %llu in parallel", what,
                 (unsigned long long)a->calls, (unsigned long long)b->calls);
    cr_assert_eq(a->h, b->h, "%s: the callbacks' arguments differ", what);
    cr_assert_eq(a->h2, b->h2, "%s: the events' labels or descriptions differ", what);
    if (a->st == NT_OK || a->st == NT_ERR_TRUNCATED || a->st == NT_ERR_MALFORMED) {
        STAT_EQ(bytes);
        STAT_EQ(blocks);
        STAT_EQ(events);
        STAT_EQ(samples);
        STAT_EQ(stacks);
        STAT_EQ(metadata);
        STAT_EQ(sequence_points);
        STAT_EQ(methods);
        STAT_EQ(events_dropped);
        STAT_EQ(unknown_stack_refs);
        STAT_EQ(unknown_metadata_refs);
    }
}

static const uint32_t jobs_list[] = { 1, 2, 3, 7 };

/* Every job count and two part sizes against the sequential parse; returns the parts of the smallest cut. */
static uint32_t check_all(const uint8_t *data, size_t len, const char *what, outcome *last)
{
    outcome seq, par;
    run_sequential(data, len, 0, false, false, &seq);
    uint32_t parts = 0;
    for (size_t j = 0; j < sizeof jobs_list / sizeof *jobs_list; j++) {
        uint64_t sizes[] = { 1, 64 * 1024, 0 };
        for (size_t s = 0; s < 3; s++) {
            run_parallel(data, len, jobs_list[j], sizes[s], 0, false, false, &par);
            same(&seq, &par, what);
            if (jobs_list[j] == 1)
                cr_assert_eq(par.pst.parts, 1, "%s: one job is the sequential parse", what);
            else if (s == 0)
                parts = par.pst.parts, *last = par;
        }
    }
    run_caller_threads(data, len, 1, &par);
    same(&seq, &par, what);
    outcome lazy_seq, lazy_par;
    run_sequential(data, len, 0, true, false, &lazy_seq);
    run_parallel(data, len, 2, 1, 0, true, false, &lazy_par);
    same(&lazy_seq, &lazy_par, what);
    /* A consumer like the trace builder: no event or stack callback. */
    run_sequential(data, len, 0, true, true, &lazy_seq);
    run_parallel(data, len, 3, 1, 0, true, true, &lazy_par);
    same(&lazy_seq, &lazy_par, what);
    return parts;
}

/* ---- the trace builder over the parts ----------------------------------------------------------- */

typedef struct built {
    nt_status st, fs;
    uint64_t h;            /* every sample, stack, frame, record and count of the trace, and two exports */
    char msg[256];
    nt_parallel_stats pst;
} built;

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const uint8_t *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ull;
    return h;
}

static int sink_hash(void *user, const void *data, size_t len)
{
    *(uint64_t *)user = mix(*(uint64_t *)user, data, len);
    return 0;
}

static uint64_t trace_digest(const nt_trace *t)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < nt_trace_sample_count(t); i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        uint64_t f[] = { (uint64_t)s.timestamp, (uint64_t)s.time_ns, s.thread_id, s.type, s.stack_index, s.count };
        h = mix(mix(h, f, sizeof f), s.frame_ids, s.frame_count * sizeof *s.frame_ids);
    }
    for (size_t i = 0; i < nt_trace_stack_count(t); i++) {
        nt_trace_stack st = nt_trace_stack_at(t, i);
        h = mix(h, st.frame_ids, st.frame_count * sizeof *st.frame_ids);
    }
    char name[512];
    for (size_t i = 0; i < nt_trace_frame_count(t); i++) {
        const nt_frame *f = nt_trace_frame_at(t, (uint32_t)i);
        size_t n = nt_frame_name_ex(f, 0, name, sizeof name);
        h = mix(mix(mix(h, &f->ip, sizeof f->ip), &f->method_index, sizeof f->method_index), name, n < sizeof name ? n : 0);
    }
    nt_trace_stats ts = { .struct_size = sizeof ts };
    nt_trace_stats_get(t, &ts);
    ts.memory = ts.memory_peak = 0; /* the one thing allowed to differ: the parts' builders are freed */
    h = mix(h, &ts, sizeof ts);
    size_t n[] = { nt_trace_method_count(t), nt_trace_module_count(t), nt_trace_assembly_count(t), nt_trace_thread_count(t) };
    h = mix(h, n, sizeof n);
    h = mix(h, nt_trace_message(t), strlen(nt_trace_message(t)));
    cr_assert_eq(nt_export_folded(t, NULL, sink_hash, &h), NT_OK);
    /* A timeline needs every sample: pprof for a counted trace. */
    if (nt_export_speedscope(t, NULL, sink_hash, &h) != NT_OK)
        cr_assert_eq(nt_export_pprof(t, NULL, sink_hash, &h), NT_OK);
    return h;
}

/* One build: sequential (jobs 0) or parallel with the builder's part consumer. */
static void build_one(const uint8_t *data, size_t len, uint32_t jobs, bool count, bool lazy, const nt_trace_limits *lim,
                      built *o)
{
    memset(o, 0, sizeof *o);
    nt_trace *t = ts_build_trace(data, len, jobs, count, lazy, NULL, lim, &o->st, &o->fs, &o->pst);
    if (t) {
        o->h = trace_digest(t);
        snprintf(o->msg, sizeof o->msg, "%s", nt_trace_message(t));
    }
    nt_trace_free(t);
}

static void same_build(const built *a, const built *b, const char *what, uint32_t jobs, bool count)
{
    cr_assert(a->st == b->st && a->fs == b->fs, "%s, %u jobs%s: sequential %s/%s, parallel %s/%s", what, jobs,
              count ? ", counted" : "", nt_status_name(a->st), nt_status_name(a->fs), nt_status_name(b->st),
              nt_status_name(b->fs));
    cr_assert_str_eq(a->msg, b->msg, "%s, %u jobs: the trace's message differs", what, jobs);
    cr_assert_eq(a->h, b->h, "%s, %u jobs%s: the trace differs from the sequential build's", what, jobs,
                 count ? ", counted" : "");
}

/* The builder on 2, 3 and 7 threads against one, counted and not; returns the parts merged with 2 jobs. */
static uint32_t check_builder(const uint8_t *data, size_t len, const char *what, const nt_trace_limits *lim)
{
    uint32_t merged = 0;
    for (int count = 0; count < 2; count++) {
        built seq, par;
        build_one(data, len, 0, count, count == 0, lim, &seq);
        for (uint32_t j = 2; j <= 7; j += j == 3 ? 4 : 1) {
            build_one(data, len, j, count, count == 0, lim, &par);
            same_build(&seq, &par, what, j, count);
            if (j == 2 && !count)
                merged = par.pst.merged;
        }
    }
    return merged;
}

static size_t check_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 9 || (strcmp(e->d_name + l - 9, ".nettrace") != 0 && strcmp(e->d_name + l - 7, ".netperf") != 0))
            continue;
        uint8_t *data;
        size_t len;
        const char *path = ts_path(dir, e->d_name);
        cr_assert(ts_read_file(path, &data, &len), "cannot read %s", path);
        outcome last;
        check_all(data, len, e->d_name, &last);
        check_builder(data, len, e->d_name, NULL);
        free(data);
        n++;
    }
    closedir(d);
    return n;
}

LTest(parallel, own_corpus)
{
    cr_assert_gt(check_dir(ts_own_corpus()), 0, "no trace in %s", ts_own_corpus());
}

LTest(parallel, shared_corpus)
{
    const char *dir = ts_shared_corpus(); /* NULL when ../shared/corpus is absent */
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d)
        cr_skip_test("the shared corpus (%s) is absent", dir ? dir : "../shared/corpus");
    closedir(d);
    cr_assert_gt(check_dir(dir), 0, "no trace in %s", dir);
}

/* ---- writer-built traces ------------------------------------------------------------------------ */

typedef struct shape {
    uint32_t format;
    bool partial_sp;  /* one sequence point leaves a thread out */
    bool flushes;     /* V6: thread and metadata flushes */
} shape;

static void write_trace(const shape *sh, nt_membuf *out)
{
    nt_writer_options o = { .format = sh->format, .block_bytes = 2048 };
    nt_writer *w = nt_writer_new(&o, nt_membuf_write, out, NULL);
    cr_assert_not_null(w);
    nt_event_desc desc = { .provider = "Test-Provider", .event_id = 7, .event_name = "Tick", .version = 1 };
    uint32_t md = 0;
    cr_assert_eq(nt_writer_define(w, &desc, &md), NT_OK);
    int64_t ts = 1000;
    for (uint32_t m = 0; m < 40; m++) {
        nt_method me = { .which = NT_RECORD_LOAD, .method_id = 100 + m, .module_id = 1, .start_address = 0x10000 + m * 0x100,
                         .size = 0x100, .declaring_type = "Ns.Type", .name = "M", .signature = "void ()" };
        nt_writer_event hdr = { .thread_id = 1, .timestamp = ts++ };
        cr_assert_eq(nt_writer_method(w, &hdr, &me), NT_OK);
    }
    uint32_t seq[9] = { 0 };
    for (uint32_t interval = 0; interval < 60; interval++) {
        uint32_t label = 0;
        if (sh->format == 6) {
            nt_label ls[2] = { { .kind = NT_LABEL_TRACE_ID, .guid = { (uint8_t)interval, 1 } },
                               { .kind = NT_LABEL_OPCODE, .value = interval % 5 } };
            cr_assert_eq(nt_writer_label_list(w, ls, 2, &label), NT_OK);
        }
        for (uint32_t i = 0; i < 120; i++) {
            uint32_t th = 1 + (i * 7 + interval) % 8;
            uint64_t ips[3] = { 0x10000 + (i % 40) * 0x100 + 8, 0x10000 + ((i / 3) % 40) * 0x100 + 4, 0x99 };
            uint32_t sid = 0;
            cr_assert_eq(nt_writer_stack(w, ips, 1 + i % 3, &sid), NT_OK);
            /* Now and then a lost event: the thread's number skips one. */
            seq[th] += (i % 37 == 5) ? 2 : 1;
            nt_writer_event hdr = { .thread_id = th, .timestamp = ts++, .stack_id = sid, .sequence_number = seq[th] };
            cr_assert_eq(nt_writer_sample(w, &hdr, i % 3 ? NT_SAMPLE_MANAGED : NT_SAMPLE_EXTERNAL), NT_OK);
            if (i % 10 == 0) {
                uint32_t payload = i;
                seq[th]++;
                nt_writer_event e = { .metadata_id = md, .thread_id = th, .timestamp = ts++, .payload = &payload,
                                      .payload_size = 4, .label_list_id = label, .sequence_number = seq[th] };
                cr_assert_eq(nt_writer_write_event(w, &e), NT_OK);
            }
        }
        if (sh->format == 6 && interval == 30)
            cr_assert_eq(nt_writer_remove_thread(w, 8), NT_OK);
        uint32_t flags = 0;
        if (sh->flushes && interval % 20 == 19)
            flags = interval % 40 == 19 ? NT_SP_FLUSH_METADATA : NT_SP_FLUSH_THREADS;
        if (sh->partial_sp && interval == 25) {
            nt_sp_thread some[2] = { { .capture_thread_id = 1, .sequence_number = seq[1] },
                                     { .capture_thread_id = 2, .sequence_number = seq[2] } };
            cr_assert_eq(nt_writer_sequence_point_threads(w, ts++, flags, some, 2), NT_OK);
        } else {
            cr_assert_eq(nt_writer_sequence_point(w, ts++, flags), NT_OK);
        }
        if (flags & NT_SP_FLUSH_METADATA)
            cr_assert_eq(nt_writer_define(w, &desc, &md), NT_OK);
    }
    for (uint32_t m = 0; m < 40; m++) {
        nt_method me = { .which = NT_RECORD_DC_END, .method_id = 200 + m, .module_id = 1, .start_address = 0x20000 + m * 0x10,
                         .size = 0x10, .declaring_type = "Ns.Rundown", .name = "R", .signature = "int ()" };
        cr_assert_eq(nt_writer_method(w, NULL, &me), NT_OK);
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
    nt_writer_free(w);
}

static void check_shape(const shape *sh, const char *what)
{
    nt_membuf out = { 0 };
    write_trace(sh, &out);
    outcome last;
    uint32_t parts = check_all(out.data, out.len, what, &last);
    cr_assert_gt(parts, 20, "%s: %u parts: the trace was not cut", what, parts);
    cr_assert_gt(last.ps.events_dropped, 0, "%s: the trace should report lost events", what);
    cr_assert_gt(last.gaps, 0, "%s: the lost events should arrive as sequence gaps", what);
    if (sh->partial_sp)
        cr_assert_gt(last.pst.reparsed, 0, "%s: a sequence point that leaves a thread out must be reparsed", what);
    cr_assert_geq(last.pst.replayed, parts - (sh->partial_sp || sh->flushes ? 10 : 1),
                  "%s: only %u of %u parts delivered from their own parse", what, last.pst.replayed, parts);
    uint32_t merged = check_builder(out.data, out.len, what, NULL);
    cr_assert_geq(merged, parts - (sh->partial_sp || sh->flushes ? 10 : 1),
                  "%s: only %u of %u parts merged into the trace builder", what, merged, parts);
    /* Limits the sequential build stops at: the parts that could reach them are parsed again, and stop there. */
    nt_trace_limits few_samples = { .max_samples = 60 * 120 / 2 }, few_threads = { .max_threads = 5 };
    check_builder(out.data, out.len, "max_samples", &few_samples);
    check_builder(out.data, out.len, "max_threads", &few_threads);
    /* Cut short and damaged: the same callbacks before the damage, the same failure. */
    outcome seq, par;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 40; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t cut = (size_t)(x % out.len);
        run_sequential(out.data, cut, 0, false, i % 3 == 0, &seq);
        run_parallel(out.data, cut, 2, 1, 0, false, i % 3 == 0, &par);
        same(&seq, &par, "cut");
        uint8_t *bad = malloc(out.len);
        cr_assert_not_null(bad);
        memcpy(bad, out.data, out.len);
        size_t at = (size_t)((x >> 20) % out.len);
        bad[at] ^= (uint8_t)(1u << (x % 8));
        if (i % 2)
            bad[(at + 1) % out.len] = 0xff;
        run_sequential(bad, out.len, 0, false, i % 3 == 1, &seq);
        run_parallel(bad, out.len, 3, 1, 0, false, i % 3 == 1, &par);
        same(&seq, &par, "damaged");
        if (i % 4 == 0) {
            check_builder(out.data, cut, "cut, builder", NULL);
            check_builder(bad, out.len, "damaged, builder", NULL);
        }
        free(bad);
        /* A callback that stops: the same calls, the same message. */
        uint64_t stop = 1 + x % last.calls;
        run_sequential(out.data, out.len, stop, false, false, &seq);
        run_parallel(out.data, out.len, 2, 1, stop, false, false, &par);
        cr_assert_eq(seq.st, par.st);
        cr_assert_eq(seq.calls, par.calls, "stopped: %llu calls / %llu", (unsigned long long)seq.calls,
                     (unsigned long long)par.calls);
        cr_assert_eq(seq.h, par.h);
        cr_assert_str_eq(seq.msg, par.msg);
    }
    nt_membuf_free(&out);
}

LTest(parallel, writer_v4) { check_shape(&(shape){ .format = 4 }, "writer V4"); }
LTest(parallel, writer_v4_partial_sp) { check_shape(&(shape){ .format = 4, .partial_sp = true }, "writer V4, partial SP"); }
LTest(parallel, writer_v6) { check_shape(&(shape){ .format = 6 }, "writer V6"); }
LTest(parallel, writer_v6_flushes) { check_shape(&(shape){ .format = 6, .flushes = true }, "writer V6, flushes"); }

LTest(parallel, misuse)
{
    nt_parallel *pp = NULL;
    cr_assert_eq(nt_parallel_new(NULL, 5, NULL, NULL, NULL, NULL, &pp), NT_ERR_INVALID_ARG);
    cr_assert_null(pp);
    cr_assert_eq(nt_parallel_new("x", 1, NULL, NULL, NULL, NULL, NULL), NT_ERR_INVALID_ARG);
    cr_assert_eq(nt_parallel_new("Nettrace", 8, NULL, NULL, NULL, NULL, &pp), NT_OK);
    cr_assert_eq(nt_parallel_part_count(pp), 1);
    cr_assert_eq(nt_parallel_deliver(pp, 0), NT_ERR_STATE, "delivered before it was decoded");
    cr_assert_eq(nt_parallel_decode(pp, 1), NT_ERR_INVALID_ARG);
    cr_assert_eq(nt_parallel_decode(pp, 0), NT_OK);
    cr_assert_eq(nt_parallel_deliver(pp, 0), NT_ERR_TRUNCATED);
    cr_assert_eq(nt_parallel_deliver(pp, 0), NT_ERR_STATE);
    nt_parallel_free(pp);
    nt_parallel_free(NULL);
    cr_assert_eq(nt_parallel_part_count(NULL), 0);
    cr_assert_null(nt_parallel_parser(NULL));
}
