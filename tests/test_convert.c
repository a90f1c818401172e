/* nettrace convert on generated inputs: what it cannot carry over makes it
 * exit 3 (events without metadata), a V6 file with more distinct label-list
 * overrides than a reader holds metadata records converts whole, and a failed
 * write exits 1 with the reason.  Runs the built tool ($top_builddir/nettrace). */
#include "ltest.h"
#include "nettrace_writer.h"
#include "streams.h"
#include "support.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void remove_tmp(void);
TestSuite(convert, .fini = remove_tmp);

static char g_dir[64];

/* A path in the test's folder; valid for the next three calls. */
static const char *tmp_path(const char *name)
{
    static char buf[4][256];
    static int k;
    if (!g_dir[0]) {
        strcpy(g_dir, "/tmp/nt_convert_XXXXXX");
        cr_assert(mkdtemp(g_dir), "mkdtemp");
    }
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

static void remove_tmp(void)
{
    if (!g_dir[0])
        return;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        cr_log_warn("could not remove %s", g_dir);
}

static void save(const char *path, const void *d, size_t n)
{
    cr_assert(ts_write_file(path, d, n), "cannot write %s", path);
}

/* Run `nettrace ARGS` (a shell fragment), standard error into err (may be
 * NULL); the exit status. */
static int nettrace(const char *args, char *err, size_t err_size)
{
    const char *bld = getenv("top_builddir");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "NETTRACE_NO_PROGRESS=1 '%s/nettrace' %s 2>'%s'", bld ? bld : ".", args,
             tmp_path("stderr"));
    int st = system(cmd);
    cr_assert(st != -1 && WIFEXITED(st), "cannot run: %s", cmd);
    if (err) {
        err[0] = 0;
        FILE *f = fopen(tmp_path("stderr"), "rb");
        if (f) {
            size_t n = fread(err, 1, err_size - 1, f);
            err[n] = 0;
            fclose(f);
        }
    }
    return WEXITSTATUS(st);
}

typedef struct counts {
    uint64_t events;
    uint64_t keywords_mismatch;
} counts;

static int count_event(void *user, const nt_event *ev)
{
    counts *c = user;
    /* the keyword-override input gives event i the keywords 0x100000000 + i */
    if (ev->desc && ev->desc->provider && strcmp(ev->desc->provider, "Kw-Source") == 0 &&
        ev->desc->keywords != 0x100000000ull + c->events)
        c->keywords_mismatch++;
    c->events++;
    return 0;
}

static nt_status reread(const char *path, counts *c)
{
    uint8_t *d;
    size_t n;
    cr_assert(ts_read_file(path, &d, &n), "cannot read %s", path);
    memset(c, 0, sizeof *c);
    nt_callbacks cb = { 0 };
    cb.event = count_event;
    nt_status s = nt_parse_buffer(d, n, &cb, c, NULL, NULL, 0);
    free(d);
    return s;
}

/* A V4 stream: metadata 1, `defined` events of it, then `undefined` events
 * of metadata id 9, which no record defines. */
static void events_without_metadata(tb *b, uint32_t defined, uint32_t undefined)
{
    tb_header(b, 8, 1000000000);
    tb_metadata_block(b, 1, "My-Source", 1, 0);
    size_t pos = tb_block_begin(b, "EventBlock");
    tb_event_header(b, 1);
    tb_event prev = { 0 };
    const uint8_t payload[4] = { 1, 2, 3, 4 };
    for (uint32_t i = 0; i < defined + undefined; i++) {
        tb_event e = { i < defined ? 1 : 9, i + 1, 0, 0, 5, 5, 100 + i, payload, sizeof payload };
        tb_compressed_event(b, &e, &prev);
    }
    tb_block_end(b, pos);
    tb_end(b);
}

LTest(convert, events_without_metadata_make_it_exit_3)
{
    tb b = { 0 };
    events_without_metadata(&b, 27, 5);
    char in[300];
    snprintf(in, sizeof in, "%s", tmp_path("undefined.nettrace"));
    save(in, b.d, b.n);
    tb_free(&b);
    counts c;
    cr_assert_eq(reread(in, &c), NT_OK);
    cr_assert_eq(c.events, 32);
    for (int v = 4; v <= 6; v += 2) {
        char args[600], err[1024];
        /* --force: the V6 round replaces the V4 round's output (a trace) */
        snprintf(args, sizeof args, "convert '%s' --to v%d --force -o '%s'", in, v, tmp_path("out.nettrace"));
        int rc = nettrace(args, err, sizeof err);
        cr_expect_eq(rc, 3, "V%d: exit %d, want 3 (events were left out): %s", v, rc, err);
        cr_expect(strstr(err, "5 events without metadata were left out"), "V%d: %s", v, err);
        cr_expect_eq(reread(tmp_path("out.nettrace"), &c), NT_OK);
        cr_expect_eq(c.events, 27, "V%d: %llu events kept, want 27", v, (unsigned long long)c.events);
    }
}

/* Every event lacks metadata: the output has none, and convert says so. */
LTest(convert, all_events_without_metadata_exit_3)
{
    tb b = { 0 };
    events_without_metadata(&b, 0, 27);
    char in[300];
    snprintf(in, sizeof in, "%s", tmp_path("none.nettrace"));
    save(in, b.d, b.n);
    tb_free(&b);
    char args[600], err[1024];
    snprintf(args, sizeof args, "convert '%s' --to v6 --force -o '%s'", in, tmp_path("out.nettrace"));
    int rc = nettrace(args, err, sizeof err);
    cr_expect_eq(rc, 3, "exit %d, want 3: %s", rc, err);
    counts c;
    cr_expect_eq(reread(tmp_path("out.nettrace"), &c), NT_ERR_NO_EVENTS);
}

/* A valid V6 file whose events each override the keywords of one metadata
 * record in a label list of their own: 70,000 variants, more than the 65,536
 * metadata records a reader (and the writer) hold at once.  The V6 output
 * flushes its metadata and goes on; V4, which cannot, says why. */
LTest(convert, v6_keyword_overrides_past_the_metadata_limit)
{
    enum { N = 70000 };
    const nt_writer_options o = { .format = 6 };
    nt_membuf out = { 0 };
    nt_writer *w = nt_writer_new(&o, nt_membuf_write, &out, NULL);
    const nt_event_desc d = { .provider = "Kw-Source", .event_id = 3, .event_name = "" };
    nt_writer_event e = { .thread_id = 7 };
    cr_assert_eq(nt_writer_define(w, &d, &e.metadata_id), NT_OK);
    for (uint32_t i = 0; i < N; i++) {
        const nt_label l = { .kind = NT_LABEL_KEYWORDS, .value = 0x100000000ull + i };
        e.timestamp = 1000 + i;
        cr_assert_eq(nt_writer_label_list(w, &l, 1, &e.label_list_id), NT_OK, "%s", nt_writer_message(w));
        cr_assert_eq(nt_writer_write_event(w, &e), NT_OK, "%s", nt_writer_message(w));
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    char in[300];
    snprintf(in, sizeof in, "%s", tmp_path("overrides.nettrace"));
    save(in, out.data, out.len);
    nt_membuf_free(&out);
    counts c;
    cr_assert_eq(reread(in, &c), NT_OK);
    cr_assert_eq(c.events, N);
    cr_assert_eq(c.keywords_mismatch, 0);

    char args[600], err[1024];
    snprintf(args, sizeof args, "convert '%s' --to v6 -o '%s'", in, tmp_path("out6.nettrace"));
    int rc = nettrace(args, err, sizeof err);
    cr_expect_eq(rc, 0, "exit %d: %s", rc, err);
    cr_expect_eq(reread(tmp_path("out6.nettrace"), &c), NT_OK);
    cr_expect_eq(c.events, N, "%llu events", (unsigned long long)c.events);
    cr_expect_eq(c.keywords_mismatch, 0, "%llu events changed keywords", (unsigned long long)c.keywords_mismatch);

    snprintf(args, sizeof args, "convert '%s' --to v4 -o '%s'", in, tmp_path("out4.nettrace"));
    rc = nettrace(args, err, sizeof err);
    cr_expect_eq(rc, 1, "V4 exit %d: %s", rc, err);
    cr_expect(strstr(err, "--to v6"), "V4 should point to V6: %s", err);
}

/* A full device: the output path and standard output, small and large. */
LTest(convert, a_failed_write_exits_1_with_the_reason)
{
    if (access("/dev/full", W_OK) != 0) {
        cr_log_warn("SKIP: no writable /dev/full on this system");
        return;
    }
    const char *corpus = ts_own_corpus();
    const char *small = "seeds/v4_samples.nettrace", *large = "spin-threads.nettrace";
    const char *ins[2] = { small, large };
    for (int k = 0; k < 2; k++) {
        char in[512], args[800], err[1024];
        snprintf(in, sizeof in, "%s/%s", corpus, ins[k]);
        snprintf(args, sizeof args, "convert '%s' --to v6 -o /dev/full", in);
        int rc = nettrace(args, err, sizeof err);
        cr_expect_eq(rc, 1, "%s -o /dev/full: exit %d: %s", ins[k], rc, err);
        cr_expect(strstr(err, "/dev/full: No space left on device"), "%s: %s", ins[k], err);
        snprintf(args, sizeof args, "convert '%s' --to v4 -o - >/dev/full", in);
        rc = nettrace(args, err, sizeof err);
        cr_expect_eq(rc, 1, "%s -o - >/dev/full: exit %d: %s", ins[k], rc, err);
        cr_expect(strstr(err, "standard output: No space left on device"), "%s: %s", ins[k], err);
    }
}
