/* The parser with an allocator that fails the k-th allocation.
 *
 * A clean parse counts the allocations n; then the parse is repeated failing
 * allocation k for every k in 1..n (a sample of 48 when n is larger).  Every
 * such parse must end with NT_ERR_NOMEM (or nt_parser_new returning NULL; or,
 * when the failed allocation was the field decoder's, with the clean status
 * and the decoder's NT_ERR_NOMEM seen by the event callback), the
 * callbacks up to the failure must be a prefix of the clean run's, and the
 * allocator's own count of live bytes must match nt_parser_stats.memory
 * and drop to zero after nt_parser_free (no leak, no mis-sized free). */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

typedef struct counting {
    uint64_t calls;    /* allocations and reallocations attempted */
    uint64_t fail_at;  /* 0 = never */
    int failed;
    size_t live;       /* bytes held */
} counting;

#define HDR 16 /* size header, keeps max_align_t alignment */

static void *c_realloc(void *ctx, void *ptr, size_t size)
{
    counting *c = ctx;
    c->calls++;
    if (c->fail_at && c->calls == c->fail_at) {
        c->failed = 1;
        return NULL;
    }
    size_t old = 0;
    uint8_t *base = NULL;
    if (ptr) {
        base = (uint8_t *)ptr - HDR;
        memcpy(&old, base, sizeof old);
    }
    uint8_t *n = realloc(base, size + HDR);
    if (!n)
        fz_fail("the real allocator failed");
    memcpy(n, &size, sizeof size);
    c->live = c->live - old + size;
    return n + HDR;
}

static void c_free(void *ctx, void *ptr)
{
    counting *c = ctx;
    if (!ptr)
        return;
    uint8_t *base = (uint8_t *)ptr - HDR;
    size_t old;
    memcpy(&old, base, sizeof old);
    c->live -= old;
    free(base);
}

static nt_status run(const uint8_t *data, size_t size, counting *c, ts_digest *d)
{
    nt_allocator a = { c_realloc, c_free, c };
    nt_callbacks cb = { 0 };
    ts_digest_init(d);
    ts_digest_callbacks(&cb);
    nt_limits lim = { 0 };
    fz_harness_limits(&lim);
    nt_parser *p = nt_parser_new(&cb, d, &lim, &a);
    if (!p) {
        if (c->live)
            fz_fail("nt_parser_new failed and left %zu bytes allocated", c->live);
        return NT_ERR_NOMEM;
    }
    nt_status s = nt_parser_feed(p, data, size);
    if (s == NT_OK)
        s = nt_parser_finish(p);
    nt_parser_stats st = { 0 };
    nt_parser_stats_get(p, &st);
    if (st.memory != c->live)
        fz_fail("parser counts %zu bytes held, the allocator %zu", st.memory, c->live);
    nt_parser_free(p);
    if (c->live)
        fz_fail("%zu bytes still allocated after nt_parser_free", c->live);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    counting clean = { 0 };
    ts_digest cd;
    nt_status cs = run(data, size, &clean, &cd);
    uint64_t n = clean.calls;
    uint64_t h = fz_hash(data, size);
    for (uint64_t i = 0; i < n && i < 48; i++) {
        uint64_t k = n <= 48 ? i + 1 : 1 + fz_next(&h) % n;
        counting c = { 0 };
        c.fail_at = k;
        ts_digest d;
        nt_status s = run(data, size, &c, &d);
        if (!c.failed)
            fz_fail("allocation %llu of %llu never happened in the repeat", (unsigned long long)k,
                    (unsigned long long)n);
        /* A failed allocation of the field decoder (called by the digest's event
         * callback) is reported to that caller, and the parse goes on. */
        if (s != NT_ERR_NOMEM && !(d.field_nomem && s == cs))
            fz_fail("allocation %llu of %llu failed but the parse ended %s (clean: %s)", (unsigned long long)k,
                    (unsigned long long)n, nt_status_name(s), nt_status_name(cs));
        if (d.calls > cd.calls)
            fz_fail("more callbacks with a failed allocation than without");
    }
    return 0;
}
