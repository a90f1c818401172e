/* The block index (nt_index) against the parser: on every trace of corpus/
 * (and ../shared/corpus when present) an index whose estimate walks every
 * event block counts exactly the events and samples the parser delivers, its
 * blocks tile the stream, every event lies in the time span the event block
 * headers state; cut and damaged streams give the blocks before the damage and
 * the offset; limits and misuse are errors. */
#include "common/cursor.h"
#include "common/le_store.h"
#include "nettrace_index.h"
#include "nettrace_writer.h"
#include "parse/index_internal.h"
#include "support.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct counts {
    uint64_t events, samples;
    int64_t min_ts, max_ts;
} counts;

static int on_event(void *user, const nt_event *ev)
{
    counts *c = user;
    if (c->events == 0 || ev->timestamp < c->min_ts)
        c->min_ts = ev->timestamp;
    if (c->events == 0 || ev->timestamp > c->max_ts)
        c->max_ts = ev->timestamp;
    c->events++;
    return 0;
}

static int on_sample(void *user, const nt_sample *s)
{
    (void)s;
    ((counts *)user)->samples++;
    return 0;
}

static nt_status parse_counts(const uint8_t *data, size_t len, counts *c)
{
    memset(c, 0, sizeof *c);
    nt_callbacks cb = { 0 };
    cb.event = on_event;
    cb.sample = on_sample;
    return nt_parse_buffer(data, len, &cb, c, NULL, NULL, 0);
}

static void check_tiling(const nt_index *ix, size_t len)
{
    uint64_t prev_end = 0;
    for (size_t i = 0; i < nt_index_block_count(ix); i++) {
        const nt_index_block *b = nt_index_block_at(ix, i);
        cr_assert(b->offset >= prev_end && b->body_offset >= b->offset && b->body_offset + b->body_size <= b->end);
        cr_assert(b->end <= len, "block %zu ends at %llu past the input's %zu bytes", i, (unsigned long long)b->end, len);
        prev_end = b->end;
    }
    cr_assert_null(nt_index_block_at(ix, nt_index_block_count(ix)));
}

static int check_trace(const char *path)
{
    uint8_t *data;
    size_t len;
    cr_assert(ts_read_file(path, &data, &len), "cannot read %s", path);
    counts c;
    nt_status ps = parse_counts(data, len, &c);
    nt_index_options opt = { .sample_blocks = UINT32_MAX };
    nt_index *ix = NULL;
    char msg[256];
    nt_status is = nt_index_from_buffer(data, len, &opt, &ix, msg, sizeof msg);
    if (ps == NT_ERR_UNSUPPORTED_VERSION || ps == NT_ERR_NOT_NETTRACE) { /* NetPerf: no index either */
        cr_assert_null(ix, "%s: an index of a stream the parser refuses", path);
        free(data);
        return 0;
    }
    cr_assert_not_null(ix, "%s: %s", path, msg);
    nt_index_summary s = { 0 };
    nt_index_summarize(ix, &s);
    if (ps == NT_OK) {
        cr_assert_eq(is, NT_OK, "%s: the parser reads it whole, the index says %s", path, msg);
        cr_assert(s.complete && s.stream_bytes <= len);
    }
    cr_assert(s.estimate_exact, "%s", path);
    cr_assert_eq(s.events_estimate, c.events, "%s: index counts %llu events, the parser %llu", path,
                 (unsigned long long)s.events_estimate, (unsigned long long)c.events);
    cr_assert_eq(s.samples_estimate, c.samples, "%s: index counts %llu samples, the parser %llu", path,
                 (unsigned long long)s.samples_estimate, (unsigned long long)c.samples);
    if (c.events)
        cr_assert(c.min_ts >= s.min_ticks && c.max_ts <= s.max_ticks, "%s: events outside the stated span", path);
    check_tiling(ix, len);
    cr_assert_eq(nt_index_event_blocks_in(ix, INT64_MIN, INT64_MAX, NULL, NULL), s.blocks[NT_INDEX_EVENT]);
    if (s.blocks[NT_INDEX_EVENT] && s.min_ticks > INT64_MIN)
        cr_assert_eq(nt_index_event_blocks_in(ix, INT64_MIN, s.min_ticks - 1, NULL, NULL), 0);
    nt_index_free(ix);
    free(data);
    return 1;
}

static int check_dir(const char *dir_path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", dir_path); /* ts_path's buffer is reused below */
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l > 9 && strcmp(e->d_name + l - 9, ".nettrace") == 0)
            n += check_trace(ts_path(dir, e->d_name));
    }
    closedir(d);
    return n;
}

Test(index, counts_equal_the_parsers_on_own_corpus)
{
    int n = check_dir(ts_own_corpus());
    cr_assert_gt(n, 5, "the project's own corpus has traces");
    cr_assert_gt(check_dir(ts_path(ts_own_corpus(), "seeds")), 3);
}

Test(index, counts_equal_the_parsers_on_shared_corpus)
{
    const char *dir = ts_shared_corpus();
    if (!dir || check_dir(dir) < 0)
        cr_skip_test("../shared/corpus absent: the shared traces were not indexed");
}

/* A stream cut at many points: the blocks before the cut, NT_ERR_TRUNCATED
 * (or another error) with a message naming an offset within the input. */
Test(index, cut_streams_keep_the_blocks_before_the_cut)
{
    uint8_t *data;
    size_t len;
    cr_assert(ts_read_file(ts_path(ts_own_corpus(), "call-tree.nettrace"), &data, &len));
    nt_index *whole = NULL;
    cr_assert_eq(nt_index_from_buffer(data, len, NULL, &whole, NULL, 0), NT_OK);
    for (size_t cut = 40; cut < len; cut += 1009) {
        nt_index *ix = NULL;
        char msg[256];
        nt_status s = nt_index_from_buffer(data, cut, NULL, &ix, msg, sizeof msg);
        cr_assert_eq(s, NT_ERR_TRUNCATED, "cut at %zu: %s", cut, msg);
        cr_assert_not_null(ix);
        cr_assert(strstr(msg, "at byte ") != NULL, "%s", msg);
        check_tiling(ix, cut);
        size_t n = nt_index_block_count(ix);
        cr_assert_leq(n, nt_index_block_count(whole));
        for (size_t i = 0; i < n; i++) { /* the scan's fields: the walk's spread differs in a prefix */
            nt_index_block a = *nt_index_block_at(ix, i), b = *nt_index_block_at(whole, i);
            a.flags = b.flags = 0;
            a.next_sample_block = b.next_sample_block = 0;
            cr_assert_eq(memcmp(&a, &b, sizeof a), 0);
        }
        nt_index_summary s2 = { 0 };
        nt_index_summarize(ix, &s2);
        cr_assert(!s2.complete);
        nt_index_free(ix);
    }
    nt_index_free(whole);
    free(data);
}

Test(index, limits_and_misuse)
{
    uint8_t *data;
    size_t len;
    cr_assert(ts_read_file(ts_path(ts_own_corpus(), "call-tree.nettrace"), &data, &len));
    nt_index_options opt = { .max_blocks = 3 };
    nt_index *ix = NULL;
    char msg[256];
    cr_assert_eq(nt_index_from_buffer(data, len, &opt, &ix, msg, sizeof msg), NT_ERR_LIMIT);
    cr_assert(strstr(msg, "max_blocks") != NULL, "%s", msg);
    cr_assert_eq(nt_index_block_count(ix), 3);
    nt_index_free(ix);

    /* A damaged block size: the blocks before it, and the offset of the damage. */
    nt_index *whole = NULL;
    cr_assert_eq(nt_index_from_buffer(data, len, NULL, &whole, NULL, 0), NT_OK);
    const nt_index_block *third = nt_index_block_at(whole, 2);
    uint8_t *bad = malloc(len);
    memcpy(bad, data, len);
    bad[third->offset] = 0x33; /* no object starts there now */
    cr_assert_eq(nt_index_from_buffer(bad, len, NULL, &ix, msg, sizeof msg), NT_ERR_MALFORMED);
    char want[64];
    snprintf(want, sizeof want, "at byte %llu", (unsigned long long)third->offset);
    cr_assert(strstr(msg, want) != NULL, "%s", msg);
    cr_assert_eq(nt_index_block_count(ix), 2);
    nt_index_free(ix);
    free(bad);
    nt_index_free(whole);

    cr_assert_eq(nt_index_from_buffer("NetPerf!", 8, NULL, &ix, msg, sizeof msg), NT_ERR_NOT_NETTRACE);
    cr_assert_null(ix);
    cr_assert_eq(nt_index_from_buffer(NULL, 0, NULL, &ix, NULL, 0), NT_ERR_NOT_NETTRACE);
    cr_assert_eq(nt_index_from_buffer(data, len, NULL, NULL, NULL, 0), NT_ERR_INVALID_ARG);
    cr_assert_eq(nt_index_from_file("/", NULL, &ix, msg, sizeof msg), NT_ERR_INVALID_ARG);
    cr_assert_eq(nt_index_from_file("/nonexistent/x.nettrace", NULL, &ix, msg, sizeof msg), NT_ERR_IO);
    nt_index_free(NULL);
    cr_assert_eq(nt_index_block_count(NULL), 0);
    nt_index_summary s = { 0 };
    nt_index_summarize(NULL, &s);
    cr_assert_eq(s.stream_bytes, 0);
    free(data);
}

/* The estimate from a spread of blocks is within a few percent on a trace
 * with many event blocks (the project's own 34-block trace, 8 walked). */
Test(index, estimate_from_a_spread)
{
    uint8_t *data;
    size_t len;
    cr_assert(ts_read_file(ts_path(ts_own_corpus(), "event-fields.nettrace"), &data, &len));
    counts c;
    parse_counts(data, len, &c);
    nt_index_options opt = { .sample_blocks = 8 };
    nt_index *ix = NULL;
    cr_assert_eq(nt_index_from_buffer(data, len, &opt, &ix, NULL, 0), NT_OK);
    nt_index_summary s = { 0 };
    nt_index_summarize(ix, &s);
    cr_assert_eq(s.sampled_event_blocks, 8);
    cr_assert(!s.estimate_exact);
    double ratio = (double)s.events_estimate / (double)c.events;
    cr_assert(ratio > 0.8 && ratio < 1.25, "estimate %llu for %llu events", (unsigned long long)s.events_estimate,
              (unsigned long long)c.events);
    nt_index_free(ix);
    free(data);
}

/* Over a file the index reads by pread only what it needs: the same blocks
 * as over the whole buffer, from a small share of the bytes. */
Test(index, a_file_is_read_only_where_needed)
{
    const char *path = ts_path(ts_own_corpus(), "event-fields.nettrace");
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    uint8_t *data;
    size_t len;
    cr_assert(ts_read_file(p, &data, &len));
    nt_index_options opt = { .sample_blocks = 2 };
    nt_index *a = NULL, *f = NULL;
    cr_assert_eq(nt_index_from_buffer(data, len, &opt, &a, NULL, 0), NT_OK);
    char msg[256];
    cr_assert_eq(nt_index_from_file(p, &opt, &f, msg, sizeof msg), NT_OK, "%s", msg);
    cr_assert_eq(nt_index_block_count(a), nt_index_block_count(f));
    for (size_t i = 0; i < nt_index_block_count(a); i++)
        cr_assert_eq(memcmp(nt_index_block_at(a, i), nt_index_block_at(f, i), sizeof(nt_index_block)), 0);
    nt_index_summary sa = { 0 }, sf = { 0 };
    nt_index_summarize(a, &sa);
    nt_index_summarize(f, &sf);
    cr_assert_eq(sa.events_estimate, sf.events_estimate);
    cr_assert_eq(sa.bytes_read, sf.bytes_read);
    cr_assert_lt(sf.bytes_read * 4, len, "read %llu of %zu bytes", (unsigned long long)sf.bytes_read, len);
    nt_index_free(a);
    nt_index_free(f);
    free(data);
}

/* The sidecar: saved and loaded back against its trace, the same table; a
 * damaged, cut, re-sealed-but-lying or foreign sidecar and a trace changed
 * since are refused with what is wrong, never believed. */
typedef struct saved {
    uint8_t *p;
    size_t n;
} saved;

static int keep(void *user, const void *data, size_t len)
{
    saved *s = user;
    s->p = realloc(s->p, s->n + len);
    cr_assert_not_null(s->p);
    memcpy(s->p + s->n, data, len);
    s->n += len;
    return 0;
}

static int temp_copy(const char *from, char *name, size_t size)
{
    uint8_t *data;
    size_t len;
    cr_assert(ts_read_file(from, &data, &len));
    snprintf(name, size, "/tmp/test_index_XXXXXX");
    int fd = mkstemp(name);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, data, len), (ssize_t)len);
    free(data);
    return fd;
}

static void reseal(saved *sv)
{
    uint64_t c = ix_sidecar_checksum(sv->p, sv->n - 8);
    for (int k = 0; k < 8; k++)
        sv->p[sv->n - 8 + (size_t)k] = (uint8_t)(c >> (8 * k));
}

static nt_status load_msg(const saved *sv, int fd, char *msg, size_t size)
{
    nt_index *ix = NULL;
    nt_status s = nt_index_load(sv->p, sv->n, fd, NULL, &ix, msg, size);
    cr_assert_eq(s == NT_OK, ix != NULL);
    nt_index_free(ix);
    return s;
}

Test(index, sidecar_is_believed_only_for_its_own_trace)
{
    char name[64], other[64], msg[256];
    int fd = temp_copy(ts_path(ts_own_corpus(), "event-fields.nettrace"), name, sizeof name);
    int ofd = temp_copy(ts_path(ts_own_corpus(), "call-tree.nettrace"), other, sizeof other);
    nt_index_options opt = { .sample_blocks = NT_INDEX_WALK_ALL };
    nt_index *ix = NULL, *headers_only = NULL;
    cr_assert_eq(nt_index_from_fd(fd, &opt, &ix, msg, sizeof msg), NT_OK, "%s", msg);
    cr_assert_eq(nt_index_from_fd(fd, NULL, &headers_only, NULL, 0), NT_OK);
    saved sv = { 0 };
    cr_assert_eq(nt_index_save(headers_only, keep, &sv), NT_ERR_INVALID_ARG, "an index of headers only is no sidecar");
    cr_assert_eq(nt_index_save(ix, keep, &sv), NT_OK);
    nt_index *back = NULL;
    cr_assert_eq(nt_index_load(sv.p, sv.n, fd, NULL, &back, msg, sizeof msg), NT_OK, "%s", msg);
    cr_assert_eq(nt_index_block_count(back), nt_index_block_count(ix));
    size_t records = 0;
    for (size_t i = 0; i < nt_index_block_count(ix); i++) {
        cr_assert_eq(memcmp(nt_index_block_at(back, i), nt_index_block_at(ix, i), sizeof(nt_index_block)), 0);
        records += (nt_index_block_at(ix, i)->flags & NT_INDEX_BLOCK_RECORDS) != 0;
    }
    cr_assert_gt(records, 0, "the trace's rundown is in some block");
    nt_index_summary a = { 0 }, b = { 0 };
    nt_index_summarize(ix, &a);
    nt_index_summarize(back, &b);
    cr_assert(b.estimate_exact && b.complete);
    cr_assert_eq(a.events_estimate, b.events_estimate);
    cr_assert_eq(a.qpc_frequency, b.qpc_frequency);
    nt_index_free(back);

    /* Another trace: stale by its size. */
    cr_assert_eq(load_msg(&sv, ofd, msg, sizeof msg), NT_ERR_STATE);
    cr_assert(strstr(msg, "size") != NULL, "%s", msg);
    /* A byte flipped: the checksum.  Cut: the size does not fit. */
    sv.p[300] ^= 0x40;
    cr_assert_eq(load_msg(&sv, fd, msg, sizeof msg), NT_ERR_MALFORMED);
    cr_assert(strstr(msg, "checksum") != NULL, "%s", msg);
    sv.p[300] ^= 0x40;
    saved cut = { sv.p, sv.n - 56 };
    cr_assert_eq(load_msg(&cut, fd, msg, sizeof msg), NT_ERR_MALFORMED);
    /* Re-sealed lies: an event block's range, a block's kind, a link past the end. */
    const size_t entry0 = 120, esize = 56;
    for (size_t i = 0; i < nt_index_block_count(ix); i++) {
        if (nt_index_block_at(ix, i)->kind != NT_INDEX_EVENT)
            continue;
        uint8_t *e = sv.p + entry0 + i * esize;
        uint8_t keep_min = e[32];
        e[32] ^= 1;
        reseal(&sv);
        cr_assert_eq(load_msg(&sv, fd, msg, sizeof msg), NT_ERR_MALFORMED);
        cr_assert(strstr(msg, "differs") != NULL, "%s", msg);
        e[32] = keep_min;
        e[28] = NT_INDEX_UNKNOWN;
        reseal(&sv);
        cr_assert_eq(load_msg(&sv, fd, msg, sizeof msg), NT_ERR_MALFORMED);
        e[28] = NT_INDEX_EVENT;
        e[48] = 0xff;
        e[49] = 0xff;
        reseal(&sv);
        cr_assert_eq(load_msg(&sv, fd, msg, sizeof msg), NT_ERR_MALFORMED);
        e[48] = e[49] = 0;
        reseal(&sv);
        cr_assert_eq(load_msg(&sv, fd, msg, sizeof msg), NT_OK, "%s", msg);
        break;
    }
    /* The trace modified since: its time. */
    struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
    cr_assert_eq(futimens(fd, old), 0);
    cr_assert_eq(load_msg(&sv, fd, msg, sizeof msg), NT_ERR_STATE);
    cr_assert(strstr(msg, "modified") != NULL, "%s", msg);
    free(sv.p);
    nt_index_free(ix);
    nt_index_free(headers_only);
    close(fd);
    close(ofd);
    unlink(name);
    unlink(other);
}

/* A windowed read delivers every sample of the window a full read
 * delivers, with the same stack, and reads less. */
typedef struct window_samples {
    int64_t from_ns, to_ns;
    size_t n;
    uint64_t digest; /* of (time, thread, stack ips) in order */
} window_samples;

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

static int in_window(void *user, const nt_sample *s)
{
    window_samples *w = user;
    if (s->time_ns < w->from_ns || s->time_ns >= w->to_ns)
        return 0;
    w->n++;
    w->digest = mix(mix(w->digest, (uint64_t)s->time_ns), s->thread_id);
    for (uint32_t i = 0; s->stack && i < s->stack->count; i++)
        w->digest = mix(w->digest, s->stack->ips[i]);
    return 0;
}

Test(index, a_window_reads_the_samples_of_a_full_read)
{
    char name[64];
    int fd = temp_copy(ts_path(ts_own_corpus(), "event-fields.nettrace"), name, sizeof name);
    nt_index_options opt = { .sample_blocks = NT_INDEX_WALK_ALL };
    nt_index *ix = NULL;
    cr_assert_eq(nt_index_from_fd(fd, &opt, &ix, NULL, 0), NT_OK);
    nt_index_summary sum = { 0 };
    nt_index_summarize(ix, &sum);
    int64_t lo = nt_ticks_to_ns(sum.min_ticks, sum.qpc_frequency), hi = nt_ticks_to_ns(sum.max_ticks, sum.qpc_frequency);
    nt_callbacks cb = { 0 };
    cb.sample = in_window;
    bool smaller = false;
    for (int k = 0; k < 8; k++) {
        window_samples full = { lo + (hi - lo) / 8 * k, lo + (hi - lo) / 8 * k + (hi - lo) / 10, 0, 0 };
        window_samples win = full;
        nt_parser *p = nt_parser_new(&cb, &full, NULL, NULL);
        cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
        nt_status fs = nt_parser_feed_fd(p, fd, NULL, NULL);
        nt_parser_free(p);
        p = nt_parser_new(&cb, &win, NULL, NULL);
        nt_window_options wo = { .from_ns = win.from_ns, .to_ns = win.to_ns };
        nt_window_stats ws = { 0 };
        nt_status s = nt_parser_feed_window(p, fd, ix, &wo, &ws, NULL);
        cr_assert_eq(s, fs, "window %d: %s", k, nt_parser_message(p));
        nt_parser_free(p);
        cr_assert_eq(win.n, full.n, "window %d: %zu samples, %zu in the full read", k, win.n, full.n);
        cr_assert_eq(win.digest, full.digest, "window %d: the samples or their stacks differ", k);
        cr_assert_leq(ws.bytes_read, ws.file_bytes);
        smaller |= ws.bytes_read < ws.file_bytes;
    }
    cr_assert(smaller, "some window reads less than the file");
    /* An index that does not know every block's flags cannot choose. */
    nt_index *spread = NULL;
    cr_assert_eq(nt_index_from_fd(fd, NULL, &spread, NULL, 0), NT_OK);
    nt_parser *p = nt_parser_new(&cb, NULL, NULL, NULL);
    cr_assert_eq(nt_parser_feed_window(p, fd, spread, NULL, NULL, NULL), NT_ERR_STATE);
    cr_assert_eq(nt_parser_offset(p), 0);
    nt_parser_free(p);
    nt_index_free(spread);
    nt_index_free(ix);
    close(fd);
    unlink(name);
}

/* Every method, module and assembly record a read hands out, in order. */
typedef struct record_digest {
    size_t n;
    uint64_t digest;
} record_digest;

static int digest_method(void *user, const nt_method *m)
{
    record_digest *d = user;
    d->n++;
    d->digest = mix(mix(mix(mix(d->digest, m->method_id), m->start_address), (uint64_t)m->timestamp), m->which);
    for (const char *c = m->name; c && *c; c++)
        d->digest = mix(d->digest, (uint8_t)*c);
    d->digest = mix(d->digest, m->event ? m->event->thread_id : 0);
    return 0;
}

static int digest_module(void *user, const nt_module *m)
{
    record_digest *d = user;
    d->n++;
    d->digest = mix(mix(d->digest, m->module_id), (uint64_t)m->timestamp);
    return 0;
}

static int digest_assembly(void *user, const nt_assembly *a)
{
    record_digest *d = user;
    d->n++;
    d->digest = mix(mix(d->digest, a->assembly_id), (uint64_t)a->timestamp);
    return 0;
}

/* A windowed read takes the method, module and assembly records of the
 * blocks outside the window from the sidecar's kept records, not from the
 * blocks: the same records in the same order as a full read, and no block
 * read for them.  A kept record moved to a block not flagged to keep them
 * is refused. */
static void kept_records_on(const char *path)
{
    char name[64], msg[256];
    int fd = temp_copy(path, name, sizeof name);
    nt_index_options opt = { .sample_blocks = NT_INDEX_WALK_ALL };
    nt_index *ix = NULL, *back = NULL;
    cr_assert_eq(nt_index_from_fd(fd, &opt, &ix, msg, sizeof msg), NT_OK, "%s", msg);
    saved sv = { 0 };
    cr_assert_eq(nt_index_save(ix, keep, &sv), NT_OK);
    cr_assert_eq(nt_index_load(sv.p, sv.n, fd, NULL, &back, msg, sizeof msg), NT_OK, "%s", msg);
    nt_index_summary sum = { .struct_size = sizeof sum }, bsum = { .struct_size = sizeof bsum };
    nt_index_summarize(ix, &sum);
    nt_index_summarize(back, &bsum);
    cr_assert_gt(sum.kept_records, 0, "%s: its rundown is kept", path);
    cr_assert_eq(bsum.kept_records, sum.kept_records);
    cr_assert_eq(bsum.kept_record_bytes, sum.kept_record_bytes);
    nt_callbacks cb = { 0 };
    cb.method = digest_method;
    cb.module = digest_module;
    cb.assembly = digest_assembly;
    record_digest full = { 0 }, win = { 0 };
    nt_parser *p = nt_parser_new(&cb, &full, NULL, NULL);
    cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
    nt_status fs = nt_parser_feed_fd(p, fd, NULL, NULL);
    nt_parser_free(p);
    int64_t lo = nt_ticks_to_ns(sum.min_ticks, sum.qpc_frequency), hi = nt_ticks_to_ns(sum.max_ticks, sum.qpc_frequency);
    p = nt_parser_new(&cb, &win, NULL, NULL);
    nt_window_options wo = { .from_ns = lo + (hi - lo) / 2, .to_ns = lo + (hi - lo) / 2 + 1 };
    nt_window_stats ws = { .struct_size = sizeof ws };
    cr_assert_eq(nt_parser_feed_window(p, fd, back, &wo, &ws, NULL), fs, "%s", nt_parser_message(p));
    nt_parser_free(p);
    cr_assert_eq(win.n, full.n, "%s: %zu records through the window, %zu in the full read", path, win.n, full.n);
    cr_assert_eq(win.digest, full.digest, "%s: the records or their order differ", path);
    cr_assert_gt(ws.kept_records, 0, "%s: records were taken from the sidecar", path);
    cr_assert_eq(ws.record_event_blocks, 0, "%s: no block read for its records (%" PRIu64 " were)", path,
                 ws.record_event_blocks);
    /* The first kept record said to be of a block that keeps none: refused. */
    size_t at = 120 + nt_index_block_count(ix) * 56;
    uint32_t block = (uint32_t)sv.p[at] | (uint32_t)sv.p[at + 1] << 8;
    for (uint32_t i = 0; i < nt_index_block_count(ix); i++)
        if (!(nt_index_block_at(ix, i)->flags & NT_INDEX_BLOCK_RECORDS_KEPT) && i > block) {
            sv.p[at] = (uint8_t)i;
            sv.p[at + 1] = (uint8_t)(i >> 8);
            sv.p[at + 2] = (uint8_t)(i >> 16);
            break;
        }
    reseal(&sv);
    cr_assert_eq(load_msg(&sv, fd, msg, sizeof msg), NT_ERR_MALFORMED);
    cr_assert(strstr(msg, "kept record") != NULL, "%s", msg);
    free(sv.p);
    nt_index_free(back);
    nt_index_free(ix);
    close(fd);
    unlink(name);
}

Test(index, a_window_takes_the_records_from_the_sidecar)
{
    kept_records_on(ts_path(ts_own_corpus(), "call-tree.nettrace"));
    kept_records_on(ts_path(ts_own_corpus(), "event-fields.nettrace"));
}

/* ---- a trace of many blocks, written here -------------------------------------------------------
 * 300 sequence-point intervals of small blocks; 600 methods loaded over the
 * first 100, each interval's samples in the code of five of them. */
#define MANY_INTERVALS 300u
#define MANY_METHODS 600u

static uint64_t method_start(uint32_t m) { return 0x100000 + (uint64_t)m * 0x40; }

static int64_t interval_start(uint32_t k) { return 1000000 + (int64_t)k * 100000; }

static void write_many_blocks(const char *path, uint32_t format)
{
    nt_membuf out = { 0 };
    nt_writer_options o = { .format = format, .block_bytes = 1024 };
    nt_writer *w = nt_writer_new(&o, nt_membuf_write, &out, NULL);
    cr_assert_not_null(w);
    uint32_t seq[5] = { 0 };
    for (uint32_t k = 0; k < MANY_INTERVALS; k++) {
        int64_t ts = interval_start(k);
        for (uint32_t m = k * 6; m < k * 6 + 6 && m < MANY_METHODS; m++) {
            nt_method me = { .which = NT_RECORD_LOAD, .method_id = 1000 + m, .module_id = 1,
                             .start_address = method_start(m), .size = 0x40, .declaring_type = "Many.Type",
                             .name = "M", .signature = "void ()" };
            nt_writer_event hdr = { .thread_id = 1, .timestamp = ts++ };
            cr_assert_eq(nt_writer_method(w, &hdr, &me), NT_OK);
        }
        for (uint32_t i = 0; i < 60; i++) {
            uint32_t th = 1 + i % 4;
            uint32_t m = (k * 5 + i % 5) % MANY_METHODS;
            uint64_t ips[2] = { method_start(m) + 8 + i % 16, 0x7000 };
            uint32_t sid = 0;
            cr_assert_eq(nt_writer_stack(w, ips, 2, &sid), NT_OK);
            nt_writer_event hdr = { .thread_id = th, .timestamp = ts++, .stack_id = sid, .sequence_number = ++seq[th] };
            cr_assert_eq(nt_writer_sample(w, &hdr, NT_SAMPLE_MANAGED), NT_OK);
        }
        cr_assert_eq(nt_writer_sequence_point(w, interval_start(k + 1) - 1, 0), NT_OK);
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
    nt_writer_free(w);
    cr_assert(ts_write_file(path, out.data, out.len), "%s", path);
    nt_membuf_free(&out);
}

/* The methods a read hands out, and the samples of a window. */
typedef struct window_records {
    int64_t from_ns, to_ns;
    const nt_parser *p;
    size_t methods;
    uint64_t method_ids[4096];
    uint64_t ips[8192];
    size_t nips;
    window_samples samples;
} window_records;

static int wr_method(void *user, const nt_method *m)
{
    window_records *r = user;
    cr_assert_lt(r->methods, sizeof r->method_ids / sizeof r->method_ids[0]);
    r->method_ids[r->methods++] = m->method_id;
    return 0;
}

static int wr_sample(void *user, const nt_sample *s)
{
    window_records *r = user;
    if (s->time_ns >= r->from_ns && s->time_ns < r->to_ns && s->stack)
        for (uint32_t i = 0; i < s->stack->count && r->nips < sizeof r->ips / sizeof r->ips[0]; i++)
            r->ips[r->nips++] = s->stack->ips[i];
    return in_window(&r->samples, s);
}

static nt_status read_window(int fd, const nt_index *ix, uint32_t flags, window_records *r, nt_window_stats *ws)
{
    nt_callbacks cb = { 0 };
    cb.method = wr_method;
    cb.sample = wr_sample;
    r->samples.from_ns = r->from_ns;
    r->samples.to_ns = r->to_ns;
    nt_parser *p = nt_parser_new(&cb, r, NULL, NULL);
    nt_window_options wo = { .struct_size = sizeof wo, .flags = flags, .from_ns = r->from_ns, .to_ns = r->to_ns };
    *ws = (nt_window_stats){ .struct_size = sizeof *ws };
    nt_status s = nt_parser_feed_window(p, fd, ix, &wo, ws, NULL);
    nt_parser_free(p);
    return s;
}

static bool holds_a_frame(const window_records *r, uint64_t method_id)
{
    uint64_t start = method_start((uint32_t)(method_id - 1000));
    for (size_t i = 0; i < r->nips; i++)
        if (r->ips[i] >= start && r->ips[i] - start < 0x40)
            return true;
    return false;
}

/* A sidecar's load reads a spread of the trace's block headers, not all of
 * them; a table that misplaces a block the window reads fails there; and
 * with NT_WINDOW_FRAME_RECORDS a window hands over only the method records
 * whose code holds a frame of it, with the same samples. */
static void many_blocks_on(uint32_t format)
{
    char name[64], msg[256];
    snprintf(name, sizeof name, "/tmp/test_index_many_XXXXXX");
    int fd = mkstemp(name);
    cr_assert_geq(fd, 0);
    write_many_blocks(name, format);
    nt_index_options opt = { .sample_blocks = NT_INDEX_WALK_ALL };
    nt_index *ix = NULL, *back = NULL;
    cr_assert_eq(nt_index_from_fd(fd, &opt, &ix, msg, sizeof msg), NT_OK, "%s", msg);
    size_t count = nt_index_block_count(ix);
    cr_assert_gt(count, 1000, "V%u: %zu blocks: the trace is too small to tell a spread from a rescan", format, count);
    saved sv = { 0 };
    cr_assert_eq(nt_index_save(ix, keep, &sv), NT_OK);
    cr_assert_eq(nt_index_load(sv.p, sv.n, fd, NULL, &back, msg, sizeof msg), NT_OK, "%s", msg);
    for (size_t i = 0; i < count; i++)
        cr_assert_eq(memcmp(nt_index_block_at(back, i), nt_index_block_at(ix, i), sizeof(nt_index_block)), 0,
                     "V%u: block %zu differs from the scan's after the load", format, i);
    nt_index_summary sum = { .struct_size = sizeof sum }, bsum = { .struct_size = sizeof bsum };
    nt_index_summarize(ix, &sum);
    nt_index_summarize(back, &bsum);
    cr_assert_eq(bsum.qpc_frequency, sum.qpc_frequency);
    cr_assert_eq(bsum.sync_qpc, sum.sync_qpc);
    cr_assert_eq(memcmp(bsum.blocks, sum.blocks, sizeof sum.blocks), 0);
    cr_assert_eq(memcmp(bsum.bytes, sum.bytes, sizeof sum.bytes), 0);
    cr_assert_eq(bsum.min_ticks, sum.min_ticks);
    cr_assert_eq(bsum.max_ticks, sum.max_ticks);
    struct stat st;
    cr_assert_eq(fstat(fd, &st), 0);
    uint64_t size = (uint64_t)st.st_size;
    uint64_t identity = (size < IX_HEAD_BYTES ? size : IX_HEAD_BYTES) + (size < IX_TAIL_BYTES ? size : IX_TAIL_BYTES);
    cr_assert_lt(bsum.bytes_read - identity, 100 * 2 * 128,
                 "V%u: the load read %" PRIu64 " bytes of %zu block headers besides the identity's %" PRIu64, format,
                 bsum.bytes_read - identity, count, identity);

    /* The window: interval 150 (after every load), a tenth of an interval. */
    window_records *all = calloc(1, sizeof *all), *cut = calloc(1, sizeof *cut);
    cr_assert(all && cut);
    all->from_ns = cut->from_ns = nt_ticks_to_ns(interval_start(150), sum.qpc_frequency);
    all->to_ns = cut->to_ns = all->from_ns + nt_ticks_to_ns(interval_start(1) - interval_start(0), sum.qpc_frequency) / 10;
    nt_window_stats ws_all, ws_cut;
    cr_assert_eq(read_window(fd, back, 0, all, &ws_all), NT_OK);
    cr_assert_eq(read_window(fd, back, NT_WINDOW_FRAME_RECORDS, cut, &ws_cut), NT_OK);
    cr_assert_gt(all->samples.n, 0);
    cr_assert_eq(cut->samples.n, all->samples.n);
    cr_assert_eq(cut->samples.digest, all->samples.digest, "V%u: the samples differ with the records cut", format);
    cr_assert_eq(all->methods, MANY_METHODS, "V%u: every load without the flag", format);
    cr_assert_eq(ws_all.kept_records_cut, 0);
    cr_assert_gt(ws_cut.kept_records_cut, MANY_METHODS / 2, "V%u: %" PRIu64 " cut", format, ws_cut.kept_records_cut);
    cr_assert_eq(cut->methods + ws_cut.kept_records_cut, all->methods);
    cr_assert_gt(ws_cut.frame_read_bytes, 0);
    /* What was cut names no frame of the window; what holds one is kept, in order. */
    size_t j = 0;
    for (size_t i = 0; i < all->methods; i++) {
        bool kept = j < cut->methods && cut->method_ids[j] == all->method_ids[i];
        j += kept;
        if (!kept)
            cr_assert(!holds_a_frame(all, all->method_ids[i]), "V%u: method %" PRIu64 " holds a frame and was cut",
                      format, all->method_ids[i]);
    }
    cr_assert_eq(j, cut->methods, "V%u: the records kept are not in the full read's order", format);
    for (size_t i = 0; i < all->methods; i++)
        if (holds_a_frame(all, all->method_ids[i])) {
            bool found = false;
            for (size_t k = 0; k < cut->methods && !found; k++)
                found = cut->method_ids[k] == all->method_ids[i];
            cr_assert(found, "V%u: method %" PRIu64 " holds a window frame and was not handed over", format,
                      all->method_ids[i]);
        }

    /* A block the window reads, its end moved by four bytes in the table
     * (its neighbour shrunk to keep the table's shape): refused by the
     * load's spread or by the parser framing it, or read as the file's own
     * bytes. */
    size_t target = 0;
    for (size_t i = 1; i + 1 < count && !target; i++) {
        const nt_index_block *b = nt_index_block_at(ix, i), *n = nt_index_block_at(ix, i + 1);
        if (b->kind == NT_INDEX_EVENT && b->min_ticks >= interval_start(150) &&
            n->body_size > 8)
            target = i;
    }
    cr_assert_gt(target, 0);
    uint8_t *e = sv.p + 120 + target * 56, *f = e + 56;
    cm_store_le64(e + 8, cm_le64(e + 8) + 4);
    cm_store_le32(e + 24, cm_le32(e + 24) + 4);
    cm_store_le64(f, cm_le64(f) + 4);
    cm_store_le64(f + 16, cm_le64(f + 16) + 4);
    cm_store_le32(f + 24, cm_le32(f + 24) - 4);
    reseal(&sv);
    nt_index *lie = NULL;
    nt_status ls = nt_index_load(sv.p, sv.n, fd, NULL, &lie, msg, sizeof msg);
    if (ls == NT_OK) {
        window_records *honest = calloc(1, sizeof *honest), *r = calloc(1, sizeof *r);
        cr_assert(honest && r);
        honest->from_ns = r->from_ns = nt_ticks_to_ns(nt_index_block_at(ix, target)->min_ticks, sum.qpc_frequency);
        honest->to_ns = r->to_ns = nt_ticks_to_ns(nt_index_block_at(ix, target)->max_ticks, sum.qpc_frequency) + 1;
        nt_window_stats ws;
        cr_assert_eq(read_window(fd, back, NT_WINDOW_FRAME_RECORDS, honest, &ws), NT_OK);
        nt_status rs = read_window(fd, lie, NT_WINDOW_FRAME_RECORDS, r, &ws);
        /* Inside a run of blocks the parser frames the file's own bytes, wherever the table says they part. */
        cr_assert(rs == NT_ERR_MALFORMED || (rs == NT_OK && r->samples.n == honest->samples.n &&
                                             r->samples.digest == honest->samples.digest),
                  "V%u: a block misplaced by the table gave other samples (status %d)", format, (int)rs);
        free(honest);
        free(r);
    } else {
        cr_assert_eq(ls, NT_ERR_MALFORMED, "%s", msg);
    }
    nt_index_free(lie);
    free(all);
    free(cut);
    free(sv.p);
    nt_index_free(back);
    nt_index_free(ix);
    close(fd);
    unlink(name);
}

Test(index, a_sidecar_of_many_blocks_is_checked_by_a_spread_and_by_the_reads)
{
    many_blocks_on(4);
    many_blocks_on(6);
}
