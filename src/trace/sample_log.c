/* The flight recorder's sample log (see sample_log.h). */
#include "trace/sample_log.h"

#include <string.h>

#define SL_CHUNK (64u * 1024u)

/* What a chunk knows of its samples, so that whole chunks are skipped or dropped by time. */
typedef struct sl_head {
    size_t size, used;         /* bytes, this head included */
    int64_t min_ns, max_ns, min_ticks;
    uint64_t count;
} sl_head;

static sl_head *head_of(const sl_log *l, size_t k) { return (sl_head *)(void *)l->chunks[k]; }

void sl_init(sl_log *l, cm_mem *mem, uint64_t max_bytes)
{
    memset(l, 0, sizeof *l);
    l->mem = mem;
    l->max_bytes = max_bytes;
    l->dropped_through_ns = INT64_MIN;
}

static void drop_oldest(sl_log *l)
{
    sl_head *h = head_of(l, 0);
    if (h->count && h->max_ns > l->dropped_through_ns)
        l->dropped_through_ns = h->max_ns;
    l->bytes -= h->size;
    l->samples -= h->count;
    cm_mem_free(l->mem, h, h->size);
    memmove(l->chunks, l->chunks + 1, (l->nchunks - 1) * sizeof *l->chunks);
    l->nchunks--;
}

void sl_free(sl_log *l)
{
    while (l->nchunks)
        drop_oldest(l);
    cm_mem_free(l->mem, l->chunks, l->chunks_cap * sizeof *l->chunks);
    l->chunks = NULL;
    l->chunks_cap = 0;
}

bool sl_append(sl_log *l, const nt_sample *s)
{
    uint32_t n = s->stack ? s->stack->count : 0;
    size_t need = sizeof(sl_sample) + (size_t)n * sizeof(uint64_t);
    sl_head *h = l->nchunks ? head_of(l, l->nchunks - 1) : NULL;
    if (!h || h->size - h->used < need) {
        size_t size = sizeof(sl_head) + need > SL_CHUNK ? sizeof(sl_head) + need : SL_CHUNK;
        if (!cm_mem_reserve(l->mem, (void **)&l->chunks, &l->chunks_cap, l->nchunks + 1, sizeof *l->chunks))
            return false;
        h = cm_mem_alloc(l->mem, size);
        if (!h)
            return false;
        *h = (sl_head){ size, sizeof(sl_head), INT64_MAX, INT64_MIN, INT64_MAX, 0 };
        l->chunks[l->nchunks++] = (char *)h;
        l->bytes += size;
    }
    sl_sample *r = (sl_sample *)(void *)((char *)h + h->used);
    memset(r, 0, sizeof *r);
    *r = (sl_sample){ .ticks = s->timestamp, .time_ns = s->time_ns, .thread_id = s->thread_id, .type = s->type, .nframes = n };
    if (s->event)
        nt_event_labels_get(s->event, &r->labels);
    if (n)
        memcpy(r + 1, s->stack->ips, (size_t)n * sizeof(uint64_t));
    h->used += need;
    h->count++;
    h->min_ns = s->time_ns < h->min_ns ? s->time_ns : h->min_ns;
    h->max_ns = s->time_ns > h->max_ns ? s->time_ns : h->max_ns;
    h->min_ticks = s->timestamp < h->min_ticks ? s->timestamp : h->min_ticks;
    l->samples++;
    /* The chunk being filled stays: the bound is max_bytes plus one chunk. */
    while (l->bytes > l->max_bytes && l->nchunks > 1)
        drop_oldest(l);
    return true;
}

void sl_trim(sl_log *l, int64_t keep_from_ns)
{
    while (l->nchunks && (head_of(l, 0)->max_ns < keep_from_ns || !head_of(l, 0)->count))
        drop_oldest(l);
}

int sl_each(const sl_log *l, int64_t from_ns, int64_t to_ns,
            int (*fn)(void *user, const sl_sample *s, const uint64_t *ips), void *user)
{
    for (size_t k = 0; k < l->nchunks; k++) {
        const sl_head *h = head_of(l, k);
        if (!h->count || h->max_ns < from_ns || h->min_ns >= to_ns)
            continue;
        for (size_t at = sizeof(sl_head); at < h->used;) {
            const sl_sample *s = (const sl_sample *)(const void *)((const char *)h + at);
            const uint64_t *ips = (const uint64_t *)(const void *)(s + 1);
            at += sizeof *s + (size_t)s->nframes * sizeof(uint64_t);
            if (s->time_ns < from_ns || s->time_ns >= to_ns)
                continue;
            int rc = fn(user, s, ips);
            if (rc)
                return rc;
        }
    }
    return 0;
}

bool sl_span(const sl_log *l, int64_t *from_ns, int64_t *to_ns)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t k = 0; k < l->nchunks; k++) {
        const sl_head *h = head_of(l, k);
        lo = h->min_ns < lo ? h->min_ns : lo;
        hi = h->max_ns > hi ? h->max_ns : hi;
    }
    if (lo > hi)
        return false;
    *from_ns = lo;
    *to_ns = hi;
    return true;
}

int64_t sl_min_ticks(const sl_log *l)
{
    int64_t lo = INT64_MAX;
    for (size_t k = 0; k < l->nchunks; k++)
        lo = head_of(l, k)->min_ticks < lo ? head_of(l, k)->min_ticks : lo;
    return lo;
}
