/* The parser against an independent reader: for every trace in corpus/ and
 * ../shared/corpus, what libnettrace reports must equal what Microsoft's
 * TraceEvent read from the same file, as recorded by tools/oracle in
 * tests/expected/traceevent-counts.tsv (rows: file, section, name, value;
 * tools/oracle/README.md describes every row).
 *
 * Compared: the header fields, total events, events per (provider, event id,
 * version), thread samples by sample type and by sampled thread, dropped
 * events, and for each verbose method event type its count plus sums of
 * MethodID, start address, size and name bytes (which catch decoding errors
 * a bare count would not). */
#include "support.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The expected table                                                        */
/* ------------------------------------------------------------------------ */

/* traceevent-counts.tsv: file, section, name, value.
 * traceevent-top.tsv: file, kind (section), module (name), method (value),
 * exclusive, inclusive. */
typedef struct row {
    const char *file, *section, *name, *value, *excl, *incl;
} row;

typedef struct table {
    uint8_t *text; /* the TSV, NUL-separated in place */
    row *rows;
    size_t count;
} table;

static void table_load_named(table *t, const char *name, int columns)
{
    const char *top = getenv("top_srcdir");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/expected/%s", top && *top ? top : ".", name);
    size_t len;
    cr_assert(ts_read_file(path, &t->text, &len), "cannot read %s", path);
    /* Room for the final NUL: ts_read_file gives an exact-size buffer. */
    uint8_t *text = realloc(t->text, len + 1);
    cr_assert_not_null(text);
    t->text = text;
    text[len] = 0;
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    t->rows = calloc(lines, sizeof *t->rows);
    cr_assert_not_null(t->rows);
    t->count = 0;
    char *line = (char *)text;
    while (line && *line) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        if (*line != '#' && *line) {
            char *f[6] = { 0 };
            int n = 0;
            for (char *p = line; n < columns && p; n++) {
                f[n] = p;
                p = strchr(p, '\t');
                if (p)
                    *p++ = 0;
            }
            cr_assert_eq(n, columns, "malformed row in %s: %s", name, line);
            t->rows[t->count++] = (row){ f[0], f[1], f[2], f[3], f[4], f[5] };
        }
        line = next;
    }
    cr_assert_gt(t->count, 0, "%s holds no rows", path);
}

static void table_load(table *t)
{
    table_load_named(t, "traceevent-counts.tsv", 4);
}

static void table_free(table *t)
{
    free(t->rows);
    free(t->text);
}

static const char *table_get(const table *t, const char *file, const char *section, const char *name)
{
    for (size_t i = 0; i < t->count; i++)
        if (!strcmp(t->rows[i].file, file) && !strcmp(t->rows[i].section, section) &&
            !strcmp(t->rows[i].name, name))
            return t->rows[i].value;
    return NULL;
}

static uint64_t num(const char *v)
{
    return strtoull(v, NULL, 10);
}

/* ------------------------------------------------------------------------ */
/* What libnettrace reports                                                  */
/* ------------------------------------------------------------------------ */

typedef struct type_count {
    char key[256]; /* provider:event_id:version */
    uint64_t count;
} type_count;

typedef struct method_tally {
    uint64_t count, start_sum, size_sum, id_sum, name_bytes;
} method_tally;

typedef struct seen {
    nt_trace_info info;
    bool have_info;
    type_count *types;
    size_t ntypes, captypes;
    /* metadata id -> index in types + 1 (0 = not yet looked up) */
    size_t *by_metadata;
    size_t nmeta;
    uint32_t *sample_tids; /* low 32 bits of each sample's thread id */
    size_t nsamples, capsamples;
    uint64_t sample_types[4]; /* 0,1,2 and "other" */
    method_tally methods[4];  /* by nt_record_event */
} seen;

static size_t type_index(seen *s, const nt_event *ev)
{
    char key[256];
    if (ev->desc)
        snprintf(key, sizeof key, "%s:%" PRIu32 ":%" PRIu32, ev->desc->provider, ev->desc->event_id,
                 ev->desc->version);
    else
        snprintf(key, sizeof key, "<undefined metadata %" PRIu32 ">", ev->metadata_id);
    for (size_t i = 0; i < s->ntypes; i++)
        if (!strcmp(s->types[i].key, key))
            return i;
    if (s->ntypes == s->captypes) {
        size_t cap = s->captypes ? 2 * s->captypes : 64;
        type_count *t = realloc(s->types, cap * sizeof *t);
        if (!t)
            return SIZE_MAX;
        s->types = t;
        s->captypes = cap;
    }
    memcpy(s->types[s->ntypes].key, key, sizeof key);
    s->types[s->ntypes].count = 0;
    return s->ntypes++;
}

static int on_trace(void *u, const nt_trace_info *info)
{
    seen *s = u;
    s->info = *info;
    s->have_info = true;
    return 0;
}

static int on_metadata(void *u, const nt_event_desc *d)
{
    /* A (re)definition: forget the cached key of this id. */
    seen *s = u;
    if (d->metadata_id < s->nmeta)
        s->by_metadata[d->metadata_id] = 0;
    return 0;
}

static int on_event(void *u, const nt_event *ev)
{
    seen *s = u;
    size_t idx;
    if (ev->metadata_id < (1u << 20)) {
        if (ev->metadata_id >= s->nmeta) {
            size_t n = (size_t)ev->metadata_id * 2 + 16;
            size_t *m = realloc(s->by_metadata, n * sizeof *m);
            if (!m)
                return 1;
            memset(m + s->nmeta, 0, (n - s->nmeta) * sizeof *m);
            s->by_metadata = m;
            s->nmeta = n;
        }
        if (!s->by_metadata[ev->metadata_id]) {
            idx = type_index(s, ev);
            if (idx == SIZE_MAX)
                return 1;
            s->by_metadata[ev->metadata_id] = idx + 1;
        }
        idx = s->by_metadata[ev->metadata_id] - 1;
    } else {
        idx = type_index(s, ev);
        if (idx == SIZE_MAX)
            return 1;
    }
    s->types[idx].count++;
    return 0;
}

static int on_sample(void *u, const nt_sample *smp)
{
    seen *s = u;
    if (s->nsamples == s->capsamples) {
        size_t cap = s->capsamples ? 2 * s->capsamples : 1024;
        uint32_t *t = realloc(s->sample_tids, cap * sizeof *t);
        if (!t)
            return 1;
        s->sample_tids = t;
        s->capsamples = cap;
    }
    s->sample_tids[s->nsamples++] = (uint32_t)smp->thread_id;
    s->sample_types[smp->type < 3 ? smp->type : 3]++;
    return 0;
}

static int on_method(void *u, const nt_method *m)
{
    seen *s = u;
    if ((unsigned)m->which > NT_RECORD_DC_END)
        return 1;
    method_tally *t = &s->methods[m->which];
    t->count++;
    t->start_sum += m->start_address;
    t->size_sum += m->size;
    t->id_sum += m->method_id;
    t->name_bytes += (m->declaring_type ? strlen(m->declaring_type) : 0) + (m->name ? strlen(m->name) : 0) +
                     (m->signature ? strlen(m->signature) : 0);
    return 0;
}

static void seen_free(seen *s)
{
    free(s->types);
    free(s->by_metadata);
    free(s->sample_tids);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------------------------ */
/* The comparison                                                            */
/* ------------------------------------------------------------------------ */

#define EXPECT_NUM(t, file, section, name, ours)                                                          \
    do {                                                                                                  \
        const char *v_ = table_get((t), (file), (section), (name));                                      \
        cr_expect_not_null(v_, "%s: no expected %s/%s row", (file), (section), (name));                 \
        if (v_)                                                                                           \
            cr_expect_eq((uint64_t)(ours), num(v_), "%s: %s %s: libnettrace %" PRIu64 ", TraceEvent %s", \
                         (file), (section), (name), (uint64_t)(ours), v_);                               \
    } while (0)

static const char *const METHOD_ROW[4] = { "load_verbose", "unload_verbose", "dc_start_verbose",
                                           "dc_end_verbose" };

static void compare_one(const table *t, const char *label, const char *path)
{
    uint8_t *data;
    size_t len;
    cr_assert(ts_read_file(path, &data, &len), "cannot read %s", path);

    /* The digest path, fed in odd-sized chunks, must agree on the totals too. */
    static const size_t chunks[] = { 4093, 17, 65536 };
    ts_digest d;
    ts_digest_init(&d);
    nt_status ds = ts_digest_feed(data, len, chunks, 3, NULL, &d, NULL);

    seen s;
    memset(&s, 0, sizeof s);
    nt_callbacks cb = { 0 };
    cb.trace = on_trace;
    cb.metadata = on_metadata;
    cb.event = on_event;
    cb.sample = on_sample;
    cb.method = on_method;
    nt_parser *p = nt_parser_new(&cb, &s, NULL, NULL);
    cr_assert_not_null(p);
    nt_status st = nt_parser_feed(p, data, len);
    if (st == NT_OK)
        st = nt_parser_finish(p);
    nt_parser_stats stats = { 0 };
    nt_parser_stats_get(p, &stats);
    cr_expect_eq(ds, st, "%s: chunked digest status %s, whole-buffer status %s", label, nt_status_name(ds),
                 nt_status_name(st));

    const char *expect_status = table_get(t, label, "status", "libnettrace");
    const char *te_status = table_get(t, label, "status", "status");
    cr_expect_not_null(te_status, "%s: no status row", label);
    if (expect_status) {
        /* A file TraceEvent reads but libnettrace deliberately does not (NetPerf). */
        cr_expect_str_eq(nt_status_name(st), expect_status, "%s: libnettrace status %s (%s), expected %s", label,
                         nt_status_name(st), nt_parser_message(p), expect_status);
        goto done;
    }
    cr_expect_str_eq(te_status ? te_status : "", "ok", "%s: TraceEvent could not read it: %s", label,
                     te_status ? te_status : "?");
    cr_expect_eq(st, NT_OK, "%s: libnettrace status %s: %s", label, nt_status_name(st), nt_parser_message(p));
    cr_expect(s.have_info, "%s: no trace header reported", label);

    /* Header. */
    EXPECT_NUM(t, label, "header", "pointer_size", s.info.pointer_size);
    EXPECT_NUM(t, label, "header", "processor_count", s.info.processor_count);
    EXPECT_NUM(t, label, "header", "process_id", s.info.process_id);
    EXPECT_NUM(t, label, "header", "qpc_frequency", s.info.qpc_frequency);
    EXPECT_NUM(t, label, "header", "sync_qpc", s.info.sync_qpc);
    EXPECT_NUM(t, label, "header", "sampling_interval_ns", s.info.sampling_interval_ns);
    char utc[64];
    const nt_systemtime *w = &s.info.sync_time_utc;
    snprintf(utc, sizeof utc, "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ", w->year, w->month, w->day, w->hour, w->minute,
             w->second, w->milliseconds);
    const char *te_utc = table_get(t, label, "header", "sync_time_utc");
    cr_expect_str_eq(utc, te_utc ? te_utc : "", "%s: sync time %s, TraceEvent %s", label, utc, te_utc ? te_utc : "?");

    /* Totals. */
    EXPECT_NUM(t, label, "count", "events", stats.events);
    EXPECT_NUM(t, label, "count", "events", d.events);
    EXPECT_NUM(t, label, "count", "events_lost", stats.events_dropped);
    EXPECT_NUM(t, label, "count", "thread_samples", stats.samples);
    EXPECT_NUM(t, label, "count", "thread_samples", d.samples);
    EXPECT_NUM(t, label, "count", "event_types", s.ntypes);

    /* Events per (provider, id, version): every type TraceEvent saw, with the
     * same count; with equal numbers of types, none of ours is extra. */
    for (size_t i = 0; i < s.ntypes; i++) {
        const char *v = table_get(t, label, "event", s.types[i].key);
        cr_expect_not_null(v, "%s: libnettrace has %" PRIu64 " events of %s, TraceEvent none", label,
                           s.types[i].count, s.types[i].key);
        if (v)
            cr_expect_eq(s.types[i].count, num(v), "%s: %s: libnettrace %" PRIu64 ", TraceEvent %s", label,
                         s.types[i].key, s.types[i].count, v);
    }

    /* Samples by type and by thread. */
    for (uint32_t ty = 0; ty < 4; ty++) {
        char name[16];
        snprintf(name, sizeof name, "%u", ty);
        const char *v = table_get(t, label, "sample_type", name);
        cr_expect_eq(s.sample_types[ty], v ? num(v) : 0, "%s: samples of type %u: libnettrace %" PRIu64 ", TraceEvent %s",
                     label, ty, s.sample_types[ty], v ? v : "0");
    }
    if (s.nsamples)
        qsort(s.sample_tids, s.nsamples, sizeof *s.sample_tids, cmp_u32);
    size_t threads = 0;
    for (size_t i = 0; i < s.nsamples;) {
        size_t j = i;
        while (j < s.nsamples && s.sample_tids[j] == s.sample_tids[i])
            j++;
        char name[16];
        snprintf(name, sizeof name, "%" PRIu32, s.sample_tids[i]);
        EXPECT_NUM(t, label, "thread", name, j - i);
        threads++;
        i = j;
    }
    EXPECT_NUM(t, label, "count", "sampled_threads", threads);

    /* Verbose method records. */
    for (int m = 0; m < 4; m++) {
        char name[64];
        EXPECT_NUM(t, label, "method", METHOD_ROW[m], s.methods[m].count);
        snprintf(name, sizeof name, "%s.start_sum", METHOD_ROW[m]);
        EXPECT_NUM(t, label, "method", name, s.methods[m].start_sum);
        snprintf(name, sizeof name, "%s.size_sum", METHOD_ROW[m]);
        EXPECT_NUM(t, label, "method", name, s.methods[m].size_sum);
        snprintf(name, sizeof name, "%s.id_sum", METHOD_ROW[m]);
        EXPECT_NUM(t, label, "method", name, s.methods[m].id_sum);
        snprintf(name, sizeof name, "%s.name_bytes", METHOD_ROW[m]);
        EXPECT_NUM(t, label, "method", name, s.methods[m].name_bytes);
    }

done:
    nt_parser_free(p);
    seen_free(&s);
    free(data);
}

/* Every file of one corpus that the table lists (prefix "corpus/" or
 * "shared/"); returns how many were compared. */
static size_t compare_corpus(const table *t, const char *prefix, const char *dir)
{
    size_t n = 0;
    const char *last = "";
    size_t plen = strlen(prefix);
    for (size_t i = 0; i < t->count; i++) {
        const char *label = t->rows[i].file;
        if (strncmp(label, prefix, plen) || !strcmp(label, last))
            continue;
        last = label;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, label + plen);
        compare_one(t, label, path);
        n++;
    }
    return n;
}

Test(oracle, own_corpus)
{
    table t;
    table_load(&t);
    size_t n = compare_corpus(&t, "corpus/", ts_own_corpus());
    /* corpus/ ships spin-threads, spin-threads-dotnet-trace and call-tree. */
    cr_expect_geq(n, 3, "only %zu own traces in the expected table", n);
    table_free(&t);
}

Test(oracle, shared_corpus)
{
    const char *dir = ts_shared_corpus();
    if (!dir)
        cr_skip_test("../shared/corpus is absent (set NETTRACE_SHARED_CORPUS): reference traces not compared");
    table t;
    table_load(&t);
    size_t n = compare_corpus(&t, "shared/", dir);
    cr_expect_geq(n, 14, "only %zu shared traces in the expected table", n);
    table_free(&t);
}

/* ------------------------------------------------------------------------ */
/* Facts of the project's own recordings (corpus/README.md)                  */
/* ------------------------------------------------------------------------ */

/* SpinThreads: each thread writes Workloads-SpinThreads/ThreadNamed(name)
 * from itself, so the event's thread id names a sampled thread. */
typedef struct named {
    uint32_t pid;
    uint64_t tid[3];
    char name[3][32];
    int count;
    uint64_t samples[3], external[3];
} named;

static int named_trace(void *u, const nt_trace_info *info)
{
    ((named *)u)->pid = info->process_id;
    return 0;
}

static int named_event(void *u, const nt_event *ev)
{
    named *n = u;
    if (!ev->desc || strcmp(ev->desc->provider, "Workloads-SpinThreads") || ev->desc->event_id != 1)
        return 0;
    if (n->count == 3)
        return 1; /* more than the three the workload writes */
    /* Payload: the name as NUL-terminated UTF-16LE (ASCII here). */
    char *out = n->name[n->count];
    size_t k = 0;
    for (uint32_t i = 0; i + 1 < ev->payload_size && k + 1 < sizeof n->name[0]; i += 2) {
        uint16_t c = (uint16_t)(ev->payload[i] | ev->payload[i + 1] << 8);
        if (!c)
            break;
        out[k++] = c < 0x80 ? (char)c : '?';
    }
    out[k] = 0;
    n->tid[n->count++] = ev->thread_id;
    return 0;
}

static int named_sample(void *u, const nt_sample *s)
{
    named *n = u;
    for (int i = 0; i < n->count; i++)
        if (n->tid[i] == s->thread_id) {
            n->samples[i]++;
            n->external[i] += s->type == NT_SAMPLE_EXTERNAL;
        }
    return 0;
}

static void check_spin_threads(const char *file)
{
    uint8_t *data;
    size_t len;
    cr_assert(ts_read_file(ts_path(ts_own_corpus(), file), &data, &len), "cannot read corpus/%s", file);
    named n;
    memset(&n, 0, sizeof n);
    nt_callbacks cb = { 0 };
    cb.trace = named_trace;
    cb.event = named_event;
    cb.sample = named_sample;
    char msg[256];
    nt_status st = nt_parse_buffer(data, len, &cb, &n, NULL, msg, sizeof msg);
    cr_assert_eq(st, NT_OK, "%s: %s", file, msg);
    cr_assert_eq(n.count, 3, "%s: %d ThreadNamed events", file, n.count);
    /* The names arrive before the workers spin, so every sample after them
     * is counted; each thread ran the whole 2 s at 1 ms sampling. */
    for (int i = 0; i < 3; i++) {
        cr_expect_geq(n.samples[i], 1000, "%s: thread %s (%" PRIu64 ") has %" PRIu64 " samples", file, n.name[i],
                      n.tid[i], n.samples[i]);
        if (!strcmp(n.name[i], "main")) {
            cr_expect_eq(n.tid[i], n.pid, "%s: main thread %" PRIu64 " is not the process id %" PRIu32, file,
                         n.tid[i], n.pid);
            /* Waiting in Thread.Join: outside managed code. */
            cr_expect_geq(n.external[i] * 10, n.samples[i] * 9, "%s: main thread: %" PRIu64 " of %" PRIu64
                          " samples external", file, n.external[i], n.samples[i]);
        } else {
            cr_expect(!strcmp(n.name[i], "alpha-worker") || !strcmp(n.name[i], "beta-worker"), "%s: name %s", file,
                      n.name[i]);
            cr_expect_eq(n.external[i], 0, "%s: spinning thread %s has %" PRIu64 " external samples", file, n.name[i],
                         n.external[i]);
        }
    }
    free(data);
}

Test(oracle, spin_threads_named_threads)
{
    check_spin_threads("spin-threads.nettrace");
    check_spin_threads("spin-threads-dotnet-trace.nettrace");
}

/* ------------------------------------------------------------------------ */
/* Stacks: tests/expected/traceevent-top.tsv (TraceEvent's TraceLog)          */
/* ------------------------------------------------------------------------ */

/* For every sampled trace: how many samples, how many carry a non-empty
 * stack, and how many frames they hold in all.  This checks that stack ids
 * resolve to the same IP lists as TraceLog's across sequence points. */
typedef struct stack_tally {
    uint64_t samples, with_stack, frames;
} stack_tally;

static int tally_sample(void *u, const nt_sample *s)
{
    stack_tally *t = u;
    t->samples++;
    if (s->stack && s->stack->count) {
        t->with_stack++;
        t->frames += s->stack->count;
    }
    return 0;
}

static size_t compare_stacks(const table *t, const char *prefix, const char *dir)
{
    size_t files = 0;
    size_t plen = strlen(prefix);
    for (size_t i = 0; i < t->count; i++) {
        const row *r = &t->rows[i];
        if (strncmp(r->file, prefix, plen) || strcmp(r->section, "samples"))
            continue;
        const row *fr = NULL;
        for (size_t j = 0; j < t->count; j++)
            if (!strcmp(t->rows[j].file, r->file) && !strcmp(t->rows[j].section, "frames"))
                fr = &t->rows[j];
        cr_assert_not_null(fr, "%s: no frames row", r->file);
        uint8_t *data;
        size_t len;
        cr_assert(ts_read_file(ts_path(dir, r->file + plen), &data, &len), "cannot read %s", r->file);
        stack_tally st = { 0 };
        nt_callbacks cb = { 0 };
        cb.sample = tally_sample;
        char msg[256];
        nt_status s = nt_parse_buffer(data, len, &cb, &st, NULL, msg, sizeof msg);
        cr_expect_eq(s, NT_OK, "%s: %s", r->file, msg);
        cr_expect_eq(st.samples, num(r->excl), "%s: %" PRIu64 " samples, TraceLog %s", r->file, st.samples, r->excl);
        cr_expect_eq(st.with_stack, num(r->incl), "%s: %" PRIu64 " samples with a stack, TraceLog %s", r->file,
                     st.with_stack, r->incl);
        cr_expect_eq(st.frames, num(fr->excl), "%s: %" PRIu64 " frames, TraceLog %s", r->file, st.frames, fr->excl);
        free(data);
        files++;
    }
    return files;
}

Test(oracle, own_corpus_stacks)
{
    table t;
    table_load_named(&t, "traceevent-top.tsv", 6);
    size_t n = compare_stacks(&t, "corpus/", ts_own_corpus());
    cr_expect_geq(n, 3, "only %zu own traces in traceevent-top.tsv", n);
    table_free(&t);
}

Test(oracle, shared_corpus_stacks)
{
    const char *dir = ts_shared_corpus();
    if (!dir)
        cr_skip_test("../shared/corpus is absent (set NETTRACE_SHARED_CORPUS): reference stacks not compared");
    table t;
    table_load_named(&t, "traceevent-top.tsv", 6);
    size_t n = compare_stacks(&t, "shared/", dir);
    cr_expect_geq(n, 8, "only %zu shared traces in traceevent-top.tsv", n);
    table_free(&t);
}
