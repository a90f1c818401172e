#include "fuzz.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("harness invariant broken: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

uint64_t fz_hash(const uint8_t *data, size_t size)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) {
        h ^= data[i];
        h *= 0x100000001b3ull;
    }
    return h ? h : 1;
}

uint64_t fz_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

void fz_harness_limits(nt_limits *lim)
{
    nt_limits_default(lim);
    lim->max_block_bytes = 1u << 20;
    lim->max_metadata = 1u << 12;
    lim->max_metadata_bytes = 1u << 20;
    lim->max_stacks = 1u << 16;
    lim->max_stack_frames = 1u << 18;
    lim->max_threads = 1u << 12;
}

int fz_parse_status_ok(nt_status s)
{
    switch (s) {
    case NT_OK:
    case NT_ERR_NOT_NETTRACE:
    case NT_ERR_UNSUPPORTED_VERSION:
    case NT_ERR_NO_EVENTS:
    case NT_ERR_MALFORMED:
    case NT_ERR_TRUNCATED:
    case NT_ERR_LIMIT:
    case NT_ERR_NOMEM:
    case NT_ERR_STOPPED:
        return 1;
    default:
        return 0;
    }
}

nt_status fz_parse(const uint8_t *data, size_t size, fz_chunker next_chunk, void *chunk_ctx,
                   const nt_limits *lim, const nt_allocator *alloc, uint64_t stop_after,
                   ts_digest *d, nt_parser_stats *stats, uint64_t *err_offset)
{
    nt_callbacks cb = { 0 };
    ts_digest_init(d);
    d->stop_after = stop_after;
    ts_digest_callbacks(&cb);
    nt_parser *p = nt_parser_new(&cb, d, lim, alloc);
    if (!p) {
        memset(stats, 0, sizeof *stats);
        *err_offset = 0;
        return NT_ERR_NOMEM;
    }
    nt_status s = NT_OK;
    size_t off = 0;
    if (!next_chunk) {
        s = nt_parser_feed(p, data, size);
        off = size;
    }
    while (off < size && s == NT_OK) {
        size_t n = next_chunk(chunk_ctx, size - off);
        if (n > size - off)
            n = size - off;
        s = nt_parser_feed(p, n ? data + off : NULL, n); /* a NULL empty feed is legal */
        off += n;
    }
    if (s == NT_OK)
        s = nt_parser_finish(p);
    if (!fz_parse_status_ok(s))
        fz_fail("parse ended with status %d (%s)", (int)s, nt_status_name(s));
    if (nt_parser_status(p) != s)
        fz_fail("nt_parser_status %d differs from the returned %d", (int)nt_parser_status(p), (int)s);
    /* Sticky: feeding or finishing again repeats the error. */
    if (s != NT_OK && (nt_parser_feed(p, data, size ? 1 : 0) != s || nt_parser_finish(p) != s))
        fz_fail("error %s is not sticky", nt_status_name(s));
    *err_offset = nt_parser_error_offset(p);
    /* The verdict and where it points are part of the output that must not
     * depend on chunking: fold them into the digest (FNV-1a, as the callbacks). */
    uint64_t tail[2] = { (uint64_t)s, *err_offset };
    for (size_t i = 0; i < sizeof tail; i++) {
        d->h ^= ((const uint8_t *)tail)[i];
        d->h *= 0x100000001b3ull;
    }
    if (*err_offset > size)
        fz_fail("error offset %llu beyond the %zu-byte input", (unsigned long long)*err_offset, size);
    const char *msg = nt_parser_message(p);
    if (!msg || (s == NT_OK) != !*msg)
        fz_fail("a message must be \"\" exactly when there is no failure: %s", msg ? msg : "(NULL)");
    if (s != NT_OK && !strstr(msg, " at byte "))
        fz_fail("error message without a byte offset: %s", msg);
    nt_parser_stats_get(p, stats);
    if (stats->bytes > size)
        fz_fail("consumed %llu bytes of a %zu-byte input", (unsigned long long)stats->bytes, size);
    if (stats->events != d->events || stats->metadata != d->metadata || stats->stacks != d->stacks ||
        stats->sequence_points != d->sequence_points)
        fz_fail("stats (events %llu, metadata %llu, stacks %llu, sps %llu) disagree with the callbacks "
                "(%llu, %llu, %llu, %llu)",
                (unsigned long long)stats->events, (unsigned long long)stats->metadata,
                (unsigned long long)stats->stacks, (unsigned long long)stats->sequence_points,
                (unsigned long long)d->events, (unsigned long long)d->metadata, (unsigned long long)d->stacks,
                (unsigned long long)d->sequence_points);
    /* A typed count is bumped before its callback, so it may lead by one when that callback stopped the parse. */
    uint64_t slack = s == NT_ERR_STOPPED || s == NT_ERR_MALFORMED || s == NT_ERR_NOMEM ? 1 : 0;
    if (stats->samples - d->samples > slack || stats->methods - d->methods > slack ||
        stats->modules - d->modules > slack || stats->assemblies - d->assemblies > slack ||
        stats->samples < d->samples || stats->methods < d->methods || stats->modules < d->modules ||
        stats->assemblies < d->assemblies)
        fz_fail("typed stats disagree with the callbacks");
    if (stats->memory > stats->memory_peak)
        fz_fail("memory %zu above its peak %zu", stats->memory, stats->memory_peak);
    if (s == NT_OK && stats->bytes != size)
        fz_fail("ok parse consumed %llu of %zu bytes", (unsigned long long)stats->bytes, size);
    if (s == NT_OK && d->traces != 1)
        fz_fail("ok parse with %llu trace callbacks", (unsigned long long)d->traces);
    if (s == NT_OK && !nt_parser_trace_info(p))
        fz_fail("ok parse without trace info");
    nt_parser_free(p);
    return s;
}

void fz_same(const char *what, const ts_digest *a, const nt_parser_stats *sa, const ts_digest *b,
             const nt_parser_stats *sb)
{
    if (a->h != b->h || a->calls != b->calls)
        fz_fail("%s: callback digest %016llx (%llu calls) differs from %016llx (%llu calls)", what,
                (unsigned long long)a->h, (unsigned long long)a->calls, (unsigned long long)b->h,
                (unsigned long long)b->calls);
    nt_parser_stats x = *sa, y = *sb;
    /* How much the parser buffers depends on chunking; nothing else may. */
    x.memory = y.memory = 0;
    x.memory_peak = y.memory_peak = 0;
    if (memcmp(&x, &y, sizeof x) != 0)
        fz_fail("%s: parser stats differ", what);
}

int fz_sink_write(void *user, const void *data, size_t len)
{
    fz_sink *s = user;
    if (s->n + len > s->cap) {
        size_t c = s->cap ? s->cap * 2 : 4096;
        while (c < s->n + len)
            c *= 2;
        uint8_t *nd = realloc(s->d, c);
        if (!nd)
            return 1;
        s->d = nd;
        s->cap = c;
    }
    if (len)
        memcpy(s->d + s->n, data, len);
    s->n += len;
    return 0;
}
