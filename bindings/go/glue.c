#include "glue.h"
#include "_cgo_export.h"

#include <stdlib.h>
#include <string.h>

void ntgo_samples(const nt_trace *t, ntgo_sample *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        out[i].time_ns = s.time_ns;
        out[i].thread_id = s.thread_id;
        out[i].type = s.type;
        out[i].stack_index = s.stack_index;
    }
}

/* Each trampoline feeds what the parser keeps first (so the kept trace sees
 * every record even when Go stops the parse), then Go. */
static int on_trace(void *user, const nt_trace_info *info)
{
    ntgo_parser *g = user;
    g->frequency = info->qpc_frequency;
    if (g->keep && g->keep_cb.trace && g->keep_cb.trace(g->keep, info))
        return 1;
    return (g->want & NTGO_HEADER) ? goOnHeader(g->handle, (nt_trace_info *)info) : 0;
}

static int on_sample(void *user, const nt_sample *s)
{
    ntgo_parser *g = user;
    if (g->keep && g->keep_cb.sample && g->keep_cb.sample(g->keep, s))
        return 1;
    return (g->want & NTGO_SAMPLE) ? goOnSample(g->handle, (nt_sample *)s) : 0;
}

static int on_method(void *user, const nt_method *m)
{
    ntgo_parser *g = user;
    if (g->keep && g->keep_cb.method && g->keep_cb.method(g->keep, m))
        return 1;
    return (g->want & NTGO_METHOD) ? goOnMethod(g->handle, (nt_method *)m) : 0;
}

static int on_module(void *user, const nt_module *m)
{
    ntgo_parser *g = user;
    if (g->keep && g->keep_cb.module && g->keep_cb.module(g->keep, m))
        return 1;
    return (g->want & NTGO_MODULE) ? goOnModule(g->handle, (nt_module *)m) : 0;
}

static int on_assembly(void *user, const nt_assembly *a)
{
    ntgo_parser *g = user;
    if (g->keep && g->keep_cb.assembly && g->keep_cb.assembly(g->keep, a))
        return 1;
    return (g->want & NTGO_ASSEMBLY) ? goOnAssembly(g->handle, (nt_assembly *)a) : 0;
}

static int on_event(void *user, const nt_event *ev)
{
    ntgo_parser *g = user;
    if (g->keep && g->keep_cb.event && g->keep_cb.event(g->keep, ev))
        return 1;
    return (g->want & NTGO_EVENT) ? goOnEvent(g->handle, (nt_event *)ev, g->frequency, &g->it, &g->field) : 0;
}

bool ntgo_field_next(nt_field_iter *it, ntgo_field *out)
{
    nt_field_value v;
    if (!nt_field_next(it, &v))
        return false;
    memset(out, 0, sizeof *out);
    out->name = v.name;
    out->kind = v.kind;
    out->in_array = v.in_array;
    switch (v.kind) {
    case NT_VALUE_INT:
    case NT_VALUE_DATETIME: out->i = v.v.i; break;
    case NT_VALUE_UINT:
    case NT_VALUE_BOOL: out->u = v.v.u; break;
    case NT_VALUE_FLOAT: out->f = v.v.f; break;
    case NT_VALUE_GUID: memcpy(out->guid, v.v.guid, sizeof out->guid); break;
    case NT_VALUE_STRING: out->ptr = v.v.str.ptr; out->len = v.v.str.len; break;
    case NT_VALUE_BINARY: out->ptr = v.v.bin.ptr; out->len = v.v.bin.len; break;
    default: break;
    }
    return true;
}

static int on_sequence_point(void *user, const nt_sequence_point *sp)
{
    ntgo_parser *g = user;
    return g->keep_cb.sequence_point(g->keep, sp);
}

static int on_sequence_gap(void *user, const nt_sequence_gap *gap)
{
    ntgo_parser *g = user;
    return g->keep_cb.sequence_gap(g->keep, gap);
}

ntgo_parser *ntgo_parser_new(uintptr_t handle, unsigned want, int keep_kind, const nt_limits *lim,
                             const nt_trace_window_config *wcfg)
{
    ntgo_parser *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->handle = handle;
    g->want = want;
    g->keep_kind = keep_kind;
    /* The current layout: a window then also counts each thread's loss (sequence_gap). */
    g->keep_cb.struct_size = sizeof g->keep_cb;
    if (keep_kind == NTGO_KEEP_TRACE) {
        g->keep = nt_trace_builder_new(NULL);
        nt_trace_builder_callbacks(&g->keep_cb);
    } else if (keep_kind == NTGO_KEEP_WINDOWS) {
        g->keep = nt_trace_window_new(wcfg, NULL);
        nt_trace_window_callbacks(&g->keep_cb);
    }
    if (keep_kind != NTGO_KEEP_NONE && !g->keep) {
        free(g);
        return NULL;
    }
    if (!want) {
        /* Nothing for Go: the kept object's callbacks directly, no trampolines. */
        g->parser = nt_parser_new(&g->keep_cb, g->keep, lim, NULL);
    } else {
        bool keep = g->keep != NULL;
        nt_callbacks cb = NT_STRUCT_INIT(nt_callbacks);
        if ((keep && g->keep_cb.trace) || (want & (NTGO_HEADER | NTGO_EVENT)))
            cb.trace = on_trace;
        if ((keep && g->keep_cb.event) || (want & NTGO_EVENT))
            cb.event = on_event;
        if ((keep && g->keep_cb.sample) || (want & NTGO_SAMPLE))
            cb.sample = on_sample;
        if ((keep && g->keep_cb.method) || (want & NTGO_METHOD))
            cb.method = on_method;
        if ((keep && g->keep_cb.module) || (want & NTGO_MODULE))
            cb.module = on_module;
        if ((keep && g->keep_cb.assembly) || (want & NTGO_ASSEMBLY))
            cb.assembly = on_assembly;
        if (keep && g->keep_cb.sequence_point)
            cb.sequence_point = on_sequence_point;
        if (keep && g->keep_cb.sequence_gap)
            cb.sequence_gap = on_sequence_gap;
        g->parser = nt_parser_new(&cb, g, lim, NULL);
    }
    if (!g->parser) {
        ntgo_parser_free(g);
        return NULL;
    }
    /* Records that reach only the kept object need no UTF-8 from the parser:
     * the builder and the windows convert just the names they keep (most
     * rundown records are dropped), as nt_trace_from_file does. */
    if (g->keep && !(want & (NTGO_METHOD | NTGO_MODULE | NTGO_ASSEMBLY)))
        nt_parser_set_lazy_names(g->parser, true);
    return g;
}

nt_status ntgo_parser_trace(ntgo_parser *g, nt_status st, nt_trace **out)
{
    *out = NULL;
    if (g->keep_kind != NTGO_KEEP_TRACE || !g->keep)
        return NT_OK;
    nt_trace_builder *b = g->keep;
    g->keep = NULL; /* finish frees it whatever it returns */
    nt_status s = nt_trace_builder_finish(b, g->parser, st, out);
    if (*out && !nt_trace_header(*out)) { /* not even the header was read: no trace */
        nt_trace_free(*out);
        *out = NULL;
    }
    return s;
}

nt_status ntgo_parser_take_window(ntgo_parser *g, nt_trace **out)
{
    *out = NULL;
    if (g->keep_kind != NTGO_KEEP_WINDOWS)
        return NT_ERR_STATE;
    return nt_trace_window_take(g->keep, out);
}

nt_trace_window *ntgo_parser_window(ntgo_parser *g)
{
    return g->keep_kind == NTGO_KEEP_WINDOWS ? g->keep : NULL;
}

void ntgo_parser_free(ntgo_parser *g)
{
    if (!g)
        return;
    nt_parser_free(g->parser);
    if (g->keep_kind == NTGO_KEEP_TRACE)
        nt_trace_builder_free(g->keep);
    else if (g->keep_kind == NTGO_KEEP_WINDOWS)
        nt_trace_window_free(g->keep);
    free(g);
}

static int go_write(void *user, const void *data, size_t len)
{
    return goWrite((uintptr_t)user, (void *)data, len);
}

nt_status ntgo_export(const nt_trace *t, int kind, const nt_export_options *opt, uintptr_t handle)
{
    void *user = (void *)handle;
    switch (kind) {
    case NTGO_FOLDED:
        return nt_export_folded(t, opt, go_write, user);
    case NTGO_SPEEDSCOPE:
        return nt_export_speedscope(t, opt, go_write, user);
    case NTGO_PPROF:
        return nt_export_pprof(t, opt, go_write, user);
    }
    return NT_ERR_INVALID_ARG;
}

nt_status ntgo_convert(int fd, const void *data, size_t len, const nt_convert_options *opt, uintptr_t handle,
                       nt_convert_stats *stats)
{
    if (data)
        return nt_convert_bytes(data, len, opt, go_write, (void *)handle, stats);
    return nt_convert(fd, opt, go_write, (void *)handle, stats);
}

nt_session *ntgo_session_new(nt_session_config *cfg, uintptr_t handle)
{
    cfg->sink = go_write;
    cfg->sink_user = (void *)handle;
    return nt_session_new(cfg, NULL);
}
