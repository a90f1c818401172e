/* Live per-thread hot methods (nt_live_top): counts samples per thread and
 * method from the parser's callbacks as the bytes arrive.
 *
 * Methods: a sorted array of code ranges plus a short unsorted tail that is
 * merged in when it fills, so a burst of JIT or rundown records costs
 * O(n) per 64 records and lookups stay O(log n).
 * Counts: per thread an open-addressing table keyed by the method's start
 * address when a frame resolves at sample time, else by the raw IP; raw IPs
 * are resolved again at snapshot time, so names that arrive later (rundown)
 * attach to samples counted earlier.  Inclusive counts are deduplicated per
 * sample with a stamp.  Every table is bounded; overflow is counted as dropped. */
#include "nettrace_session.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

#define PENDING_MAX 64
#define DEFAULT_MAX_THREADS 1024u
#define DEFAULT_MAX_METHODS 262144u
#define DEFAULT_MAX_ENTRIES 4096u
#define MAX_STRING 512 /* longer names are cut */

typedef struct lt_method {
    uint64_t start;
    uint64_t method_id;  /* shared by a method's code versions (tiers, OSR) */
    uint64_t module_id;
    uint32_t size;
    uint32_t type_off, name_off; /* into the string arena */
} lt_method;

typedef struct lt_entry {
    uint64_t key;      /* method id, or raw IP */
    uint64_t addr;     /* an IP seen for it (resolves back to the method's names) */
    uint64_t exclusive, inclusive;
    uint64_t stamp;    /* last sample that counted it inclusively */
    uint8_t kind;      /* 0 empty, 1 method, 2 raw IP */
} lt_entry;

typedef struct lt_thread {
    uint64_t tid;
    uint64_t samples, external;
    lt_entry *entries;
    uint32_t cap, count;
} lt_thread;

/* u64 -> u64 open-addressing map, bounded by its owner. */
typedef struct lt_map {
    uint64_t *keys, *vals;
    uint8_t *used;
    size_t cap, count;
} lt_map;

/* Direct-mapped cache of IP -> method id, valid for one generation of the
 * method table: samples repeat the same IPs, so most frames skip the
 * pending scan and the binary search. */
#define IP_CACHE_SIZE 4096
typedef struct ip_cache_slot {
    uint64_t ip;
    uint64_t method_id; /* 0: no method covers ip */
    uint32_t gen;
} ip_cache_slot;

struct nt_live_top {
    nt_mem mem;
    ip_cache_slot *cache;
    uint32_t gen;         /* bumped whenever a method record is added */
    nt_live_top_config cfg;
    lt_method *methods;   /* sorted by start */
    size_t nmethods, methods_cap;
    lt_method pending[PENDING_MAX];
    size_t npending;
    char *arena;
    size_t arena_len, arena_cap;
    lt_map modules;       /* module id -> assembly id */
    lt_map assemblies;    /* assembly id -> arena offset + 1 */
    lt_map thread_index;  /* tid -> index + 1 */
    lt_thread *threads;
    size_t nthreads, threads_cap;
    uint64_t samples, dropped, stamp;
    bool oom;
};

/* ---- map ---- */

static size_t slot_of(uint64_t k, size_t cap) { return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 29) & (cap - 1); }

static void map_free(nt_mem *m, lt_map *map)
{
    nt_mem_free(m, map->keys, map->cap * 8);
    nt_mem_free(m, map->vals, map->cap * 8);
    nt_mem_free(m, map->used, map->cap);
    memset(map, 0, sizeof *map);
}

static uint64_t *map_find(const lt_map *map, uint64_t k)
{
    if (!map->cap)
        return NULL;
    for (size_t i = slot_of(k, map->cap);; i = (i + 1) & (map->cap - 1)) {
        if (!map->used[i])
            return NULL;
        if (map->keys[i] == k)
            return &map->vals[i];
    }
}

/* Value slot for k, inserted as 0 when new; NULL when out of memory. */
static uint64_t *map_put(nt_mem *m, lt_map *map, uint64_t k)
{
    uint64_t *v = map_find(map, k);
    if (v)
        return v;
    if ((map->count + 1) * 2 > map->cap) {
        size_t ncap = map->cap ? map->cap * 2 : 64;
        lt_map n = { nt_mem_alloc(m, ncap * 8), nt_mem_alloc(m, ncap * 8), nt_mem_alloc(m, ncap), ncap, 0 };
        if (!n.keys || !n.vals || !n.used) {
            map_free(m, &n);
            return NULL;
        }
        memset(n.used, 0, ncap);
        for (size_t i = 0; i < map->cap; i++) {
            if (!map->used[i])
                continue;
            size_t j = slot_of(map->keys[i], ncap);
            while (n.used[j])
                j = (j + 1) & (ncap - 1);
            n.used[j] = 1;
            n.keys[j] = map->keys[i];
            n.vals[j] = map->vals[i];
            n.count++;
        }
        map_free(m, map);
        *map = n;
    }
    size_t i = slot_of(k, map->cap);
    while (map->used[i])
        i = (i + 1) & (map->cap - 1);
    map->used[i] = 1;
    map->keys[i] = k;
    map->vals[i] = 0;
    map->count++;
    return &map->vals[i];
}

/* ---- strings and methods ---- */

/* Append s (cut at MAX_STRING bytes) to the arena; offset, or UINT32_MAX. */
static uint32_t arena_add(nt_live_top *t, const char *s)
{
    if (!s)
        s = "";
    size_t n = strnlen(s, MAX_STRING);
    if (t->arena_len + n + 1 > UINT32_MAX - 1)
        return UINT32_MAX;
    if (!nt_mem_reserve(&t->mem, (void **)&t->arena, &t->arena_cap, t->arena_len + n + 1, 1))
        return UINT32_MAX;
    uint32_t off = (uint32_t)t->arena_len;
    memcpy(t->arena + off, s, n);
    t->arena[off + n] = 0;
    t->arena_len += n + 1;
    return off;
}

static int cmp_method(const void *a, const void *b)
{
    uint64_t x = ((const lt_method *)a)->start, y = ((const lt_method *)b)->start;
    return (x > y) - (x < y);
}

/* Merge the pending records into the sorted array; a newer record with the
 * same start replaces the older one. */
static bool merge_pending(nt_live_top *t)
{
    if (!t->npending)
        return true;
    qsort(t->pending, t->npending, sizeof t->pending[0], cmp_method);
    size_t need = t->nmethods + t->npending;
    if (need > t->methods_cap) {
        size_t ncap = t->methods_cap ? t->methods_cap * 2 : 1024;
        while (ncap < need)
            ncap *= 2;
        void *p = t->methods;
        if (!nt_mem_resize(&t->mem, &p, t->methods_cap * sizeof *t->methods, ncap * sizeof *t->methods))
            return false;
        t->methods = p;
        t->methods_cap = ncap;
    }
    /* Merge from the back. */
    size_t i = t->nmethods, j = t->npending, out = need;
    while (j > 0) {
        if (i > 0 && t->methods[i - 1].start > t->pending[j - 1].start)
            t->methods[--out] = t->methods[--i];
        else
            t->methods[--out] = t->pending[--j];
    }
    t->nmethods = need;
    t->npending = 0;
    /* Drop older duplicates (the merge put the pending one after the old one
     * for equal starts only by chance; keep the later in array order). */
    size_t w = 0;
    for (size_t r = 0; r < t->nmethods; r++) {
        if (w > 0 && t->methods[w - 1].start == t->methods[r].start)
            w--;
        t->methods[w++] = t->methods[r];
    }
    t->nmethods = w;
    return true;
}

static const lt_method *lookup(const nt_live_top *t, uint64_t ip)
{
    for (size_t i = t->npending; i-- > 0;)
        if (ip >= t->pending[i].start && ip - t->pending[i].start < t->pending[i].size)
            return &t->pending[i];
    size_t lo = 0, hi = t->nmethods;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->methods[mid].start <= ip)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const lt_method *m = &t->methods[lo - 1];
    return ip - m->start < m->size ? m : NULL;
}

/* ---- public ---- */

nt_live_top *nt_live_top_new(const nt_live_top_config *cfg, const nt_allocator *alloc)
{
    nt_mem mem;
    nt_mem_init(&mem, alloc);
    nt_live_top *t = nt_mem_alloc(&mem, sizeof *t);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    t->mem = mem;
    if (cfg)
        t->cfg = *cfg;
    if (!t->cfg.max_threads)
        t->cfg.max_threads = DEFAULT_MAX_THREADS;
    if (!t->cfg.max_methods)
        t->cfg.max_methods = DEFAULT_MAX_METHODS;
    if (!t->cfg.max_entries_per_thread)
        t->cfg.max_entries_per_thread = DEFAULT_MAX_ENTRIES;
    /* gen starts at 1 so that the zeroed slots never match. */
    t->gen = 1;
    t->cache = nt_mem_alloc(&t->mem, IP_CACHE_SIZE * sizeof *t->cache);
    if (t->cache)
        memset(t->cache, 0, IP_CACHE_SIZE * sizeof *t->cache); /* without it, lookups just go uncached */
    return t;
}

int nt_live_top_on_method(nt_live_top *t, const nt_method *m)
{
    if (m->which == NT_METHOD_UNLOAD || !m->start_address || !m->size)
        return 0;
    if (t->nmethods + t->npending >= t->cfg.max_methods) {
        t->dropped++;
        return 0;
    }
    lt_method lm = { m->start_address, m->method_id ? m->method_id : m->start_address, m->module_id, m->size,
                     arena_add(t, m->declaring_type), 0 };
    lm.name_off = arena_add(t, m->name);
    if (lm.type_off == UINT32_MAX || lm.name_off == UINT32_MAX) {
        t->oom = true;
        return 0;
    }
    if (t->npending == PENDING_MAX && !merge_pending(t)) {
        t->oom = true;
        return 0;
    }
    t->pending[t->npending++] = lm;
    t->gen++;
    return 0;
}

int nt_live_top_on_module(nt_live_top *t, const nt_module *m)
{
    if (m->which == NT_RECORD_UNLOAD || t->modules.count >= t->cfg.max_methods)
        return 0;
    uint64_t *v = map_put(&t->mem, &t->modules, m->module_id);
    if (!v)
        t->oom = true;
    else
        *v = m->assembly_id;
    return 0;
}

int nt_live_top_on_assembly(nt_live_top *t, const nt_assembly *a)
{
    if (a->which == NT_RECORD_UNLOAD || t->assemblies.count >= t->cfg.max_methods)
        return 0;
    /* Keep the simple name: "LiveTarget, Version=..." -> "LiveTarget". */
    char name[MAX_STRING + 1];
    const char *full = a->name ? a->name : "";
    size_t n = strcspn(full, ",");
    if (n > MAX_STRING)
        n = MAX_STRING;
    memcpy(name, full, n);
    name[n] = 0;
    uint64_t *v = map_put(&t->mem, &t->assemblies, a->assembly_id);
    uint32_t off = v ? arena_add(t, name) : UINT32_MAX;
    if (off == UINT32_MAX)
        t->oom = true;
    else
        *v = (uint64_t)off + 1;
    return 0;
}

static lt_thread *thread_of(nt_live_top *t, uint64_t tid)
{
    uint64_t *idx = map_find(&t->thread_index, tid);
    if (idx)
        return &t->threads[*idx - 1];
    if (t->nthreads >= t->cfg.max_threads)
        return NULL;
    if (t->nthreads == t->threads_cap) {
        size_t ncap = t->threads_cap ? t->threads_cap * 2 : 16;
        void *p = t->threads;
        if (!nt_mem_resize(&t->mem, &p, t->threads_cap * sizeof *t->threads, ncap * sizeof *t->threads))
            return NULL;
        t->threads = p;
        t->threads_cap = ncap;
    }
    idx = map_put(&t->mem, &t->thread_index, tid);
    if (!idx)
        return NULL;
    lt_thread *th = &t->threads[t->nthreads++];
    memset(th, 0, sizeof *th);
    th->tid = tid;
    *idx = t->nthreads;
    return th;
}

static uint64_t hash_key(uint64_t key, uint8_t kind) { return key * 2 + kind; }

/* The entry for (key, kind), inserted when new; NULL when the thread is full. */
static lt_entry *entry_of(nt_live_top *t, lt_thread *th, uint64_t key, uint8_t kind)
{
    if (th->cap) {
        for (size_t i = slot_of(hash_key(key, kind), th->cap);; i = (i + 1) & (th->cap - 1)) {
            lt_entry *e = &th->entries[i];
            if (!e->kind)
                break;
            if (e->key == key && e->kind == kind)
                return e;
        }
    }
    if (th->count >= t->cfg.max_entries_per_thread)
        return NULL;
    if ((th->count + 1) * 2 > th->cap) {
        uint32_t ncap = th->cap ? th->cap * 2 : 64;
        lt_entry *n = nt_mem_alloc(&t->mem, ncap * sizeof *n);
        if (!n)
            return NULL;
        memset(n, 0, ncap * sizeof *n);
        for (uint32_t i = 0; i < th->cap; i++) {
            lt_entry *e = &th->entries[i];
            if (!e->kind)
                continue;
            size_t j = slot_of(hash_key(e->key, e->kind), ncap);
            while (n[j].kind)
                j = (j + 1) & (ncap - 1);
            n[j] = *e;
        }
        nt_mem_free(&t->mem, th->entries, th->cap * sizeof *th->entries);
        th->entries = n;
        th->cap = ncap;
    }
    size_t i = slot_of(hash_key(key, kind), th->cap);
    while (th->entries[i].kind)
        i = (i + 1) & (th->cap - 1);
    lt_entry *e = &th->entries[i];
    *e = (lt_entry){ .key = key, .kind = kind };
    th->count++;
    return e;
}

int nt_live_top_on_sample(nt_live_top *t, const nt_sample *s)
{
    bool managed = s->type == NT_SAMPLE_MANAGED;
    lt_thread *th = thread_of(t, s->thread_id);
    if (!th) {
        t->dropped++;
        return 0;
    }
    t->samples++;
    th->samples++;
    if (!managed)
        th->external++;
    if ((!managed && !t->cfg.include_external) || !s->stack || !s->stack->count)
        return 0;
    uint64_t stamp = ++t->stamp;
    for (uint32_t i = 0; i < s->stack->count; i++) {
        uint64_t ip = s->stack->ips[i];
        uint64_t method_id = 0;
        ip_cache_slot *c = t->cache ? &t->cache[slot_of(ip, IP_CACHE_SIZE)] : NULL;
        if (c && c->gen == t->gen && c->ip == ip) {
            method_id = c->method_id;
        } else {
            const lt_method *m = lookup(t, ip);
            method_id = m ? m->method_id : 0;
            if (c)
                *c = (ip_cache_slot){ ip, method_id, t->gen };
        }
        lt_entry *e = entry_of(t, th, method_id ? method_id : ip, method_id ? 1 : 2);
        if (!e) {
            t->dropped++;
            continue;
        }
        e->addr = ip;
        if (i == 0)
            e->exclusive++;
        if (e->stamp != stamp) {
            e->inclusive++;
            e->stamp = stamp;
        }
    }
    return 0;
}

static int cb_sample(void *u, const nt_sample *s) { return nt_live_top_on_sample(u, s); }
static int cb_method(void *u, const nt_method *m) { return nt_live_top_on_method(u, m); }
static int cb_module(void *u, const nt_module *m) { return nt_live_top_on_module(u, m); }
static int cb_assembly(void *u, const nt_assembly *a) { return nt_live_top_on_assembly(u, a); }

void nt_live_top_callbacks(nt_callbacks *cb)
{
    cb->sample = cb_sample;
    cb->method = cb_method;
    cb->module = cb_module;
    cb->assembly = cb_assembly;
}

static const char *assembly_name(const nt_live_top *t, uint64_t module_id)
{
    uint64_t *asm_id = map_find(&t->modules, module_id);
    uint64_t *off = asm_id ? map_find(&t->assemblies, *asm_id) : NULL;
    return off ? t->arena + (*off - 1) : "";
}

bool nt_live_top_resolve(const nt_live_top *t, uint64_t ip, const char **method, const char **type,
                         const char **assembly)
{
    const lt_method *m = lookup(t, ip);
    if (method)
        *method = m ? t->arena + m->name_off : "";
    if (type)
        *type = m ? t->arena + m->type_off : "";
    if (assembly)
        *assembly = m ? assembly_name(t, m->module_id) : "";
    return m != NULL;
}

/* The snapshot and what it owns. */
typedef struct snap_impl {
    nt_live_top_snapshot pub;
    char *arena;
    size_t arena_len, arena_cap;
    size_t threads_size;
    nt_live_top_entry *entries;
    size_t entries_size;
} snap_impl;

static int cmp_entry(const void *a, const void *b)
{
    const nt_live_top_entry *x = a, *y = b;
    if (x->exclusive != y->exclusive)
        return x->exclusive < y->exclusive ? 1 : -1;
    if (x->inclusive != y->inclusive)
        return x->inclusive < y->inclusive ? 1 : -1;
    return (x->address > y->address) - (x->address < y->address);
}

static int cmp_key(const void *a, const void *b)
{
    const lt_entry *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

static int cmp_thread(const void *a, const void *b)
{
    const nt_live_top_thread *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples < y->samples ? 1 : -1;
    return (x->thread_id > y->thread_id) - (x->thread_id < y->thread_id);
}

static size_t snap_str(nt_live_top *t, snap_impl *si, const char *s)
{
    size_t n = strlen(s) + 1;
    if (!nt_mem_reserve(&t->mem, (void **)&si->arena, &si->arena_cap, si->arena_len + n, 1))
        return SIZE_MAX;
    memcpy(si->arena + si->arena_len, s, n);
    si->arena_len += n;
    return si->arena_len - n;
}

nt_status nt_live_top_snapshot_take(nt_live_top *t, uint32_t top_n, bool reset, nt_live_top_snapshot **out)
{
    *out = NULL;
    if (!merge_pending(t))
        return NT_ERR_NOMEM;
    snap_impl *si = nt_mem_alloc(&t->mem, sizeof *si);
    if (!si)
        return NT_ERR_NOMEM;
    memset(si, 0, sizeof *si);
    size_t total = 0, nthreads = 0;
    for (size_t i = 0; i < t->nthreads; i++) {
        if (t->threads[i].samples) {
            total += t->threads[i].count;
            nthreads++;
        }
    }
    si->threads_size = nthreads * sizeof *si->pub.threads;
    si->entries_size = total * sizeof *si->entries;
    si->pub.threads = nthreads ? nt_mem_alloc(&t->mem, si->threads_size) : NULL;
    si->entries = total ? nt_mem_alloc(&t->mem, si->entries_size) : NULL;
    lt_entry *tmp_all = total ? nt_mem_alloc(&t->mem, total * sizeof *tmp_all) : NULL;
    if ((nthreads && !si->pub.threads) || (total && (!si->entries || !tmp_all))) {
        nt_mem_free(&t->mem, tmp_all, total * sizeof *tmp_all);
        nt_live_top_snapshot_free(t, &si->pub);
        return NT_ERR_NOMEM;
    }
    /* Offsets into the snapshot arena while it may still move; pointers last. */
    size_t base = 0;
    uint32_t ti = 0;
    for (size_t i = 0; i < t->nthreads; i++) {
        lt_thread *th = &t->threads[i];
        if (!th->samples)
            continue;
        nt_live_top_thread *ot = &si->pub.threads[ti++];
        ot->thread_id = th->tid;
        ot->samples = th->samples;
        ot->external = th->external;
        nt_live_top_entry *es = si->entries + base;
        lt_entry *tmp = tmp_all + base;
        size_t n = 0;
        for (uint32_t k = 0; k < th->cap; k++) {
            lt_entry e = th->entries[k];
            if (!e.kind)
                continue;
            /* Resolve raw IPs again: their method may have arrived since. */
            if (e.kind == 2) {
                const lt_method *m = lookup(t, e.key);
                if (m) {
                    e.kind = 1;
                    e.key = m->method_id;
                }
            }
            tmp[n++] = e;
        }
        /* Merge what now resolves to one method. */
        qsort(tmp, n, sizeof *tmp, cmp_key);
        size_t w = 0;
        for (size_t r = 0; r < n; r++) {
            if (w > 0 && tmp[w - 1].key == tmp[r].key && tmp[w - 1].kind == tmp[r].kind) {
                tmp[w - 1].exclusive += tmp[r].exclusive;
                tmp[w - 1].inclusive += tmp[r].inclusive;
            } else {
                tmp[w++] = tmp[r];
            }
        }
        n = w;
        for (size_t r = 0; r < n; r++) {
            const lt_method *m = tmp[r].kind == 1 ? lookup(t, tmp[r].addr) : NULL;
            es[r] = (nt_live_top_entry){ .address = m ? m->start : tmp[r].addr,
                                         .exclusive = tmp[r].exclusive,
                                         .inclusive = tmp[r].inclusive };
        }
        qsort(es, n, sizeof *es, cmp_entry);
        size_t keep = top_n && n > top_n ? top_n : n;
        /* Strings, as arena offsets + 1 while the arena may still move. */
        for (size_t j = 0; j < keep; j++) {
            const lt_method *m = lookup(t, es[j].address);
            size_t o1 = snap_str(t, si, m ? t->arena + m->name_off : "");
            size_t o2 = snap_str(t, si, m ? t->arena + m->type_off : "");
            size_t o3 = snap_str(t, si, m ? assembly_name(t, m->module_id) : "");
            if (o1 == SIZE_MAX || o2 == SIZE_MAX || o3 == SIZE_MAX) {
                nt_mem_free(&t->mem, tmp_all, total * sizeof *tmp_all);
                si->pub.thread_count = 0;
                nt_live_top_snapshot_free(t, &si->pub);
                return NT_ERR_NOMEM;
            }
            es[j].method = (const char *)(uintptr_t)(o1 + 1);
            es[j].type = (const char *)(uintptr_t)(o2 + 1);
            es[j].assembly = (const char *)(uintptr_t)(o3 + 1);
        }
        ot->entries = es;
        ot->entry_count = (uint32_t)keep;
        base += n;
    }
    nt_mem_free(&t->mem, tmp_all, total * sizeof *tmp_all);
    si->pub.thread_count = ti;
    for (uint32_t i = 0; i < ti; i++) {
        nt_live_top_thread *ot = &si->pub.threads[i];
        for (uint32_t k = 0; k < ot->entry_count; k++) {
            nt_live_top_entry *e = &ot->entries[k];
            e->method = si->arena + ((uintptr_t)e->method - 1);
            e->type = si->arena + ((uintptr_t)e->type - 1);
            e->assembly = si->arena + ((uintptr_t)e->assembly - 1);
        }
    }
    if (ti)
        qsort(si->pub.threads, ti, sizeof *si->pub.threads, cmp_thread);
    si->pub.samples = t->samples;
    si->pub.methods_known = t->nmethods;
    si->pub.dropped = t->dropped;
    if (reset) {
        for (size_t i = 0; i < t->nthreads; i++) {
            lt_thread *th = &t->threads[i];
            nt_mem_free(&t->mem, th->entries, th->cap * sizeof *th->entries);
            th->entries = NULL;
            th->cap = th->count = 0;
            th->samples = th->external = 0;
        }
        t->samples = 0;
        t->dropped = 0;
    }
    *out = &si->pub;
    return NT_OK;
}

void nt_live_top_snapshot_free(nt_live_top *t, nt_live_top_snapshot *snap)
{
    if (!snap)
        return;
    snap_impl *si = (snap_impl *)snap;
    nt_mem_free(&t->mem, si->arena, si->arena_cap);
    nt_mem_free(&t->mem, si->entries, si->entries_size);
    nt_mem_free(&t->mem, si->pub.threads, si->threads_size);
    nt_mem_free(&t->mem, si, sizeof *si);
}

void nt_live_top_free(nt_live_top *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nthreads; i++)
        nt_mem_free(&t->mem, t->threads[i].entries, t->threads[i].cap * sizeof(lt_entry));
    nt_mem_free(&t->mem, t->threads, t->threads_cap * sizeof *t->threads);
    nt_mem_free(&t->mem, t->methods, t->methods_cap * sizeof *t->methods);
    nt_mem_free(&t->mem, t->arena, t->arena_cap);
    nt_mem_free(&t->mem, t->cache, IP_CACHE_SIZE * sizeof *t->cache);
    map_free(&t->mem, &t->modules);
    map_free(&t->mem, &t->assemblies);
    map_free(&t->mem, &t->thread_index);
    nt_mem m = t->mem;
    nt_mem_free(&m, t, sizeof *t);
}
