/* One part of a parallel parse (nettrace_parallel.h): decoded on any thread
 * into its log, delivered in order on one.  Delivery keeps one parser, `cur`,
 * whose state is always the sequential parse's at the same byte: a part's
 * own parser becomes it only when the state that part started from is the
 * one `cur` reached; otherwise `cur` parses the part itself. */
#include "common/abi.h"
#include "common/limits.h"
#include "common/sort.h"
#include "parse/parallel_internal.h"
#include "parse/resume.h"

#include <stdio.h>
#include <string.h>

/* The counters of nt_parser_stats (bytes and memory are the parser's own). */
#define PP_COUNTERS(X)                                                                                      \
    X(blocks) X(event_blocks) X(metadata_blocks) X(stack_blocks) X(sp_blocks) X(unknown_blocks) X(events) \
    X(metadata) X(stacks) X(sequence_points) X(samples) X(methods) X(modules) X(assemblies)               \
    X(events_dropped) X(unknown_metadata_refs) X(unknown_stack_refs)

/* to += from - base, counter by counter. */
static void stats_carry(nt_parser_stats *to, const nt_parser_stats *from, const nt_parser_stats *base)
{
#define CARRY(f) to->f += from->f - base->f;
    PP_COUNTERS(CARRY)
#undef CARRY
}

nt_status nt_parallel_new(const void *data, size_t len, const nt_index *ix, const nt_callbacks *cb, void *user,
                          const nt_parallel_options *opt, nt_parallel **out)
{
    if (!out)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    nt_parallel_options o;
    nt_limits lim;
    nt_callbacks calls;
    if ((!data && len) || !ABI_IN(nt_parallel_options, &o, opt) || !ABI_IN(nt_limits, &lim, o.limits) ||
        !ABI_IN(nt_callbacks, &calls, cb))
        return NT_ERR_INVALID_ARG;
    nt_parallel *pp = CM_MEM_NEW(nt_parallel, o.alloc);
    if (!pp)
        return NT_ERR_NOMEM;
    pp->cb = calls;
    pp->user = user;
    ps_plog_pool_init(&pp->pool, o.alloc);
    pp->data = data;
    pp->len = len;
    cm_limits_resolve(&pp->lim, &lim);
    pp->have_alloc = o.alloc != NULL;
    if (o.alloc)
        pp->alloc = *o.alloc;
    pp->lazy = o.lazy_names;
    pp->jobs = o.jobs;
    pp->have_consumer = o.consumer && o.consumer->part_new && o.consumer->part_merge && o.consumer->part_free;
    if (pp->have_consumer)
        pp->consumer = *o.consumer;
    nt_index *own = NULL;
    if (!ix && len && o.jobs != 1) {
        char msg[8];
        nt_index_from_buffer(data, len, NULL, &own, msg, sizeof msg); /* a damaged stream: the blocks before it */
        ix = own;
    }
    bool ok = o.jobs == 1 ? pp_plan(pp, NULL, 0) : pp_plan(pp, ix, o.part_bytes); /* one part: the sequential parse */
    nt_index_free(own);
    ps_field_ctx_init(&pp->fctx, &pp->mem, NULL, &pp->lim);
    pp->st.parts = (uint32_t)pp->nparts;
    if (!ok) {
        nt_parallel_free(pp);
        return NT_ERR_NOMEM;
    }
    *out = pp;
    return NT_OK;
}

size_t nt_parallel_part_count(const nt_parallel *pp) { return pp ? pp->nparts : 0; }

static void part_release(nt_parallel *pp, pp_part *part)
{
    ps_plog_free(&part->log);
    if (part->cpart)
        pp->consumer.part_free(pp->consumer.ctx, part->cpart);
    part->cpart = NULL;
    cm_mem_free(&part->logmem, part->start_threads, part->nstart_threads * sizeof *part->start_threads);
    part->start_threads = NULL;
    part->nstart_threads = 0;
    if (part->p != pp->cur)
        nt_parser_free(part->p);
    part->p = NULL;
}

void nt_parallel_free(nt_parallel *pp)
{
    if (!pp)
        return;
    for (size_t k = 0; k < pp->nparts; k++)
        part_release(pp, &pp->parts[k]);
    nt_parser_free(pp->cur);
    ps_plog_pool_free(&pp->pool);
    ps_field_ctx_free(&pp->fctx);
    cm_mem_free(&pp->mem, pp->parts, pp->parts_cap * sizeof *pp->parts);
    cm_mem_free(&pp->mem, pp->prime, pp->nprime * sizeof *pp->prime);
    CM_MEM_DELETE(nt_parallel, pp);
}

static int cmp_thread(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    uint64_t x = ((const pp_thread *)a)->key, y = ((const pp_thread *)b)->key;
    return x < y ? -1 : x > y;
}

/* The live rows of p's thread table, by key, into *out (from m); false when memory is short. */
static bool threads_of(const nt_parser *p, cm_mem *m, pp_thread **out, size_t *n)
{
    const ps_thread_table *t = &p->threads;
    *out = NULL;
    *n = 0;
    if (!t->live)
        return true;
    pp_thread *rows = cm_mem_alloc(m, t->live * sizeof *rows), *tmp = cm_mem_alloc(m, t->live * sizeof *tmp);
    if (!rows || !tmp) {
        cm_mem_free(m, rows, t->live * sizeof *rows);
        cm_mem_free(m, tmp, t->live * sizeof *tmp);
        return false;
    }
    size_t k = 0;
    for (size_t i = 0; i < t->cap && k < t->live; i++) {
        const ps_thread_entry *e = &t->e[i];
        if (e->state == PS_THREAD_LIVE)
            rows[k++] = (pp_thread){ e->key, e->os_tid, e->os_pid, e->last_seq, e->dropped };
    }
    cm_merge_sort(rows, tmp, k, sizeof *rows, cmp_thread, NULL);
    cm_mem_free(m, tmp, t->live * sizeof *tmp);
    *out = rows;
    *n = k;
    return true;
}

static pp_tables tables_of(const nt_parser *p)
{
    return (pp_tables){ p->meta.count, p->meta.arena_bytes, p->stacks.n, p->stacks.interval, p->v6 != NULL };
}

/* Read the stream's header and the blocks before the part, no callbacks. */
static bool prime(nt_parallel *pp, pp_part *part)
{
    nt_parser *p = part->p;
    nt_callbacks none = { 0 };
    nt_callbacks keep = p->cb;
    p->cb = none;
    bool ok = nt_parser_feed(p, pp->data, pp->header_end) == NT_OK;
    for (size_t i = 0; ok && i < pp->nprime && pp->prime[i].index < part->first_block; i++) {
        const pp_block *b = &pp->prime[i];
        ok = ps_parser_seek_block(p, b->offset) && nt_parser_feed(p, pp->data + b->offset, b->end - b->offset) == NT_OK;
        part->primed++; /* the part's own count: parts are primed on several threads at once */
    }
    ok = ok && ps_parser_at_block(p) && ps_parser_seek_block(p, part->start);
    p->cb = keep;
    part->base = p->stats;
    part->start_tables = tables_of(p);
    return ok && threads_of(p, &part->logmem, &part->start_threads, &part->nstart_threads);
}

nt_status nt_parallel_decode(nt_parallel *pp, size_t k)
{
    if (!pp || k >= pp->nparts)
        return NT_ERR_INVALID_ARG;
    pp_part *part = &pp->parts[k];
    if (part->state != PP_PLANNED)
        return NT_ERR_STATE;
    part->state = PP_DECODING;
    if (pp->nparts == 1) { /* nothing to gain: delivery parses it */
        part->state = PP_DECODED;
        return NT_OK;
    }
    nt_callbacks rec = { .struct_size = sizeof rec };
    cm_mem_init(&part->logmem, pp->have_alloc ? &pp->alloc : NULL);
    /* The part's own consumer takes its callbacks where there is one; else they are recorded. */
    if (pp->have_consumer)
        part->cpart = pp->consumer.part_new(pp->consumer.ctx, k, &rec);
    if (part->cpart) {
        part->p = nt_parser_new(&rec, part->cpart, &pp->lim, pp->have_alloc ? &pp->alloc : NULL);
    } else {
        ps_plog_callbacks(&rec);
        part->p = nt_parser_new(&rec, &part->log, &pp->lim, pp->have_alloc ? &pp->alloc : NULL);
        ps_plog_init(&part->log, &pp->pool, &part->logmem, part->p, &pp->cb);
    }
    if (part->p) {
        nt_parser_set_lazy_names(part->p, pp->lazy);
        part->usable = k == 0 || prime(pp, part);
        if (part->usable) {
            nt_status s = nt_parser_feed(part->p, pp->data + part->start, part->end - part->start);
            /* A part that ends early is exact (its failure is the stream's); one that ends must end at the next block. */
            bool framed = s != NT_OK || k + 1 == pp->nparts ||
                          (ps_parser_at_block(part->p) && nt_parser_offset(part->p) == part->end);
            /* A consumer's stop is its own (a limit, memory), not the stream's: parsed again, it stops where it should. */
            bool stopped = part->cpart && s == NT_ERR_STOPPED;
            part->usable = framed && !stopped && !part->log.failed && !part->log.inexact;
        }
    }
    part->state = PP_DECODED;
    return NT_OK;
}

/* cur reached the state part starts from: the same thread rows, tables and position. */
static bool same_start(nt_parallel *pp, const pp_part *part)
{
    const nt_parser *a = pp->cur;
    pp_tables ta = tables_of(a), tb = part->start_tables;
    if (a->offset != part->start || !ps_parser_at_block(a) || ta.meta_count != tb.meta_count ||
        ta.meta_bytes != tb.meta_bytes || ta.stacks != tb.stacks || ta.interval != tb.interval || ta.v6 != tb.v6)
        return false;
    pp_thread *rows;
    size_t n;
    if (!threads_of(a, &pp->mem, &rows, &n))
        return false;
    bool same = n == part->nstart_threads && (!n || memcmp(rows, part->start_threads, n * sizeof *rows) == 0);
    cm_mem_free(&pp->mem, rows, n * sizeof *rows);
    return same;
}

/* Feed [from, to) to cur, live. */
static nt_status feed_cur(nt_parallel *pp, uint64_t from, uint64_t to)
{
    nt_parser *p = pp->cur;
    p->cb = pp->cb;
    p->user = pp->user;
    nt_parser_set_lazy_names(p, pp->lazy);
    return nt_parser_feed(p, pp->data + from, (size_t)(to - from));
}

/* Part 0 parsed again by a parser of the stream's own, live. */
static nt_status deliver_from_start(nt_parallel *pp, const pp_part *part)
{
    pp->cur = nt_parser_new(NULL, NULL, &pp->lim, pp->have_alloc ? &pp->alloc : NULL);
    if (!pp->cur)
        return NT_ERR_NOMEM;
    return feed_cur(pp, 0, part->end);
}

static nt_status deliver_part(nt_parallel *pp, size_t k)
{
    pp_part *part = &pp->parts[k];
    if (pp->nparts == 1 || (k == 0 && !part->usable))
        return deliver_from_start(pp, part);
    if (k > 0) { /* the sequence point between the parts, live, by the parser that holds the stream's state */
        nt_status s = feed_cur(pp, pp->parts[k - 1].end, pp->parts[k - 1].sp_end);
        if (s)
            return s;
    }
    if (k > 0 && !(part->usable && same_start(pp, part))) {
        pp->st.reparsed++;
        return feed_cur(pp, part->start, part->end);
    }
    nt_status s;
    if (part->cpart) {
        int r = pp->consumer.part_merge(pp->consumer.ctx, k, part->cpart);
        if (r > 0) { /* the consumer cannot take the part whole: the part read again by the stream's parser */
            pp->st.reparsed++;
            return k == 0 ? deliver_from_start(pp, part) : feed_cur(pp, part->start, part->end);
        }
        pp->st.replayed++;
        pp->st.merged++;
        s = r < 0 ? NT_ERR_STOPPED : NT_OK;
    } else {
        pp->st.replayed++;
        pp->fctx.info = &part->p->info;
        s = ps_plog_replay(&part->log, &pp->cb, pp->user, &pp->fctx, part->p);
    }
    /* The part's parser becomes the stream's: its counts of its own blocks plus cur's of all before. */
    nt_parser *prev = pp->cur;
    nt_parser_stats own = part->p->stats;
    if (prev) {
        part->p->stats = prev->stats;
        stats_carry(&part->p->stats, &own, &part->base);
    }
    pp->cur = part->p;
    nt_parser_free(prev);
    return s != NT_OK ? s : part->p->status;
}

nt_status nt_parallel_deliver(nt_parallel *pp, size_t k)
{
    if (!pp || k >= pp->nparts)
        return NT_ERR_INVALID_ARG;
    if (pp->status != NT_OK || k != pp->next || pp->parts[k].state != PP_DECODED)
        return NT_ERR_STATE;
    pp->st.primed_blocks += pp->parts[k].primed;
    nt_status s = deliver_part(pp, k);
    part_release(pp, &pp->parts[k]);
    pp->parts[k].state = PP_DELIVERED;
    pp->next = k + 1;
    if (s == NT_OK && k + 1 == pp->nparts)
        s = nt_parser_finish(pp->cur);
    if (s == NT_OK && !pp->cur)
        s = NT_ERR_NOMEM;
    pp->status = s;
    return s;
}

const nt_parser *nt_parallel_parser(const nt_parallel *pp) { return pp ? pp->cur : NULL; }

void nt_parallel_stats_get(const nt_parallel *pp, nt_parallel_stats *out)
{
    nt_parallel_stats st = { 0 };
    if (pp)
        st = pp->st;
    ABI_OUT(nt_parallel_stats, out, &st);
}
