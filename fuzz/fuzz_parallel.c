/* The parallel parse (nettrace_parallel.h) against the sequential one on a
 * whole input: the same callbacks with the same arguments (ts_digest), the
 * same status, error offset and message, with 2 or 3 jobs and parts as
 * small as the input allows (every sequence point a cut), and a consumer
 * without event or stack callbacks (as the trace builder is).  Then the
 * trace builder over the parts (nt_trace_builder_parallel, counted or not
 * by the input's hash, under small limits for some inputs) against the
 * builder fed sequentially: the same status and message, the same samples
 * and the same folded export. */
#include "fuzz.h"
#include "nettrace_parallel.h"
#include "nettrace_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fz_run {
    ts_digest d;
    nt_status st;
    uint64_t err;
    char msg[256];
} fz_run;

static void sequential(const uint8_t *data, size_t size, const nt_limits *lim, bool sparse, fz_run *r)
{
    nt_callbacks cb = { 0 };
    ts_digest_callbacks(&cb);
    if (sparse)
        cb.event = NULL, cb.stack = NULL;
    ts_digest_init(&r->d);
    nt_parser *p = nt_parser_new(&cb, &r->d, lim, NULL);
    if (!p)
        fz_fail("nt_parser_new failed");
    r->st = nt_parser_feed(p, data, size);
    if (r->st == NT_OK)
        r->st = nt_parser_finish(p);
    r->err = nt_parser_error_offset(p);
    snprintf(r->msg, sizeof r->msg, "%s", nt_parser_message(p));
    nt_parser_free(p);
}

static void parallel(const uint8_t *data, size_t size, const nt_limits *lim, bool sparse, uint32_t jobs, fz_run *r)
{
    nt_callbacks cb = { 0 };
    ts_digest_callbacks(&cb);
    if (sparse)
        cb.event = NULL, cb.stack = NULL;
    ts_digest_init(&r->d);
    nt_parallel_options opt = { .jobs = jobs, .part_bytes = 1, .limits = lim };
    nt_parallel *pp = NULL;
    r->st = nt_parse_parallel(data, size, NULL, &cb, &r->d, &opt, &pp, r->msg, sizeof r->msg);
    const nt_parser *p = nt_parallel_parser(pp);
    if (!p)
        fz_fail("no parser after a parallel parse (%s)", nt_status_name(r->st));
    r->err = nt_parser_error_offset(p);
    nt_parallel_free(pp);
}

static void same(const fz_run *a, const fz_run *b, const char *what)
{
    if (a->st != b->st || a->err != b->err || strcmp(a->msg, b->msg) != 0)
        fz_fail("%s: sequential %s at %llu \"%s\", parallel %s at %llu \"%s\"", what, nt_status_name(a->st),
                (unsigned long long)a->err, a->msg, nt_status_name(b->st), (unsigned long long)b->err, b->msg);
    if (a->d.calls != b->d.calls || a->d.h != b->d.h)
        fz_fail("%s: %llu callbacks sequentially, %llu in parallel, or their arguments differ", what,
                (unsigned long long)a->d.calls, (unsigned long long)b->d.calls);
}

typedef struct fz_built {
    nt_status st, fs;
    size_t samples;
    fz_sink folded;
    char msg[256];
} fz_built;

/* The trace builder fed sequentially (jobs 0) or over the parts of a parallel parse. */
static void build(const uint8_t *data, size_t size, const nt_limits *lim, const nt_trace_limits *tl, bool count,
                  uint32_t jobs, fz_built *o)
{
    memset(o, 0, sizeof *o);
    nt_trace *t = ts_build_trace(data, size, jobs, count, true, lim, tl, &o->st, &o->fs, NULL);
    if (t) {
        o->samples = nt_trace_sample_count(t);
        snprintf(o->msg, sizeof o->msg, "%s", nt_trace_message(t));
        if (nt_export_folded(t, NULL, fz_sink_write, &o->folded) != NT_OK)
            fz_fail("folded export failed");
    }
    nt_trace_free(t);
}

static void same_trace(const uint8_t *data, size_t size, const nt_limits *lim)
{
    uint64_t h = fz_hash(data, size);
    nt_trace_limits tl = { 0 };
    if (h & 4)
        tl = (nt_trace_limits){ .max_samples = 1 + (h >> 8) % 64, .max_threads = 1 + (h >> 16) % 4 };
    fz_built a, b;
    build(data, size, lim, &tl, h & 2, 0, &a);
    build(data, size, lim, &tl, h & 2, 2 + (uint32_t)(h >> 24 & 1), &b);
    if (a.st != b.st || a.fs != b.fs || strcmp(a.msg, b.msg) != 0)
        fz_fail("trace builder: sequential %s/%s \"%s\", over the parts %s/%s \"%s\"", nt_status_name(a.st),
                nt_status_name(a.fs), a.msg, nt_status_name(b.st), nt_status_name(b.fs), b.msg);
    if (a.samples != b.samples || a.folded.n != b.folded.n || (a.folded.n && memcmp(a.folded.d, b.folded.d, a.folded.n)))
        fz_fail("trace builder: %zu samples sequentially, %zu over the parts, or their folded stacks differ", a.samples,
                b.samples);
    free(a.folded.d);
    free(b.folded.d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nt_limits lim = { 0 };
    fz_harness_limits(&lim);
    fz_run seq, par;
    sequential(data, size, &lim, false, &seq);
    parallel(data, size, &lim, false, 2 + (uint32_t)(fz_hash(data, size) & 1), &par);
    same(&seq, &par, "every callback");
    sequential(data, size, &lim, true, &seq);
    parallel(data, size, &lim, true, 2, &par);
    same(&seq, &par, "no event or stack callback");
    same_trace(data, size, &lim);
    return 0;
}
