/* Shared by the commands that work on a resolved trace. */
#include "cli/trace_load.h"

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
 * used up to the fault.  Returns the exit code. */
static int report(const char *path, const nt_parser *p, nt_status s, size_t kept, const char *what)
{
    if (s == NT_ERR_TRUNCATED)
        fprintf(stderr,
                "nettrace: %s: %s; using the %zu %s read before the cut "
                "(rundown at the end of the stream is missing: JIT frames may be unresolved)\n",
                path, nt_parser_message(p), kept, what);
    else if (s != NT_OK)
        fprintf(stderr, "nettrace: %s: %s; using the %zu %s read before the fault\n", path,
                nt_parser_message(p), kept, what);
    return cli_exit_code(s);
}

/* Feed path through a parser with cb / user; false (exit code in *rc, the
 * parser freed) when there is nothing to build from. */
static bool feed(const char *path, const nt_callbacks *cb, void *user, nt_parser **pp, nt_status *s, int *rc)
{
    nt_parser *p = nt_parser_new(cb, user, NULL, NULL);
    *pp = p;
    if (!p) {
        fprintf(stderr, "nettrace: out of memory\n");
        *rc = CLI_EXIT_ERROR;
        return false;
    }
    /* The trace builder (also inside a profile builder) converts only the names it keeps. */
    nt_parser_set_lazy_names(p, true);
    char err[512];
    *s = cli_feed_path(p, path, err, sizeof err);
    if (*s == NT_ERR_IO || !nt_parser_trace_info(p)) {
        fprintf(stderr, "nettrace: %s\n", *s == NT_ERR_IO ? err : nt_parser_message(p));
        *rc = cli_exit_code(*s == NT_OK ? NT_ERR_NO_EVENTS : *s);
        nt_parser_free(p);
        *pp = NULL;
        return false;
    }
    return true;
}

static int load(const char *path, bool count, nt_trace **out)
{
    *out = NULL;
    nt_trace_builder *b = nt_trace_builder_new(NULL);
    if (!b) {
        fprintf(stderr, "nettrace: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    if (count)
        nt_trace_builder_count_samples(b);
    nt_callbacks cb;
    nt_trace_builder_callbacks(&cb);
    nt_parser *p;
    nt_status s;
    int rc;
    if (!feed(path, &cb, b, &p, &s, &rc)) {
        nt_trace_builder_free(b);
        return rc;
    }
    nt_trace *t = NULL;
    nt_status fs = nt_trace_builder_finish(b, p, s, &t);
    if (fs != NT_OK) {
        fprintf(stderr, "nettrace: %s: %s\n", path, nt_status_describe(fs));
        nt_parser_free(p);
        return cli_exit_code(fs);
    }
    if (!nt_trace_counts_exact(t)) {
        nt_parser_free(p);
        *out = t;
        return CLI_EXIT_OK; /* read again, sample by sample */
    }
    nt_trace_stats ts;
    nt_trace_stats_get(t, &ts);
    rc = report(path, p, s, (size_t)ts.samples, "samples");
    nt_parser_free(p);
    *out = t;
    return rc;
}

int cli_profile_load(const char *path, bool keep_events, nt_profile **out)
{
    *out = NULL;
    /* The commands on event profiles and GCs never read the samples. */
    nt_profile_options po = { .keep_events = keep_events, .events_only = true };
    nt_profile_builder *b = nt_profile_builder_new(&po, NULL);
    if (!b) {
        fprintf(stderr, "nettrace: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    nt_callbacks cb;
    nt_profile_builder_callbacks(&cb);
    nt_parser *p;
    nt_status s;
    int rc;
    if (!feed(path, &cb, b, &p, &s, &rc)) {
        nt_profile_builder_free(b);
        return rc;
    }
    nt_profile *pr = NULL;
    nt_status fs = nt_profile_builder_finish(b, p, s, &pr);
    if (fs != NT_OK) {
        fprintf(stderr, "nettrace: %s: %s\n", path, nt_status_describe(fs));
        nt_parser_free(p);
        return cli_exit_code(fs);
    }
    rc = report(path, p, s, nt_profile_record_count(pr), "profile records");
    nt_parser_free(p);
    *out = pr;
    return rc;
}

int cli_trace_load(const char *path, bool count, nt_trace **out)
{
    count = count && rereadable(path);
    int rc = load(path, count, out);
    if (count && *out && !nt_trace_counts_exact(*out)) {
        nt_trace_free(*out);
        if (strcmp(path, "-") == 0)
            lseek(0, 0, SEEK_SET);
        rc = load(path, false, out);
    }
    return rc;
}

char *cli_stack_line(const nt_trace_stack *s)
{
    if (!s->frame_count)
        return strdup("-");
    size_t len = 0;
    for (uint32_t k = 0; k < s->frame_count; k++)
        len += nt_frame_name(&s->frames[k], NULL, 0) + 1;
    char *line = malloc(len);
    if (!line)
        return NULL;
    size_t pos = 0;
    for (uint32_t k = s->frame_count; k-- > 0;) {
        pos += nt_frame_name(&s->frames[k], line + pos, len - pos);
        line[pos++] = k ? ';' : '\0';
    }
    return line;
}

bool cli_parse_time_ns(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long whole = strtoll(s, &end, 10);
    bool integer = end != s && *end != '.' && *end != 'e' && *end != 'E' && errno == 0;
    double real = 0;
    if (!integer) {
        real = strtod(s, &end);
        if (end == s)
            return false;
    }
    int64_t mul;
    if (*end == 0 || strcmp(end, "ns") == 0)
        mul = 1;
    else if (strcmp(end, "us") == 0)
        mul = 1000;
    else if (strcmp(end, "ms") == 0)
        mul = 1000000;
    else if (strcmp(end, "s") == 0)
        mul = 1000000000;
    else
        return false;
    if (integer) {
        /* Exact for integers: trace clocks count ns since boot, beyond a double's 2^53. */
        if (whole > INT64_MAX / mul || whole < INT64_MIN / mul)
            return false;
        *out = (int64_t)whole * mul;
        return true;
    }
    double ns = real * (double)mul;
    if (!(ns < 9.2e18 && ns > -9.2e18))
        return false;
    *out = (int64_t)ns;
    return true;
}

void cli_warn_unnamed(const nt_trace *t)
{
    nt_trace_stats ts;
    nt_trace_stats_get(t, &ts);
    if (!ts.samples)
        return;
    if (!ts.jit_records && !ts.rundown_records)
        fputs("nettrace: warning: the trace has no JIT or rundown method events, so no frame can be named\n"
              "          (trace with the runtime's JIT and loader keywords and keep rundown on)\n",
              stderr);
    else if (!ts.rundown_records)
        fputs("nettrace: warning: the trace has no rundown events: code compiled before the session\n"
              "          started stays unresolved\n",
              stderr);
}
