/* The aggregator and every exporter.
 *
 * The input is a stream.  nt_trace_from_buffer builds a trace; every accessor
 * is walked (touching every string and frame, so ASan sees a bad pointer),
 * and the trace goes through the folded, speedscope and pprof exporters with
 * export options chosen from the input's hash (thread filter, time window,
 * managed only, time weights).  Differential: the same stream fed through the
 * builder in chunks must give byte-identical exports, and so must a trace
 * that counts its samples (aggregate) for folded, pprof and top.  Light structural
 * checks on the outputs: folded lines end in " <weight>\n", speedscope is one
 * JSON object, pprof is gzip. */
#include "fuzz.h"
#include "nettrace_trace.h"
#include "trace_checks.h"

#include <stdlib.h>
#include <string.h>


static void check_folded(const fz_sink *s)
{
    size_t line = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->d[i] != '\n')
            continue;
        size_t j = i;
        while (j > line && s->d[j - 1] >= '0' && s->d[j - 1] <= '9')
            j--;
        if (j == i || j == line || s->d[j - 1] != ' ')
            fz_fail("folded line at %zu does not end in \" <weight>\"", line);
        line = i + 1;
    }
    if (line != s->n)
        fz_fail("folded output does not end with a newline");
}

static void check_speedscope(const fz_sink *s)
{
    size_t n = s->n;
    while (n && (s->d[n - 1] == '\n' || s->d[n - 1] == ' '))
        n--;
    if (n < 2 || s->d[0] != '{' || s->d[n - 1] != '}')
        fz_fail("speedscope output is not one JSON object");
    for (size_t i = 0; i < n; i++)
        if (s->d[i] < 0x20 && s->d[i] != '\n' && s->d[i] != '\t')
            fz_fail("speedscope output has a raw control byte 0x%02x at %zu", s->d[i], i);
}

typedef struct exports {
    fz_sink folded, speedscope, pprof;
    nt_status sf, ss, sp;
} exports;

static void run_exports(const nt_trace *t, const nt_export_options *o, exports *e)
{
    memset(e, 0, sizeof *e);
    e->sf = nt_export_folded(t, o, fz_sink_write, &e->folded);
    e->ss = nt_export_speedscope(t, o, fz_sink_write, &e->speedscope);
    e->sp = nt_export_pprof(t, o, fz_sink_write, &e->pprof);
    if (e->sf == NT_OK)
        check_folded(&e->folded);
    if (e->ss == NT_OK)
        check_speedscope(&e->speedscope);
    if (e->sp == NT_OK && e->pprof.n && (e->pprof.n < 18 || e->pprof.d[0] != 0x1f || e->pprof.d[1] != 0x8b))
        fz_fail("pprof output is not gzip");
}

static void free_exports(exports *e)
{
    free(e->folded.d);
    free(e->speedscope.d);
    free(e->pprof.d);
}

static int same_sink(const fz_sink *a, const fz_sink *b)
{
    return a->n == b->n && (a->n == 0 || memcmp(a->d, b->d, a->n) == 0);
}

/* The same stream through the builder, fed in chunks. */
static nt_trace *build_chunked(const uint8_t *data, size_t size, uint64_t h, const nt_limits *lim)
{
    nt_trace_builder *b = nt_trace_builder_new(NULL);
    if (!b)
        fz_fail("nt_trace_builder_new failed");
    nt_callbacks cb = { 0 };
    nt_trace_builder_callbacks(&cb);
    nt_parser *p = nt_parser_new(&cb, b, lim, NULL);
    if (!p)
        fz_fail("nt_parser_new failed");
    size_t off = 0, max = 1 + (size_t)(h % 97);
    nt_status s = NT_OK;
    while (off < size && s == NT_OK) {
        size_t n = 1 + (size_t)(fz_next(&h) % max);
        if (n > size - off)
            n = size - off;
        s = nt_parser_feed(p, data + off, n);
        off += n;
    }
    if (s == NT_OK)
        s = nt_parser_finish(p);
    nt_trace *t = NULL;
    nt_trace_builder_finish(b, p, s, &t);
    nt_parser_free(p);
    return t;
}

static void same_top(const nt_trace *x, const nt_trace *y, const nt_top_options *o)
{
    nt_top *a = NULL, *b = NULL;
    nt_status sa = nt_top_build(x, o, &a), sb = nt_top_build(y, o, &b);
    if (sa != sb)
        fz_fail("top: status %d kept, %d counted", (int)sa, (int)sb);
    if (sa != NT_OK)
        return;
    if (a->table_count != b->table_count)
        fz_fail("top: %zu tables kept, %zu counted", a->table_count, b->table_count);
    for (size_t i = 0; i < a->table_count; i++) {
        const nt_top_table *p = &a->tables[i], *q = &b->tables[i];
        if (p->samples != q->samples || p->empty != q->empty || p->row_count != q->row_count)
            fz_fail("top table %zu differs between kept and counted samples", i);
        for (size_t r = 0; r < p->row_count; r++)
            if (strcmp(p->rows[r].name, q->rows[r].name) || p->rows[r].exclusive != q->rows[r].exclusive ||
                p->rows[r].inclusive != q->rows[r].inclusive)
                fz_fail("top row %zu of table %zu differs between kept and counted samples", r, i);
    }
    nt_top_free(a);
    nt_top_free(b);
}

/* Counting instead of keeping: folded, pprof and top give the same bytes. */
static void compare_counted(const uint8_t *data, size_t size, const nt_trace_options *opt, const nt_trace *t,
                            const nt_export_options *eo, const exports *a)
{
    nt_trace_options co = *opt;
    co.aggregate = true;
    nt_trace *tc = NULL;
    nt_status sc = nt_trace_from_buffer(data, size, &co, &tc, NULL, 0);
    if (sc != NT_OK || !tc)
        fz_fail("the counting build ended %d where keeping ended ok", (int)sc);
    fz_walk_trace(tc);
    exports c;
    memset(&c, 0, sizeof c);
    c.sf = nt_export_folded(tc, eo, fz_sink_write, &c.folded);
    c.sp = nt_export_pprof(tc, eo, fz_sink_write, &c.pprof);
    if (c.sf != a->sf || !same_sink(&c.folded, &a->folded))
        fz_fail("folded export differs between kept and counted samples");
    if (c.sp != a->sp || !same_sink(&c.pprof, &a->pprof))
        fz_fail("pprof export differs between kept and counted samples");
    nt_top_options to = { .by_thread = eo->filter.has_thread, .filter.managed_only = eo->filter.managed_only };
    same_top(t, tc, &to);
    free_exports(&c);
    nt_trace_free(tc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nt_limits lim = { 0 };
    fz_harness_limits(&lim);
    nt_trace_options opt = { 0 };
    memset(&opt, 0, sizeof opt);
    opt.limits = &lim;
    nt_trace *t = NULL;
    char msg[256];
    nt_status s = nt_trace_from_buffer(data, size, &opt, &t, msg, sizeof msg);
    if (!fz_parse_status_ok(s))
        fz_fail("nt_trace_from_buffer: status %d", (int)s);
    if (!t)
        return 0;
    fz_walk_trace(t);

    uint64_t h = fz_hash(data, size);
    nt_export_options eo = { 0 };
    memset(&eo, 0, sizeof eo);
    eo.filter.managed_only = h & 1;
    eo.weight = (h >> 1) & 1 ? NT_WEIGHT_TIME : NT_WEIGHT_SAMPLES;
    if ((h >> 2) & 1 && nt_trace_thread_count(t)) {
        eo.filter.has_thread = true;
        eo.filter.thread_id = nt_trace_thread_id(t, (size_t)((h >> 8) % nt_trace_thread_count(t)));
    }
    if ((h >> 3) & 1 && nt_trace_sample_count(t)) {
        size_t n = nt_trace_sample_count(t);
        int64_t to = nt_trace_sample_at(t, (size_t)((h >> 24) % n)).time_ns;
        eo.filter.from = (nt_time_bound){ true, true, nt_trace_sample_at(t, (size_t)((h >> 16) % n)).time_ns };
        eo.filter.to = (nt_time_bound){ true, true, to < INT64_MAX ? to + 1 : to };
    }
    eo.name = (h >> 4) & 1 ? "fuzz \"profile\"\n\\" : NULL;
    exports a;
    run_exports(t, &eo, &a);

    nt_trace *t2 = build_chunked(data, size, h, &lim);
    if (!t2)
        fz_fail("the chunk-fed builder made no trace where nt_trace_from_buffer did");
    exports b;
    run_exports(t2, &eo, &b);
    if (a.sf != b.sf || !same_sink(&a.folded, &b.folded))
        fz_fail("folded export differs between whole and chunked input");
    if (a.ss != b.ss || !same_sink(&a.speedscope, &b.speedscope))
        fz_fail("speedscope export differs between whole and chunked input");
    if (a.sp != b.sp || !same_sink(&a.pprof, &b.pprof))
        fz_fail("pprof export differs between whole and chunked input");
    if (s == NT_OK && !eo.filter.from.set && !eo.filter.to.set)
        compare_counted(data, size, &opt, t, &eo, &a);
    free_exports(&a);
    free_exports(&b);
    nt_trace_free(t2);
    nt_trace_free(t);
    return 0;
}
