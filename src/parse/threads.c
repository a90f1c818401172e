/* The thread table (threads.h): open addressing on a keyed hash, linear
 * probing, tombstones for V6 removals. */
#include "parse/context.h"

#include <string.h>

void ps_threads_init(ps_thread_table *t, const void *owner)
{
    memset(t, 0, sizeof *t);
    cm_hash_key_init(&t->key, owner);
}

void ps_threads_free(ps_thread_table *t, cm_mem *mem)
{
    cm_mem_free(mem, t->e, t->cap * sizeof *t->e);
    t->e = NULL;
    t->cap = t->fill = t->live = 0;
    t->last = NULL;
    memset(t->recent, 0, sizeof t->recent);
}

void ps_threads_clear(ps_thread_table *t)
{
    if (t->cap)
        memset(t->e, 0, t->cap * sizeof *t->e);
    t->fill = t->live = 0;
    t->last = NULL;
    memset(t->recent, 0, sizeof t->recent);
}

void ps_threads_forget_sequence(ps_thread_table *t)
{
    for (size_t i = 0; i < t->cap; i++)
        t->e[i].last_seq = 0;
}

static size_t slot_of(const ps_thread_table *t, uint64_t key, size_t cap)
{
    return (size_t)cm_hash_u64(&t->key, key) & (cap - 1);
}

ps_thread_entry *ps_threads_find_hashed(ps_thread_table *t, uint64_t key)
{
    if (!t->cap)
        return NULL;
    size_t mask = t->cap - 1;
    for (size_t i = slot_of(t, key, t->cap);; i = (i + 1) & mask) {
        ps_thread_entry *e = &t->e[i];
        if (e->state == PS_THREAD_EMPTY)
            return NULL;
        if (e->state == PS_THREAD_LIVE && e->key == key) {
            t->recent[PS_THREAD_SLOT(key)] = e;
            return e;
        }
        t->probes++;
    }
}

/* Rehash the live entries (dropping tombstones) into a table at most a
 * quarter full, so that at least a quarter of it is inserted before the next
 * rehash whatever mix of adds and removes comes. */
static bool rehash(nt_parser *p, ps_thread_table *t)
{
    size_t ncap = t->cap ? t->cap : 64;
    while ((t->live + 1) * 2 > ncap / 2)
        ncap *= 2;
    ps_thread_entry *n = NULL;
    if (!cm_mem_resize(&p->mem, (void **)&n, 0, ncap * sizeof *n))
        return false;
    memset(n, 0, ncap * sizeof *n);
    for (size_t k = 0; k < t->cap; k++) {
        if (t->e[k].state != PS_THREAD_LIVE)
            continue;
        size_t i = slot_of(t, t->e[k].key, ncap);
        while (n[i].state)
            i = (i + 1) & (ncap - 1);
        n[i] = t->e[k];
    }
    cm_mem_free(&p->mem, t->e, t->cap * sizeof *t->e);
    t->e = n;
    t->cap = ncap;
    t->fill = t->live;
    t->last = NULL;
    memset(t->recent, 0, sizeof t->recent); /* the entries moved */
    return true;
}

nt_status ps_threads_add(nt_parser *p, uint64_t key, uint64_t off, ps_thread_entry **out)
{
    ps_thread_table *t = &p->threads;
    if (t->live >= p->lim.max_threads)
        return ps_fail(p, NT_ERR_LIMIT, off, "more than max_threads (%u) threads", p->lim.max_threads);
    if ((t->fill + 1) * 2 > t->cap && !rehash(p, t))
        return ps_fail(p, NT_ERR_NOMEM, off, "cannot grow the thread table");
    size_t i = slot_of(t, key, t->cap);
    while (t->e[i].state == PS_THREAD_LIVE)
        i = (i + 1) & (t->cap - 1);
    if (t->e[i].state == PS_THREAD_EMPTY)
        t->fill++;
    t->e[i] = (ps_thread_entry){ .key = key, .state = PS_THREAD_LIVE };
    t->live++;
    *out = &t->e[i];
    return NT_OK;
}

nt_status ps_threads_get(nt_parser *p, uint64_t key, uint64_t off, ps_thread_entry **out)
{
    ps_thread_entry *e = ps_threads_find(&p->threads, key);
    if (e) {
        *out = e;
        return NT_OK;
    }
    nt_status s = ps_threads_add(p, key, off, out);
    if (s == NT_OK)
        (*out)->os_tid = key;
    return s;
}
