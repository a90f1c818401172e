/* What the exporters share: which samples an export covers, their weights,
 * and a buffered writer over the caller's write callback. */
#include "export/export_internal.h"

#include "common/json.h"

#include <string.h>

void ex_selection_init(ex_selection *sel, const nt_trace *t, const nt_export_options *opt)
{
    memset(sel, 0, sizeof *sel);
    sel->t = t;
    if (opt)
        sel->opt = *opt;
    sel->from_ns = nt_time_bound_resolve(&sel->opt.filter.from, tr_view_info(t));
    sel->to_ns = nt_time_bound_resolve(&sel->opt.filter.to, tr_view_info(t));
    sel->default_ns = tr_view_default_ns(t);
}

bool ex_selection_fits(const nt_trace *t, const nt_export_options *opt)
{
    /* Counted samples keep no time of their own to cut a window by. */
    return !tr_view_counted(t) || !opt || (!opt->filter.from.set && !opt->filter.to.set);
}

bool ex_selected(const ex_selection *sel, size_t i)
{
    const nt_trace *t = sel->t;
    const nt_sample_filter *f = &sel->opt.filter;
    if (f->managed_only && tr_view_type(t, i) != NT_SAMPLE_MANAGED)
        return false;
    if (f->has_thread && nt_trace_thread_id(t, tr_view_thread(t, i)) != f->thread_id)
        return false;
    if (f->from.set || f->to.set) {
        int64_t ns = nt_ticks_to_ns(tr_view_ticks(t, i), tr_view_info(t)->qpc_frequency);
        if ((f->from.set && ns < sel->from_ns) || (f->to.set && ns >= sel->to_ns))
            return false;
    }
    return true;
}

void ex_out_init(ex_out *o, nt_sink_fn w, void *user)
{
    o->w = w;
    o->user = user;
    o->n = 0;
    o->failed = false;
}

static void out_drain(ex_out *o)
{
    if (o->n && !o->failed && o->w(o->user, o->buf, o->n) != 0)
        o->failed = true;
    o->n = 0;
}

void ex_out_bytes(ex_out *o, const void *p, size_t n)
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

void ex_out_str(ex_out *o, const char *s) { ex_out_bytes(o, s, strlen(s)); }

void ex_out_u64(ex_out *o, uint64_t v)
{
    /* Hand-rolled: the exporters print millions of numbers. */
    char b[24];
    size_t i = sizeof b;
    do {
        b[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    ex_out_bytes(o, b + i, sizeof b - i);
}

void ex_out_i64(ex_out *o, int64_t v)
{
    if (v < 0) {
        ex_out_bytes(o, "-", 1);
        ex_out_u64(o, (uint64_t)0 - (uint64_t)v);
    } else {
        ex_out_u64(o, (uint64_t)v);
    }
}

static void out_put(void *o, const char *p, size_t n) { ex_out_bytes(o, p, n); }

/* The project's one JSON string writer (common/json.h): names are valid UTF-8 JSON whatever the trace holds. */
void ex_out_json(ex_out *o, const char *s) { cm_json_string(out_put, o, s); }

nt_status ex_out_flush(ex_out *o)
{
    out_drain(o);
    return o->failed ? NT_ERR_IO : NT_OK;
}
