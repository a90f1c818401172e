/* The event profiles: allocation ticks, exceptions and lock contention, each
 * event's stack interned by the trace builder it runs beside and resolved by
 * it like a sample's (tr_builder_intern, tr_builder_resolve_also), so the
 * profiles name frames exactly as `nettrace samples` does.
 *
 * Events on the same interned stack, thread, label and heap merge into one
 * record (found through a keyed map over the records), so memory follows distinct stacks,
 * not events.  A record resolves at the time of its first event; since a
 * stack resolves differently only after code at one of its addresses was
 * loaded or unloaded, the merge key also holds the trace builder's epoch of
 * such changes (code_epoch.h). */
#include "trace/profile_internal.h"
#include "common/sat.h"
#include "common/abi.h"
#include "common/hash.h"

#include <stdio.h>
#include <string.h>

/* Runtime event ids (Microsoft-Windows-DotNETRuntime). */
#define EV_ALLOC_TICK 10
#define EV_EXCEPTION 80
#define EV_CONTENTION_START 81
#define EV_CONTENTION_STOP 91
#define EV_GC_PER_HEAP_HISTORY 204 /* the GC's per-heap sizes (profile_gc.c) */

/* A contention start waiting for its stop, per thread. */
typedef struct pr_open {
    uint64_t thread_id;
    int64_t ticks;
    uint32_t istack, epoch;
    uint8_t flags;
    bool live;
    bool counted;           /* it started inside the time window: its wait is a record */
} pr_open;

struct nt_profile_builder {
    nt_trace_builder *tb;
    nt_callbacks tcb;       /* the trace builder's callbacks, called first */
    nt_profile *p;
    bool keep_events, events_only, exception_messages, failed;
    nt_status fail_status;
    cm_map rec_index;       /* keyed hash of a record's merge key (rec_hash) -> record (cm_map_find) */
    cm_hash_key key;        /* rec_hash's secret: which records share a hash cannot be chosen */
    pr_open *opens;
    size_t nopens, opens_cap;
    cm_map open_index;      /* thread id -> index in opens */
    pr_gc_state gc;
    nt_time_bound from, to; /* the window as given; resolved when the header says where the trace starts */
    int64_t from_ns, to_ns;
};

static const char *const KIND_NAMES[] = { "cpu", "wall", "alloc", "exceptions", "contention" };

const char *nt_profile_kind_name(nt_profile_kind k)
{
    return (unsigned)k < NT_PROFILE_KIND_COUNT_ ? KIND_NAMES[k] : NULL;
}

bool nt_profile_kind_parse(const char *s, nt_profile_kind *out)
{
    for (unsigned k = 0; s && k < NT_PROFILE_KIND_COUNT_; k++)
        if (strcmp(s, KIND_NAMES[k]) == 0) {
            *out = (nt_profile_kind)k;
            return true;
        }
    return false;
}

const char *nt_alloc_heap_name(nt_alloc_heap h)
{
    static const char *const names[] = { "soh", "loh", "poh", "other" };
    return names[(unsigned)h < 3 ? h : 3];
}

static int fail(nt_profile_builder *b, nt_status s)
{
    b->failed = true;
    b->fail_status = s;
    return 1;
}

/* A limit of nt_trace_limits reached: the parse stops, and msg names it in the trace's message. */
static int fail_limit(nt_profile_builder *b, const char *msg)
{
    tr_builder_fail_limit(b->tb, msg);
    return fail(b, NT_ERR_LIMIT);
}

/* After interning a label: false (the build stopped) when the labels are past max_labels. */
static bool labels_fit(nt_profile_builder *b)
{
    uint32_t max = tr_builder_limits(b->tb)->max_labels;
    if (b->p->strings.count <= max)
        return true;
    char msg[96];
    snprintf(msg, sizeof msg, "more than %u distinct labels (nt_trace_limits.max_labels)", max);
    fail_limit(b, msg);
    return false;
}

nt_profile_builder *nt_profile_builder_new(const nt_profile_options *given, const nt_allocator *alloc)
{
    nt_profile_options o, *opt = &o;
    nt_trace_options to;
    if (!ABI_IN(nt_profile_options, opt, given) || !ABI_IN(nt_trace_options, &to, o.trace))
        return NULL;
    o.trace = &to;
    nt_profile *p = CM_MEM_NEW(nt_profile, alloc);
    if (!p)
        return NULL;
    nt_profile_builder *b = cm_mem_alloc(&p->mem, sizeof *b);
    nt_trace_builder *tb = nt_trace_builder_new(alloc);
    if (!b || !tb) {
        nt_trace_builder_free(tb);
        cm_mem_free(&p->mem, b, sizeof *b);
        CM_MEM_DELETE(nt_profile, p);
        return NULL;
    }
    memset(b, 0, sizeof *b);
    b->p = p;
    b->tb = tb;
    nt_trace_builder_set_limits(tb, opt && opt->trace ? opt->trace->trace_limits : NULL);
    b->gc.lim = tr_builder_limits(tb);
    cm_hash_key_init(&b->key, b);
    nt_trace_builder_callbacks(&b->tcb);
    b->keep_events = opt && opt->keep_events;
    b->events_only = opt && opt->events_only;
    b->exception_messages = opt && opt->exception_messages;
    if (opt) {
        b->from = opt->from;
        b->to = opt->to;
    }
    p->first_ticks = INT64_MAX;
    p->last_ticks = INT64_MIN;
    return b;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

/* The fields are input (thread ids, stacks, labels), so the chain starts
 * from the builder's secret key and SipHash finishes it, as the trace
 * builder's stack hash does: a file cannot put its records in one chain. */
static uint64_t rec_hash(const nt_profile_builder *b, const pr_rec *r, uint32_t istack)
{
    uint64_t h = mix(b->key.v0, (uint64_t)r->kind << 16 | (uint64_t)r->heap << 8 | r->open);
    h = mix(h, istack);
    h = mix(h, r->thread_id);
    h = mix(h, (uint64_t)(uintptr_t)r->label); /* interned: equal labels share a pointer */
    h = mix(h, (uint64_t)(uintptr_t)r->message);
    return cm_hash_u64(&b->key, mix(h, r->epoch));
}

/* A record looked up in the merge index: its key fields. */
typedef struct pr_rec_sought {
    const nt_profile *p;
    const pr_rec *r;
    uint32_t istack;
} pr_rec_sought;

/* Whether record val has the merge key sought. */
static bool same_key(const void *ctx, uint64_t val)
{
    const pr_rec_sought *k = ctx;
    const pr_rec *q = &k->p->recs[val], *r = k->r;
    return k->p->res[val].stack == k->istack && q->kind == r->kind && q->heap == r->heap && q->open == r->open &&
           q->thread_id == r->thread_id && q->label == r->label && q->message == r->message && q->epoch == r->epoch;
}

/* Add weight to the record with r's key, or a new record. */
static int add_record(nt_profile_builder *b, const pr_rec *r, uint32_t istack, int64_t ticks)
{
    nt_profile *p = b->p;
    cm_mem *m = &p->mem;
    uint64_t h = 0;
    if (!b->keep_events) {
        h = rec_hash(b, r, istack);
        const pr_rec_sought k = { p, r, istack };
        const uint64_t *found = cm_map_find(&b->rec_index, h, same_key, &k);
        if (found) {
            pr_rec *q = &p->recs[*found];
            q->value = cm_sat_add(q->value, r->value);
            q->count += r->count;
            return 0;
        }
    }
    if (p->nrecs >= UINT32_MAX - 1 ||
        !cm_mem_reserve(m, (void **)&p->recs, &p->recs_cap, p->nrecs + 1, sizeof *p->recs) ||
        !cm_mem_reserve(m, (void **)&p->res, &p->res_cap, p->nrecs + 1, sizeof *p->res) ||
        (!b->keep_events && !cm_map_add(m, &b->rec_index, h, p->nrecs)))
        return fail(b, NT_ERR_NOMEM);
    p->recs[p->nrecs] = *r;
    p->res[p->nrecs] = (tr_sample){ ticks, istack, 0 };
    p->nrecs++;
    p->totals[r->kind].records++;
    return 0;
}

static uint32_t intern(nt_profile_builder *b, const nt_event *ev, nt_profile_kind k)
{
    if (!ev->stack)
        b->p->totals[k].without_stack++;
    uint32_t st = tr_builder_intern(b->tb, ev->stack);
    if (st == UINT32_MAX)
        fail(b, NT_ERR_NOMEM);
    return st;
}

static int64_t ticks_ns(const nt_profile *p, int64_t ticks) { return nt_ticks_to_ns(ticks, p->frequency); }

/* Whether an event at ticks counts: the window applies per event, so a
 * merged record holds only events inside it. */
static bool in_window(const nt_profile_builder *b, int64_t ticks)
{
    if (!b->from.set && !b->to.set)
        return true;
    int64_t ns = ticks_ns(b->p, ticks);
    return !(b->from.set && ns < b->from_ns) && !(b->to.set && ns >= b->to_ns);
}

static int on_alloc(nt_profile_builder *b, const nt_event *ev)
{
    nt_profile *p = b->p;
    pr_want w[] = { { "AllocationAmount", false, { 0 } }, { "AllocationKind", false, { 0 } },
                    { "AllocationAmount64", false, { 0 } }, { "TypeName", false, { 0 } } };
    pr_fields(ev, w, 4);
    int64_t bytes = w[2].have ? pr_int(&w[2]) : pr_int(&w[0]);
    if (bytes < 0)
        bytes = 0;
    pr_gc_allocated(&b->gc, bytes); /* the GC timeline is not windowed */
    if (!in_window(b, ev->timestamp))
        return 0;
    int64_t kind = pr_int(&w[1]);
    const char *type = w[3].have && w[3].v.kind == NT_VALUE_STRING ? w[3].v.v.str.ptr : "";
    pr_rec r = { ev->thread_id, tr_intern(&p->mem, &p->strings, type), bytes, 1, tr_builder_code_epoch(b->tb),
                 NT_PROFILE_ALLOC, (uint8_t)(kind >= 0 && kind < 3 ? kind : NT_HEAP_OTHER), 0, NULL };
    if (!r.label)
        return fail(b, NT_ERR_NOMEM);
    if (!labels_fit(b))
        return 1;
    uint32_t st = intern(b, ev, NT_PROFILE_ALLOC);
    if (st == UINT32_MAX)
        return 1;
    p->totals[NT_PROFILE_ALLOC].events++;
    p->totals[NT_PROFILE_ALLOC].value = cm_sat_add(p->totals[NT_PROFILE_ALLOC].value, r.value);
    return add_record(b, &r, st, ev->timestamp);
}

static int on_exception(nt_profile_builder *b, const nt_event *ev)
{
    nt_profile *p = b->p;
    if (!in_window(b, ev->timestamp))
        return 0;
    pr_want w[] = { { "ExceptionType", false, { 0 } }, { "ExceptionMessage", false, { 0 } } };
    pr_fields(ev, w, b->exception_messages ? 2 : 1);
    const char *type = w[0].have && w[0].v.kind == NT_VALUE_STRING ? w[0].v.v.str.ptr : "";
    const char *message = w[1].have && w[1].v.kind == NT_VALUE_STRING ? w[1].v.v.str.ptr : "";
    pr_rec r = { ev->thread_id, tr_intern(&p->mem, &p->strings, type), 1, 1, tr_builder_code_epoch(b->tb), NT_PROFILE_EXCEPTIONS, 0, 0,
                 b->exception_messages ? tr_intern(&p->mem, &p->strings, message) : NULL };
    if (!r.label || (b->exception_messages && !r.message))
        return fail(b, NT_ERR_NOMEM);
    if (!labels_fit(b))
        return 1;
    uint32_t st = intern(b, ev, NT_PROFILE_EXCEPTIONS);
    if (st == UINT32_MAX)
        return 1;
    p->totals[NT_PROFILE_EXCEPTIONS].events++;
    p->totals[NT_PROFILE_EXCEPTIONS].value++;
    return add_record(b, &r, st, ev->timestamp);
}

/* A contention wait becomes a record: closed by its stop at end_ticks, or
 * open (no stop: its weight runs to end_ticks, the next start on the thread
 * or the stream's last event). */
static int close_wait(nt_profile_builder *b, pr_open *o, int64_t end_ticks, bool open)
{
    nt_profile *p = b->p;
    o->live = false;
    if (!o->counted) /* it started outside the window */
        return 0;
    int64_t wait = cm_elapsed(ticks_ns(p, o->ticks), ticks_ns(p, end_ticks));
    pr_rec r = { o->thread_id, "", wait, 1, o->epoch, NT_PROFILE_CONTENTION, o->flags, open, NULL };
    nt_profile_totals *tot = &p->totals[NT_PROFILE_CONTENTION];
    tot->events++;
    tot->open += open;
    if (!open) /* an open wait's length is only a lower bound */
        tot->value = cm_sat_add(tot->value, r.value);
    return add_record(b, &r, o->istack, o->ticks);
}

static int on_contention(nt_profile_builder *b, const nt_event *ev, bool start)
{
    nt_profile *p = b->p;
    uint32_t i = cm_map_index(&b->open_index, ev->thread_id);
    pr_open *o = i == UINT32_MAX ? NULL : &b->opens[i];
    if (!start) {
        if (!o || !o->live) {
            p->totals[NT_PROFILE_CONTENTION].unpaired_stops += in_window(b, ev->timestamp);
            return 0;
        }
        return close_wait(b, o, ev->timestamp, false);
    }
    if (o && o->live && close_wait(b, o, ev->timestamp, true))
        return 1;
    if (!o) {
        uint32_t max = tr_builder_limits(b->tb)->max_threads;
        if (b->nopens >= max) {
            char msg[96];
            snprintf(msg, sizeof msg, "more than %u threads in contention waits (nt_trace_limits.max_threads)", max);
            return fail_limit(b, msg);
        }
        if (b->nopens >= UINT32_MAX - 1 ||
            !cm_mem_reserve(&p->mem, (void **)&b->opens, &b->opens_cap, b->nopens + 1, sizeof *b->opens) ||
            !cm_map_set(&p->mem, &b->open_index, ev->thread_id, (uint32_t)b->nopens))
            return fail(b, NT_ERR_NOMEM);
        o = &b->opens[b->nopens++];
    }
    if (!in_window(b, ev->timestamp)) {
        /* Kept only so that its stop pairs with it rather than counting as unpaired. */
        *o = (pr_open){ ev->thread_id, ev->timestamp, 0, tr_builder_code_epoch(b->tb), 0, true, false };
        return 0;
    }
    pr_want w[] = { { "ContentionFlags", false, { 0 } } };
    pr_fields(ev, w, 1);
    uint32_t st = intern(b, ev, NT_PROFILE_CONTENTION);
    if (st == UINT32_MAX)
        return 1;
    *o = (pr_open){ ev->thread_id, ev->timestamp, st, tr_builder_code_epoch(b->tb), (uint8_t)(pr_int(&w[0]) & 0xff), true, true };
    return 0;
}

/* The span of the events and samples read, kept on the profile as they arrive. */
static void widen_span(nt_profile *p, int64_t ticks)
{
    if (ticks > p->last_ticks)
        p->last_ticks = ticks;
    if (ticks < p->first_ticks)
        p->first_ticks = ticks;
}

static int on_event(void *user, const nt_event *ev)
{
    nt_profile_builder *b = user;
    if (b->failed)
        return 1;
    /* The trace builder takes no events (nt_trace_builder_callbacks): nothing to pass on. */
    widen_span(b->p, ev->timestamp);
    const nt_event_desc *d = ev->desc;
    /* The id first: most events are not these, and only these pay for the
     * provider's name. */
    if (!d || (d->event_id > EV_CONTENTION_STOP && d->event_id != EV_GC_PER_HEAP_HISTORY))
        return 0;
    uint32_t id = d->event_id;
    if (id != EV_ALLOC_TICK && id != EV_EXCEPTION && id != EV_CONTENTION_START && id != EV_CONTENTION_STOP &&
        id != EV_GC_PER_HEAP_HISTORY && (id < 1 || id > 9))
        return 0;
    if (strcmp(d->provider, NT_PROVIDER_RUNTIME) != 0)
        return 0;
    switch (id) {
    case EV_ALLOC_TICK: return on_alloc(b, ev);
    case EV_EXCEPTION: return on_exception(b, ev);
    case EV_CONTENTION_START: return on_contention(b, ev, true);
    case EV_CONTENTION_STOP: return on_contention(b, ev, false);
    default: {
        nt_status s = pr_gc_event(b->p, &b->gc, ev, ticks_ns(b->p, ev->timestamp));
        return s == NT_OK ? 0 : s == NT_ERR_LIMIT ? fail_limit(b, b->gc.limit_msg) : fail(b, NT_ERR_NOMEM);
    }
    }
}

static int on_trace(void *user, const nt_trace_info *info)
{
    nt_profile_builder *b = user;
    b->p->frequency = info->qpc_frequency;
    b->from_ns = nt_time_bound_resolve(&b->from, info);
    b->to_ns = nt_time_bound_resolve(&b->to, info);
    return b->tcb.trace(b->tb, info);
}

static int on_sample(void *user, const nt_sample *s)
{
    nt_profile_builder *b = user;
    widen_span(b->p, s->timestamp);
    return b->events_only ? 0 : b->tcb.sample(b->tb, s);
}

static int on_method(void *user, const nt_method *m)
{
    nt_profile_builder *b = user;
    /* The trace builder moves the epoch that keeps records apart where code changed (code_epoch.h). */
    return b->tcb.method(b->tb, m);
}

static int on_module(void *user, const nt_module *mo)
{
    nt_profile_builder *b = user;
    return b->tcb.module(b->tb, mo);
}

static int on_assembly(void *user, const nt_assembly *a)
{
    nt_profile_builder *b = user;
    return b->tcb.assembly(b->tb, a);
}

static int on_sequence_point(void *user, const nt_sequence_point *sp)
{
    nt_profile_builder *b = user;
    return b->tcb.sequence_point(b->tb, sp);
}

void nt_profile_builder_callbacks(nt_callbacks *cb)
{
    const nt_callbacks mine = {
        .trace = on_trace,
        .event = on_event,
        .sample = on_sample,
        .method = on_method,
        .module = on_module,
        .assembly = on_assembly,
        .sequence_point = on_sequence_point,
    };
    ABI_OUT(nt_callbacks, cb, &mine);
}

static void builder_release(nt_profile_builder *b)
{
    cm_mem *m = &b->p->mem;
    cm_map_free(m, &b->rec_index);
    cm_mem_free(m, b->opens, b->opens_cap * sizeof *b->opens);
    cm_map_free(m, &b->open_index);
    pr_gc_release(b->p, &b->gc);
    b->opens = NULL;
    b->opens_cap = b->nopens = 0;
}

nt_status nt_profile_builder_finish(nt_profile_builder *b, const nt_parser *parser, nt_status stream_status,
                                    nt_profile **out)
{
    *out = NULL;
    if (!b)
        return NT_ERR_INVALID_ARG;
    nt_profile *p = b->p;
    if (b->failed && stream_status == NT_ERR_STOPPED)
        stream_status = b->fail_status;
    /* Waits still open at the end are reported as such. */
    for (size_t i = 0; !b->failed && i < b->nopens; i++)
        if (b->opens[i].live)
            close_wait(b, &b->opens[i], p->last_ticks, true);
    if (b->failed && b->fail_status == NT_ERR_NOMEM) {
        nt_profile_builder_free(b);
        return NT_ERR_NOMEM;
    }
    if (!pr_gc_finish(p, &b->gc)) {
        nt_profile_builder_free(b);
        return NT_ERR_NOMEM;
    }
    builder_release(b);
    tr_strings_seal(&p->mem, &p->strings);
    tr_builder_resolve_also(b->tb, p->res, p->nrecs);
    nt_trace_builder *tb = b->tb;
    cm_mem_free(&p->mem, b, sizeof *b);
    nt_status st = nt_trace_builder_finish(tb, parser, stream_status, &p->trace);
    if (st != NT_OK) {
        nt_profile_free(p);
        return st;
    }
    *out = p;
    return NT_OK;
}

nt_trace_builder *pr_builder_trace(nt_profile_builder *b) { return b->tb; }

void nt_profile_builder_free(nt_profile_builder *b)
{
    if (!b)
        return;
    nt_profile *p = b->p;
    builder_release(b);
    nt_trace_builder_free(b->tb);
    cm_mem_free(&p->mem, b, sizeof *b);
    nt_profile_free(p);
}

void nt_profile_free(nt_profile *p)
{
    if (!p)
        return;
    cm_mem *m = &p->mem;
    nt_trace_free(p->trace);
    tr_strings_free(m, &p->strings);
    cm_mem_free(m, p->res, p->res_cap * sizeof *p->res);
    cm_mem_free(m, p->recs, p->recs_cap * sizeof *p->recs);
    cm_mem_free(m, p->gcs, p->gcs_cap * sizeof *p->gcs);
    CM_MEM_DELETE(nt_profile, p);
}

const nt_trace *nt_profile_trace(const nt_profile *p) { return p ? p->trace : NULL; }

void nt_profile_span(const nt_profile *p, int64_t *first_ns, int64_t *last_ns)
{
    bool any = p && p->first_ticks <= p->last_ticks;
    *first_ns = any ? ticks_ns(p, p->first_ticks) : 0;
    *last_ns = any ? ticks_ns(p, p->last_ticks) : 0;
}
size_t nt_profile_record_count(const nt_profile *p) { return p ? p->nrecs : 0; }

nt_profile_record nt_profile_record_at(const nt_profile *p, size_t i)
{
    nt_profile_record o = { 0 };
    if (!p)
        return o;
    const pr_rec *r = &p->recs[i];
    o.kind = (nt_profile_kind)r->kind;
    o.stack_index = p->res[i].stack;
    o.thread_id = r->thread_id;
    o.label = r->label;
    o.message = r->message ? r->message : "";
    o.heap = r->heap;
    o.open = r->open;
    o.value = r->value;
    o.count = r->count;
    o.timestamp = p->res[i].ticks;
    o.time_ns = ticks_ns(p, o.timestamp);
    return o;
}

void nt_profile_totals_get(const nt_profile *p, nt_profile_kind k, nt_profile_totals *out)
{
    nt_profile_totals t = { 0 };
    if (p && (unsigned)k < NT_PROFILE_KIND_COUNT_)
        t = p->totals[k];
    ABI_OUT(nt_profile_totals, out, &t);
}

size_t nt_profile_gc_count(const nt_profile *p) { return p ? p->ngcs : 0; }

size_t nt_profile_memory_peak(const nt_profile *p)
{
    if (!p)
        return 0;
    nt_trace_stats ts = { 0 };
    nt_trace_stats_get(p->trace, &ts);
    return p->mem.peak + ts.memory_peak;
}
const nt_gc *nt_profile_gc_at(const nt_profile *p, size_t i) { return p ? &p->gcs[i] : NULL; }
