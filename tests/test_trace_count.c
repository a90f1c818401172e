/* Traces that count their samples (nt_trace_options.aggregate) give top,
 * folded (by count and by time) and pprof exactly what traces that keep
 * every sample give: on every corpus trace and on hand-made streams where
 * the resolution of one stack changes over time (code unloaded and its
 * memory reused, samples out of order around it).  And their memory follows
 * the distinct stacks: 10 M samples on 24 stacks stay under 10 MiB. */
#include "nettrace_trace.h"
#include "nettrace_writer.h"
#include "ltest.h"
#include "support.h"
#include "trace_build.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct buf {
    char *d;
    size_t n, cap;
} buf;

static int buf_write(void *user, const void *data, size_t len)
{
    buf *b = user;
    if (b->n + len > b->cap) {
        size_t cap = (b->n + len) * 2;
        char *d = realloc(b->d, cap);
        if (!d)
            return 1;
        b->d = d;
        b->cap = cap;
    }
    memcpy(b->d + b->n, data, len);
    b->n += len;
    return 0;
}

static void same_export(const char *what, nt_status (*ex)(const nt_trace *, const nt_export_options *, nt_sink_fn, void *),
                        const nt_trace *full, const nt_trace *counted, const nt_export_options *opt)
{
    buf a = { 0 }, b = { 0 };
    cr_assert_eq(ex(full, opt, buf_write, &a), NT_OK);
    cr_assert_eq(ex(counted, opt, buf_write, &b), NT_OK);
    cr_assert(a.n == b.n && (a.n == 0 || memcmp(a.d, b.d, a.n) == 0), "%s differs (%zu and %zu bytes)", what, a.n, b.n);
    free(a.d);
    free(b.d);
}

static void same_top(const nt_trace *full, const nt_trace *counted, const nt_top_options *opt)
{
    nt_top *a, *b;
    cr_assert_eq(nt_top_build(full, opt, &a), NT_OK);
    cr_assert_eq(nt_top_build(counted, opt, &b), NT_OK);
    cr_assert_eq(a->table_count, b->table_count);
    for (size_t i = 0; i < a->table_count; i++) {
        const nt_top_table *x = &a->tables[i], *y = &b->tables[i];
        cr_assert(x->samples == y->samples && x->empty == y->empty && x->row_count == y->row_count &&
                      x->thread_id == y->thread_id,
                  "table %zu", i);
        for (size_t r = 0; r < x->row_count; r++)
            cr_assert(strcmp(x->rows[r].name, y->rows[r].name) == 0 && x->rows[r].exclusive == y->rows[r].exclusive &&
                          x->rows[r].inclusive == y->rows[r].inclusive,
                      "row %zu: %s", r, x->rows[r].name);
    }
    nt_top_free(a);
    nt_top_free(b);
}

/* Both ways from the same bytes, every consumer compared; returns whether counting had to fall back. */
static bool compare(const void *data, size_t len, nt_status want)
{
    nt_trace *full = NULL, *counted = NULL;
    nt_trace_options o = { .aggregate = true };
    cr_assert_eq(nt_trace_from_buffer(data, len, NULL, &full, NULL, 0), want);
    cr_assert_eq(nt_trace_from_buffer(data, len, &o, &counted, NULL, 0), want);
    cr_assert(full && counted);
    nt_trace_stats fs = { 0 }, cs = { 0 };
    nt_trace_stats_get(full, &fs);
    nt_trace_stats_get(counted, &cs);
    cr_assert_eq(fs.samples, cs.samples);
    cr_assert_eq(fs.frames, cs.frames);
    cr_assert_eq(fs.resolved_frames, cs.resolved_frames);
    cr_assert_eq(fs.stacks, cs.stacks);
    /* Whether the counts needed a second read: a counting builder says so itself. */
    nt_trace_builder *bd = nt_trace_builder_new(NULL);
    nt_trace_builder_count_samples(bd);
    nt_callbacks cb = { 0 };
    nt_trace_builder_callbacks(&cb);
    nt_parser *ps = nt_parser_new(&cb, bd, NULL, NULL);
    nt_status st = nt_parser_feed(ps, data, len);
    st = st == NT_OK ? nt_parser_finish(ps) : st;
    nt_trace *direct = NULL;
    cr_assert_eq(nt_trace_builder_finish(bd, ps, st, &direct), NT_OK);
    bool fell_back = !nt_trace_counts_exact(direct);
    nt_trace_free(direct);
    nt_parser_free(ps);
    nt_export_options eo = { 0 };
    same_export("folded", nt_export_folded, full, counted, &eo);
    same_export("pprof", nt_export_pprof, full, counted, &eo);
    eo.weight = NT_WEIGHT_TIME;
    same_export("folded by time", nt_export_folded, full, counted, &eo);
    eo.filter.managed_only = true;
    same_export("folded by time, managed only", nt_export_folded, full, counted, &eo);
    same_export("pprof, managed only", nt_export_pprof, full, counted, &eo);
    nt_top_options to = { 0 };
    same_top(full, counted, &to);
    to.by_thread = true;
    to.filter.managed_only = true;
    same_top(full, counted, &to);
    nt_trace_free(full);
    nt_trace_free(counted);
    return fell_back;
}

static void compare_dir(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    int n = 0, n_counted = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l < 9 || strcmp(e->d_name + l - 9, ".nettrace") != 0)
            continue;
        uint8_t *data;
        size_t len;
        cr_assert(ts_read_file(ts_path(dir, e->d_name), &data, &len));
        nt_trace *t = NULL;
        nt_status want = nt_trace_from_buffer(data, len, NULL, &t, NULL, 0);
        if (t) {
            bool again = compare(data, len, want);
            cr_log_info("%s: %s", e->d_name, again ? "read again sample by sample" : "counted");
            n_counted += !again;
            nt_trace_free(t);
            n++;
        }
        free(data);
    }
    closedir(d);
    cr_assert_gt(n, 0);
    cr_assert_gt(n_counted, 0, "counting was exercised, not only its fallback");
}

Test(trace_count, every_corpus_trace_counts_as_it_keeps)
{
    compare_dir(ts_own_corpus());
    const char *shared = ts_shared_corpus();
    if (!shared)
        cr_skip_test("../shared/corpus is absent (set NETTRACE_SHARED_CORPUS): only corpus/ compared");
    compare_dir(shared);
}

static const uint64_t MOD = 0x7700, ASM = 0x8800;

/* Code at one address loaded and unloaded again and again, a sample in
 * each life, and other threads sampling steady code around it. */
LTest(trace_count, code_reused_at_one_address_counts_exactly)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    const uint64_t s1[] = { 0x5010, 0x9020 }, s2[] = { 0x9030 };
    const uint64_t *ips[] = { s1, s2 };
    const uint32_t d[] = { 2, 1 };
    pb_stacks(&p, 1, 2, ips, d);
    pb_assembly(&p, 1, ASM, "App");
    pb_module(&p, 1, MOD, ASM, "/app/App.dll");
    pb_method(&p, MD_LOAD, 2, 0x99, MOD, 0x9000, 0x100, "App.Main", "Run");
    char name[32];
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "V%d", i % 7);
        pb_method(&p, MD_LOAD, 1000 + 10 * i, 0x100 + (uint64_t)i, MOD, 0x5000, 0x40, "Gen", name);
        pb_sample(&p, 7, 1, 1000 + 10 * i + 2, NT_SAMPLE_MANAGED);
        pb_sample(&p, 8, 2, 1000 + 10 * i + 3, NT_SAMPLE_MANAGED);
        pb_sample(&p, 7, 1, 1000 + 10 * i + 4, NT_SAMPLE_MANAGED);
        pb_method(&p, MD_UNLOAD, 1000 + 10 * i + 5, 0x100 + (uint64_t)i, MOD, 0x5000, 0x40, "Gen", name);
        pb_sample(&p, 7, 1, 1000 + 10 * i + 6, NT_SAMPLE_EXTERNAL); /* after the unload: unnamed */
    }
    pb_end(&p);
    cr_assert_not(compare(p.b.d, p.b.n, NT_OK), "in stream order: counted without reading again");
    tb_free(&p.b);
}

/* Samples of one life and of the time after it arrive before the unload
 * record that parts them: counted together they would resolve alike, so
 * counting cannot follow the clock and the input is read again sample by
 * sample. */
LTest(trace_count, samples_out_of_order_around_an_unload_fall_back)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    pb_one_frame_stack(&p, 0x5010);
    pb_assembly(&p, 1, ASM, "App");
    pb_module(&p, 1, MOD, ASM, "/app/App.dll");
    char name[32];
    for (int i = 0; i < 50; i++) {
        snprintf(name, sizeof name, "V%d", i);
        pb_method(&p, MD_LOAD, 1000 + 10 * i, 0x100 + (uint64_t)i, MOD, 0x5000, 0x40, "Gen", name);
        pb_sample(&p, 7, 1, 1000 + 10 * i + 2, NT_SAMPLE_MANAGED);
        pb_sample(&p, 7, 1, 1000 + 10 * i + 6, NT_SAMPLE_MANAGED); /* taken after the unload, delivered before */
        pb_method(&p, MD_UNLOAD, 1000 + 10 * i + 5, 0x100 + (uint64_t)i, MOD, 0x5000, 0x40, "Gen", name);
    }
    pb_end(&p);
    cr_assert(compare(p.b.d, p.b.n, NT_OK), "the counts could not be exact: read again");
    /* From a file too: read again from where it started. */
    char path[] = "/tmp/nettrace-order-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, p.b.d, p.b.n), (ssize_t)p.b.n);
    close(fd);
    nt_trace_options o = { .aggregate = true };
    nt_trace *a = NULL, *b = NULL;
    cr_assert_eq(nt_trace_from_file(path, &o, &a, NULL, 0), NT_OK);
    cr_assert_eq(nt_trace_from_file(path, NULL, &b, NULL, 0), NT_OK);
    unlink(path);
    cr_assert(nt_trace_counts_exact(a));
    nt_export_options eo = { .weight = NT_WEIGHT_TIME };
    same_export("folded by time, from a file", nt_export_folded, b, a, &eo);
    nt_trace_free(a);
    nt_trace_free(b);
    tb_free(&p.b);
}

static int fd_write(void *user, const void *data, size_t len)
{
    return write(*(int *)user, data, len) == (ssize_t)len ? 0 : 1;
}

/* The memory of a counting build follows the distinct stacks: 10 M samples
 * on 24 stacks over 8 threads, written with the writer, read from a file. */
Test(trace_count, ten_million_samples_on_24_stacks_in_under_10_mib, .timeout = 600)
{
    char path[] = "/tmp/nettrace-count-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    nt_writer *w = nt_writer_new(NULL, fd_write, &fd, NULL);
    cr_assert_not_null(w);
    uint32_t ids[24];
    for (uint32_t s = 0; s < 24; s++) {
        uint64_t ips[16];
        for (uint32_t k = 0; k < 16; k++)
            ips[k] = 0x400000 + (uint64_t)s * 0x1000 + k * 0x40;
        cr_assert_eq(nt_writer_stack(w, ips, 16, &ids[s]), NT_OK);
    }
    const uint32_t n = 10u * 1000u * 1000u;
    for (uint32_t i = 0; i < n; i++) {
        nt_writer_event h = { .thread_id = 100 + i % 8, .timestamp = 1000 + (int64_t)i * 10, .stack_id = ids[(i / 8) % 24] };
        if (nt_writer_sample(w, &h, NT_SAMPLE_MANAGED) != NT_OK)
            cr_assert_fail("writer: %s", nt_writer_message(w));
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    close(fd);
    nt_trace_options o = { .aggregate = true };
    nt_trace *t = NULL;
    cr_assert_eq(nt_trace_from_file(path, &o, &t, NULL, 0), NT_OK);
    unlink(path);
    nt_trace_stats st = { 0 };
    nt_trace_stats_get(t, &st);
    cr_log_info("%llu samples, %zu entries, peak %zu bytes", (unsigned long long)st.samples, nt_trace_sample_count(t),
                st.memory_peak);
    cr_assert_eq(st.samples, n);
    cr_assert_eq(st.stacks, 24);
    cr_assert_lt(st.memory_peak, (size_t)10 << 20, "peak %zu bytes (keeping every sample: 160 MB of samples alone)",
                 st.memory_peak);
    nt_top *top;
    cr_assert_eq(nt_top_build(t, NULL, &top), NT_OK);
    cr_assert_eq(top->tables[0].samples, n);
    nt_top_free(top);
    nt_trace_free(t);
}
