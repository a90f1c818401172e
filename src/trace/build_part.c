/* The trace builder over a parallel parse (nt_trace_builder_parallel, the
 * consumer of nettrace_parallel.h): each part's samples and records are
 * taken on the thread that parses the part, by a part builder, and merged
 * into the stream's builder in part order.
 *
 * The costly step of a sample's intake is interning its stack (the parser's
 * stack ids restart at every sequence point, so almost every sample's stack
 * is hashed and compared whole).  A part builder interns its part's stacks
 * and numbers its threads with a builder of its own (`local`), and keeps the
 * part's samples (local stack and thread indexes) and records (copied with
 * their strings) in stream order.  The merge walks that log in order: a local
 * stack is interned into the stream's builder at its first sample, a local
 * thread numbered at its first sample, then every sample and record takes the
 * same steps the sequential intake takes (tr_builder_store, tr_on_method ...).
 * So the stream's builder sees the same stacks, threads, samples and records
 * in the same order as from the sequential parse and ends in the same state
 * (the same interned-stack, address and thread ids, epochs and records),
 * while the serial work follows the distinct stacks of each part rather than
 * the samples.  A part that could reach one of the builder's limits is not
 * merged: it is parsed again with the builder's own callbacks, which stop
 * where the sequential parse stops. */
#include "trace/build_internal.h"
#include "nettrace_parallel.h"

#include <string.h>

enum { TP_METHOD = 1, TP_MODULE, TP_ASSEMBLY };
#define TP_RECORD 0xFFFFFFu /* the low 24 bits of an entry's thread: a record, its kind in the high 8 */

/* A part's callback in stream order: a sample (ticks, time, the local
 * builder's stack, its thread index | type << 24) or a record (its index in
 * its array, TP_RECORD | kind << 24). */
typedef struct tp_entry {
    int64_t ticks, ns;
    uint32_t stack;
    uint32_t thread;
} tp_entry;

typedef struct tr_part {
    cm_mem mem;               /* the log, the record copies and their strings */
    nt_trace_builder *local;  /* interns the part's stacks, numbers its threads */
    tp_entry *e;
    size_t n, cap;
    size_t nsamples;
    nt_method *methods;
    size_t nmethods, methods_cap;
    nt_module *modules;
    size_t nmodules, modules_cap;
    nt_assembly *assemblies;
    size_t nassemblies, assemblies_cap;
    tr_strings str;           /* the records' strings, copied (not interned) */
    nt_trace_info info;       /* part 0: the trace header */
    bool have_info;
} tr_part;

static int part_log(tr_part *p, tp_entry e)
{
    if (!GROW(&p->mem, p->e, p->n, p->cap))
        return 1;
    p->e[p->n++] = e;
    return 0;
}

static int part_trace(void *user, const nt_trace_info *info)
{
    tr_part *p = user;
    p->info = *info;
    p->have_info = true;
    return 0;
}

static int part_sample(void *user, const nt_sample *s)
{
    tr_part *p = user;
    uint32_t st = tr_builder_sample_stack(p->local, s);
    uint32_t th = st == UINT32_MAX ? UINT32_MAX : tr_builder_thread(p->local, s->thread_id);
    if (th >= TP_RECORD)
        return 1; /* failed, or an index the log cannot hold: the part is parsed again by the stream's builder */
    uint32_t type = s->type > 254 ? 255 : s->type;
    p->nsamples++;
    return part_log(p, (tp_entry){ s->timestamp, s->time_ns, st, th | type << 24 });
}

/* A record's string as the parser gave it, copied: NULL stays NULL (lazy names). */
static bool copy_str(tr_part *p, const char **s)
{
    if (!*s)
        return true;
    *s = tr_strings_bytes(&p->mem, &p->str, *s, strlen(*s));
    return *s != NULL;
}

static bool copy_str16(tr_part *p, nt_str16 *w)
{
    if (!w->units)
        return true;
    const char *c = tr_strings_bytes(&p->mem, &p->str, w->units, (size_t)w->count * 2);
    w->units = (const uint8_t *)c;
    return c != NULL;
}

static int part_method(void *user, const nt_method *m)
{
    tr_part *p = user;
    if (!GROW(&p->mem, p->methods, p->nmethods, p->methods_cap))
        return 1;
    nt_method c = *m;
    c.event = NULL; /* the builder reads no record's event */
    if (!copy_str(p, &c.declaring_type) || !copy_str(p, &c.name) || !copy_str(p, &c.signature) ||
        !copy_str16(p, &c.declaring_type16) || !copy_str16(p, &c.name16) || !copy_str16(p, &c.signature16))
        return 1;
    p->methods[p->nmethods] = c;
    return part_log(p, (tp_entry){ m->timestamp, 0, (uint32_t)p->nmethods++, TP_RECORD | TP_METHOD << 24 });
}

static int part_module(void *user, const nt_module *mo)
{
    tr_part *p = user;
    if (!GROW(&p->mem, p->modules, p->nmodules, p->modules_cap))
        return 1;
    nt_module c = *mo;
    c.event = NULL;
    if (!copy_str(p, &c.il_path) || !copy_str(p, &c.native_path) || !copy_str16(p, &c.il_path16) ||
        !copy_str16(p, &c.native_path16))
        return 1;
    p->modules[p->nmodules] = c;
    return part_log(p, (tp_entry){ mo->timestamp, 0, (uint32_t)p->nmodules++, TP_RECORD | TP_MODULE << 24 });
}

static int part_assembly(void *user, const nt_assembly *a)
{
    tr_part *p = user;
    if (!GROW(&p->mem, p->assemblies, p->nassemblies, p->assemblies_cap))
        return 1;
    nt_assembly c = *a;
    c.event = NULL;
    if (!copy_str(p, &c.name) || !copy_str16(p, &c.name16))
        return 1;
    p->assemblies[p->nassemblies] = c;
    return part_log(p, (tp_entry){ a->timestamp, 0, (uint32_t)p->nassemblies++, TP_RECORD | TP_ASSEMBLY << 24 });
}

static void part_free(void *ctx, void *part)
{
    (void)ctx;
    tr_part *p = part;
    if (!p)
        return;
    nt_trace_builder_free(p->local);
    cm_mem_free(&p->mem, p->e, p->cap * sizeof *p->e);
    cm_mem_free(&p->mem, p->methods, p->methods_cap * sizeof *p->methods);
    cm_mem_free(&p->mem, p->modules, p->modules_cap * sizeof *p->modules);
    cm_mem_free(&p->mem, p->assemblies, p->assemblies_cap * sizeof *p->assemblies);
    tr_strings_free(&p->mem, &p->str);
    CM_MEM_DELETE(tr_part, p);
}

static void *part_new(void *ctx, size_t k, nt_callbacks *cb)
{
    (void)k;
    nt_trace_builder *b = ctx;
    /* Labels are kept per sample number as samples arrive: such a build takes the replay.  (This runs beside
     * the merge: only what is set before the parse is read here, never b->failed.) */
    if (b->keep_labels)
        return NULL;
    tr_part *p = CM_MEM_NEW(tr_part, &b->t->mem.a);
    if (!p)
        return NULL;
    p->local = nt_trace_builder_new(&b->t->mem.a); /* the default limits: the merge checks the stream's */
    if (!p->local) {
        part_free(NULL, p);
        return NULL;
    }
    cb->trace = part_trace;
    cb->sample = part_sample;
    cb->method = part_method;
    cb->module = part_module;
    cb->assembly = part_assembly;
    return p;
}

/* Merging p could reach one of b's limits (bounds: every sample new, every
 * local thread and every frame of the local stacks new). */
static bool may_reach_limit(const nt_trace_builder *b, const tr_part *p)
{
    const nt_trace *t = b->t, *lt = p->local->t;
    uint64_t kept = b->aggregate ? b->nentries : t->nsamples;
    uint32_t max_threads = b->lim.max_threads < TR_MAX_THREADS ? b->lim.max_threads : TR_MAX_THREADS;
    return kept + p->nsamples > b->lim.max_samples || t->nthreads + lt->nthreads > max_threads ||
           t->nids + lt->nids > b->lim.max_frames || t->nids + lt->nids >= UINT32_MAX ||
           b->nistacks + p->local->nistacks >= UINT32_MAX - 1;
}

/* The stream's interned stack for the local one l: the same ips interned into b (amap: the
 * local address ids' ids in b, so that each address of the part is looked up once). */
static uint32_t merge_stack(nt_trace_builder *b, const tr_part *p, uint32_t l, uint32_t *amap, uint64_t **ips,
                           size_t *ips_cap)
{
    const nt_trace_builder *lb = p->local;
    const tr_istack *ls = &lb->istacks[l];
    if (!cm_mem_reserve(&b->t->mem, (void **)ips, ips_cap, (size_t)ls->count + 1, sizeof **ips))
        return UINT32_MAX;
    const uint32_t *ids = tr_ids(lb->t, ls->off, ls->count);
    for (uint32_t k = 0; k < ls->count; k++)
        (*ips)[k] = lb->uaddr[ids[k]];
    return tr_builder_intern_part(b, *ips, ls->count, ids, amap);
}

/* Every entry of p in order; nonzero when the build failed (memory). */
static int merge_entries(nt_trace_builder *b, const tr_part *p, uint32_t *stacks, uint32_t *threads, uint32_t *amap)
{
    uint64_t *ips = NULL;
    size_t ips_cap = 0;
    int rc = 0;
    for (size_t i = 0; i < p->n && !rc; i++) {
        const tp_entry *e = &p->e[i];
        uint32_t lt = e->thread & TP_RECORD, kind = e->thread >> 24;
        if (lt == TP_RECORD) {
            rc = kind == TP_METHOD   ? tr_on_method(b, &p->methods[e->stack])
                 : kind == TP_MODULE ? tr_on_module(b, &p->modules[e->stack])
                                     : tr_on_assembly(b, &p->assemblies[e->stack]);
            continue;
        }
        if (stacks[e->stack] == UINT32_MAX && (stacks[e->stack] = merge_stack(b, p, e->stack, amap, &ips, &ips_cap)) == UINT32_MAX)
            rc = 1;
        else if (threads[lt] == UINT32_MAX && (threads[lt] = tr_builder_thread(b, p->local->t->threads[lt])) == UINT32_MAX)
            rc = 1;
        else
            rc = tr_builder_store(b, &(nt_sample){ .timestamp = e->ticks, .time_ns = e->ns, .type = kind },
                                  stacks[e->stack], threads[lt]);
    }
    cm_mem_free(&b->t->mem, ips, ips_cap * sizeof *ips);
    return rc || b->failed;
}

static int part_merge(void *ctx, size_t k, void *part)
{
    (void)k;
    nt_trace_builder *b = ctx;
    tr_part *p = part;
    if (b->failed || may_reach_limit(b, p))
        return 1;
    cm_mem *m = &b->t->mem;
    size_t ns = p->local->nistacks ? p->local->nistacks : 1, nt = p->local->t->nthreads ? p->local->t->nthreads : 1;
    size_t na = p->local->nuaddr ? p->local->nuaddr : 1;
    uint32_t *stacks = cm_mem_alloc(m, ns * sizeof *stacks), *threads = cm_mem_alloc(m, nt * sizeof *threads);
    uint32_t *amap = cm_mem_alloc(m, na * sizeof *amap);
    int rc = -1;
    if (stacks && threads && amap) {
        memset(stacks, 0xff, ns * sizeof *stacks); /* UINT32_MAX: not met yet */
        memset(threads, 0xff, nt * sizeof *threads);
        memset(amap, 0xff, na * sizeof *amap);
        if (p->have_info) {
            b->t->info = p->info;
            b->t->have_info = true;
        }
        b->t->samples_unknown_stack += p->local->t->samples_unknown_stack;
        rc = merge_entries(b, p, stacks, threads, amap) ? -1 : 0;
    } else {
        tr_fail(b, NT_ERR_NOMEM);
    }
    cm_mem_free(m, stacks, ns * sizeof *stacks);
    cm_mem_free(m, threads, nt * sizeof *threads);
    cm_mem_free(m, amap, na * sizeof *amap);
    return rc;
}

void nt_trace_builder_parallel(nt_trace_builder *b, nt_parallel_consumer *out)
{
    if (!out)
        return;
    *out = (nt_parallel_consumer){ b, b ? part_new : NULL, part_merge, part_free };
}
