/* Interned strings of the aggregator.
 * Every allocation goes through the trace's cm_mem so its size is known. */
#include "trace/trace_internal.h"

#include <string.h>

#define TR_RECENT 4096u /* entries of the recent-strings cache */

/* FNV-1a over 8-byte words (the tail bytewise); *len gets strlen(s). */
static uint64_t str_hash(const char *s, size_t *len)
{
    size_t n = strlen(s);
    uint64_t h = 1469598103934665603ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    *len = n;
    return h ^ (h >> 31);
}

static bool strings_grow(cm_mem *m, tr_strings *st)
{
    size_t ncap = st->cap ? st->cap * 2 : 256;
    struct tr_str_slot *nt = cm_mem_alloc(m, ncap * sizeof *nt);
    if (!nt)
        return false;
    memset(nt, 0, ncap * sizeof *nt);
    for (size_t i = 0; i < st->cap; i++) {
        if (!st->table[i].s)
            continue;
        size_t j = (size_t)st->table[i].hash & (ncap - 1);
        while (nt[j].s)
            j = (j + 1) & (ncap - 1);
        nt[j] = st->table[i];
    }
    cm_mem_free(m, st->table, st->cap * sizeof *st->table);
    st->table = nt;
    st->cap = ncap;
    return true;
}

#define TR_CHUNK 65536u

/* Each chunk starts with its size (a size_t) so it can be freed exactly; an
 * oversize string gets a chunk of its own. */
static char *strings_store(cm_mem *m, tr_strings *st, const char *s, size_t len)
{
    if (!st->nchunks || st->used_in_last + len + 1 > st->last_size) {
        if (st->nchunks == st->chunk_cap) {
            size_t ncap = st->chunk_cap ? st->chunk_cap * 2 : 16;
            void *p = st->chunks;
            if (!cm_mem_resize(m, &p, st->chunk_cap * sizeof *st->chunks, ncap * sizeof *st->chunks))
                return NULL;
            st->chunks = p;
            st->chunk_cap = ncap;
        }
        /* 8 KiB, doubling to TR_CHUNK: small traces stay small. */
        size_t want = st->nchunks >= 3 ? TR_CHUNK : (8192u << st->nchunks);
        size_t size = sizeof(size_t) + len + 1 > want ? sizeof(size_t) + len + 1 : want;
        char *c = cm_mem_alloc(m, size);
        if (!c)
            return NULL;
        memcpy(c, &size, sizeof size);
        st->chunks[st->nchunks++] = c;
        st->last_size = size;
        st->used_in_last = sizeof(size_t);
    }
    char *d = st->chunks[st->nchunks - 1] + st->used_in_last;
    memcpy(d, s, len);
    d[len] = 0;
    st->used_in_last += len + 1;
    return d;
}

char *tr_strings_bytes(cm_mem *m, tr_strings *st, const void *bytes, size_t len)
{
    return strings_store(m, st, bytes, len);
}

const char *tr_intern(cm_mem *m, tr_strings *st, const char *s)
{
    if (!s || !*s)
        return "";
    if ((st->count + 1) * 2 > st->cap && !strings_grow(m, st))
        return NULL;
    size_t len;
    uint64_t h = str_hash(s, &len);
    size_t i = (size_t)h & (st->cap - 1);
    while (st->table[i].s) {
        if (st->table[i].hash == h && strcmp(st->table[i].s, s) == 0)
            return st->table[i].s;
        i = (i + 1) & (st->cap - 1);
    }
    char *d = strings_store(m, st, s, len);
    if (!d)
        return NULL;
    st->table[i].s = d;
    st->table[i].hash = h;
    st->count++;
    return d;
}

void tr_strings_free(cm_mem *m, tr_strings *st)
{
    for (size_t i = 0; i < st->nchunks; i++) {
        size_t size;
        memcpy(&size, st->chunks[i], sizeof size);
        cm_mem_free(m, st->chunks[i], size);
    }
    cm_mem_free(m, st->chunks, st->chunk_cap * sizeof *st->chunks);
    cm_mem_free(m, st->table, st->cap * sizeof *st->table);
    cm_mem_free(m, st->recent, st->recent_cap * sizeof *st->recent);
    memset(st, 0, sizeof *st);
}

void tr_strings_seal(cm_mem *m, tr_strings *st)
{
    cm_mem_free(m, st->recent, st->recent_cap * sizeof *st->recent);
    st->recent = NULL;
    st->recent_cap = 0;
    cm_mem_free(m, st->table, st->cap * sizeof *st->table);
    st->table = NULL;
    st->cap = st->count = 0;
}

/* Strings that rarely repeat exactly (method names, signatures) skip the
 * exact table: a direct-mapped cache of recent strings catches the frequent
 * repeats (".ctor", "void  ()") and the rest is stored again.  Probing a
 * large table costs a cache miss per string, which dominated the build of
 * rundown-heavy traces; the duplicates cost less memory than the table. */
const char *tr_store(cm_mem *m, tr_strings *st, const char *s)
{
    if (!s || !*s)
        return "";
    size_t want = st->stored > 8192 ? TR_RECENT : TR_RECENT / 4;
    if (st->recent_cap < want) {
        void *p = st->recent;
        if (!cm_mem_resize(m, &p, st->recent_cap * sizeof *st->recent, want * sizeof *st->recent))
            return NULL;
        st->recent = p;
        st->recent_cap = want;
        memset(st->recent, 0, want * sizeof *st->recent);
    }
    size_t len;
    uint64_t h = str_hash(s, &len);
    struct tr_str_slot *r = &st->recent[(h >> 40) & (st->recent_cap - 1)];
    if (r->s && r->hash == h && strcmp(r->s, s) == 0)
        return r->s;
    char *d = strings_store(m, st, s, len);
    if (!d)
        return NULL;
    r->s = d;
    r->hash = h;
    st->stored++;
    return d;
}
