/* What the exporters share: which samples an export covers, their weights,
 * and a buffered writer over the caller's write callback. */
#include "trace/trace_internal.h"

#include "common/json.h"

#include <string.h>

void tr_selection_init(tr_selection *sel, const nt_trace *t, const nt_export_options *opt)
{
    memset(sel, 0, sizeof *sel);
    sel->t = t;
    if (opt)
        sel->opt = *opt;
    sel->from_ns = nt_time_bound_resolve(&sel->opt.filter.from, &t->info);
    sel->to_ns = nt_time_bound_resolve(&sel->opt.filter.to, &t->info);
    sel->default_ns = tr_default_ns(&t->info);
}

bool tr_selection_fits(const nt_trace *t, const nt_export_options *opt)
{
    /* Counted samples keep no time of their own to cut a window by. */
    return !t->agg || !opt || (!opt->filter.from.set && !opt->filter.to.set);
}

bool tr_selected(const tr_selection *sel, size_t i)
{
    const tr_sample *s = TR_SAMPLE(sel->t, i);
    const nt_sample_filter *f = &sel->opt.filter;
    if (f->managed_only && TR_TYPE(s) != NT_SAMPLE_MANAGED)
        return false;
    if (f->has_thread && sel->t->threads[TR_THREAD(s)] != f->thread_id)
        return false;
    if (f->from.set || f->to.set) {
        int64_t ns = nt_ticks_to_ns(s->ticks, sel->t->info.qpc_frequency);
        if ((f->from.set && ns < sel->from_ns) || (f->to.set && ns >= sel->to_ns))
            return false;
    }
    return true;
}

void tr_out_init(tr_out *o, nt_sink_fn w, void *user)
{
    o->w = w;
    o->user = user;
    o->n = 0;
    o->failed = false;
}

static void out_drain(tr_out *o)
{
    if (o->n && !o->failed && o->w(o->user, o->buf, o->n) != 0)
        o->failed = true;
    o->n = 0;
}

void tr_out_bytes(tr_out *o, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        if (o->n == sizeof o->buf)
            out_drain(o);
        size_t k = sizeof o->buf - o->n < n ? sizeof o->buf - o->n : n;
        memcpy(o->buf + o->n, c, k);
        o->n += k;
        c += k;
        n -= k;
    }
}

void tr_out_str(tr_out *o, const char *s) { tr_out_bytes(o, s, strlen(s)); }

void tr_out_u64(tr_out *o, uint64_t v)
{
    /* Hand-rolled: the exporters print millions of numbers. */
    char b[24];
    size_t i = sizeof b;
    do {
        b[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    tr_out_bytes(o, b + i, sizeof b - i);
}

void tr_out_i64(tr_out *o, int64_t v)
{
    if (v < 0) {
        tr_out_bytes(o, "-", 1);
        tr_out_u64(o, (uint64_t)0 - (uint64_t)v);
    } else {
        tr_out_u64(o, (uint64_t)v);
    }
}

static void out_put(void *o, const char *p, size_t n) { tr_out_bytes(o, p, n); }

/* The project's one JSON string writer (common/json.h): names are valid UTF-8 JSON whatever the trace holds. */
void tr_out_json(tr_out *o, const char *s) { cm_json_string(out_put, o, s); }

nt_status tr_out_flush(tr_out *o)
{
    out_drain(o);
    return o->failed ? NT_ERR_IO : NT_OK;
}
