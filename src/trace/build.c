/* The builder's intake: samples in chunks with their thread index and
 * interned stack, then finish(), which sorts, resolves and hands over the
 * trace.
 *
 * While the stream is read, samples keep (ticks, thread, type, interned
 * stack): the parser's stack ids restart at every sequence point, so the IP
 * arrays are interned by content -- kept as arrays of address ids (4 bytes a
 * frame) in the trace's id table, the ips once each in the address table.
 * Records go to records.c; frames are resolved only in finish()
 * (resolve.c), once rundown has arrived. */
#include "common/compiler.h"
#include "trace/build_internal.h"
#include "common/limits.h"
#include "common/abi.h"
#include "common/sort.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

nt_trace_builder *nt_trace_builder_new(const nt_allocator *alloc)
{
    nt_trace *t = CM_MEM_NEW(nt_trace, alloc);
    if (!t)
        return NULL;
    nt_trace_builder *b = cm_mem_alloc(&t->mem, sizeof *b);
    if (!b) {
        CM_MEM_DELETE(nt_trace, t);
        return NULL;
    }
    memset(b, 0, sizeof *b);
    b->t = t;
    nt_trace_builder_set_limits(b, NULL);
    b->sorted = true;
    b->last_ticks = INT64_MIN;
    for (size_t i = 0; i < TR_TCACHE; i++)
        b->tcache[i].index = UINT32_MAX;
    for (size_t i = 0; i < TR_ACACHE; i++)
        b->acache[i].id = UINT32_MAX;
    cm_hash_key_init(&b->stack_key, b);
    t->status = NT_OK;
    return b;
}

void nt_trace_builder_set_limits(nt_trace_builder *b, const nt_trace_limits *limits)
{
    if (!b)
        return;
    nt_trace_limits given;
    if (!ABI_IN(nt_trace_limits, &given, limits))
        ABI_IN(nt_trace_limits, &given, NULL); /* a member this library does not know: the defaults */
    cm_trace_limits_resolve(&b->lim, &given);
}

const nt_trace_limits *tr_builder_limits(const nt_trace_builder *b) { return &b->lim; }

void tr_builder_fail_limit(nt_trace_builder *b, const char *msg) { tr_fail_limit(b, "%s", msg); }

static int on_trace(void *user, const nt_trace_info *info)
{
    nt_trace_builder *b = user;
    b->t->info = *info;
    b->t->have_info = true;
    return 0;
}

/* Every sample whose stack id is new to the id cache hashes its whole stack
 * (tens of frames): four independent lanes let the multiplies overlap.  The
 * stacks come from the input, so the lanes start from the builder's secret
 * key and SipHash finishes: which stacks share a slot cannot be chosen. */
static uint64_t hash_ips(const cm_hash_key *key, const uint64_t *ips, uint32_t n)
{
    const uint64_t k = 0xff51afd7ed558ccdull;
    uint64_t h0 = key->v0 ^ n, h1 = key->v1, h2 = key->v2, h3 = key->v3;
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        h0 = (h0 ^ ips[i]) * k;
        h1 = (h1 ^ ips[i + 1]) * k;
        h2 = (h2 ^ ips[i + 2]) * k;
        h3 = (h3 ^ ips[i + 3]) * k;
    }
    for (; i < n; i++)
        h0 = (h0 ^ ips[i]) * k;
    return cm_hash_u64(key, h0 ^ (h1 << 17 | h1 >> 47) ^ (h2 << 31 | h2 >> 33) ^ (h3 << 47 | h3 >> 17));
}

/* The address id of ip, innermost (leaf) or a return address, added if new;
 * UINT32_MAX when memory is short. */
static uint32_t addr_id(nt_trace_builder *b, uint64_t ip, bool leaf)
{
    cm_mem *m = &b->t->mem;
    tr_addr_slot *as = NULL;
    uint32_t id;
    if (leaf) {
        id = cm_map_index(&b->leaf_ids, ip);
    } else {
        /* New stacks share most return addresses with earlier ones: a
         * direct-mapped cache in front of the map (slot from a keyed hash). */
        as = &b->acache[(ip * 0x9E3779B97F4A7C15ull ^ b->stack_key.v1) >> (64 - TR_ACACHE_BITS)];
        id = as->addr == ip && as->id != UINT32_MAX ? as->id : cm_map_index(&b->addr_ids, ip);
    }
    if (id == UINT32_MAX) {
        size_t old = b->leaf_cap;
        if (b->nuaddr >= UINT32_MAX - 1 ||
            !cm_mem_reserve(m, (void **)&b->leaf, &b->leaf_cap, b->nuaddr / 64 + 1, sizeof *b->leaf))
            return UINT32_MAX;
        memset(b->leaf + old, 0, (b->leaf_cap - old) * sizeof *b->leaf);
        if (!cm_mem_reserve(m, (void **)&b->uaddr, &b->uaddr_cap, b->nuaddr + 1, sizeof *b->uaddr) ||
            !cm_map_set(m, leaf ? &b->leaf_ids : &b->addr_ids, ip, (uint32_t)b->nuaddr))
            return UINT32_MAX;
        cm_line_filter_add(b->lines, TR_LINE_HASH_BITS, ip - (leaf ? 0 : 1));
        id = (uint32_t)b->nuaddr;
        b->uaddr[b->nuaddr++] = ip;
        b->leaf[id / 64] |= (uint64_t)leaf << (id % 64);
    }
    if (as)
        *as = (tr_addr_slot){ ip, id };
    return id;
}

/* A stack looked up in the interned stacks' index: its ips. */
typedef struct tr_stack_sought {
    const nt_trace_builder *b;
    const uint64_t *ips;
    uint32_t n;
} tr_stack_sought;

/* Whether interned stack val stands for the ips sought: its address ids
 * name each one's ip in the address table (the position says innermost or not). */
static bool same_stack(const void *ctx, uint64_t val)
{
    const tr_stack_sought *q = ctx;
    const tr_istack *s = &q->b->istacks[val];
    if (s->count != q->n)
        return false;
    const uint32_t *ids = tr_ids(q->b->t, s->off, q->n);
    for (uint32_t k = 0; k < q->n; k++)
        if (q->b->uaddr[ids[k]] != q->ips[k])
            return false;
    return true;
}

/* Index of the interned stack ips[0..n), adding it if new (its address ids
 * only: the ips are in the address table); UINT32_MAX when memory is short.
 * A stack a part's builder interned (build_part.c) also comes with its
 * address ids there (part_ids), whose ids here amap keeps once looked up
 * (UINT32_MAX: not yet), so that each address of a part is looked up once. */
static uint32_t intern_ids(nt_trace_builder *b, const uint64_t *ips, uint32_t n, const uint32_t *part_ids, uint32_t *amap)
{
    nt_trace *t = b->t;
    cm_mem *m = &t->mem;
    uint64_t h = hash_ips(&b->stack_key, ips, n);
    const tr_stack_sought q = { b, ips, n };
    const uint64_t *found = cm_map_find(&b->stack_index, h, same_stack, &q);
    if (found)
        return (uint32_t)*found;
    if (t->nids + n > b->lim.max_frames || t->nids + n > UINT32_MAX || b->nistacks >= UINT32_MAX - 1) {
        tr_fail_limit(b, "more than %llu IPs in distinct stacks (nt_trace_limits.max_frames)",
                      (unsigned long long)b->lim.max_frames);
        return UINT32_MAX;
    }
    if (!reserve_slow(m, (void **)&t->ids, &t->ids_cap, t->nids + n, sizeof *t->ids) ||
        !GROW(m, b->istacks, b->nistacks, b->istacks_cap))
        return UINT32_MAX;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t id = amap ? amap[part_ids[k]] : UINT32_MAX;
        if (id == UINT32_MAX && (id = addr_id(b, ips[k], k == 0)) != UINT32_MAX && amap)
            amap[part_ids[k]] = id;
        if (id == UINT32_MAX)
            return UINT32_MAX;
        t->ids[t->nids + k] = id;
    }
    if (!cm_map_add(m, &b->stack_index, h, b->nistacks))
        return UINT32_MAX;
    b->istacks[b->nistacks] = (tr_istack){ (uint32_t)t->nids, n };
    t->nids += n;
    return (uint32_t)b->nistacks++;
}

static uint32_t intern_stack(nt_trace_builder *b, const uint64_t *ips, uint32_t n)
{
    return intern_ids(b, ips, n, NULL, NULL);
}

uint32_t tr_builder_intern_part(nt_trace_builder *b, const uint64_t *ips, uint32_t n, const uint32_t *part_ids,
                                uint32_t *amap)
{
    uint32_t st = intern_ids(b, ips, n, part_ids, amap);
    if (st == UINT32_MAX && !b->failed)
        tr_fail(b, NT_ERR_NOMEM);
    return st;
}

static bool add_sample_chunk(nt_trace *t)
{
    if (!GROW(&t->mem, t->schunks, t->nschunks, t->schunks_cap))
        return false;
    tr_sample *c = cm_mem_alloc(&t->mem, TR_SCHUNK * sizeof *c);
    if (!c)
        return false;
    t->schunks[t->nschunks++] = c;
    t->last_chunk = TR_SCHUNK;
    return true;
}

#if defined(__GNUC__)
#define TR_SLOW_PATH CC_SLOW
#else
#define TR_SLOW_PATH
#endif

/* A sample's stack the id cache did not know: interned, then cached. */
static TR_SLOW_PATH uint32_t stack_slow(nt_trace_builder *b, const nt_sample *s, uint32_t n, tr_idcache *c)
{
    uint32_t st = intern_stack(b, n ? s->stack->ips : NULL, n);
    if (st != UINT32_MAX && n)
        *c = (tr_idcache){ s->stack->interval, s->stack_id, st, n, s->stack->ips[0], s->stack->ips[n - 1] };
    if (st == UINT32_MAX && !b->failed)
        tr_fail(b, NT_ERR_NOMEM);
    return st;
}

/* A thread the cache did not know: from the map, or a new one. */
static TR_SLOW_PATH uint32_t thread_slow(nt_trace_builder *b, uint64_t id, tr_thread_slot *ts)
{
    nt_trace *t = b->t;
    uint32_t th = cm_map_index(&b->thread_index, id);
    if (th == UINT32_MAX) {
        if (t->nthreads >= TR_MAX_THREADS || t->nthreads >= b->lim.max_threads) {
            tr_fail_limit(b, "more than %u sampled threads (nt_trace_limits.max_threads)",
                          b->lim.max_threads < TR_MAX_THREADS ? b->lim.max_threads : TR_MAX_THREADS);
            return UINT32_MAX;
        }
        if (!GROW(&t->mem, t->threads, t->nthreads, t->threads_cap) ||
            !cm_map_set(&t->mem, &b->thread_index, id, (uint32_t)t->nthreads)) {
            tr_fail(b, NT_ERR_NOMEM);
            return UINT32_MAX;
        }
        th = (uint32_t)t->nthreads;
        t->threads[t->nthreads++] = id;
    }
    *ts = (tr_thread_slot){ id, th };
    return th;
}

static TR_SLOW_PATH bool sample_chunk_slow(nt_trace_builder *b)
{
    nt_trace *t = b->t;
    if (t->nsamples >= b->lim.max_samples) {
        tr_fail_limit(b, "more than %llu samples (nt_trace_limits.max_samples)",
                      (unsigned long long)b->lim.max_samples);
        return false;
    }
    if (!add_sample_chunk(t)) {
        tr_fail(b, NT_ERR_NOMEM);
        return false;
    }
    /* The chunk's free part ends at the limit, so the slow path sees it exactly. */
    uint64_t room = b->lim.max_samples - t->nsamples;
    b->sfill = t->schunks[t->nschunks - 1];
    b->send = b->sfill + (room < TR_SCHUNK ? room : TR_SCHUNK);
    return true;
}

void nt_trace_builder_count_samples(nt_trace_builder *b)
{
    if (b)
        b->aggregate = true;
}

/* Room for thread index th in the pending samples. */
static bool grow_pending(nt_trace_builder *b, uint32_t th)
{
    size_t old = b->pend_cap;
    if (!cm_mem_reserve(&b->t->mem, (void **)&b->pend, &b->pend_cap, (size_t)th + 1, sizeof *b->pend))
        return false;
    memset(b->pend + old, 0, (b->pend_cap - old) * sizeof *b->pend);
    return true;
}

/* aggregate: the sample counted into its entry, and the time from the
 * thread's previous sample added to that one's entry. */
static int count_sample(nt_trace_builder *b, const nt_sample *s, uint32_t istack, uint32_t thread_type)
{
    nt_trace *t = b->t;
    cm_mem *m = &t->mem;
    int64_t ticks = s->timestamp;
    uint32_t th = thread_type & 0xFFFFFFu;
    if (th >= b->pend_cap && !grow_pending(b, th))
        return tr_fail(b, NT_ERR_NOMEM);
    /* A thread's samples mostly repeat its previous stack: its entry, without the map. */
    tr_pending *pd = &b->pend[th];
    uint32_t idx = pd->entry - 1;
    tr_entry *e = pd->entry ? &b->entries[idx] : NULL;
    if (!e || e->istack != istack || e->thread_type != thread_type || e->epoch != b->code.epoch) {
        bool added;
        uint64_t *slot = cm_map_put(m, &b->entry_index, (uint64_t)istack << 32 | thread_type, &added);
        if (!slot)
            return tr_fail(b, NT_ERR_NOMEM);
        if (added) {
            if (b->nentries >= b->lim.max_samples)
                return tr_fail_limit(b, "more than %llu sample entries (nt_trace_limits.max_samples)",
                                     (unsigned long long)b->lim.max_samples);
            if (!GROW(m, b->entries, b->nentries, b->entries_cap))
                return tr_fail(b, NT_ERR_NOMEM);
            *slot = b->nentries;
            b->entries[b->nentries++] = (tr_entry){ ticks, ticks, b->seq, 0, 0, istack, thread_type, b->code.epoch };
        }
        idx = (uint32_t)*slot;
        e = &b->entries[idx];
    }
    e->count++;
    if (ticks < e->first_ticks) {
        e->first_ticks = ticks;
        e->first_seq = b->seq;
    }
    e->last_ticks = ticks > e->last_ticks ? ticks : e->last_ticks;
    if (pd->entry) {
        /* A thread's samples out of time order would weigh differently once sorted. */
        if (ticks < pd->ticks)
            t->inexact = true;
        tr_entry *prev = &b->entries[pd->entry - 1];
        /* The parser's time_ns is the printed time (nt_ticks_to_ns), so the gap is that of the printed times. */
        uint64_t d = s->time_ns > pd->ns ? (uint64_t)s->time_ns - (uint64_t)pd->ns : 0;
        prev->wall_ns = tr_add_weight(prev->wall_ns, d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d);
    }
    *pd = (tr_pending){ idx + 1, ticks, s->time_ns };
    b->seq++;
    t->total_samples++;
    return 0;
}

static int cmp_entries(const void *pa, const void *pb, void *ctx)
{
    (void)ctx;
    const tr_entry *x = pa, *y = pb;
    if (x->first_ticks != y->first_ticks)
        return x->first_ticks < y->first_ticks ? -1 : 1;
    return x->first_seq < y->first_seq ? -1 : x->first_seq > y->first_seq;
}

/* aggregate: the entries become the trace's samples, in the order of their
 * first samples in time, as those would stand sorted. */
static bool entries_to_samples(nt_trace_builder *b)
{
    nt_trace *t = b->t;
    cm_mem *m = &t->mem;
    size_t n = b->nentries;
    cm_map_free(m, &b->entry_index);
    int64_t last_weight = tr_default_ns(&t->info);
    for (size_t th = 0; th < b->pend_cap; th++)
        if (b->pend[th].entry)
            b->entries[b->pend[th].entry - 1].wall_ns = tr_add_weight(b->entries[b->pend[th].entry - 1].wall_ns, last_weight);
    tr_entry *tmp = cm_mem_alloc(m, (n ? n : 1) * sizeof *tmp);
    t->agg = cm_mem_alloc(m, (n ? n : 1) * sizeof *t->agg);
    t->agg_cap = t->agg ? (n ? n : 1) : 0;
    if (!tmp || !t->agg) {
        cm_mem_free(m, tmp, (n ? n : 1) * sizeof *tmp);
        return false;
    }
    cm_merge_sort(b->entries, tmp, n, sizeof *tmp, cmp_entries, NULL);
    cm_mem_free(m, tmp, (n ? n : 1) * sizeof *tmp);
    for (size_t i = 0; i < n; i++) {
        const tr_entry *e = &b->entries[i];
        if (b->sfill == b->send && !sample_chunk_slow(b))
            return false;
        *b->sfill++ = (tr_sample){ e->first_ticks, e->istack, e->thread_type };
        t->agg[i] = (tr_agg){ e->count, e->wall_ns, e->last_ticks };
        t->nsamples++;
    }
    cm_mem_free(m, b->entries, b->entries_cap * sizeof *b->entries);
    cm_mem_free(m, b->pend, b->pend_cap * sizeof *b->pend);
    b->entries = NULL;
    b->pend = NULL;
    b->entries_cap = b->pend_cap = 0;
    b->sorted = true;
    return true;
}

/* The labels of the sample about to be stored: given, or its event's. */
static TR_SLOW_PATH bool keep_labels(nt_trace_builder *b, const nt_sample *s)
{
    nt_event_labels l;
    const nt_event_labels *lp = b->given_labels;
    if (!lp && s->event && nt_event_labels_get(s->event, &l) == NT_OK)
        lp = &l;
    return !lp || tr_note_labels(b, b->t->nsamples, lp);
}

uint32_t tr_builder_sample_stack(nt_trace_builder *b, const nt_sample *s)
{
    uint32_t n = s->stack ? s->stack->count : 0;
    if (!s->stack && s->stack_id != 0)
        b->t->samples_unknown_stack++;
    tr_idcache *c = &b->idcache[s->stack_id & (TR_IDCACHE - 1)];
    if (n && c->interval == s->stack->interval && c->id == s->stack_id && c->count == n && c->first == s->stack->ips[0] &&
        c->last == s->stack->ips[n - 1])
        return c->istack;
    return stack_slow(b, s, n, c);
}

uint32_t tr_builder_thread(nt_trace_builder *b, uint64_t thread_id)
{
    /* Samples of a few threads interleave: a small direct-mapped cache in
     * front of the map. */
    tr_thread_slot *ts = &b->tcache[(thread_id * 0x9E3779B97F4A7C15ull) >> (64 - TR_TCACHE_BITS)]; /* ids are often multiples of 4 */
    uint32_t th = ts->id == thread_id ? ts->index : UINT32_MAX;
    return th != UINT32_MAX ? th : thread_slow(b, thread_id, ts);
}

int tr_builder_store(nt_trace_builder *b, const nt_sample *s, uint32_t st, uint32_t th)
{
    uint32_t type = s->type > 254 ? 255 : s->type;
    if (b->aggregate)
        return count_sample(b, s, st, th | (type << 24)); /* counted samples keep no labels */
    if (b->sfill == b->send && !sample_chunk_slow(b))
        return 1;
    if (b->keep_labels && !keep_labels(b, s))
        return tr_fail(b, NT_ERR_NOMEM);
    *b->sfill++ = (tr_sample){ s->timestamp, st, th | (type << 24) };
    b->t->nsamples++;
    if (s->timestamp < b->last_ticks)
        b->sorted = false;
    b->last_ticks = s->timestamp;
    return 0;
}

static int on_sample(void *user, const nt_sample *s)
{
    nt_trace_builder *b = user;
    if (b->failed)
        return 1;
    uint32_t st = tr_builder_sample_stack(b, s);
    if (st == UINT32_MAX)
        return 1;
    uint32_t th = tr_builder_thread(b, s->thread_id);
    if (th == UINT32_MAX)
        return 1;
    return tr_builder_store(b, s, st, th);
}

/* Stack ids are scoped by the parser's nt_stack.interval: nothing to count
 * here.  Kept so that callers chaining every builder callback (the profile
 * builder, the window, bindings) go on working. */
static int on_sequence_point(void *user, const nt_sequence_point *sp)
{
    (void)user;
    (void)sp;
    return 0;
}

int tr_builder_sample_labeled(nt_trace_builder *b, const nt_sample *s, const nt_event_labels *l)
{
    b->given_labels = l;
    int rc = on_sample(b, s);
    b->given_labels = NULL;
    return rc;
}

void nt_trace_builder_keep_labels(nt_trace_builder *b)
{
    if (b)
        b->keep_labels = true;
}

uint32_t tr_builder_intern(nt_trace_builder *b, const nt_stack *stack)
{
    if (b->failed)
        return UINT32_MAX;
    uint32_t n = stack ? stack->count : 0;
    uint32_t st = intern_stack(b, n ? stack->ips : NULL, n);
    if (st == UINT32_MAX)
        tr_fail(b, NT_ERR_NOMEM);
    return st;
}

void tr_builder_resolve_also(nt_trace_builder *b, tr_sample *extra, size_t n)
{
    b->extra = extra;
    b->nextra = n;
}

void nt_trace_builder_callbacks(nt_callbacks *cb)
{
    const nt_callbacks mine = {
        .trace = on_trace,
        .sample = on_sample,
        .method = tr_on_method,
        .module = tr_on_module,
        .assembly = tr_on_assembly,
        .sequence_point = on_sequence_point,
    };
    ABI_OUT(nt_callbacks, cb, &mine);
}
static int cmp_ticks(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    int64_t x = ((const tr_sample *)a)->ticks, y = ((const tr_sample *)b)->ticks;
    return (x > y) - (x < y);
}

/* The samples by time, ties in stream order.  Only streams whose samples
 * are out of order pay for the flat copies. */
/* A sample and its label set, sorted together. */
typedef struct tr_labeled {
    tr_sample s;
    uint32_t set;
} tr_labeled;

static int cmp_labeled(const void *a, const void *b, void *ctx)
{
    return cmp_ticks(&((const tr_labeled *)a)->s, &((const tr_labeled *)b)->s, ctx);
}

static bool sort_labeled_samples(nt_trace *t)
{
    size_t n = t->nsamples;
    tr_labeled *flat = cm_mem_alloc(&t->mem, 2 * n * sizeof *flat);
    if (!flat)
        return false;
    for (size_t i = 0; i < n; i++)
        flat[i] = (tr_labeled){ *TR_SAMPLE(t, i), i < t->sample_labels_cap ? t->sample_labels[i] : 0 };
    cm_merge_sort(flat, flat + n, n, sizeof *flat, cmp_labeled, NULL);
    for (size_t i = 0; i < n; i++) {
        *TR_SAMPLE(t, i) = flat[i].s;
        if (i < t->sample_labels_cap)
            t->sample_labels[i] = flat[i].set;
    }
    cm_mem_free(&t->mem, flat, 2 * n * sizeof *flat);
    return true;
}

static bool sort_samples(nt_trace *t)
{
    size_t n = t->nsamples;
    if (t->sample_labels) {
        /* Every sample needs its entry before they move. */
        size_t old = t->sample_labels_cap;
        if (n > old) {
            if (!cm_mem_reserve(&t->mem, (void **)&t->sample_labels, &t->sample_labels_cap, n, sizeof *t->sample_labels))
                return false;
            memset(t->sample_labels + old, 0, (t->sample_labels_cap - old) * sizeof *t->sample_labels);
        }
        return sort_labeled_samples(t);
    }
    tr_sample *flat = cm_mem_alloc(&t->mem, n * sizeof *flat);
    tr_sample *tmp = cm_mem_alloc(&t->mem, n * sizeof *tmp);
    if (!flat || !tmp) {
        cm_mem_free(&t->mem, flat, n * sizeof *flat);
        cm_mem_free(&t->mem, tmp, n * sizeof *tmp);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        flat[i] = *TR_SAMPLE(t, i);
    cm_merge_sort(flat, tmp, n, sizeof *flat, cmp_ticks, NULL);
    for (size_t i = 0; i < n; i++)
        *TR_SAMPLE(t, i) = flat[i];
    cm_mem_free(&t->mem, flat, n * sizeof *flat);
    cm_mem_free(&t->mem, tmp, n * sizeof *tmp);
    return true;
}

static void builder_release(nt_trace_builder *b)
{
    cm_mem *m = &b->t->mem;
    cm_mem_free(m, b->istacks, b->istacks_cap * sizeof *b->istacks);
    cm_map_free(m, &b->stack_index);
    cm_map_free(m, &b->thread_index);
    cm_map_free(m, &b->live);
    tr_addrs_release(b);
    tr_cold_release(b);
    for (int k = 0; k < 3; k++) {
        cm_mem_free(m, b->conv[k], b->conv_cap[k]);
        b->conv[k] = NULL;
        b->conv_cap[k] = 0;
    }
    cm_mem_free(m, b->entries, b->entries_cap * sizeof *b->entries);
    cm_mem_free(m, b->pend, b->pend_cap * sizeof *b->pend);
    cm_map_free(m, &b->entry_index);
    cm_map_free(m, &b->label_index);
    b->entries = NULL;
    b->pend = NULL;
    b->entries_cap = b->pend_cap = 0;
    b->istacks = NULL;
}

static void shrink(cm_mem *m, void **p, size_t *cap, size_t n, size_t elem)
{
    if (*cap > n && n && cm_mem_resize(m, p, *cap * elem, n * elem))
        *cap = n;
}

nt_status nt_trace_builder_finish(nt_trace_builder *b, const nt_parser *parser, nt_status stream_status,
                                  nt_trace **out)
{
    *out = NULL;
    if (!b)
        return NT_ERR_INVALID_ARG;
    nt_trace *t = b->t;
    nt_status st = NT_OK;
    if (b->failed && stream_status == NT_ERR_STOPPED)
        stream_status = b->fail_status;
    t->status = stream_status;
    if (parser) {
        nt_parser_stats ps = { 0 };
        nt_parser_stats_get(parser, &ps);
        t->stream_bytes = ps.bytes;
        t->events_dropped = ps.events_dropped;
        if (stream_status != NT_OK)
            snprintf(t->message, sizeof t->message, "%s", nt_parser_message(parser));
    } else if (stream_status != NT_OK) {
        snprintf(t->message, sizeof t->message, "%s", nt_status_describe(stream_status));
    }
    /* The parser would only say that a callback stopped it: say which limit. */
    if (b->failed && b->fail_status == NT_ERR_LIMIT && b->fail_msg[0] && stream_status == NT_ERR_LIMIT)
        snprintf(t->message, sizeof t->message, "%s", b->fail_msg);
    if (b->failed && (b->fail_status == NT_ERR_NOMEM)) {
        st = NT_ERR_NOMEM;
        goto fail;
    }
    /* Tables only the parse needed go before resolution allocates. */
    cm_map_free(&t->mem, &b->thread_index);
    cm_map_free(&t->mem, &b->live);
    t->stack_probes = b->stack_index.probes;
    cm_map_free(&t->mem, &b->stack_index);
    if (b->aggregate && !entries_to_samples(b)) {
        st = NT_ERR_NOMEM;
        goto fail;
    }
    if (t->nschunks) {
        size_t used = t->nsamples - (t->nschunks - 1) * TR_SCHUNK;
        shrink(&t->mem, (void **)&t->schunks[t->nschunks - 1], &t->last_chunk, used, sizeof **t->schunks);
    }
    shrink(&t->mem, (void **)&t->methods, &t->methods_cap, t->nmethods, sizeof *t->methods);
    if (!b->sorted && !sort_samples(t)) {
        st = NT_ERR_NOMEM;
        goto fail;
    }
    st = tr_resolve_frames(b);
    if (st != NT_OK)
        goto fail;
    builder_release(b);
    cm_mem_free(&t->mem, b, sizeof *b);
    shrink(&t->mem, (void **)&t->frames, &t->frames_cap, t->nframes, sizeof *t->frames);
    shrink(&t->mem, (void **)&t->ids, &t->ids_cap, t->nids, sizeof *t->ids);
    *out = t;
    return NT_OK;
fail:
    nt_trace_builder_free(b);
    return st;
}
void nt_trace_builder_free(nt_trace_builder *b)
{
    if (!b)
        return;
    nt_trace *t = b->t;
    builder_release(b);
    cm_mem_free(&t->mem, b, sizeof *b);
    nt_trace_free(t);
}

