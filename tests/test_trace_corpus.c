/* The aggregator on real traces: frame resolution and hot methods against
 * TraceEvent's (tests/expected/<trace>.top.tsv, written by tools/oracle),
 * dotnetdiag's golden stacks, truncation of a real file, memory. */
#include "nettrace_trace.h"
#include "ltest.h"
#include "support.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const char *srcdir(void)
{
    const char *top = getenv("top_srcdir");
    return top && *top ? top : ".";
}

/* A trace of the oracle table: "shared/NAME" in ../shared/corpus, "corpus/NAME" in corpus/. */
static const char *find_trace(const char *file, char *buf, size_t size)
{
    const char *dir = strncmp(file, "shared/", 7) == 0 ? ts_shared_corpus() : ts_own_corpus();
    const char *slash = strchr(file, '/');
    if (!dir || !slash)
        return NULL;
    snprintf(buf, size, "%s/%s", dir, slash + 1);
    FILE *f = fopen(buf, "rb");
    if (!f)
        return NULL;
    fclose(f);
    return buf;
}

static nt_trace *load(const char *path)
{
    nt_trace *t = NULL;
    char msg[256];
    nt_status s = nt_trace_from_file(path, NULL, &t, msg, sizeof msg);
    cr_assert_eq(s, NT_OK, "%s: %s (%s)", path, nt_status_name(s), msg);
    return t;
}

/* TraceEvent's key: "<module>!<type>.<method>(<signature args>)".  Its
 * module is the file name, which is the assembly's simple name (the case
 * differs in some traces, so the module part is lower-cased). */
static void method_key(const nt_trace *t, const nt_frame *f, char *buf, size_t size)
{
    const nt_trace_method *m = nt_trace_method_at(t, f->method_index);
    cr_assert_eq(f->method, m, "a frame's record is the trace's record at its method_index");
    const char *args = strchr(m->signature, '(');
    size_t mlen = strcspn(m->assembly, ",");
    const char *module = mlen ? m->assembly : "?";
    snprintf(buf, size, "%.*s!%s%s%s%s", (int)(mlen ? mlen : 1), module, m->declaring_type,
             *m->declaring_type ? "." : "", m->name, args ? args : "");
    for (char *p = buf; *p && *p != '!'; p++)
        *p = (char)tolower((unsigned char)*p);
}

typedef struct count {
    char key[512];
    long excl, incl;
} count;

static count *find_count(count *c, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(c[i].key, key) == 0)
            return &c[i];
    return NULL;
}

/* Compare one trace with its rows of tests/expected/traceevent-top.tsv. */
static void compare_top(const char *expected, const char *file)
{
    char tp[4096];
    const char *path = find_trace(file, tp, sizeof tp);
    if (!path) {
        cr_log_info("%s: trace absent (../shared/corpus missing?), not compared", file);
        return;
    }
    const char *trace_name = strchr(file, '/') + 1;
    nt_trace *t = load(path);
    /* Exclusive and inclusive samples per method key. */
    size_t cap = 4096, n = 0;
    count *c = calloc(cap, sizeof *c);
    long frames = 0, unresolved = 0, with_stack = 0;
    size_t ns = nt_trace_sample_count(t);
    for (size_t i = 0; i < ns; i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        frames += s.frame_count;
        with_stack += s.frame_count > 0;
        for (uint32_t k = 0; k < s.frame_count; k++) {
            if (nt_trace_frame_at(t, s.frame_ids[k])->method_index == NT_TRACE_NO_METHOD) {
                cr_assert(nt_trace_frame_at(t, s.frame_ids[k])->method && !*nt_trace_frame_at(t, s.frame_ids[k])->method->name && !*nt_trace_frame_at(t, s.frame_ids[k])->method->assembly,
                          "an unresolved frame points to the empty record");
                unresolved++;
                continue;
            }
            char key[512];
            method_key(t, nt_trace_frame_at(t, s.frame_ids[k]), key, sizeof key);
            bool again = false; /* inclusive counts once per sample */
            for (uint32_t j = 0; j < k && !again; j++) {
                if (nt_trace_frame_at(t, s.frame_ids[j])->method_index == NT_TRACE_NO_METHOD)
                    continue;
                char other[512];
                method_key(t, nt_trace_frame_at(t, s.frame_ids[j]), other, sizeof other);
                again = strcmp(other, key) == 0;
            }
            count *e = find_count(c, n, key);
            if (!e) {
                cr_assert_lt(n, cap);
                e = &c[n++];
                snprintf(e->key, sizeof e->key, "%s", key);
            }
            if (!again)
                e->incl++;
            if (k == 0)
                e->excl++;
        }
    }
    FILE *f = fopen(expected, "r");
    cr_assert_not_null(f, "%s", expected);
    char line[4096];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (line[0] == '#' || !line[0])
            continue;
        char *rfile = strtok(line, "\t"), *kind = strtok(NULL, "\t"), *module = strtok(NULL, "\t"),
             *method = strtok(NULL, "\t"), *ex = strtok(NULL, "\t"), *in = strtok(NULL, "\t");
        cr_assert(rfile && kind && module && method && ex && in, "malformed row in %s", expected);
        if (strcmp(rfile, file) != 0)
            continue;
        if (strcmp(kind, "samples") == 0) {
            cr_expect_eq((long)ns, atol(ex), "%s: samples %zu, TraceEvent %s", trace_name, ns, ex);
            cr_expect_eq(with_stack, atol(in), "%s: samples with a stack %ld, TraceEvent %s", trace_name,
                         with_stack, in);
            continue;
        }
        if (strcmp(kind, "frames") == 0) {
            cr_expect_eq(frames, atol(ex), "%s: frames %ld, TraceEvent %s", trace_name, frames, ex);
            cr_expect_eq(unresolved, atol(in), "%s: unresolved frames %ld, TraceEvent %s", trace_name,
                         unresolved, in);
            continue;
        }
        if (strcmp(method, "?") == 0)
            continue; /* TraceEvent's bucket for unresolved frames */
        char key[1024];
        /* TraceEvent names code of an unknown module "ManagedModule"; the samples format says "?". */
        snprintf(key, sizeof key, "%s!%s", strcmp(module, "ManagedModule") == 0 ? "?" : module, method);
        for (char *p = key; *p != '!'; p++)
            *p = (char)tolower((unsigned char)*p);
        count *e = find_count(c, n, key);
        cr_expect_not_null(e, "%s: TraceEvent's %s!%s has no samples here", trace_name, module, method);
        if (e) {
            cr_expect_eq(e->excl, atol(ex), "%s: %s exclusive %ld, TraceEvent %s", trace_name, key, e->excl, ex);
            cr_expect_eq(e->incl, atol(in), "%s: %s inclusive %ld, TraceEvent %s", trace_name, key, e->incl, in);
        }
        rows++;
    }
    fclose(f);
    cr_expect_gt(rows, 0, "%s: no method rows in %s", trace_name, expected);
    nt_trace_stats st = { 0 };
    nt_trace_stats_get(t, &st);
    cr_log_info("%s: %.1f%% of %lu sample frames resolve; %d hot methods match TraceEvent", trace_name,
                st.frames ? 100.0 * (double)st.resolved_frames / (double)st.frames : 100.0,
                (unsigned long)st.frames, rows);
    free(c);
    nt_trace_free(t);
}

LTest(trace_corpus, hot_methods_and_resolution_match_traceevent)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/expected/traceevent-top.tsv", srcdir());
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    /* The files the table covers, in its order. */
    char files[64][256];
    int nf = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        size_t len = strcspn(line, "\t");
        if (len >= sizeof files[0] || (nf && strncmp(files[nf - 1], line, len) == 0 && !files[nf - 1][len]))
            continue;
        cr_assert_lt(nf, 64);
        snprintf(files[nf++], sizeof files[0], "%.*s", (int)len, line);
    }
    fclose(f);
    cr_assert_geq(nf, 3, "too few traces in %s", path);
    for (int i = 0; i < nf; i++)
        compare_top(path, files[i]);
}

/* dotnetdiag's golden folded stacks, signatures aside, are exactly our stack set. */
LTest(trace_corpus, dotnetdiag_single_thread_stacks_match_golden)
{
    const char *shared = ts_shared_corpus();
    if (!shared)
        cr_skip_test("../shared/corpus is absent (set NETTRACE_SHARED_CORPUS)");
    char path[4096];
    snprintf(path, sizeof path, "%s/dotnetdiag__dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", shared);
    nt_trace *t = load(path);
    char golden[8][512];
    int ng = 0;
    snprintf(path, sizeof path, "%s/baselines/dotnetdiag__dotnet-5.0-SampleProfiler-single-thread.txt", shared);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[1024];
    while (fgets(line, sizeof line, f) && ng < 8) {
        *strrchr(line, ' ') = 0; /* the weight */
        char *o = golden[ng++];
        int depth = 0;
        for (const char *p = line; *p; p++) {
            if (*p == '(')
                depth++;
            else if (*p == ')')
                depth--;
            else if (!depth)
                *o++ = *p;
        }
        *o = 0;
    }
    fclose(f);
    cr_assert_eq(ng, 4);
    bool seen[8] = { 0 };
    for (size_t i = 0; i < nt_trace_stack_count(t); i++) {
        nt_trace_stack s = nt_trace_stack_at(t, i);
        char text[1024];
        size_t pos = 0;
        for (uint32_t k = s.frame_count; k-- > 0;) {
            pos += nt_frame_name(nt_trace_frame_at(t, s.frame_ids[k]), text + pos, sizeof text - pos);
            if (k)
                text[pos++] = ';';
        }
        text[pos] = 0;
        int g = 0;
        while (g < ng && strcmp(golden[g], text) != 0)
            g++;
        cr_expect_lt(g, ng, "stack not in the golden file: %s", text);
        if (g < ng)
            seen[g] = true;
    }
    for (int g = 0; g < ng; g++)
        cr_expect(seen[g], "golden stack missing: %s", golden[g]);
    /* Main -> Fast/Slow -> Work(int32): Work is the hottest leaf. */
    nt_trace_sample s = nt_trace_sample_at(t, 0);
    cr_assert_eq(s.frame_count, 3);
    cr_assert_str_eq(nt_trace_frame_at(t, s.frame_ids[2])->method->name, "Main");
    cr_assert_str_eq(nt_trace_frame_at(t, s.frame_ids[0])->method->name, "Work");
    cr_assert_str_eq(nt_trace_frame_at(t, s.frame_ids[0])->method->declaring_type, "Example.Program");
    nt_trace_free(t);
}

static int count_sample(void *user, const nt_sample *s)
{
    (void)s;
    ++*(size_t *)user;
    return 0;
}

LTest(trace_corpus, truncated_real_trace_keeps_every_sample_read)
{
    const char *shared = ts_shared_corpus();
    if (!shared)
        cr_skip_test("../shared/corpus is absent (set NETTRACE_SHARED_CORPUS)");
    char path[4096];
    snprintf(path, sizeof path, "%s/dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace", shared);
    uint8_t *data;
    size_t len;
    cr_assert(ts_read_file(path, &data, &len));
    const size_t cuts[] = { len * 3 / 5, len / 7, len - 1 };
    for (int c = 0; c < 3; c++) {
        size_t parser_samples = 0;
        nt_callbacks cb = { 0 };
        cb.sample = count_sample;
        nt_status ps = nt_parse_buffer(data, cuts[c], &cb, &parser_samples, NULL, NULL, 0);
        cr_assert_eq(ps, NT_ERR_TRUNCATED);
        nt_trace *t = NULL;
        char msg[256];
        nt_status s = nt_trace_from_buffer(data, cuts[c], NULL, &t, msg, sizeof msg);
        cr_assert_eq(s, NT_ERR_TRUNCATED, "%s", nt_status_name(s));
        cr_assert_not_null(t);
        cr_assert_gt(parser_samples, 0);
        cr_assert_eq(nt_trace_sample_count(t), parser_samples, "cut at %zu: %zu samples, parser delivered %zu",
                     cuts[c], nt_trace_sample_count(t), parser_samples);
        cr_assert(strstr(msg, "offset") || strstr(msg, "byte"), "message names the offset: %s", msg);
        nt_trace_free(t);
    }
    free(data);
}

LTest(trace_corpus, memory_stays_below_the_file_size)
{
    const char *shared = ts_shared_corpus();
    if (!shared)
        cr_skip_test("../shared/corpus is absent (set NETTRACE_SHARED_CORPUS)");
    const char *names[] = { "perfview__HeartRateMonitor.10068.nettrace",
                            "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace",
                            "dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace" };
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", shared, names[i]);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f);
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fclose(f);
        nt_trace *t = load(path);
        nt_trace_stats st = { 0 };
        nt_trace_stats_get(t, &st);
        cr_log_info("%s: %ld bytes, trace holds %zu, peak while building %zu", names[i], size, st.memory,
                    st.memory_peak);
        cr_expect_lt(st.memory_peak, (size_t)size, "%s: peak %zu >= file %ld", names[i], st.memory_peak, size);
        nt_trace_free(t);
    }
}
