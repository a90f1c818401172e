/* Hostile input, systematically: for every trace in ../shared/corpus, corpus/
 * and corpus/fuzz/parser: every truncation point (a dense sample for large
 * files), random byte flips, and mutations of the length fields the framing
 * and the blocks carry.  Every outcome must be a defined parse status with an
 * error offset inside the input, memory within what the limits allow, and
 * time within a small multiple of the valid parse's (a ratio, measured in
 * thread CPU time so other processes on the machine do not count).
 *
 * NETTRACE_HOSTILE_ITERATIONS=N multiplies the default budget (1). */
#include "nettrace.h"
#include "support.h"
#include "ltest.h"
#include "../fuzz/peak_bound.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- running one parse -------------------------------------------------- */

typedef struct outcome {
    nt_status status;
    uint64_t err_offset;
    size_t peak;
    double cpu;  /* seconds */
} outcome;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int count_cb(void *u, const nt_event *ev)
{
    (void)ev;
    ++*(uint64_t *)u;
    return 0;
}

static outcome parse(const uint8_t *d, size_t n, const nt_limits *lim)
{
    outcome o;
    uint64_t events = 0;
    nt_callbacks cb = { 0 };
    cb.event = count_cb;
    double t0 = cpu_now();
    nt_parser *p = nt_parser_new(&cb, &events, lim, NULL);
    cr_assert_not_null(p);
    o.status = nt_parser_feed(p, d, n);
    if (o.status == NT_OK)
        o.status = nt_parser_finish(p);
    o.cpu = cpu_now() - t0;
    o.err_offset = nt_parser_error_offset(p);
    nt_parser_stats st = { 0 };
    nt_parser_stats_get(p, &st);
    o.peak = st.memory_peak;
    nt_parser_free(p);
    return o;
}

static bool defined_status(nt_status s)
{
    switch (s) {
    case NT_OK: case NT_ERR_NOT_NETTRACE: case NT_ERR_UNSUPPORTED_VERSION: case NT_ERR_NO_EVENTS:
    case NT_ERR_MALFORMED: case NT_ERR_TRUNCATED: case NT_ERR_LIMIT:
        return true;
    default:
        return false;
    }
}

/* ---- the corpus ------------------------------------------------------------ */

typedef struct trace_file {
    char path[1024];
    uint8_t *data;
    size_t len;
} trace_file;

#define MAX_FILES 512
static trace_file files[MAX_FILES];
static size_t nfiles;

static void add_dir(const char *dir, const char *suffix)
{
    DIR *dh = opendir(dir);
    if (!dh)
        return;
    struct dirent *e;
    while ((e = readdir(dh)) && nfiles < MAX_FILES) {
        size_t l = strlen(e->d_name), sl = suffix ? strlen(suffix) : 0;
        if (e->d_name[0] == '.' || (suffix && (l < sl || strcmp(e->d_name + l - sl, suffix) != 0)))
            continue;
        trace_file *f = &files[nfiles];
        snprintf(f->path, sizeof f->path, "%s/%s", dir, e->d_name);
        if (ts_read_file(f->path, &f->data, &f->len))
            nfiles++;
    }
    closedir(dh);
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const trace_file *)a)->path, ((const trace_file *)b)->path);
}

static bool have_shared;

static void load_corpus(void)
{
    const char *shared = ts_shared_corpus();
    have_shared = shared != NULL;
    if (shared) {
        add_dir(shared, ".nettrace");
        add_dir(shared, ".netperf");
    } else {
        printf("test_hostile: ../shared/corpus is absent: only the project's own traces are mutated\n");
    }
    add_dir(ts_own_corpus(), ".nettrace");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s/fuzz/parser", ts_own_corpus());
    add_dir(buf, NULL);
    qsort(files, nfiles, sizeof *files, by_path);
}

static void free_corpus(void)
{
    for (size_t i = 0; i < nfiles; i++)
        free(files[i].data);
    nfiles = 0;
}

/* ---- where the length fields are ---------------------------------------- */

typedef enum field_kind { F_U32, F_U16, F_VARINT } field_kind;

typedef struct length_field {
    size_t pos;
    field_kind kind;
    uint8_t width; /* bytes, for varints */
} length_field;

/* One block object of the original stream: [start, end) from its
 * BeginPrivateObject tag to its EndObject, the size field, the content. */
typedef struct block_span {
    size_t start, size_pos, content, end;
    bool metadata;
} block_span;

typedef struct field_list {
    length_field *v;
    size_t n, cap;
    block_span *blocks;
    size_t nblocks, blocks_cap;
    size_t header_end; /* end of the Trace object */
} field_list;

static void add_block(field_list *l, block_span b)
{
    if (l->nblocks == l->blocks_cap) {
        l->blocks_cap = l->blocks_cap ? l->blocks_cap * 2 : 64;
        l->blocks = realloc(l->blocks, l->blocks_cap * sizeof *l->blocks);
        cr_assert_not_null(l->blocks);
    }
    l->blocks[l->nblocks++] = b;
}

static void free_fields(field_list *l)
{
    free(l->v);
    free(l->blocks);
}

static void add_field(field_list *l, size_t pos, field_kind kind, uint8_t width)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        cr_assert_not_null(l->v);
    }
    l->v[l->n++] = (length_field){ pos, kind, width };
}

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* Walk the framing of a valid V4/V5 stream: type-name lengths, block sizes,
 * event-block header sizes, stack-block counts and stack sizes, sequence-point
 * thread counts.  Stops quietly at anything it does not recognise. */
static void walk_framing(const uint8_t *d, size_t n, field_list *out, size_t *max_block)
{
    size_t at = 8 + 4 + 20;
    *max_block = 0;
    if (n < at || memcmp(d, "Nettrace", 8) != 0)
        return;
    while (at + 15 <= n && d[at] == 0x05) {
        size_t name_len_pos = at + 1 + 10;
        uint32_t name_len = rd32(d + name_len_pos);
        if (name_len == 0 || name_len > 64 || name_len_pos + 4 + name_len + 1 > n)
            return;
        add_field(out, name_len_pos, F_U32, 4);
        const char *name = (const char *)d + name_len_pos + 4;
        size_t after = name_len_pos + 4 + name_len + 1;
        if (name_len == 5 && memcmp(name, "Trace", 5) == 0) {
            at = after + 49;
            out->header_end = at;
            continue;
        }
        if (after + 4 > n)
            return;
        uint32_t size = rd32(d + after);
        add_field(out, after, F_U32, 4);
        size_t content = after + 4;
        content += (4 - (content & 3)) & 3;
        if (size > n || content + size + 1 > n)
            return;
        if (size > *max_block)
            *max_block = size;
        add_block(out, (block_span){ at, after, content, content + size + 1,
                                     name_len == 13 && memcmp(name, "MetadataBlock", 13) == 0 });
        const uint8_t *c = d + content;
        if ((name_len == 10 && memcmp(name, "EventBlock", 10) == 0) ||
            (name_len == 13 && memcmp(name, "MetadataBlock", 13) == 0)) {
            if (size >= 4)
                add_field(out, content, F_U16, 2);
        } else if (name_len == 10 && memcmp(name, "StackBlock", 10) == 0 && size >= 8) {
            add_field(out, content + 4, F_U32, 4);
            uint32_t count = rd32(c + 4);
            size_t s = 8;
            for (uint32_t i = 0; i < count && s + 4 <= size; i++) {
                add_field(out, content + s, F_U32, 4);
                s += 4 + (size_t)rd32(c + s);
            }
        } else if (name_len == 7 && memcmp(name, "SPBlock", 7) == 0 && size >= 12) {
            add_field(out, content + 8, F_U32, 4);
        }
        at = content + size + 1;
    }
}

/* Event payload sizes: the parser decodes a whole-buffer feed in place, so
 * the payload pointers point into the input; the size precedes the payload
 * (a u32 in uncompressed blobs, a varint in compressed ones). */
typedef struct payload_ctx {
    const uint8_t *base;
    size_t len;
    field_list *out;
} payload_ctx;

static int find_payload_size(void *u, const nt_event *ev)
{
    payload_ctx *pc = u;
    if (!ev->payload || ev->payload < pc->base || ev->payload > pc->base + pc->len)
        return 0;
    size_t at = (size_t)(ev->payload - pc->base);
    if (at >= 4 && rd32(pc->base + at - 4) == ev->payload_size && ev->offset + 80 <= at) {
        add_field(pc->out, at - 4, F_U32, 4);
        return 0;
    }
    for (uint8_t w = 1; w <= 5 && w <= at; w++) {
        const uint8_t *v = pc->base + at - w;
        uint64_t x = 0;
        bool ok = true;
        for (uint8_t i = 0; i < w; i++) {
            x |= (uint64_t)(v[i] & 0x7f) << (7 * i);
            if (((v[i] & 0x80) != 0) != (i + 1 < w))
                ok = false;
        }
        if (ok && x == ev->payload_size) {
            add_field(pc->out, at - w, F_VARINT, w);
            break;
        }
    }
    return 0;
}

static void find_length_fields(const uint8_t *d, size_t n, field_list *out, size_t *max_block)
{
    walk_framing(d, n, out, max_block);
    payload_ctx pc = { d, n, out };
    nt_callbacks cb = { 0 };
    cb.event = find_payload_size;
    nt_parse_buffer(d, n, &cb, &pc, NULL, NULL, 0);
}

/* ---- the checks ----------------------------------------------------------- */

static double budget_scale(void)
{
    const char *e = getenv("NETTRACE_HOSTILE_ITERATIONS");
    double v = e && *e ? atof(e) : 1.0;
    return v > 0 ? v : 1.0;
}

typedef struct file_check {
    const trace_file *f;
    nt_limits lim;
    size_t bound;
    double sec_per_byte; /* valid parse */
    uint64_t runs;
    double worst_ratio;
    uint8_t *scratch;
    uint8_t *splice; /* room for a spliced stream: never longer than the file + padding */
    uint64_t rng;
} file_check;

static uint64_t rnd(file_check *c)
{
    uint64_t x = c->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c->rng = x;
    return x;
}

/* Slack for timer granularity and cache effects on tiny inputs. */
#define TIME_RATIO 25.0
#define TIME_SLACK 0.010

static void check(file_check *c, const uint8_t *d, size_t n, const char *what, size_t where)
{
    outcome o = parse(d, n, &c->lim);
    c->runs++;
    cr_assert(defined_status(o.status), "%s: %s at %zu: status %d", c->f->path, what, where, (int)o.status);
    cr_assert(o.err_offset <= n, "%s: %s at %zu: error offset %llu beyond %zu bytes", c->f->path, what, where,
              (unsigned long long)o.err_offset, n);
    cr_assert(o.peak <= c->bound, "%s: %s at %zu: memory peak %zu above the limits' bound %zu", c->f->path, what,
              where, o.peak, c->bound);
    double allowed = TIME_RATIO * c->sec_per_byte * (double)(n ? n : 1) + TIME_SLACK;
    double ratio = o.cpu / (c->sec_per_byte * (double)(n ? n : 1) + TIME_SLACK / TIME_RATIO);
    if (ratio > c->worst_ratio)
        c->worst_ratio = ratio;
    if (o.cpu > allowed) {
        /* One retry: a single slow run can be a preemption. */
        o = parse(d, n, &c->lim);
        cr_assert(o.cpu <= allowed, "%s: %s at %zu: %.2f ms for %zu bytes, more than %.0fx the valid parse rate",
                  c->f->path, what, where, o.cpu * 1e3, n, TIME_RATIO);
    }
}

/* Limits for the hostile runs: the block limit fitted to the file (so a
 * mutated block size meets it), the tables well below the defaults; the valid
 * file must still parse as it does under the defaults, or the defaults are used. */
static void prepare(file_check *c, const trace_file *f, size_t max_block)
{
    memset(c, 0, sizeof *c);
    c->f = f;
    nt_limits_default(&c->lim);
    uint32_t blk = 65536;
    while (blk < max_block && blk < NT_DEFAULT_MAX_BLOCK_BYTES)
        blk *= 2;
    nt_limits tight = c->lim;
    tight.max_block_bytes = blk;
    tight.max_metadata = 1u << 14;
    tight.max_metadata_bytes = 1u << 22;
    tight.max_stacks = 1u << 18;
    tight.max_stack_frames = 1u << 21;
    tight.max_threads = 1u << 14;
    outcome d = parse(f->data, f->len, NULL), t = parse(f->data, f->len, &tight);
    if (d.status == t.status && d.err_offset == t.err_offset)
        c->lim = tight;
    c->bound = fuzz_peak_bound(&c->lim);
    double best = 1e9;
    for (int i = 0; i < 3; i++) {
        outcome o = parse(f->data, f->len, &c->lim);
        if (o.cpu < best)
            best = o.cpu;
    }
    c->sec_per_byte = best / (double)(f->len ? f->len : 1);
    c->rng = 0x9E3779B97F4A7C15ull ^ f->len;
    c->scratch = malloc(f->len ? f->len : 1);
    c->splice = malloc(f->len + 4096);
    cr_assert_not_null(c->scratch);
    cr_assert_not_null(c->splice);
    memcpy(c->scratch, f->data, f->len);
}

static void report(const char *test, file_check *c, uint64_t *total_runs, double *worst)
{
    *total_runs += c->runs;
    if (c->worst_ratio > *worst)
        *worst = c->worst_ratio;
    fprintf(stderr, "test_hostile: %s: %s: %llu parses, slowest %.1fx the valid parse rate\n", test, c->f->path,
                (unsigned long long)c->runs, c->worst_ratio);
    free(c->scratch);
    free(c->splice);
}

/* Files up to this size get exhaustive treatment; larger ones a sample sized
 * by a per-file budget of parsed bytes. */
#define SMALL_FILE 16384u
#define BYTE_BUDGET (12.0 * 1024 * 1024)

static size_t sample_count(size_t len, double per_parse_fraction, size_t minimum)
{
    double cost = (double)len * per_parse_fraction;
    double k = BYTE_BUDGET * budget_scale() / (cost > 1 ? cost : 1);
    return k < (double)minimum ? minimum : (size_t)k;
}

/* A large file is not parsed whole for each mutation: the parse runs over a
 * splice of the (mutated) bytes laid out by the original framing: the header,
 * every metadata block, and the blocks from one block before the mutation to
 * two after it, each re-padded for its new offset, then the end tag.  The
 * mutated block is parsed in its context (its metadata and stacks), at a
 * cost of a few blocks instead of the whole file.  Small files are parsed
 * whole.  Returns the bytes to parse (c->splice or the scratch itself). */
static const uint8_t *splice(file_check *c, const field_list *l, size_t max_block, size_t at, size_t *len)
{
    if (c->f->len <= SMALL_FILE || !l->nblocks || !l->header_end) {
        *len = c->f->len;
        return c->scratch;
    }
    const uint8_t *d = c->scratch;
    size_t lo = at > max_block ? at - max_block : 0, hi = at + 2 * max_block;
    size_t n = 0;
    memcpy(c->splice, d, l->header_end);
    n = l->header_end;
    for (size_t i = 0; i < l->nblocks; i++) {
        const block_span *b = &l->blocks[i];
        bool near = b->end > lo && b->start < hi;
        if (!near && !b->metadata)
            continue;
        size_t head = b->size_pos + 4 - b->start;
        memcpy(c->splice + n, d + b->start, head);
        n += head;
        while (n & 3)
            c->splice[n++] = 0;
        memcpy(c->splice + n, d + b->content, b->end - b->content);
        n += b->end - b->content;
    }
    c->splice[n++] = 0x01; /* end of stream */
    *len = n;
    return c->splice;
}

/* Mutations for a large file: the byte budget over the cost of one spliced
 * parse (metadata blocks + about four blocks), at most what a small file gets. */
static size_t spliced_count(const field_list *l, size_t len, size_t max_block)
{
    size_t meta = 0;
    for (size_t i = 0; i < l->nblocks; i++)
        if (l->blocks[i].metadata)
            meta += l->blocks[i].end - l->blocks[i].start;
    double cost = (double)(meta + 4 * max_block + l->header_end);
    if (cost > (double)len)
        cost = (double)len;
    size_t k = sample_count((size_t)cost, 1.0, 16);
    size_t most = (size_t)(2000 * budget_scale());
    return k < most ? k : most;
}

static field_list fields_of(const trace_file *f, size_t *max_block)
{
    field_list l = { 0 };
    find_length_fields(f->data, f->len, &l, max_block);
    return l;
}

TestSuite(hostile, .init = load_corpus, .fini = free_corpus, .timeout = 600);

LTest(hostile, corpus_is_present)
{
    size_t own = 0;
    for (size_t i = 0; i < nfiles; i++)
        own += strstr(files[i].path, "/corpus/fuzz/parser/") != NULL;
    cr_assert_geq(own, 10, "the seed corpus corpus/fuzz/parser holds %zu files", own);
}

LTest(hostile, every_truncation_point)
{
    uint64_t total = 0;
    double worst = 0;
    for (size_t i = 0; i < nfiles; i++) {
        const trace_file *f = &files[i];
        size_t max_block;
        field_list l = fields_of(f, &max_block);
        file_check c;
        prepare(&c, f, max_block);
        if (f->len <= SMALL_FILE) {
            for (size_t n = 0; n <= f->len; n++)
                check(&c, f->data, n, "truncation", n);
        } else {
            /* The header region byte by byte, then points at and just after
             * framing fields, evenly spaced points and random points. */
            for (size_t n = 0; n <= 256; n++)
                check(&c, f->data, n, "truncation", n);
            size_t k = sample_count(f->len, 0.5, 8);
            for (size_t j = 0; j < k && l.n; j++) {
                size_t n = l.v[(size_t)(rnd(&c) % l.n)].pos + (size_t)(rnd(&c) % 3);
                if (n <= f->len)
                    check(&c, f->data, n, "truncation at a field", n);
            }
            for (size_t j = 1; j <= k; j++) {
                size_t n = (size_t)((double)f->len * (double)j / (double)(k + 1));
                check(&c, f->data, n, "truncation", n);
                n = (size_t)(rnd(&c) % (f->len + 1));
                check(&c, f->data, n, "truncation", n);
            }
        }
        report("truncation", &c, &total, &worst);
        free_fields(&l);
    }
    fprintf(stderr, "test_hostile: truncation: %llu parses over %zu files, slowest %.1fx\n", (unsigned long long)total, nfiles, worst);
}

LTest(hostile, random_byte_flips)
{
    uint64_t total = 0;
    double worst = 0;
    for (size_t i = 0; i < nfiles; i++) {
        const trace_file *f = &files[i];
        if (f->len == 0)
            continue;
        size_t max_block;
        field_list l = fields_of(f, &max_block);
        file_check c;
        prepare(&c, f, max_block);
        size_t k = f->len <= SMALL_FILE ? (size_t)(2000 * budget_scale()) : spliced_count(&l, f->len, max_block);
        for (size_t j = 0; j < k; j++) {
            size_t at[4];
            uint8_t old[4];
            int m = 1 + (int)(rnd(&c) % 4);
            for (int q = 0; q < m; q++) {
                /* further flips land near the first (a large file's splice holds their block) */
                at[q] = q == 0 ? (size_t)(rnd(&c) % f->len) : (at[0] + (size_t)(rnd(&c) % 64)) % f->len;
                old[q] = c.scratch[at[q]];
                uint64_t r = rnd(&c);
                c.scratch[at[q]] = r & 1 ? (uint8_t)(old[q] ^ (1u << ((r >> 1) & 7))) : (uint8_t)(r >> 8);
            }
            size_t n;
            const uint8_t *in = splice(&c, &l, max_block, at[0], &n);
            check(&c, in, n, "byte flip", at[0]);
            for (int q = m - 1; q >= 0; q--)
                c.scratch[at[q]] = old[q];
        }
        report("flips", &c, &total, &worst);
        free_fields(&l);
    }
    fprintf(stderr, "test_hostile: flips: %llu parses over %zu files, slowest %.1fx\n", (unsigned long long)total, nfiles, worst);
}

static void put_value(uint8_t *p, const length_field *fl, uint64_t v)
{
    switch (fl->kind) {
    case F_U32:
        for (int i = 0; i < 4; i++)
            p[i] = (uint8_t)(v >> (8 * i));
        break;
    case F_U16:
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
        break;
    case F_VARINT: /* same width, so the rest of the blob stays in place */
        for (uint8_t i = 0; i < fl->width; i++) {
            p[i] = (uint8_t)((v >> (7 * i)) & 0x7f);
            if (i + 1 < fl->width)
                p[i] |= 0x80;
        }
        break;
    }
}

static uint64_t get_value(const uint8_t *p, const length_field *fl)
{
    uint64_t v = 0;
    switch (fl->kind) {
    case F_U32: return rd32(p);
    case F_U16: return (uint64_t)p[0] | (uint64_t)p[1] << 8;
    case F_VARINT:
        for (uint8_t i = 0; i < fl->width; i++)
            v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        return v;
    }
    return v;
}

LTest(hostile, length_field_mutations)
{
    uint64_t total = 0;
    double worst = 0;
    size_t fields_seen = 0;
    for (size_t i = 0; i < nfiles; i++) {
        const trace_file *f = &files[i];
        size_t max_block;
        field_list l = fields_of(f, &max_block);
        fields_seen += l.n;
        if (!l.n) {
            free_fields(&l);
            continue;
        }
        file_check c;
        prepare(&c, f, max_block);
        size_t k = f->len <= SMALL_FILE ? (size_t)(2000 * budget_scale()) : spliced_count(&l, f->len, max_block);
        for (size_t j = 0; j < k; j++) {
            const length_field *fl = &l.v[k <= l.n ? (size_t)(rnd(&c) % l.n) : j % l.n];
            uint8_t *p = c.scratch + fl->pos;
            uint8_t old[8];
            memcpy(old, p, fl->width);
            uint64_t v = get_value(p, fl);
            uint64_t r = rnd(&c);
            uint64_t choices[] = { 0, 1, v - 1, v + 1, v + 4, v - 4, v * 2, v / 2, 0x7FFFFFFFu, 0x80000000u,
                                   0xFFFFFFFFu, 0xFFFFu, 19, 20, 21, v ^ (1ull << ((r >> 8) % 32)), r >> 32,
                                   (r >> 32) % 256 };
            put_value(p, fl, choices[r % (sizeof choices / sizeof *choices)]);
            size_t n;
            const uint8_t *in = splice(&c, &l, max_block, fl->pos, &n);
            check(&c, in, n, "length field", fl->pos);
            memcpy(p, old, fl->width);
        }
        report("lengths", &c, &total, &worst);
        free_fields(&l);
    }
    cr_assert_gt(fields_seen, 0, "no length fields found in the corpus");
    fprintf(stderr, "test_hostile: lengths: %llu parses over %zu fields, slowest %.1fx\n", (unsigned long long)total, fields_seen,
                worst);
}
