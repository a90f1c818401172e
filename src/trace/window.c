/* Windows of a live stream (nt_trace_window): each window is a builder fed
 * the window's samples; the method, module and assembly records of the whole
 * stream are remembered in arrival order and given to each window's builder
 * at the end of the window, after its samples, as a file's rundown comes
 * after its samples.  So a window resolves exactly as the file trace of its
 * samples and every record would (build.c, records.c, resolve.c): one
 * resolver for the file and the live view.  A profile window
 * (nt_profile_window_new) does the same with a profile builder, so each
 * window is also the file profile of its events. */
#include "trace/profile_internal.h"
#include "common/abi.h"

#include <string.h>

#define DEFAULT_MAX_RECORDS (1u << 20)

typedef enum win_kind { WIN_METHOD, WIN_MODULE, WIN_ASSEMBLY } win_kind;

/* What a window builds: a trace or a profile.  The builder's callbacks, free
 * and finish are its kind's; only starting one differs (a profile window
 * keeps the events' profiles and no thread samples). */
typedef struct win_type {
    const tr_build_kind *build;
    void *(*start)(const nt_allocator *alloc);
} win_type;

static void *start_trace(const nt_allocator *alloc) { return nt_trace_builder_new(alloc); }

static void *start_profile(const nt_allocator *alloc)
{
    static const nt_profile_options events_only = { .events_only = true };
    return nt_profile_builder_new(&events_only, alloc);
}

static const win_type TRACE_WINDOW = { &tr_trace_kind, start_trace };
static const win_type PROFILE_WINDOW = { &pr_profile_kind, start_profile };

/* A remembered record: its strings are offsets + 1 into the arena (0 = NULL)
 * while the arena may move. */
typedef struct win_rec {
    win_kind kind;
    union {
        nt_method m;
        nt_module mo;
        nt_assembly a;
    } u;
} win_rec;

struct nt_trace_window {
    nt_mem mem;
    nt_allocator alloc;
    nt_trace_window_config cfg;
    nt_callbacks bcb;          /* the builder's callbacks */
    const win_type *type;
    void *b;                   /* this window's builder (of type); NULL after a failed start */
    nt_trace_info info;
    bool have_info;
    bool builder_stopped;      /* the builder refused a sample (memory or a table limit) */
    bool nomem, over_limit;
    win_rec *recs;
    size_t nrecs, recs_cap;
    char *arena;
    size_t arena_len, arena_cap;
};

static bool start_window(nt_trace_window *w)
{
    w->b = w->type->start(&w->alloc);
    w->builder_stopped = false;
    if (!w->b)
        return false;
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
    nt_trace_window *w = NT_MEM_NEW(nt_trace_window, alloc);
    if (!w)
        return NULL;
    w->alloc = w->mem.a;
    w->cfg = given;
    if (!w->cfg.max_records)
        w->cfg.max_records = DEFAULT_MAX_RECORDS;
    w->type = type;
    type->build->callbacks(&w->bcb);
    if (!start_window(w)) {
        nt_mem mem = w->mem;
        nt_mem_free(&mem, w, sizeof *w);
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

/* A record's string copied into the arena (converted when the parser gave
 * it lazily, as UTF-16): its offset + 1, 0 for none, UINTPTR_MAX when
 * memory is short. */
static uintptr_t keep_string(nt_trace_window *w, const char *s, nt_str16 s16)
{
    if (!s && !s16.count)
        return 0;
    size_t n;
    if (s) {
        n = strlen(s) + 1;
        if (!nt_mem_reserve(&w->mem, (void **)&w->arena, &w->arena_cap, w->arena_len + n, 1))
            return UINTPTR_MAX;
        memcpy(w->arena + w->arena_len, s, n);
    } else {
        n = tr_utf8_append(&w->mem, &w->arena, &w->arena_cap, w->arena_len, s16);
        if (n == SIZE_MAX)
            return UINTPTR_MAX;
        n++; /* its NUL */
    }
    w->arena_len += n;
    return w->arena_len - n + 1;
}

static const char *string_at(const nt_trace_window *w, const char *off)
{
    uintptr_t o = (uintptr_t)off;
    return o ? w->arena + (o - 1) : NULL;
}

/* A new record slot, or NULL (limit or memory, noted). */
static win_rec *new_rec(nt_trace_window *w, win_kind kind)
{
    if (w->nrecs >= w->cfg.max_records) {
        w->over_limit = true;
        return NULL;
    }
    if (!nt_mem_reserve(&w->mem, (void **)&w->recs, &w->recs_cap, w->nrecs + 1, sizeof *w->recs)) {
        w->nomem = true;
        return NULL;
    }
    win_rec *r = &w->recs[w->nrecs];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    return r;
}

/* Keep the strings of a record whose slot is the last one; drop it when memory is short. */
static int keep_strings(nt_trace_window *w, const char **s[], const nt_str16 *s16, int n)
{
    for (int i = 0; i < n; i++) {
        uintptr_t o = keep_string(w, *s[i], s16[i]);
        if (o == UINTPTR_MAX) {
            w->nomem = true;
            return 0;
        }
        *s[i] = (const char *)o;
    }
    w->nrecs++;
    return 0;
}

static int on_method(void *user, const nt_method *m)
{
    nt_trace_window *w = user;
    win_rec *r = new_rec(w, WIN_METHOD);
    if (!r)
        return 0;
    r->u.m = *m;
    r->u.m.event = NULL;
    const char **s[] = { &r->u.m.declaring_type, &r->u.m.name, &r->u.m.signature };
    const nt_str16 s16[] = { m->declaring_type16, m->name16, m->signature16 };
    r->u.m.declaring_type16 = r->u.m.name16 = r->u.m.signature16 = (nt_str16){ NULL, 0 };
    return keep_strings(w, s, s16, 3);
}

static int on_module(void *user, const nt_module *mo)
{
    nt_trace_window *w = user;
    win_rec *r = new_rec(w, WIN_MODULE);
    if (!r)
        return 0;
    r->u.mo = *mo;
    r->u.mo.event = NULL;
    const char **s[] = { &r->u.mo.il_path, &r->u.mo.native_path };
    const nt_str16 s16[] = { mo->il_path16, mo->native_path16 };
    r->u.mo.il_path16 = r->u.mo.native_path16 = (nt_str16){ NULL, 0 };
    return keep_strings(w, s, s16, 2);
}

static int on_assembly(void *user, const nt_assembly *a)
{
    nt_trace_window *w = user;
    win_rec *r = new_rec(w, WIN_ASSEMBLY);
    if (!r)
        return 0;
    r->u.a = *a;
    r->u.a.event = NULL;
    const char **s[] = { &r->u.a.name };
    const nt_str16 s16[] = { a->name16 };
    r->u.a.name16 = (nt_str16){ NULL, 0 };
    return keep_strings(w, s, s16, 1);
}

static int on_trace(void *user, const nt_trace_info *info)
{
    nt_trace_window *w = user;
    w->info = *info;
    w->have_info = true;
    return w->b ? w->bcb.trace(w->b, info) : 0;
}

/* A stream that does not end must not be stopped by one window's trouble:
 * the window notes it and take() reports it. */
static int on_sample(void *user, const nt_sample *s)
{
    nt_trace_window *w = user;
    if (w->b && !w->builder_stopped && w->bcb.sample(w->b, s) != 0)
        w->builder_stopped = true;
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

static int on_sequence_point(void *user, const nt_sequence_point *sp)
{
    nt_trace_window *w = user;
    return w->b ? w->bcb.sequence_point(w->b, sp) : 0;
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

/* Every remembered record into the window's builder, in arrival order. */
static void replay(nt_trace_window *w)
{
    for (size_t i = 0; i < w->nrecs && !w->builder_stopped; i++) {
        win_rec r = w->recs[i];
        int rc = 0;
        switch (r.kind) {
        case WIN_METHOD:
            r.u.m.declaring_type = string_at(w, r.u.m.declaring_type);
            r.u.m.name = string_at(w, r.u.m.name);
            r.u.m.signature = string_at(w, r.u.m.signature);
            rc = w->bcb.method(w->b, &r.u.m);
            break;
        case WIN_MODULE:
            r.u.mo.il_path = string_at(w, r.u.mo.il_path);
            r.u.mo.native_path = string_at(w, r.u.mo.native_path);
            rc = w->bcb.module(w->b, &r.u.mo);
            break;
        case WIN_ASSEMBLY:
            r.u.a.name = string_at(w, r.u.a.name);
            rc = w->bcb.assembly(w->b, &r.u.a);
            break;
        }
        w->builder_stopped = rc != 0;
    }
}

/* After a take: what the window noted, and the next window's builder. */
static nt_status window_end(nt_trace_window *w, nt_status st)
{
    if (st == NT_OK && w->nomem)
        st = NT_ERR_NOMEM;
    else if (st == NT_OK && w->over_limit)
        st = NT_ERR_LIMIT;
    w->nomem = false;
    if (!start_window(w) && st == NT_OK)
        st = NT_ERR_NOMEM;
    return st;
}

/* The one take: w must be of type (a trace window does not hand over a
 * profile, nor a profile window a trace). */
static nt_status take(nt_trace_window *w, const win_type *type, void *out)
{
    if (!w || w->type != type)
        return NT_ERR_INVALID_ARG;
    nt_status st = NT_ERR_NOMEM;
    if (w->b) {
        replay(w);
        /* A builder that stopped says why through NT_ERR_STOPPED (memory, or a table limit). */
        const nt_trace *built = NULL;
        st = type->build->finish(w->b, NULL, w->builder_stopped ? NT_ERR_STOPPED : NT_OK, out, &built);
        w->b = NULL;
        if (st == NT_OK)
            st = built->status;
    }
    return window_end(w, st);
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

void nt_trace_window_free(nt_trace_window *w)
{
    if (!w)
        return;
    if (w->b)
        w->type->build->free(w->b);
    nt_mem_free(&w->mem, w->recs, w->recs_cap * sizeof *w->recs);
    nt_mem_free(&w->mem, w->arena, w->arena_cap);
    NT_MEM_DELETE(nt_trace_window, w);
}
