/* Address x time -> method record.
 *
 * Only the addresses that occur in sampled stacks matter, and there are far
 * fewer of them than method records (a rundown lists every method ever
 * compiled).  So the distinct queried addresses are sorted, each record's
 * extent is matched against them with one binary search, and each address
 * gets the list of records covering it in stream order.  Real traces have one
 * record per address; re-JIT puts new code at new addresses; only code memory
 * reused after an unload gives an address several records, and then time
 * decides (tr_symbols_pick). */
#include "common/sort_u64.h"
#include "trace/trace_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t extent_end(const nt_trace_method *r)
{
    return r->start_address > UINT64_MAX - r->size ? UINT64_MAX : r->start_address + r->size;
}

/* When overlaps would grow the lists without bound (only nonsense input
 * does it), a record covering more queried addresses than this is left out. */
#define TR_MAX_SPAN 64u
#define TR_MAX_CAND 64u

/* First index whose address is >= addr.  Branch-free: the probes of a
 * lookup in a large table are unpredictable. */
size_t tr_addrs_lower_bound(const uint64_t *a, size_t n, uint64_t addr)
{
    if (!n)
        return 0;
    const uint64_t *base = a;
    while (n > 1) {
        size_t half = n / 2;
        base = base[half - 1] < addr ? base + half : base;
        n -= half;
    }
    return (size_t)(base - a) + (*base < addr);
}

/* The sampled addresses (sorted, u of them) inside method r: indexes [*k0, returned). */
static size_t method_span(const uint64_t *addrs, size_t u, const nt_trace_method *r, size_t *k0)
{
    uint64_t end = extent_end(r);
    size_t k = *k0 = tr_addrs_lower_bound(addrs, u, r->start_address);
    while (k < u && addrs[k] < end)
        k++;
    return k;
}

bool tr_addrs_prepare(cm_mem *m, uint64_t **addrs, size_t *naddrs, size_t *alloc)
{
    uint64_t *a = *addrs;
    if (!cm_sort_u64(m, a, *naddrs))
        return false;
    size_t u = 0;
    for (size_t i = 0; i < *naddrs; i++)
        if (!u || a[u - 1] != a[i])
            a[u++] = a[i];
    *naddrs = u;
    /* Many frames share an address: give back what the duplicates took. */
    void *p = a;
    if (u && u < *alloc && cm_mem_resize(m, &p, *alloc * sizeof *a, u * sizeof *a)) {
        *addrs = p;
        *alloc = u;
    }
    return true;
}

bool tr_addrs_cover(const uint64_t *addrs, size_t n, uint64_t start, uint64_t size)
{
    if (!size)
        return false;
    uint64_t end = start > UINT64_MAX - size ? UINT64_MAX : start + size;
    size_t k = tr_addrs_lower_bound(addrs, n, start);
    return k < n && addrs[k] < end;
}

bool tr_symbols_build(cm_mem *m, tr_symbols *sy, const nt_trace_method *methods, size_t n, size_t n_seen,
                      uint64_t *addrs, size_t naddrs, size_t addrs_alloc)
{
    memset(sy, 0, sizeof *sy);
    sy->addrs = addrs;
    sy->alloc_addrs = addrs_alloc;
    size_t u = naddrs;
    sy->naddrs = u;
    sy->first = cm_mem_alloc(m, (u + 1) * sizeof *sy->first);
    if (!sy->first)
        return false;
    memset(sy->first, 0, (u + 1) * sizeof *sy->first);
    /* Count the queried addresses each extent covers, then fill the lists.
     * Most records (a rundown lists every method) cover none: a bitmap of
     * those that do spares the later passes their binary search. */
    uint64_t total = 0;
    size_t words = n / 64 + 1;
    uint64_t *hits = cm_mem_alloc(m, words * sizeof *hits);
    if (!hits)
        return false;
    memset(hits, 0, words * sizeof *hits);
    for (size_t i = 0; i < n; i++) {
        if (!methods[i].size)
            continue;
        size_t k0, k = method_span(addrs, u, &methods[i], &k0);
        if (k > k0)
            hits[i / 64] |= 1ull << (i % 64);
        total += k - k0;
    }
    bool clip = total > (uint64_t)TR_MAX_SPAN * n_seen + 65536u || total >= UINT32_MAX;
    total = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(hits[i / 64] >> (i % 64) & 1))
            continue;
        size_t k0, k1 = method_span(addrs, u, &methods[i], &k0);
        if (clip && k1 - k0 > TR_MAX_SPAN) {
            sy->dropped_overlaps++;
            continue;
        }
        for (size_t k = k0; k < k1; k++)
            sy->first[k + 1]++;
        total += k1 - k0;
    }
    /* An address keeps its newest TR_MAX_CAND records: picking among them
     * is quadratic, and real code has one or two per address. */
    uint32_t *skip = cm_mem_alloc(m, (u ? u : 1) * sizeof *skip);
    if (!skip) {
        cm_mem_free(m, hits, words * sizeof *hits);
        return false;
    }
    total = 0;
    for (size_t k = 0; k < u; k++) {
        uint32_t c = sy->first[k + 1];
        skip[k] = c > TR_MAX_CAND ? c - TR_MAX_CAND : 0;
        sy->first[k + 1] = c - skip[k];
        total += sy->first[k + 1];
    }
    for (size_t k = 0; k < u; k++)
        sy->first[k + 1] += sy->first[k];
    sy->ncand = total ? total : 1;
    sy->cand = cm_mem_alloc(m, sy->ncand * sizeof *sy->cand);
    uint32_t *fill = cm_mem_alloc(m, (u ? u : 1) * sizeof *fill);
    if (!sy->cand || !fill) {
        cm_mem_free(m, fill, (u ? u : 1) * sizeof *fill);
        cm_mem_free(m, skip, (u ? u : 1) * sizeof *skip);
        cm_mem_free(m, hits, words * sizeof *hits);
        return false;
    }
    memcpy(fill, sy->first, u * sizeof *fill);
    for (size_t i = 0; i < n; i++) {
        if (!(hits[i / 64] >> (i % 64) & 1))
            continue;
        size_t k0, k1 = method_span(addrs, u, &methods[i], &k0);
        if (clip && k1 - k0 > TR_MAX_SPAN)
            continue;
        for (size_t k = k0; k < k1; k++) {
            if (skip[k]) {
                skip[k]--;
                sy->dropped_overlaps++;
                continue;
            }
            sy->cand[fill[k]++] = (uint32_t)i; /* stream order within each list */
        }
    }
    cm_mem_free(m, fill, (u ? u : 1) * sizeof *fill);
    cm_mem_free(m, skip, (u ? u : 1) * sizeof *skip);
    cm_mem_free(m, hits, words * sizeof *hits);
    return true;
}

const uint32_t *tr_symbols_candidates_at(const tr_symbols *sy, size_t k, uint32_t *count)
{
    *count = sy->first[k + 1] - sy->first[k];
    return sy->cand + sy->first[k];
}

/* When a rundown record's code was there "since before the trace", it cannot
 * have been there before another record at the same address was unloaded. */
static int64_t effective_from(const nt_trace_method *methods, const uint32_t *cand, uint32_t n, uint32_t c)
{
    const nt_trace_method *r = &methods[c];
    if (r->valid_from != INT64_MIN)
        return r->valid_from;
    int64_t from = INT64_MIN;
    for (uint32_t j = 0; j < n; j++) {
        const nt_trace_method *o = &methods[cand[j]];
        if (cand[j] != c && o->valid_until != INT64_MAX && o->valid_until <= r->timestamp && o->valid_until > from)
            from = o->valid_until;
    }
    return from;
}

uint32_t tr_symbols_pick(const nt_trace_method *methods, const uint32_t *cand, uint32_t n, int64_t ticks)
{
    uint32_t best = NT_TRACE_NO_METHOD;
    int64_t best_from = INT64_MIN;
    bool any_unloaded = false;
    for (uint32_t j = 0; j < n; j++) {
        const nt_trace_method *r = &methods[cand[j]];
        if (r->valid_until != INT64_MAX)
            any_unloaded = true;
        int64_t from = effective_from(methods, cand, n, cand[j]);
        if (from <= ticks && ticks < r->valid_until && (best == NT_TRACE_NO_METHOD || from >= best_from)) {
            best = cand[j];
            best_from = from;
        }
    }
    if (best != NT_TRACE_NO_METHOD || any_unloaded)
        return best;
    /* No record was valid yet, and no code was ever unloaded here: the sample
     * raced the JIT event of code that was already running.  Take the first
     * record loaded after the sample. */
    for (uint32_t j = 0; j < n; j++) {
        const nt_trace_method *r = &methods[cand[j]];
        if (r->valid_from > ticks && (best == NT_TRACE_NO_METHOD || r->valid_from < best_from)) {
            best = cand[j];
            best_from = r->valid_from;
        }
    }
    return best;
}

bool tr_symbols_steady(const nt_trace_method *methods, const uint32_t *cand, uint32_t n, int64_t lo, int64_t hi)
{
    /* tr_symbols_pick compares ticks with these times only, each as
     * "ticks >= time" or not: none in (lo, hi], no change. */
    for (uint32_t j = 0; j < n; j++) {
        const nt_trace_method *r = &methods[cand[j]];
        int64_t times[3] = { effective_from(methods, cand, n, cand[j]), r->valid_from, r->valid_until };
        for (int k = 0; k < 3; k++)
            if (times[k] > lo && times[k] <= hi)
                return false;
    }
    return true;
}

bool tr_symbols_timeless(const nt_trace_method *methods, const uint32_t *cand, uint32_t n)
{
    /* Without unloads, and with every record valid from the same time (one
     * record, or rundown records of shared code), the same one always wins. */
    for (uint32_t j = 0; j < n; j++)
        if (methods[cand[j]].valid_until != INT64_MAX || methods[cand[j]].valid_from != methods[cand[0]].valid_from)
            return false;
    return true;
}

void tr_symbols_free(cm_mem *m, tr_symbols *sy)
{
    cm_mem_free(m, sy->addrs, sy->alloc_addrs * sizeof *sy->addrs);
    cm_mem_free(m, sy->first, (sy->naddrs + 1) * sizeof *sy->first);
    cm_mem_free(m, sy->cand, sy->ncand * sizeof *sy->cand);
    memset(sy, 0, sizeof *sy);
}
