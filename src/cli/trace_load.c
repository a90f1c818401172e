/* Shared by the commands that work on a resolved trace. */
#include "cli/trace_load.h"
#include "cli/progress.h"
#include "cli/stream_read.h"
#include "common/text_escape.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Counting needs a second read when it cannot be exact: a pipe cannot be read twice. */
static bool rereadable(const char *path)
{
    struct stat st;
    return strcmp(path, "-") != 0 || (fstat(0, &st) == 0 && S_ISREG(st.st_mode) && lseek(0, 0, SEEK_CUR) == 0);
}

/* What a load ends with, said on stderr: a truncated or damaged stream is
 * used up to the fault (err: the parser's message as cli_feed_path words it).
 * Returns the exit code. */
static int report(const char *path, const char *err, nt_status s, size_t kept, const char *what)
{
    if (s == NT_ERR_TRUNCATED)
        fprintf(stderr,
                "nettrace: %s: %s; using the %zu %s read before the cut "
                "(rundown at the end of the stream is missing: JIT frames may be unresolved)\n",
                path, err, kept, what);
    else if (s != NT_OK)
        fprintf(stderr, "nettrace: %s: %s; using the %zu %s read before the fault\n", path, err, kept, what);
    return cli_exit_code(s);
}

/* Read path into cb / user (err: the message, errsize bytes): the blocks of
 * the window [from, to) through the sidecar when there is one, in parallel
 * when it pays (stream_read.c); false (exit code in *rc, st closed) when
 * there is nothing to build from. */
static bool feed(const char *path, const nt_time_bound *from, const nt_time_bound *to, const nt_callbacks *cb,
                 void *user, const nt_parallel_consumer *consumer, cli_stream *st, nt_status *s, int *rc, char *err,
                 size_t errsize)
{
    /* The trace builder (also inside a profile builder) converts only the names it keeps. */
    *s = cli_stream_read(st, path, from, to, cb, user, consumer, true, err, errsize);
    const nt_parser *p = cli_stream_parser(st);
    if (!p || *s == NT_ERR_IO || !nt_parser_trace_info(p)) {
        if (!p)
            fprintf(stderr, "nettrace: out of memory\n");
        else if (*s == NT_ERR_IO)
            fprintf(stderr, "nettrace: %s\n", err);
        else
            fprintf(stderr, "nettrace: %s: %s\n", path, err);
        *rc = !p ? CLI_EXIT_ERROR : cli_exit_code(*s == NT_OK ? NT_ERR_NO_EVENTS : *s);
        cli_stream_close(st);
        return false;
    }
    return true;
}

static int load(const char *path, bool count, const nt_time_bound *from, const nt_time_bound *to, nt_trace **out)
{
    *out = NULL;
    nt_trace_builder *b = nt_trace_builder_new(NULL);
    if (!b) {
        fprintf(stderr, "nettrace: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    if (count)
        nt_trace_builder_count_samples(b);
    nt_callbacks cb = { 0 };
    nt_trace_builder_callbacks(&cb);
    nt_parallel_consumer parts; /* a parallel parse's parts go to builders of their own, merged in order */
    nt_trace_builder_parallel(b, &parts);
    cli_stream st;
    nt_status s;
    int rc;
    char err[512];
    if (!feed(path, from, to, &cb, b, &parts, &st, &s, &rc, err, sizeof err)) {
        nt_trace_builder_free(b);
        return rc;
    }
    nt_trace *t = NULL;
    cli_progress_phase("resolving frames");
    nt_status fs = nt_trace_builder_finish(b, cli_stream_parser(&st), s, &t);
    cli_progress_clear();
    if (fs != NT_OK) {
        fprintf(stderr, "nettrace: %s: %s\n", path, nt_status_describe(fs));
        cli_stream_close(&st);
        return cli_exit_code(fs);
    }
    if (!nt_trace_counts_exact(t)) {
        cli_stream_close(&st);
        *out = t;
        return CLI_EXIT_OK; /* read again, sample by sample */
    }
    nt_trace_stats ts = { 0 };
    nt_trace_stats_get(t, &ts);
    rc = report(path, err, s, (size_t)ts.samples, "samples");
    if (ts.events_dropped)
        fprintf(stderr,
                "nettrace: warning: the runtime dropped %" PRIu64 " event%s while tracing: samples and method\n"
                "          records may be missing\n",
                ts.events_dropped, ts.events_dropped == 1 ? "" : "s");
    cli_stream_close(&st);
    *out = t;
    return rc;
}

int cli_profile_load(const char *path, const nt_profile_options *opt, nt_profile **out)
{
    *out = NULL;
    nt_profile_options po = { 0 };
    if (opt)
        po = *opt;
    po.events_only = true; /* the commands on event profiles and GCs never read the samples */
    nt_profile_builder *b = nt_profile_builder_new(&po, NULL);
    if (!b) {
        fprintf(stderr, "nettrace: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    nt_callbacks cb = { 0 };
    nt_profile_builder_callbacks(&cb);
    cli_stream st;
    nt_status s;
    int rc;
    char err[512];
    if (!feed(path, &po.from, &po.to, &cb, b, NULL, &st, &s, &rc, err, sizeof err)) {
        nt_profile_builder_free(b);
        return rc;
    }
    nt_profile *pr = NULL;
    cli_progress_phase("resolving frames");
    nt_status fs = nt_profile_builder_finish(b, cli_stream_parser(&st), s, &pr);
    cli_progress_clear();
    if (fs != NT_OK) {
        fprintf(stderr, "nettrace: %s: %s\n", path, nt_status_describe(fs));
        cli_stream_close(&st);
        return cli_exit_code(fs);
    }
    rc = report(path, err, s, nt_profile_record_count(pr), "profile records");
    cli_stream_close(&st);
    *out = pr;
    return rc;
}

int cli_trace_load_window(const char *path, bool count, const nt_sample_filter *f, nt_trace **out)
{
    const nt_time_bound *from = f ? &f->from : NULL, *to = f ? &f->to : NULL;
    count = count && rereadable(path);
    int rc = load(path, count, from, to, out);
    if (count && *out && !nt_trace_counts_exact(*out)) {
        nt_trace_free(*out);
        if (strcmp(path, "-") == 0)
            lseek(0, 0, SEEK_SET);
        rc = load(path, false, from, to, out);
    }
    return rc;
}

int cli_trace_load(const char *path, bool count, nt_trace **out) { return cli_trace_load_window(path, count, NULL, out); }

char *cli_frame_text(const nt_frame *f, unsigned flags, const char *seps)
{
    char small[512];
    size_t n = nt_frame_name_ex(f, flags, small, sizeof small);
    char *name = small;
    if (n >= sizeof small) {
        name = malloc(n + 1);
        if (!name)
            return NULL;
        nt_frame_name_ex(f, flags, name, n + 1);
    }
    size_t len = cm_text_escape(NULL, 0, name, seps);
    char *out = malloc(len + 1);
    if (out)
        cm_text_escape(out, len + 1, name, seps);
    if (name != small)
        free(name);
    return out;
}

char *cli_stack_line(const nt_trace *t, uint32_t stack_index, unsigned flags)
{
    nt_trace_stack st = nt_trace_stack_at(t, stack_index);
    const nt_trace_stack *s = &st;
    if (!s->frame_count)
        return strdup("-");
    /* Names are made into `name` and escaped straight into the line: no allocation per frame. */
    char small[512], *name = small;
    size_t name_cap = sizeof small, len = 0, cap = 256;
    char *line = malloc(cap);
    for (uint32_t k = s->frame_count; line && k-- > 0;) {
        size_t n = nt_frame_name_ex(nt_trace_frame_at(t, s->frame_ids[k]), flags, name, name_cap);
        if (n >= name_cap) {
            char *big = malloc(n + 1);
            if (!big)
                break;
            if (name != small)
                free(name);
            name = big;
            name_cap = n + 1;
            nt_frame_name_ex(nt_trace_frame_at(t, s->frame_ids[k]), flags, name, name_cap);
        }
        size_t e = cm_text_escape(line + len, cap - len, name, CLI_SAMPLES_SEPARATORS);
        if (len + e + 2 > cap) {
            while (len + e + 2 > cap)
                cap *= 2;
            char *bigger = realloc(line, cap);
            if (!bigger)
                break;
            line = bigger;
            cm_text_escape(line + len, cap - len, name, CLI_SAMPLES_SEPARATORS);
        }
        len += e;
        line[len++] = k ? ';' : '\0';
        if (!k) {
            if (name != small)
                free(name);
            return line;
        }
    }
    if (name != small)
        free(name);
    free(line);
    return NULL;
}

void cli_warn_unnamed(const nt_trace *t)
{
    nt_trace_stats ts = { 0 };
    nt_trace_stats_get(t, &ts);
    if (!ts.samples) {
        fputs("nettrace: the trace holds no thread samples (Microsoft-DotNETCore-SampleProfiler), so there is\n"
              "          nothing to count: 'nettrace collect --profile thread-time' records them; 'nettrace info'\n"
              "          lists the events it does hold (--profile alloc, exceptions or contention reads those)\n",
              stderr);
        return;
    }
    if (!ts.jit_records && !ts.rundown_records)
        fputs("nettrace: warning: the trace has no JIT or rundown method events, so no frame can be named\n"
              "          (trace with the runtime's JIT and loader keywords and keep rundown on)\n",
              stderr);
    else if (!ts.rundown_records)
        fputs("nettrace: warning: the trace has no rundown events: code compiled before the session\n"
              "          started stays unresolved\n",
              stderr);
}
