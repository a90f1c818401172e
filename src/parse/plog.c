/* The callback log of a part (plog.h): entries in chunks, each a header and
 * the callback's argument as the caller will see it, fixed up at replay
 * only where the recording parser's tables could still move (descriptions)
 * or its per-event scratch was used (V6 labels in the field context). */
#include "parse/plog.h"
#include "common/format.h"

#include <string.h>

enum {
    PL_EVENT_QUIET, /* an event no event callback wants, kept for the sample or record that points to it */
    PL_STACK_COPY,  /* a stack events point to (the stack callback's entry points to it too) */
    PL_TRACE,
    PL_METADATA,
    PL_EVENT,
    PL_STACK,
    PL_SAMPLE,
    PL_METHOD,
    PL_MODULE,
    PL_ASSEMBLY,
    PL_SP,
    PL_GAP
};

/* The callback names as the parser's PS_CALL spells them in a stop's message. */
static const char *const pl_names[] = { "event", "stack", "trace", "metadata", "event", "stack", "sample",
                                        "method", "module", "assembly", "sequence_point", "sequence_gap" };

#define PL_CHUNK (256u * 1024u)
#define PL_NO_DESC UINT32_MAX /* the event's description is not in the table: desc points to a copy */

struct ps_plog_chunk {
    ps_plog_chunk *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
};

typedef struct pl_head {
    uint32_t kind;
    uint32_t size;     /* bytes of the entry, head included, a multiple of 16 */
    uint64_t unit_off; /* the parser's unit offset when the callback was made */
} pl_head;

/* An event as recorded: its V6 labels beside it, its description's index. */
typedef struct pl_event {
    nt_event ev;
    uint32_t desc_index; /* PL_NO_DESC: ev.desc is kept as is (NULL, or a copy in the log) */
    bool has_trace_id, has_span_id;
    uint8_t trace_id[16], span_id[8];
} pl_event;

void ps_plog_pool_init(ps_plog_pool *pool, const nt_allocator *alloc)
{
    memset(pool, 0, sizeof *pool);
    pthread_mutex_init(&pool->mu, NULL);
    cm_mem_init(&pool->mem, alloc);
}

void ps_plog_pool_free(ps_plog_pool *pool)
{
    for (ps_plog_chunk *c = pool->free, *n; c; c = n) {
        n = c->next;
        cm_mem_free(&pool->mem, c, sizeof *c + c->size);
    }
    pool->free = NULL;
    pthread_mutex_destroy(&pool->mu);
}

/* A chunk of at least size bytes: a kept one of the standard size, or new. */
static ps_plog_chunk *chunk_get(ps_plog_pool *pool, size_t size)
{
    pthread_mutex_lock(&pool->mu);
    ps_plog_chunk *c = NULL;
    if (size == PL_CHUNK && pool->free) {
        c = pool->free;
        pool->free = c->next;
    } else {
        c = cm_mem_alloc(&pool->mem, sizeof *c + size);
        if (c)
            c->size = size;
    }
    pthread_mutex_unlock(&pool->mu);
    return c;
}

void ps_plog_init(ps_plog *l, ps_plog_pool *pool, cm_mem *mem, nt_parser *p, const nt_callbacks *want)
{
    memset(l, 0, sizeof *l);
    l->pool = pool;
    l->mem = mem;
    l->p = p;
    l->want = want;
}

void ps_plog_free(ps_plog *l)
{
    if (!l->pool) /* never initialized (a zeroed log holds nothing) */
        return;
    pthread_mutex_lock(&l->pool->mu);
    for (ps_plog_chunk *c = l->head, *n; c; c = n) {
        n = c->next;
        if (c->size == PL_CHUNK) {
            c->next = l->pool->free;
            l->pool->free = c;
        } else {
            cm_mem_free(&l->pool->mem, c, sizeof *c + c->size);
        }
    }
    pthread_mutex_unlock(&l->pool->mu);
    cm_mem_free(l->mem, (void *)l->stacks, l->stacks_cap * sizeof *l->stacks);
    l->head = l->tail = NULL;
    l->stacks = NULL;
    l->stacks_cap = 0;
}

/* n bytes of the log (16-aligned), never moved; NULL when memory is short
 * (the log is then failed). */
static void *pl_alloc(ps_plog *l, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    ps_plog_chunk *c = l->tail;
    if (!c || c->size - c->used < n) {
        c = chunk_get(l->pool, n > PL_CHUNK ? n : PL_CHUNK);
        if (!c) {
            l->failed = true;
            return NULL;
        }
        c->next = NULL;
        c->used = 0;
        if (l->tail)
            l->tail->next = c;
        else
            l->head = c;
        l->tail = c;
    }
    void *at = c->data + c->used;
    c->used += n;
    return at;
}

/* A new entry of `kind` with room for `body` bytes after its head, and
 * `extra` more after them (16-aligned) for what its argument points to:
 * entries are walked by their size, so nothing of theirs lies between them. */
static void *pl_entry(ps_plog *l, uint32_t kind, size_t body, size_t extra)
{
    body = (body + 15) & ~(size_t)15;
    if (extra > UINT32_MAX - sizeof(pl_head) - body - 16) {
        l->failed = true;
        return NULL;
    }
    size_t n = (sizeof(pl_head) + body + extra + 15) & ~(size_t)15;
    pl_head *h = pl_alloc(l, n);
    if (!h)
        return NULL;
    h->kind = kind;
    h->size = (uint32_t)n;
    h->unit_off = l->p->unit_off;
    l->entries++;
    return h + 1;
}

/* The bytes after an entry's body (pl_entry's extra). */
static void *pl_extra(void *body, size_t body_size)
{
    return (unsigned char *)body + ((body_size + 15) & ~(size_t)15);
}

static size_t pl_len(const char *s) { return s ? strlen(s) + 1 : 0; }

/* Copy s (may be NULL) to *at, which moves past it. */
static const char *pl_str(char **at, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = *at;
    memcpy(d, s, n);
    *at += n;
    return d;
}

/* The log's copy of a stack the parser holds (s: its table's entry), made
 * the first time the interval's events or its stack callback need it: the
 * events that use it point to it. */
static const nt_stack *pl_stack_of(ps_plog *l, const nt_stack *s)
{
    if (!s)
        return NULL;
    if (!l->have_stacks || s->interval != l->stack_interval) {
        l->have_stacks = true;
        l->stack_interval = s->interval;
        l->stack_base = l->p->stacks.base;
        if (l->stacks_cap)
            memset((void *)l->stacks, 0, l->stacks_cap * sizeof *l->stacks);
    }
    uint32_t k = s->id - l->stack_base;
    if (k < l->stacks_cap && l->stacks[k])
        return l->stacks[k];
    if (k >= l->stacks_cap) {
        size_t old = l->stacks_cap;
        if (!cm_mem_reserve(l->mem, (void **)&l->stacks, &l->stacks_cap, (size_t)k + 1, sizeof *l->stacks)) {
            l->failed = true;
            return NULL;
        }
        memset((void *)(l->stacks + old), 0, (l->stacks_cap - old) * sizeof *l->stacks);
    }
    /* An entry of its own (entries are walked by size), skipped at replay. */
    nt_stack *e = pl_entry(l, PL_STACK_COPY, sizeof *e, (size_t)s->count * sizeof(uint64_t));
    if (!e)
        return NULL;
    uint64_t *ips = s->count ? pl_extra(e, sizeof *e) : NULL;
    if (s->count)
        memcpy(ips, s->ips, (size_t)s->count * sizeof *ips);
    *e = *s;
    e->ips = ips;
    l->stacks[k] = e;
    return e;
}

static int rec_trace(void *user, const nt_trace_info *info)
{
    ps_plog *l = user;
    (void)info;
    return !l->want->trace || pl_entry(l, PL_TRACE, 0, 0) ? 0 : 1;
}

static uint32_t pl_desc_index(const ps_plog *l, const nt_event_desc *d)
{
    const ps_metadata_table *t = &l->p->meta;
    if (d && d >= t->descs && d < t->descs + t->count)
        return (uint32_t)(d - t->descs);
    return PL_NO_DESC;
}

static int rec_metadata(void *user, const nt_event_desc *desc)
{
    ps_plog *l = user;
    if (!l->want->metadata)
        return 0;
    uint32_t *e = pl_entry(l, PL_METADATA, sizeof *e, 0);
    if (!e)
        return 1;
    *e = pl_desc_index(l, desc);
    if (*e == PL_NO_DESC) /* the parser hands over the stored description: never seen otherwise */
        l->inexact = true;
    return 0;
}

/* The log's copy of the event being delivered, made once (kind PL_EVENT
 * when the event callback wants it, else PL_EVENT_QUIET); NULL when memory
 * is short. */
static nt_event *pl_event_copy(ps_plog *l, uint32_t kind)
{
    if (l->last_event)
        return l->last_event;
    const nt_event *ev = l->src_event;
    uint32_t index = pl_desc_index(l, ev->desc);
    bool copy = ev->desc && index == PL_NO_DESC; /* a V6 label list's override: a copy of its own */
    pl_event *e = pl_entry(l, kind, sizeof *e, copy ? sizeof(nt_event_desc) : 0);
    if (!e)
        return NULL;
    e->ev = *ev;
    e->desc_index = index;
    if (copy) {
        nt_event_desc *d = pl_extra(e, sizeof *e);
        *d = *ev->desc;
        e->ev.desc = d;
    }
    e->ev.stack = pl_stack_of(l, ev->stack);
    const struct nt_field_ctx *c = &l->p->fctx;
    e->has_trace_id = c->has_trace_id;
    e->has_span_id = c->has_span_id;
    memcpy(e->trace_id, c->trace_id, 16);
    memcpy(e->span_id, c->span_id, 8);
    l->last_event = &e->ev;
    return l->failed ? NULL : &e->ev;
}

/* Every event passes here; it is copied only when the event callback, or a
 * sample or record callback that points to it, wants it.  The parser's
 * event (and its field context) stays as it is until the next event. */
static int rec_event(void *user, const nt_event *ev)
{
    ps_plog *l = user;
    l->src_event = ev;
    l->last_event = NULL;
    return l->want->event && !pl_event_copy(l, PL_EVENT);
}

static int rec_stack(void *user, const nt_stack *s)
{
    ps_plog *l = user;
    if (!l->want->stack)
        return 0;
    const nt_stack *copy = pl_stack_of(l, s);
    const nt_stack **e = copy ? pl_entry(l, PL_STACK, sizeof *e, 0) : NULL;
    if (!e)
        return 1;
    *e = copy;
    return 0;
}

static int rec_sample(void *user, const nt_sample *s)
{
    ps_plog *l = user;
    if (!l->want->sample)
        return 0;
    nt_event *ev = pl_event_copy(l, PL_EVENT_QUIET);
    nt_sample *e = ev ? pl_entry(l, PL_SAMPLE, sizeof *e, 0) : NULL;
    if (!e)
        return 1;
    *e = *s;
    e->stack = ev->stack;
    e->event = ev;
    return 0;
}

static int rec_method(void *user, const nt_method *m)
{
    ps_plog *l = user;
    if (!l->want->method)
        return 0;
    nt_event *ev = pl_event_copy(l, PL_EVENT_QUIET);
    nt_method *e = ev ? pl_entry(l, PL_METHOD, sizeof *e, pl_len(m->declaring_type) + pl_len(m->name) + pl_len(m->signature)) : NULL;
    if (!e)
        return 1;
    char *at = pl_extra(e, sizeof *e);
    *e = *m;
    e->event = ev;
    e->declaring_type = pl_str(&at, m->declaring_type);
    e->name = pl_str(&at, m->name);
    e->signature = pl_str(&at, m->signature);
    return 0;
}

static int rec_module(void *user, const nt_module *m)
{
    ps_plog *l = user;
    if (!l->want->module)
        return 0;
    nt_event *ev = pl_event_copy(l, PL_EVENT_QUIET);
    nt_module *e = ev ? pl_entry(l, PL_MODULE, sizeof *e, pl_len(m->il_path) + pl_len(m->native_path)) : NULL;
    if (!e)
        return 1;
    char *at = pl_extra(e, sizeof *e);
    *e = *m;
    e->event = ev;
    e->il_path = pl_str(&at, m->il_path);
    e->native_path = pl_str(&at, m->native_path);
    return 0;
}

static int rec_assembly(void *user, const nt_assembly *a)
{
    ps_plog *l = user;
    if (!l->want->assembly)
        return 0;
    nt_event *ev = pl_event_copy(l, PL_EVENT_QUIET);
    nt_assembly *e = ev ? pl_entry(l, PL_ASSEMBLY, sizeof *e, pl_len(a->name)) : NULL;
    if (!e)
        return 1;
    char *at = pl_extra(e, sizeof *e);
    *e = *a;
    e->event = ev;
    e->name = pl_str(&at, a->name);
    return 0;
}

static int rec_sp(void *user, const nt_sequence_point *sp)
{
    ps_plog *l = user;
    if (sp->flags & CM_V6_SP_FLUSH_METADATA)
        l->inexact = true; /* the descriptions recorded so far are about to be cleared */
    if (!l->want->sequence_point)
        return 0;
    nt_sequence_point *e = pl_entry(l, PL_SP, sizeof *e, (size_t)sp->thread_count * sizeof(nt_sp_thread));
    if (!e)
        return 1;
    nt_sp_thread *th = sp->thread_count ? pl_extra(e, sizeof *e) : NULL;
    if (sp->thread_count)
        memcpy(th, sp->threads, (size_t)sp->thread_count * sizeof *th);
    *e = *sp;
    e->threads = th;
    return 0;
}

static int rec_gap(void *user, const nt_sequence_gap *gap)
{
    ps_plog *l = user;
    if (!l->want->sequence_gap)
        return 0;
    nt_sequence_gap *e = pl_entry(l, PL_GAP, sizeof *e, 0);
    if (!e)
        return 1;
    *e = *gap;
    return 0;
}

void ps_plog_callbacks(nt_callbacks *cb)
{
    *cb = (nt_callbacks){
        .struct_size = sizeof *cb,
        .trace = rec_trace,
        .metadata = rec_metadata,
        .event = rec_event,
        .stack = rec_stack,
        .sample = rec_sample,
        .method = rec_method,
        .module = rec_module,
        .assembly = rec_assembly,
        .sequence_point = rec_sp,
        .sequence_gap = rec_gap,
    };
}

/* One entry to its callback; non-zero when the callback stopped. */
static int pl_call(ps_plog *l, uint32_t kind, void *body, const nt_callbacks *cb, void *user,
                   struct nt_field_ctx *fctx)
{
    switch (kind) {
    case PL_TRACE: return cb->trace ? cb->trace(user, &l->p->info) : 0;
    case PL_METADATA: return cb->metadata ? cb->metadata(user, &l->p->meta.descs[*(uint32_t *)body]) : 0;
    case PL_STACK_COPY: return 0;
    case PL_EVENT_QUIET:
    case PL_EVENT: {
        pl_event *e = body;
        if (e->desc_index != PL_NO_DESC)
            e->ev.desc = &l->p->meta.descs[e->desc_index];
        fctx->has_trace_id = e->has_trace_id;
        fctx->has_span_id = e->has_span_id;
        memcpy(fctx->trace_id, e->trace_id, 16);
        memcpy(fctx->span_id, e->span_id, 8);
        e->ev.field_ctx = fctx;
        return kind == PL_EVENT && cb->event ? cb->event(user, &e->ev) : 0;
    }
    case PL_STACK: return cb->stack ? cb->stack(user, *(const nt_stack **)body) : 0;
    case PL_SAMPLE: return cb->sample ? cb->sample(user, body) : 0;
    case PL_METHOD: return cb->method ? cb->method(user, body) : 0;
    case PL_MODULE: return cb->module ? cb->module(user, body) : 0;
    case PL_ASSEMBLY: return cb->assembly ? cb->assembly(user, body) : 0;
    case PL_GAP: return cb->sequence_gap ? cb->sequence_gap(user, body) : 0;
    default: return cb->sequence_point ? cb->sequence_point(user, body) : 0;
    }
}

nt_status ps_plog_replay(ps_plog *l, const nt_callbacks *cb, void *user, struct nt_field_ctx *fctx, nt_parser *to)
{
    for (ps_plog_chunk *c = l->head; c; c = c->next) {
        for (size_t at = 0; at < c->used;) {
            pl_head *h = (pl_head *)(void *)(c->data + at);
            at += h->size;
            if (pl_call(l, h->kind, h + 1, cb, user, fctx))
                return ps_fail(to, NT_ERR_STOPPED, h->unit_off, "stopped by the %s callback", pl_names[h->kind]);
        }
    }
    return NT_OK;
}
