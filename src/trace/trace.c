/* The aggregator: builds an nt_trace from the parser's callbacks.
 *
 * While the stream is read, samples keep (ticks, thread, type, interned
 * stack): the parser's stack ids restart at every sequence point, so the IP
 * arrays are interned by content.  Module and assembly records are collected
 * as they come; so are JIT loads.  Rundown and unload records wait aside with
 * plain string copies (DCEnd records far from every sample are dropped at once)
 * and finish() keeps those whose code holds a sampled address.  Rundown
 * arrives last, so frames are resolved only
 * in finish(): once per interned stack when no frame of it can resolve
 * differently over time (the common case), else per sample, sharing one
 * frames array among the samples that resolve alike. */
#include "trace/trace_internal.h"

#include <sys/mman.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tr_istack {
    uint64_t hash;
    uint32_t off, count;
} tr_istack;

/* Parser stack id -> interned stack, for the current sequence-point interval
 * (ids restart after each one).  Direct-mapped: a miss only costs a hash. */
#define TR_IDCACHE 256u
typedef struct tr_idcache {
    uint32_t gen, id, istack, count;
    uint64_t first, last;   /* cheap guard against a redefined id */
} tr_idcache;

/* A rundown or unload record not (yet) known to cover a sampled address. */
typedef struct tr_cold {
    uint64_t start, method_id, module_id, rejit_id;
    int64_t timestamp, until;
    const char *str;        /* "name\0signature\0" in the cold arena */
    const char *type;       /* in the cold arena, shared by runs of one type */
    uint32_t size, flags, token;
    uint32_t hot_before;    /* records kept directly that came before it: its place in stream order */
    uint8_t source;
} tr_cold;

#define TR_COLD_CHUNK 256u                  /* records a chunk */
#define TR_COLD 0x80000000u                 /* live-map value flag: a cold record's index */
#define TR_CSTR_CHUNK (256u * 1024u)
#define TR_LINE_SHIFT 8
#define TR_LINE_SPAN 32u                    /* longer extents are not looked up line by line */
#define TR_LINE_HASH_BITS 16
#define TR_LINE_BITS (1u << TR_LINE_HASH_BITS)

/* Thread id -> index, direct-mapped in front of the map. */
#define TR_TCACHE_BITS 6u                   /* the top bits of a product index it */
#define TR_TCACHE (1u << TR_TCACHE_BITS)
typedef struct tr_thread_slot {
    uint64_t id;
    uint32_t index;         /* UINT32_MAX = empty */
} tr_thread_slot;

struct nt_trace_builder {
    nt_trace *t;
    bool failed;            /* out of memory or a table limit: the parse was stopped */
    nt_status fail_status;
    bool sorted;
    int64_t last_ticks;

    uint64_t *ips;          /* interned IP arrays */
    size_t nips, ips_cap;
    tr_istack *istacks;
    size_t nistacks, istacks_cap;
    uint32_t *itable;       /* open addressing: istack index + 1, 0 = empty */
    size_t itable_cap;

    tr_idcache idcache[TR_IDCACHE];
    uint32_t gen;           /* bumped at every sequence point */
    tr_map thread_index;    /* thread id -> index */
    tr_thread_slot tcache[TR_TCACHE];
    tr_sample *sfill, *send; /* the free part of the last sample chunk */
    tr_map live;            /* (method id, start) -> record loaded and not yet unloaded (TR_COLD: cold) */

    /* Rundown and unload records wait here, strings copied without interning,
     * until finish() knows every sampled address: only those whose code a
     * sampled frame lies in are kept (a rundown lists every method ever
     * compiled, a few of which ran while sampled).  Chunked: never moved. */
    tr_cold **cold;
    size_t ncold, cold_chunks, cold_chunks_cap;
    char *cstr;             /* current chunk of the cold string arena */
    size_t cstr_used, cstr_size;
    char **cstr_chunks;
    size_t ncstr_chunks, cstr_chunks_cap;
    const char *cold_last_type;
    /* A bit for each hash of the 256-byte lines of the addresses looked up
     * so far (frame 0 as is, return addresses minus one): a DCEnd record
     * whose lines' bits are all clear lies near no sample and is dropped at
     * once.  A set bit only sends a record to the cold list, where finish()
     * decides exactly. */
    uint64_t lines[TR_LINE_BITS / 64];
    uint64_t dropped;       /* DCEnd records dropped so */

    /* Stack references of other events (the profiles' records, profile.c),
     * resolved like samples at their own time; not counted as samples. */
    tr_sample *extra;
    size_t nextra;

    /* The distinct addresses looked up, and for each entry of ips the index
     * of its address there: finish() sorts them once, and a frame then finds
     * its candidates without a search. */
    uint64_t *uaddr;
    size_t nuaddr, uaddr_cap;
    uint32_t *ipu;
    size_t ipu_cap;
    tr_map addr_ids;        /* address -> index in uaddr */
};

#define GROW(m, arr, n, cap) nt_mem_reserve((m), (void **)&(arr), &(cap), (n) + 1, sizeof *(arr))

/* The kept method records grow by an eighth, not by doubling, so the
 * trace's peak memory stays close to what it keeps (samples are chunked). */
static bool grow_slow(nt_mem *m, void **arr, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap)
        return true;
    size_t ncap = *cap < 4096 ? (*cap ? *cap * 2 : 256) : *cap + *cap / 8;
    if (ncap > SIZE_MAX / elem || !nt_mem_resize(m, arr, *cap * elem, ncap * elem))
        return false;
    *cap = ncap;
    return true;
}
#define GROW_SLOW(m, arr, n, cap) grow_slow((m), (void **)&(arr), (n), &(cap), sizeof *(arr))

static int fail(nt_trace_builder *b, nt_status s)
{
    b->failed = true;
    b->fail_status = s;
    return 1;
}

nt_trace_builder *nt_trace_builder_new(const nt_allocator *alloc)
{
    nt_mem m;
    nt_mem_init(&m, alloc);
    nt_trace *t = nt_mem_alloc(&m, sizeof *t);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    t->mem = m;
    nt_trace_builder *b = nt_mem_alloc(&t->mem, sizeof *b);
    if (!b) {
        m = t->mem;
        nt_mem_free(&m, t, sizeof *t);
        return NULL;
    }
    memset(b, 0, sizeof *b);
    b->t = t;
    b->sorted = true;
    b->last_ticks = INT64_MIN;
    b->gen = 1;
    for (size_t i = 0; i < TR_TCACHE; i++)
        b->tcache[i].index = UINT32_MAX;
    t->status = NT_OK;
    return b;
}

static int on_trace(void *user, const nt_trace_info *info)
{
    nt_trace_builder *b = user;
    b->t->info = *info;
    b->t->have_info = true;
    return 0;
}

static uint32_t line_hash(uint64_t line)
{
    return (uint32_t)((line * 0x9E3779B97F4A7C15ull) >> (64 - TR_LINE_HASH_BITS));
}

/* Every sample whose stack id is new to the id cache hashes its whole stack
 * (tens of frames): four independent lanes let the multiplies overlap, and
 * the final mix brings the high bits down to the table index. */
static uint64_t hash_ips(const uint64_t *ips, uint32_t n)
{
    const uint64_t k = 0xff51afd7ed558ccdull;
    uint64_t h0 = 0x9E3779B97F4A7C15ull ^ n, h1 = 0xC2B2AE3D27D4EB4Full, h2 = 0x165667B19E3779F9ull,
             h3 = 0x27D4EB2F165667C5ull;
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        h0 = (h0 ^ ips[i]) * k;
        h1 = (h1 ^ ips[i + 1]) * k;
        h2 = (h2 ^ ips[i + 2]) * k;
        h3 = (h3 ^ ips[i + 3]) * k;
    }
    for (; i < n; i++)
        h0 = (h0 ^ ips[i]) * k;
    uint64_t h = h0 ^ (h1 << 17 | h1 >> 47) ^ (h2 << 31 | h2 >> 33) ^ (h3 << 47 | h3 >> 17);
    h ^= h >> 32;
    h *= k;
    h ^= h >> 29;
    return h;
}

static bool itable_grow(nt_trace_builder *b)
{
    nt_mem *m = &b->t->mem;
    size_t ncap = b->itable_cap ? b->itable_cap * 2 : 1024;
    uint32_t *nt = nt_mem_alloc(m, ncap * sizeof *nt);
    if (!nt)
        return false;
    memset(nt, 0, ncap * sizeof *nt);
    for (size_t i = 0; i < b->nistacks; i++) {
        size_t j = (size_t)b->istacks[i].hash & (ncap - 1);
        while (nt[j])
            j = (j + 1) & (ncap - 1);
        nt[j] = (uint32_t)i + 1;
    }
    nt_mem_free(m, b->itable, b->itable_cap * sizeof *b->itable);
    b->itable = nt;
    b->itable_cap = ncap;
    return true;
}

/* Index of the interned copy of ips[0..n), adding it if new; UINT32_MAX when memory is short. */
static uint32_t intern_stack(nt_trace_builder *b, const uint64_t *ips, uint32_t n)
{
    nt_mem *m = &b->t->mem;
    if ((b->nistacks + 1) * 2 > b->itable_cap && !itable_grow(b))
        return UINT32_MAX;
    uint64_t h = hash_ips(ips, n);
    size_t j = (size_t)h & (b->itable_cap - 1);
    while (b->itable[j]) {
        const tr_istack *s = &b->istacks[b->itable[j] - 1];
        if (s->hash == h && s->count == n && (n == 0 || memcmp(b->ips + s->off, ips, n * sizeof *ips) == 0))
            return b->itable[j] - 1;
        j = (j + 1) & (b->itable_cap - 1);
    }
    if (b->nistacks >= UINT32_MAX - 1 || b->nips + n > UINT32_MAX)
        return UINT32_MAX;
    if (!nt_mem_reserve(m, (void **)&b->ips, &b->ips_cap, b->nips + n, sizeof *b->ips) ||
        !GROW(m, b->istacks, b->nistacks, b->istacks_cap))
        return UINT32_MAX;
    if (n)
        memcpy(b->ips + b->nips, ips, n * sizeof *ips);
    if (!nt_mem_reserve(m, (void **)&b->ipu, &b->ipu_cap, b->nips + n, sizeof *b->ipu))
        return UINT32_MAX;
    for (uint32_t k = 0; k < n; k++) {
        uint64_t a = ips[k] - (k ? 1 : 0);
        uint32_t id = tr_map_get(&b->addr_ids, a);
        if (id == UINT32_MAX) {
            if (!nt_mem_reserve(m, (void **)&b->uaddr, &b->uaddr_cap, b->nuaddr + 1, sizeof *b->uaddr) ||
                !tr_map_put(m, &b->addr_ids, a, (uint32_t)b->nuaddr))
                return UINT32_MAX;
            uint32_t lh = line_hash(a >> TR_LINE_SHIFT);
            b->lines[lh / 64] |= 1ull << (lh % 64);
            id = (uint32_t)b->nuaddr;
            b->uaddr[b->nuaddr++] = a;
        }
        b->ipu[b->nips + k] = id;
    }
    b->istacks[b->nistacks] = (tr_istack){ h, (uint32_t)b->nips, n };
    b->nips += n;
    b->itable[j] = (uint32_t)b->nistacks + 1;
    return (uint32_t)b->nistacks++;
}

static bool add_sample_chunk(nt_trace *t)
{
    if (!GROW(&t->mem, t->schunks, t->nschunks, t->schunks_cap))
        return false;
    tr_sample *c = nt_mem_alloc(&t->mem, TR_SCHUNK * sizeof *c);
    if (!c)
        return false;
    t->schunks[t->nschunks++] = c;
    t->last_chunk = TR_SCHUNK;
    return true;
}

static void free_samples(nt_trace *t)
{
    for (size_t i = 0; i < t->nschunks; i++)
        nt_mem_free(&t->mem, t->schunks[i], (i + 1 == t->nschunks ? t->last_chunk : TR_SCHUNK) * sizeof **t->schunks);
    nt_mem_free(&t->mem, t->schunks, t->schunks_cap * sizeof *t->schunks);
    t->schunks = NULL;
    t->nschunks = t->schunks_cap = 0;
}

#if defined(__GNUC__)
#define TR_SLOW_PATH __attribute__((noinline, cold))
#else
#define TR_SLOW_PATH
#endif

/* A sample's stack the id cache did not know: interned, then cached. */
static TR_SLOW_PATH uint32_t stack_slow(nt_trace_builder *b, const nt_sample *s, uint32_t n, tr_idcache *c)
{
    uint32_t st = intern_stack(b, n ? s->stack->ips : NULL, n);
    if (st != UINT32_MAX && n)
        *c = (tr_idcache){ b->gen, s->stack_id, st, n, s->stack->ips[0], s->stack->ips[n - 1] };
    if (st == UINT32_MAX)
        fail(b, NT_ERR_NOMEM);
    return st;
}

/* A thread the cache did not know: from the map, or a new one. */
static TR_SLOW_PATH uint32_t thread_slow(nt_trace_builder *b, uint64_t id, tr_thread_slot *ts)
{
    nt_trace *t = b->t;
    uint32_t th = tr_map_get(&b->thread_index, id);
    if (th == UINT32_MAX) {
        if (t->nthreads >= TR_MAX_THREADS) {
            fail(b, NT_ERR_LIMIT);
            return UINT32_MAX;
        }
        if (!GROW(&t->mem, t->threads, t->nthreads, t->threads_cap) ||
            !tr_map_put(&t->mem, &b->thread_index, id, (uint32_t)t->nthreads)) {
            fail(b, NT_ERR_NOMEM);
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
    if (!add_sample_chunk(t)) {
        fail(b, NT_ERR_NOMEM);
        return false;
    }
    b->sfill = t->schunks[t->nschunks - 1];
    b->send = b->sfill + TR_SCHUNK;
    return true;
}

static int on_sample(void *user, const nt_sample *s)
{
    nt_trace_builder *b = user;
    if (b->failed)
        return 1;
    uint32_t n = s->stack ? s->stack->count : 0;
    if (!s->stack && s->stack_id != 0)
        b->t->samples_unknown_stack++;
    uint32_t st;
    tr_idcache *c = &b->idcache[s->stack_id & (TR_IDCACHE - 1)];
    if (n && c->gen == b->gen && c->id == s->stack_id && c->count == n && c->first == s->stack->ips[0] &&
        c->last == s->stack->ips[n - 1])
        st = c->istack;
    else if ((st = stack_slow(b, s, n, c)) == UINT32_MAX)
        return 1;
    /* Samples of a few threads interleave: a small direct-mapped cache in
     * front of the map. */
    tr_thread_slot *ts = &b->tcache[(s->thread_id * 0x9E3779B97F4A7C15ull) >> (64 - TR_TCACHE_BITS)]; /* ids are often multiples of 4 */
    uint32_t th = ts->id == s->thread_id ? ts->index : UINT32_MAX;
    if (th == UINT32_MAX && (th = thread_slow(b, s->thread_id, ts)) == UINT32_MAX)
        return 1;
    if (b->sfill == b->send && !sample_chunk_slow(b))
        return 1;
    uint32_t type = s->type > 254 ? 255 : s->type;
    *b->sfill++ = (tr_sample){ s->timestamp, st, th | (type << 24) };
    b->t->nsamples++;
    if (s->timestamp < b->last_ticks)
        b->sorted = false;
    b->last_ticks = s->timestamp;
    return 0;
}

static uint64_t live_key(uint64_t method_id, uint64_t start)
{
    return method_id * 0x9E3779B97F4A7C15ull ^ start;
}

static tr_cold *cold_at(const nt_trace_builder *b, size_t i)
{
    return &b->cold[i / TR_COLD_CHUNK][i % TR_COLD_CHUNK];
}

/* The record a live-map value names is still the code m describes. */
static bool same_code(const nt_trace_builder *b, uint32_t live, const nt_method *m)
{
    if (live & TR_COLD) {
        const tr_cold *c = cold_at(b, live & ~TR_COLD);
        return c->method_id == m->method_id && c->start == m->start_address && c->until == INT64_MAX;
    }
    const nt_trace_method *r = &b->t->methods[live];
    return r->method_id == m->method_id && r->start_address == m->start_address && r->valid_until == INT64_MAX;
}

/* False when no address looked up so far lies in [start, start + size). */
static bool maybe_sampled(const nt_trace_builder *b, uint64_t start, uint64_t size)
{
    if (!size)
        return false; /* an empty extent covers nothing (tr_addrs_cover) */
    uint64_t last = start > UINT64_MAX - (size - 1) ? UINT64_MAX : start + (size - 1);
    uint64_t p0 = start >> TR_LINE_SHIFT, p1 = last >> TR_LINE_SHIFT;
    if (p1 - p0 >= TR_LINE_SPAN)
        return true;
    for (uint64_t p = p0; p <= p1; p++) {
        uint32_t h = line_hash(p);
        if (b->lines[h / 64] >> (h % 64) & 1)
            return true;
    }
    return false;
}

/* n bytes in the cold string arena (chunks start with their size, as in tr_strings). */
static char *cold_bytes(nt_trace_builder *b, size_t n)
{
    nt_mem *m = &b->t->mem;
    if (!b->cstr || b->cstr_used + n > b->cstr_size) {
        if (!nt_mem_reserve(m, (void **)&b->cstr_chunks, &b->cstr_chunks_cap, b->ncstr_chunks + 1,
                            sizeof *b->cstr_chunks))
            return NULL;
        /* Chunks double from 16 KiB to TR_CSTR_CHUNK: small traces stay small. */
        size_t want = b->ncstr_chunks >= 4 ? TR_CSTR_CHUNK : (16u * 1024u) << (2 * b->ncstr_chunks);
        want = want > TR_CSTR_CHUNK ? TR_CSTR_CHUNK : want;
        size_t size = sizeof(size_t) + n > want ? sizeof(size_t) + n : want;
        char *c = nt_mem_alloc(m, size);
        if (!c)
            return NULL;
        memcpy(c, &size, sizeof size);
        b->cstr_chunks[b->ncstr_chunks++] = c;
        b->cstr = c;
        b->cstr_size = size;
        b->cstr_used = sizeof(size_t);
    }
    char *d = b->cstr + b->cstr_used;
    b->cstr_used += n;
    return d;
}

/* Keep a rundown or unload record aside: plain copies of its strings, no
 * interning (most are dropped in finish()). */
static int add_cold(nt_trace_builder *b, const nt_method *m, uint64_t key, int64_t until)
{
    nt_trace *t = b->t;
    if (b->ncold == b->cold_chunks * TR_COLD_CHUNK) {
        if (!GROW(&t->mem, b->cold, b->cold_chunks, b->cold_chunks_cap))
            return fail(b, NT_ERR_NOMEM);
        tr_cold *c = nt_mem_alloc(&t->mem, TR_COLD_CHUNK * sizeof *c);
        if (!c)
            return fail(b, NT_ERR_NOMEM);
        b->cold[b->cold_chunks++] = c;
    }
    const char *name = m->name ? m->name : "", *sig = m->signature ? m->signature : "";
    const char *type = m->declaring_type ? m->declaring_type : "";
    size_t ln = strlen(name) + 1, ls = strlen(sig) + 1;
    /* Records come grouped by type: share the previous record's copy. */
    bool same = b->cold_last_type && strcmp(b->cold_last_type, type) == 0;
    size_t lt = same ? 0 : strlen(type) + 1;
    char *d = cold_bytes(b, ln + ls + lt);
    if (!d)
        return fail(b, NT_ERR_NOMEM);
    memcpy(d, name, ln);
    memcpy(d + ln, sig, ls);
    if (!same) {
        memcpy(d + ln + ls, type, lt);
        b->cold_last_type = d + ln + ls;
    }
    tr_cold *c = cold_at(b, b->ncold);
    c->start = m->start_address;
    c->method_id = m->method_id;
    c->module_id = m->module_id;
    c->rejit_id = m->rejit_id;
    c->timestamp = m->timestamp;
    c->until = until;
    c->str = d;
    c->type = b->cold_last_type;
    c->size = m->size;
    c->flags = m->flags;
    c->token = m->token;
    c->hot_before = (uint32_t)t->nmethods;
    c->source = (uint8_t)m->which;
    if (m->which == NT_METHOD_DC_START && !tr_map_put(&t->mem, &b->live, key, (uint32_t)b->ncold | TR_COLD))
        return fail(b, NT_ERR_NOMEM);
    b->ncold++;
    return 0;
}

static int on_method(void *user, const nt_method *m)
{
    nt_trace_builder *b = user;
    nt_trace *t = b->t;
    if (b->failed)
        return 1;
    uint64_t key = live_key(m->method_id, m->start_address);
    /* Only JIT loads and DCStart rundown enter the live map (a DCEnd at the
     * end of the stream has nothing after it to merge with). */
    uint32_t live = b->live.count ? tr_map_get(&b->live, key) : UINT32_MAX;
    if (live != UINT32_MAX && !same_code(b, live, m))
        live = UINT32_MAX;
    if (t->nmethods + b->ncold >= TR_COLD - 2)
        return fail(b, NT_ERR_LIMIT);
    switch (m->which) {
    case NT_METHOD_LOAD:
        t->jit_records++;
        break;
    case NT_METHOD_DC_START:
    case NT_METHOD_DC_END:
        t->rundown_records++;
        if (live != UINT32_MAX)
            return 0; /* the same code again: rundown confirms a load already recorded */
        /* The runtime writes DCEnd rundown after the last sample: code no
         * sampled address lies in now never will be (see the header). */
        if (m->which == NT_METHOD_DC_END && !maybe_sampled(b, m->start_address, m->size)) {
            b->dropped++;
            return 0;
        }
        return add_cold(b, m, key, INT64_MAX);
    case NT_METHOD_UNLOAD:
        t->unload_records++;
        if (live != UINT32_MAX) {
            if (live & TR_COLD)
                cold_at(b, live & ~TR_COLD)->until = m->timestamp;
            else
                t->methods[live].valid_until = m->timestamp;
            if (!tr_map_put(&t->mem, &b->live, key, UINT32_MAX))
                return fail(b, NT_ERR_NOMEM);
            return 0;
        }
        return add_cold(b, m, key, m->timestamp); /* code loaded before the trace, gone now */
    default:
        return 0;
    }
    /* A JIT load: samples in its code come after it, so it is kept as it comes. */
    if (!GROW_SLOW(&t->mem, t->methods, t->nmethods, t->methods_cap))
        return fail(b, NT_ERR_NOMEM);
    nt_trace_method r = { 0 };
    r.start_address = m->start_address;
    r.size = m->size;
    r.method_id = m->method_id;
    r.module_id = m->module_id;
    r.rejit_id = m->rejit_id;
    r.name = tr_store(&t->mem, &t->strings, m->name);
    /* Records come grouped by type: the previous record's type is often this one. */
    if (t->nmethods && strcmp(t->methods[t->nmethods - 1].declaring_type, m->declaring_type ? m->declaring_type : "") == 0)
        r.declaring_type = t->methods[t->nmethods - 1].declaring_type;
    else
        r.declaring_type = tr_store(&t->mem, &t->strings, m->declaring_type);
    r.signature = tr_store(&t->mem, &t->strings, m->signature);
    r.assembly = "";
    r.timestamp = m->timestamp;
    r.valid_from = m->timestamp;
    r.valid_until = INT64_MAX;
    r.flags = m->flags;
    r.token = m->token;
    r.source = m->which;
    if (!r.name || !r.declaring_type || !r.signature)
        return fail(b, NT_ERR_NOMEM);
    uint32_t idx = (uint32_t)t->nmethods;
    t->methods[t->nmethods++] = r;
    if (!tr_map_put(&t->mem, &b->live, key, idx))
        return fail(b, NT_ERR_NOMEM);
    return 0;
}

static int on_module(void *user, const nt_module *mo)
{
    nt_trace_builder *b = user;
    nt_trace *t = b->t;
    if (b->failed)
        return 1;
    uint32_t i = tr_map_get(&t->module_index, mo->module_id);
    const char *il = tr_intern(&t->mem, &t->strings, mo->il_path);
    if (!il)
        return fail(b, NT_ERR_NOMEM);
    if (i != UINT32_MAX) {
        t->modules[i].assembly_id = mo->assembly_id;
        if (*il)
            t->modules[i].il_path = il;
        return 0;
    }
    if (!GROW(&t->mem, t->modules, t->nmodules, t->modules_cap) ||
        !tr_map_put(&t->mem, &t->module_index, mo->module_id, (uint32_t)t->nmodules))
        return fail(b, NT_ERR_NOMEM);
    t->modules[t->nmodules++] = (nt_trace_module){ mo->module_id, mo->assembly_id, il };
    return 0;
}

static int on_assembly(void *user, const nt_assembly *a)
{
    nt_trace_builder *b = user;
    nt_trace *t = b->t;
    if (b->failed)
        return 1;
    const char *name = tr_intern(&t->mem, &t->strings, a->name);
    if (!name)
        return fail(b, NT_ERR_NOMEM);
    uint32_t i = tr_map_get(&t->assembly_index, a->assembly_id);
    if (i != UINT32_MAX) {
        if (*name)
            t->assemblies[i].name = name;
        return 0;
    }
    if (!GROW(&t->mem, t->assemblies, t->nassemblies, t->assemblies_cap) ||
        !tr_map_put(&t->mem, &t->assembly_index, a->assembly_id, (uint32_t)t->nassemblies))
        return fail(b, NT_ERR_NOMEM);
    t->assemblies[t->nassemblies++] = (nt_trace_assembly){ a->assembly_id, name };
    return 0;
}

static int on_sequence_point(void *user, const nt_sequence_point *sp)
{
    (void)sp;
    nt_trace_builder *b = user;
    b->gen++; /* the parser's stack ids restart */
    return 0;
}

uint32_t tr_builder_intern(nt_trace_builder *b, const nt_stack *stack)
{
    if (b->failed)
        return UINT32_MAX;
    uint32_t n = stack ? stack->count : 0;
    uint32_t st = intern_stack(b, n ? stack->ips : NULL, n);
    if (st == UINT32_MAX)
        fail(b, NT_ERR_NOMEM);
    return st;
}

void tr_builder_resolve_also(nt_trace_builder *b, tr_sample *extra, size_t n)
{
    b->extra = extra;
    b->nextra = n;
}

void nt_trace_builder_callbacks(nt_callbacks *cb)
{
    memset(cb, 0, sizeof *cb);
    cb->trace = on_trace;
    cb->sample = on_sample;
    cb->method = on_method;
    cb->module = on_module;
    cb->assembly = on_assembly;
    cb->sequence_point = on_sequence_point;
}

/* Stable merge sort of the samples by time: ties keep stream order.  Only
 * streams whose samples are out of order pay for the flat copies. */
static bool sort_samples(nt_trace *t)
{
    size_t n = t->nsamples;
    tr_sample *flat = nt_mem_alloc(&t->mem, n * sizeof *flat);
    tr_sample *tmp = nt_mem_alloc(&t->mem, n * sizeof *tmp);
    if (!flat || !tmp) {
        nt_mem_free(&t->mem, flat, n * sizeof *flat);
        nt_mem_free(&t->mem, tmp, n * sizeof *tmp);
        return false;
    }
    for (size_t i = 0; i < n; i++)
        flat[i] = *TR_SAMPLE(t, i);
    tr_sample *src = flat, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = src[j].ticks < src[i].ticks ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        tr_sample *x = src;
        src = dst;
        dst = x;
    }
    for (size_t i = 0; i < n; i++)
        *TR_SAMPLE(t, i) = src[i];
    nt_mem_free(&t->mem, flat, n * sizeof *flat);
    nt_mem_free(&t->mem, tmp, n * sizeof *tmp);
    return true;
}

static void link_assemblies(nt_trace *t)
{
    /* Records come in runs of one module: remember the last answer. */
    uint64_t last_module = 0;
    const char *last_name = NULL;
    for (size_t i = 0; i < t->nmethods; i++) {
        nt_trace_method *r = &t->methods[i];
        if (last_name && r->module_id == last_module) {
            r->assembly = last_name;
            continue;
        }
        uint32_t mi = tr_map_get(&t->module_index, r->module_id);
        uint32_t ai = mi == UINT32_MAX ? UINT32_MAX : tr_map_get(&t->assembly_index, t->modules[mi].assembly_id);
        r->assembly = ai == UINT32_MAX ? "" : t->assemblies[ai].name;
        last_module = r->module_id;
        last_name = r->assembly;
    }
}

static void cold_release(nt_trace_builder *b)
{
    nt_mem *m = &b->t->mem;
    for (size_t i = 0; i < b->cold_chunks; i++)
        nt_mem_free(m, b->cold[i], TR_COLD_CHUNK * sizeof *b->cold[i]);
    nt_mem_free(m, b->cold, b->cold_chunks_cap * sizeof *b->cold);
    for (size_t i = 0; i < b->ncstr_chunks; i++) {
        size_t size;
        memcpy(&size, b->cstr_chunks[i], sizeof size);
        nt_mem_free(m, b->cstr_chunks[i], size);
    }
    nt_mem_free(m, b->cstr_chunks, b->cstr_chunks_cap * sizeof *b->cstr_chunks);
    b->cold = NULL;
    b->cstr_chunks = NULL;
    b->cstr = NULL;
    b->ncold = b->cold_chunks = b->cold_chunks_cap = b->ncstr_chunks = b->cstr_chunks_cap = 0;
}

/* The cold records whose code holds a sampled address join the kept ones in
 * stream order; the others (no frame can resolve to them) are dropped. */
static bool keep_cold(nt_trace_builder *b, const uint64_t *addrs, size_t naddrs)
{
    nt_trace *t = b->t;
    nt_mem *m = &t->mem;
    size_t keep = 0;
    for (size_t i = 0; i < b->ncold; i++) {
        tr_cold *c = cold_at(b, i);
        bool hit = tr_addrs_cover(addrs, naddrs, c->start, c->size);
        c->source |= hit ? 0x80 : 0;
        keep += hit;
    }
    if (keep) {
        size_t n = t->nmethods + keep;
        nt_trace_method *all = nt_mem_alloc(m, n * sizeof *all);
        if (!all)
            return false;
        size_t h = 0, k = 0;
        for (size_t i = 0; i < b->ncold; i++) {
            tr_cold *c = cold_at(b, i);
            if (!(c->source & 0x80))
                continue;
            while (h < c->hot_before)
                all[k++] = t->methods[h++];
            nt_trace_method r = { 0 };
            r.start_address = c->start;
            r.size = c->size;
            r.method_id = c->method_id;
            r.module_id = c->module_id;
            r.rejit_id = c->rejit_id;
            r.name = tr_store(m, &t->strings, c->str);
            r.signature = tr_store(m, &t->strings, c->str + strlen(c->str) + 1);
            if (k && strcmp(all[k - 1].declaring_type, c->type) == 0)
                r.declaring_type = all[k - 1].declaring_type;
            else
                r.declaring_type = tr_store(m, &t->strings, c->type);
            r.assembly = "";
            r.timestamp = c->timestamp;
            r.valid_from = INT64_MIN;
            r.valid_until = c->until;
            r.flags = c->flags;
            r.token = c->token;
            r.source = (nt_method_event)(c->source & 0x7f);
            if (!r.name || !r.declaring_type || !r.signature) {
                nt_mem_free(m, all, n * sizeof *all);
                return false;
            }
            all[k++] = r;
        }
        while (h < t->nmethods)
            all[k++] = t->methods[h++];
        nt_mem_free(m, t->methods, t->methods_cap * sizeof *t->methods);
        t->methods = all;
        t->nmethods = t->methods_cap = n;
    }
    cold_release(b);
    return true;
}

/* Per interned stack while resolving. */
typedef struct tr_resolve {
    uint32_t first;    /* first resolved stack made from it, UINT32_MAX none */
    uint8_t state;     /* 0 unknown, 1 timeless, 2 depends on time */
} tr_resolve;

/* Per-address pick markers for resolve(); method indices stay below
 * TR_COLD, far under these. */
#define TR_VARIES (UINT32_MAX - 2)          /* the pick depends on time */
#define TR_VARIES_TIMELESS (UINT32_MAX - 1) /* ... yet tr_symbols_timeless holds */

/* Resolved stacks while resolving: their method picks (frames[off + k]'s
 * method_index, 4 bytes a frame) and the interned stack each came from.  The
 * frames themselves are written once all are known, at their exact size. */
typedef struct tr_picks {
    uint32_t *pick;
    size_t n, cap;
    uint32_t *src;         /* resolved stack -> interned stack */
    size_t src_cap;
} tr_picks;

static uint32_t add_rstack(nt_trace *t, tr_picks *p, uint32_t istack, uint32_t n, const uint32_t *pick)
{
    nt_mem *m = &t->mem;
    if (t->nstacks >= UINT32_MAX - 1 || p->n + n > UINT32_MAX)
        return UINT32_MAX;
    if (!nt_mem_reserve(m, (void **)&p->pick, &p->cap, p->n + n, sizeof *p->pick) ||
        !nt_mem_reserve(m, (void **)&p->src, &p->src_cap, t->nstacks + 1, sizeof *p->src) ||
        !GROW(m, t->stacks, t->nstacks, t->stacks_cap))
        return UINT32_MAX;
    uint32_t resolved = 0;
    for (uint32_t k = 0; k < n; k++) {
        p->pick[p->n + k] = pick[k];
        resolved += pick[k] != NT_TRACE_NO_METHOD;
    }
    p->src[t->nstacks] = istack;
    t->stacks[t->nstacks] = (tr_rstack){ (uint32_t)p->n, n, resolved };
    p->n += n;
    return (uint32_t)t->nstacks++;
}

/* The frames array is the trace's largest allocation (40 bytes a frame of
 * every distinct resolved stack: 76 MB for the 100 MB benchmark trace),
 * written in full right away and kept: ask for huge pages (where the system
 * leaves THP to madvise) and fault its pages in one call instead of one trap
 * per 4 KiB page.  On the 100 MB benchmark trace (bench/README.md) this took
 * the build from 141 to 113 ms (most of the kernel's time went to page
 * faults).  Only hints: failure changes nothing. */
static void prefault(void *p, size_t n)
{
    uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, e = ((uintptr_t)p + n) & ~(uintptr_t)4095;
    if (n < ((size_t)4 << 20) || e <= a)
        return;
#if defined(MADV_HUGEPAGE)
    (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#endif
#if defined(MADV_POPULATE_WRITE)
    (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#endif
}

/* The frames of every resolved stack.  A frame's ip comes back from its
 * address id (the raw ips were freed once interning was over): the looked-up
 * address is the ip, minus one after the first frame. */
static bool write_frames(nt_trace_builder *b, const tr_picks *p, const uint32_t *rank, const uint64_t *addrs)
{
    nt_trace *t = b->t;
    if (!p->n)
        return true;
    t->frames = nt_mem_alloc(&t->mem, p->n * sizeof *t->frames);
    if (!t->frames)
        return false;
    prefault(t->frames, p->n * sizeof *t->frames);
    /* Frames point into t->methods, final by now (shrunk before resolve()),
     * or to the trace's empty record: never NULL, so a consumer can read
     * f->method->name without a check, as it could read "" before. */
    memset(&t->unresolved, 0, sizeof t->unresolved);
    t->unresolved.name = t->unresolved.declaring_type = t->unresolved.signature = t->unresolved.assembly = "";
    t->frames_cap = t->nframes = p->n;
    for (size_t r = 0; r < t->nstacks; r++) {
        const tr_rstack *rs = &t->stacks[r];
        const uint32_t *ids = rs->count ? b->ipu + b->istacks[p->src[r]].off : NULL; /* NULL when every stack is empty */
        for (uint32_t k = 0; k < rs->count; k++) {
            nt_frame *f = &t->frames[rs->off + k];
            uint32_t pk = p->pick[rs->off + k];
            f->ip = addrs[rank[ids[k]]] + (k ? 1 : 0);
            f->method_index = pk;
            f->method = pk == NT_TRACE_NO_METHOD ? &t->unresolved : &t->methods[pk];
        }
    }
    return true;
}

static nt_status resolve(nt_trace_builder *b)
{
    nt_trace *t = b->t;
    nt_mem *m = &t->mem;
    /* The distinct addresses looked up (frame 0 as is, return addresses
     * minus one), sorted, and each one's rank in that order. */
    size_t u = b->nuaddr, nq = u ? u : 1, nu = u, n_seen = t->nmethods + b->ncold + b->dropped;
    uint64_t *q = nt_mem_alloc(m, nq * sizeof *q);
    uint32_t *rank = nt_mem_alloc(m, nq * sizeof *rank);
    bool ok = q && rank;
    if (ok && u)
        memcpy(q, b->uaddr, u * sizeof *q);
    ok = ok && tr_addrs_prepare(m, &q, &nu, &nq);
    for (size_t k = 0; ok && k < nu; k++)
        ok = tr_map_put(m, &b->addr_ids, q[k], (uint32_t)k);
    for (size_t id = 0; ok && id < u; id++)
        rank[id] = tr_map_get(&b->addr_ids, b->uaddr[id]);
    /* Only the ranks are needed from here on (write_frames gets the ips
     * back from them). */
    nt_mem_free(m, b->ips, b->ips_cap * sizeof *b->ips);
    b->ips = NULL;
    b->ips_cap = 0;
    tr_map_free(m, &b->addr_ids);
    nt_mem_free(m, b->uaddr, b->uaddr_cap * sizeof *b->uaddr);
    b->uaddr = NULL;
    b->uaddr_cap = 0;
    if (!ok || !keep_cold(b, q, nu)) {
        nt_mem_free(m, q, nq * sizeof *q);
        nt_mem_free(m, rank, (u ? u : 1) * sizeof *rank);
        return NT_ERR_NOMEM;
    }
    tr_symbols sy;
    nt_status st = NT_OK;
    size_t ni = b->nistacks;
    tr_strings_seal(&t->mem, &t->strings);
    link_assemblies(t);
    if (!tr_symbols_build(m, &sy, t->methods, t->nmethods, n_seen, q, nu, nq)) {
        tr_symbols_free(m, &sy);
        nt_mem_free(m, rank, (u ? u : 1) * sizeof *rank);
        return NT_ERR_NOMEM;
    }
    tr_resolve *rs = nt_mem_alloc(m, (ni ? ni : 1) * sizeof *rs);
    uint32_t maxd = 1;
    for (size_t i = 0; i < ni; i++)
        if (b->istacks[i].count > maxd)
            maxd = b->istacks[i].count;
    uint32_t *pick = nt_mem_alloc(m, maxd * sizeof *pick);
    /* Each distinct address's pick when time cannot change it (no record,
     * or one never unloaded: tr_symbols_pick then always returns it), else
     * whether it is timeless: one lookup per address instead of one per
     * frame of every time-dependent sample. */
    uint32_t *fixed = nt_mem_alloc(m, (u ? u : 1) * sizeof *fixed);
    tr_picks pk = { 0 };
    uint32_t *rnext = NULL; /* resolved stack -> next variant of the same interned stack */
    size_t rnext_cap = 0;
    if (!rs || !pick || !fixed) {
        st = NT_ERR_NOMEM;
        goto out;
    }
    for (size_t id = 0; id < u; id++) {
        uint32_t nc;
        const uint32_t *c = tr_symbols_candidates_at(&sy, rank[id], &nc);
        if (nc == 0)
            fixed[id] = NT_TRACE_NO_METHOD;
        else if (nc == 1 && t->methods[c[0]].valid_until == INT64_MAX)
            fixed[id] = c[0];
        else
            fixed[id] = tr_symbols_timeless(t->methods, c, nc) ? TR_VARIES_TIMELESS : TR_VARIES;
    }
    for (size_t i = 0; i < ni; i++)
        rs[i] = (tr_resolve){ UINT32_MAX, 0 };
    uint64_t total = 0, resolved = 0;
    tr_sample *s_next = NULL; /* walks a chunk */
    for (size_t i = 0; i < t->nsamples + b->nextra; i++) {
        tr_sample *s = i >= t->nsamples ? &b->extra[i - t->nsamples] : (i & (TR_SCHUNK - 1)) ? s_next : TR_SAMPLE(t, i);
        s_next = s + 1;
        tr_resolve *r = &rs[s->stack];
        uint32_t rid = UINT32_MAX;
        if (r->state == 1 && r->first != UINT32_MAX) {
            rid = r->first; /* the common case: a timeless stack already resolved */
        } else {
            const tr_istack *is = &b->istacks[s->stack];
            const uint32_t *ids = is->count ? b->ipu + is->off : NULL; /* NULL when every stack is empty */
            /* One lookup per frame gives both the pick at this time and
             * whether any frame's pick could change with time. */
            bool timeless = true;
            for (uint32_t k = 0; k < is->count; k++) {
                uint32_t fx = fixed[ids[k]];
                if (fx < TR_VARIES) {
                    pick[k] = fx;
                    continue;
                }
                uint32_t nc;
                const uint32_t *c = tr_symbols_candidates_at(&sy, rank[ids[k]], &nc);
                pick[k] = tr_symbols_pick(t->methods, c, nc, s->ticks);
                timeless = timeless && fx == TR_VARIES_TIMELESS;
            }
            if (r->state == 0)
                r->state = timeless ? 1 : 2;
            /* Look among the few newest variants only: hostile input could
             * otherwise make every sample compare with every other. */
            int tries = 8;
            for (uint32_t v = r->first; v != UINT32_MAX && tries-- > 0; v = rnext[v]) {
                const uint32_t *f = pk.pick + t->stacks[v].off;
                uint32_t k = 0;
                while (k < is->count && f[k] == pick[k])
                    k++;
                if (k == is->count) {
                    rid = v;
                    break;
                }
            }
            if (rid == UINT32_MAX) {
                rid = add_rstack(t, &pk, s->stack, is->count, pick);
                if (rid == UINT32_MAX ||
                    !nt_mem_reserve(m, (void **)&rnext, &rnext_cap, (size_t)rid + 1, sizeof *rnext)) {
                    st = NT_ERR_NOMEM;
                    goto out;
                }
                /* Newest variant first: runs of samples resolve alike. */
                rnext[rid] = r->first;
                r->first = rid;
            }
        }
        s->stack = rid;
        if (i >= t->nsamples)
            continue;
        total += t->stacks[rid].count;
        resolved += t->stacks[rid].resolved;
    }
    t->total_frames += total;
    t->resolved_frames += resolved;
    /* The frames are the largest allocation: give back the scratch first. */
    nt_mem_free(m, rs, (ni ? ni : 1) * sizeof *rs);
    nt_mem_free(m, rnext, rnext_cap * sizeof *rnext);
    nt_mem_free(m, fixed, (u ? u : 1) * sizeof *fixed);
    nt_mem_free(m, pick, maxd * sizeof *pick);
    rs = NULL;
    rnext = NULL;
    fixed = pick = NULL;
    if (!write_frames(b, &pk, rank, sy.addrs))
        st = NT_ERR_NOMEM;
out:
    nt_mem_free(m, pk.pick, pk.cap * sizeof *pk.pick);
    nt_mem_free(m, pk.src, pk.src_cap * sizeof *pk.src);
    nt_mem_free(m, rank, (u ? u : 1) * sizeof *rank);
    nt_mem_free(m, fixed, (u ? u : 1) * sizeof *fixed);
    nt_mem_free(m, rnext, rnext_cap * sizeof *rnext);
    nt_mem_free(m, pick, maxd * sizeof *pick);
    nt_mem_free(m, rs, (ni ? ni : 1) * sizeof *rs);
    tr_symbols_free(m, &sy);
    return st;
}

static void builder_release(nt_trace_builder *b)
{
    nt_mem *m = &b->t->mem;
    nt_mem_free(m, b->ips, b->ips_cap * sizeof *b->ips);
    nt_mem_free(m, b->istacks, b->istacks_cap * sizeof *b->istacks);
    nt_mem_free(m, b->itable, b->itable_cap * sizeof *b->itable);
    tr_map_free(m, &b->thread_index);
    tr_map_free(m, &b->live);
    tr_map_free(m, &b->addr_ids);
    nt_mem_free(m, b->uaddr, b->uaddr_cap * sizeof *b->uaddr);
    nt_mem_free(m, b->ipu, b->ipu_cap * sizeof *b->ipu);
    b->uaddr = NULL;
    b->ipu = NULL;
    b->uaddr_cap = b->ipu_cap = b->nuaddr = 0;
    cold_release(b);
    b->ips = NULL;
    b->istacks = NULL;
    b->itable = NULL;
}

static void shrink(nt_mem *m, void **p, size_t *cap, size_t n, size_t elem)
{
    if (*cap > n && n && nt_mem_resize(m, p, *cap * elem, n * elem))
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
        nt_parser_stats ps;
        nt_parser_stats_get(parser, &ps);
        t->stream_bytes = ps.bytes;
        t->events_dropped = ps.events_dropped;
        if (stream_status != NT_OK)
            snprintf(t->message, sizeof t->message, "%s", nt_parser_message(parser));
    } else if (stream_status != NT_OK) {
        snprintf(t->message, sizeof t->message, "%s", nt_status_describe(stream_status));
    }
    if (b->failed && (b->fail_status == NT_ERR_NOMEM)) {
        st = NT_ERR_NOMEM;
        goto fail;
    }
    /* Tables only the parse needed go before resolution allocates. */
    tr_map_free(&t->mem, &b->thread_index);
    tr_map_free(&t->mem, &b->live);
    nt_mem_free(&t->mem, b->itable, b->itable_cap * sizeof *b->itable);
    b->itable = NULL;
    b->itable_cap = 0;
    if (t->nschunks) {
        size_t used = t->nsamples - (t->nschunks - 1) * TR_SCHUNK;
        shrink(&t->mem, (void **)&t->schunks[t->nschunks - 1], &t->last_chunk, used, sizeof **t->schunks);
    }
    shrink(&t->mem, (void **)&t->methods, &t->methods_cap, t->nmethods, sizeof *t->methods);
    if (!b->sorted && !sort_samples(t)) {
        st = NT_ERR_NOMEM;
        goto fail;
    }
    st = resolve(b);
    if (st != NT_OK)
        goto fail;
    builder_release(b);
    nt_mem_free(&t->mem, b, sizeof *b);
    shrink(&t->mem, (void **)&t->frames, &t->frames_cap, t->nframes, sizeof *t->frames);
    *out = t;
    return NT_OK;
fail:
    nt_trace_builder_free(b);
    return st;
}

void nt_trace_free(nt_trace *t)
{
    if (!t)
        return;
    nt_mem *m = &t->mem;
    tr_strings_free(m, &t->strings);
    free_samples(t);
    nt_mem_free(m, t->threads, t->threads_cap * sizeof *t->threads);
    nt_mem_free(m, t->methods, t->methods_cap * sizeof *t->methods);
    nt_mem_free(m, t->modules, t->modules_cap * sizeof *t->modules);
    nt_mem_free(m, t->assemblies, t->assemblies_cap * sizeof *t->assemblies);
    tr_map_free(m, &t->module_index);
    tr_map_free(m, &t->assembly_index);
    nt_mem_free(m, t->frames, t->frames_cap * sizeof *t->frames);
    nt_mem_free(m, t->stacks, t->stacks_cap * sizeof *t->stacks);
    nt_mem mm = t->mem;
    nt_mem_free(&mm, t, sizeof *t);
}

void nt_trace_builder_free(nt_trace_builder *b)
{
    if (!b)
        return;
    nt_trace *t = b->t;
    builder_release(b);
    nt_mem_free(&t->mem, b, sizeof *b);
    nt_trace_free(t);
}

/* ---- accessors ---- */

const nt_trace_info *nt_trace_header(const nt_trace *t) { return t->have_info ? &t->info : NULL; }
int64_t nt_trace_frequency(const nt_trace *t) { return t->info.qpc_frequency; }
uint32_t nt_trace_pointer_size(const nt_trace *t) { return t->info.pointer_size; }
size_t nt_trace_sample_count(const nt_trace *t) { return t->nsamples; }

nt_trace_sample nt_trace_sample_at(const nt_trace *t, size_t i)
{
    const tr_sample *s = TR_SAMPLE(t, i);
    const tr_rstack *r = &t->stacks[s->stack];
    nt_trace_sample o;
    o.timestamp = s->ticks;
    o.time_ns = nt_ticks_to_ns(s->ticks, t->info.qpc_frequency);
    o.thread_id = t->threads[TR_THREAD(s)];
    o.type = TR_TYPE(s);
    o.stack_index = s->stack;
    o.frame_count = r->count;
    o.frames = r->count ? t->frames + r->off : NULL;
    return o;
}

size_t nt_trace_stack_count(const nt_trace *t) { return t->nstacks; }

nt_trace_stack nt_trace_stack_at(const nt_trace *t, size_t i)
{
    nt_trace_stack s = { t->stacks[i].count, t->stacks[i].count ? t->frames + t->stacks[i].off : NULL };
    return s;
}

size_t nt_trace_method_count(const nt_trace *t) { return t->nmethods; }
const nt_trace_method *nt_trace_method_at(const nt_trace *t, size_t i) { return &t->methods[i]; }
size_t nt_trace_module_count(const nt_trace *t) { return t->nmodules; }
const nt_trace_module *nt_trace_module_at(const nt_trace *t, size_t i) { return &t->modules[i]; }
size_t nt_trace_assembly_count(const nt_trace *t) { return t->nassemblies; }
const nt_trace_assembly *nt_trace_assembly_at(const nt_trace *t, size_t i) { return &t->assemblies[i]; }

const char *nt_trace_assembly_name(const nt_trace *t, uint64_t assembly_id)
{
    uint32_t i = tr_map_get(&t->assembly_index, assembly_id);
    return i == UINT32_MAX ? NULL : t->assemblies[i].name;
}

bool nt_trace_module_assembly(const nt_trace *t, uint64_t module_id, uint64_t *assembly_id)
{
    uint32_t i = tr_map_get(&t->module_index, module_id);
    if (i == UINT32_MAX)
        return false;
    *assembly_id = t->modules[i].assembly_id;
    return true;
}

size_t nt_trace_thread_count(const nt_trace *t) { return t->nthreads; }
uint64_t nt_trace_thread_id(const nt_trace *t, size_t i) { return t->threads[i]; }
const char *nt_trace_message(const nt_trace *t) { return t->message; }

void nt_trace_stats_get(const nt_trace *t, nt_trace_stats *o)
{
    memset(o, 0, sizeof *o);
    o->status = t->status;
    o->stream_bytes = t->stream_bytes;
    o->samples = t->nsamples;
    o->samples_unknown_stack = t->samples_unknown_stack;
    o->frames = t->total_frames;
    o->resolved_frames = t->resolved_frames;
    o->stacks = t->nstacks;
    o->threads = t->nthreads;
    o->method_records = t->nmethods;
    o->jit_records = t->jit_records;
    o->rundown_records = t->rundown_records;
    o->unload_records = t->unload_records;
    o->modules = t->nmodules;
    o->assemblies = t->nassemblies;
    o->events_dropped = t->events_dropped;
    o->memory = t->mem.used;
    o->memory_peak = t->mem.peak;
}

size_t nt_frame_name(const nt_frame *f, char *buf, size_t size)
{
    int n;
    const nt_trace_method *m = f->method;
    if (f->method_index == NT_TRACE_NO_METHOD || !m) {
        n = snprintf(buf, size, "0x%llx", (unsigned long long)f->ip);
    } else {
        const char *a = m->assembly;
        size_t alen = strcspn(a, ",");
        if (!alen) {
            a = "?";
            alen = 1;
        }
        if (*m->declaring_type)
            n = snprintf(buf, size, "%.*s!%s.%s", (int)alen, a, m->declaring_type, m->name);
        else
            n = snprintf(buf, size, "%.*s!%s", (int)alen, a, m->name);
    }
    return n < 0 ? 0 : (size_t)n;
}
