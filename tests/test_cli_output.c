/* The tool's output boundary (issue 13, items 4, 5, 6 and 9): names from a
 * trace never forge lines or fields and never reach a terminal as control
 * sequences (samples, top, folded, info), JSON is valid UTF-8 whatever a
 * name holds, info's event-type bookkeeping stays n log n, and a full device
 * is an error.  Traces are made here with the test stream builder. */
#include <criterion/criterion.h>

#include "cli/event_types.h"
#include "common/json.h"
#include "common/text_escape.h"
#include "nettrace.h"
#include "support.h"
#include "trace_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the escapers ---- */

Test(text_escape, controls_separators_and_bad_utf8_become_hex)
{
    char out[256];
    /* ESC ] ... BEL (an OSC sequence), a C1 CSI (U+009B), a lone 0xFF, DEL, a newline, the separators */
    size_t n = cm_text_escape(out, sizeof out, "a;b c\n\x1b]0;x\x07\xc2\x9b\xff\x7f\xc3\xa9", "; ");
    cr_assert_str_eq(out, "a\\x3Bb\\x20c\\x0A\\x1B]0\\x3Bx\\x07\\xC2\\x9B\\xFF\\x7F\xc3\xa9");
    cr_assert_eq(n, strlen(out));
    /* snprintf-like: the length needed is returned also when the buffer is short */
    cr_assert_eq(cm_text_escape(out, 4, "\n\n", ""), 8);
    cr_assert_str_eq(out, "\\x0");
}

typedef struct sbuf {
    char d[512];
    size_t n;
} sbuf;

static void put(void *ctx, const char *p, size_t n)
{
    sbuf *b = ctx;
    memcpy(b->d + b->n, p, n);
    b->n += n;
    b->d[b->n] = 0;
}

Test(json, strings_are_valid_utf8_with_controls_escaped)
{
    sbuf b = { .n = 0 };
    cm_json_string(put, &b, "q\"\\\n\t\x01\x7f\xc2\x85\xff\xe2\x82\xac\xed\xa0\x80z");
    /* invalid sequences (a lone 0xFF, a UTF-8-encoded surrogate) become U+FFFD; C1 and DEL are escaped */
    cr_assert_str_eq(b.d, "\"q\\\"\\\\\\n\\t\\u0001\\u007f\\u0085\\ufffd\xe2\x82\xac\\ufffd\\ufffd\\ufffdz\"");
    b.n = 0;
    cm_json_string(put, &b, NULL);
    cr_assert_str_eq(b.d, "null");
}

/* ---- info's event types: linear in the records, merged by sorting ---- */

Test(event_types, many_types_cost_n_log_n_comparisons)
{
    enum { N = 100000 };
    cli_event_types et;
    cli_event_types_init(&et);
    char prov[32];
    for (uint32_t i = 0; i < N; i++) {
        snprintf(prov, sizeof prov, "P%u", i % 1000);
        cr_assert(cli_event_types_define(&et, i + 1, prov, "E", i / 1000, 1));
        cr_assert(cli_event_types_count(&et, i + 1));
    }
    /* a redefinition of an existing type merges with it */
    cr_assert(cli_event_types_define(&et, N + 1, "P0", "E", 0, 1));
    cr_assert(cli_event_types_count(&et, N + 1));
    cr_assert(cli_event_types_define(&et, N + 2, "Silent", "E", 1, 1)); /* no events: dropped */
    cli_event_types_finish(&et);
    cr_assert_eq(et.n, N);
    cr_assert_str_eq(et.types[0].provider, "P0");
    cr_assert_eq(et.types[0].count, 2);
    /* a list searched per record (the old info) needs ~N^2/2 = 5e9 comparisons */
    cr_assert_lt(et.compares, 20ull * N + 2 * N, "%llu comparisons for %d types", (unsigned long long)et.compares, N);
    cli_event_types_free(&et);
}

/* ---- the commands on a trace whose names attack the output ---- */

static const char *const HOSTILE[] = {
    "Evil\n5 999 M Forged!Evil.Method",   /* a newline forging a samples line */
    "Osc\x1b]0;pwned\x07",                /* a terminal title escape */
    "Semi;colon and space",                /* the samples and folded separators */
    ("Csi\xc2\x9b" "31m"),                 /* widened to U+00C2 U+009B: a C1 CSI */
    "Tab\tCr\rDel\x7f",
};
#define NHOSTILE (sizeof HOSTILE / sizeof HOSTILE[0])
#define NSAMPLES 23

static char g_path[256];

/* Write the built stream to g_path and release it. */
static void save_trace(pb *p)
{
    cr_assert(ts_write_file(g_path, p->b.d, p->b.n), "%s", g_path);
    tb_free(&p->b);
}

static void write_hostile_trace(void)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    uint64_t ips[NHOSTILE][2];
    const uint64_t *stacks[NHOSTILE];
    uint32_t depths[NHOSTILE];
    for (size_t i = 0; i < NHOSTILE; i++) {
        ips[i][0] = 0x1000 + 0x100 * i + 8; /* leaf */
        ips[i][1] = 0x1000 + 0x100 * ((i + 1) % NHOSTILE) + 9;
        stacks[i] = ips[i];
        depths[i] = 2;
    }
    pb_stacks(&p, 1, NHOSTILE, stacks, depths);
    pb_module(&p, 10, 7, 70, "/evil\n/path");
    pb_assembly(&p, 10, 70, "Evil\x1b[2J, Version=1.0.0.0");
    for (size_t i = 0; i < NHOSTILE; i++)
        pb_method(&p, MD_LOAD, 20, 100 + i, 7, 0x1000 + 0x100 * i, 0x100, "Ns;Type\n", HOSTILE[i]);
    for (int k = 0; k < NSAMPLES; k++)
        pb_sample(&p, 42, 1 + (uint32_t)k % NHOSTILE, 1000 + k, NT_SAMPLE_MANAGED);
    pb_end(&p);
    snprintf(g_path, sizeof g_path, "/tmp/nt-hostile-names-%d.nettrace", (int)getpid());
    save_trace(&p);
}

/* Run "nettrace ARGS g_path", capture stdout; returns the exit status. */
static int run(const char *args, char **out, size_t *len)
{
    const char *top = getenv("top_builddir");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s/nettrace' %s '%s' 2>/dev/null", top ? top : ".", args, g_path);
    FILE *f = popen(cmd, "r");
    cr_assert(f, "%s", cmd);
    size_t cap = 1 << 16;
    *out = malloc(cap);
    *len = 0;
    size_t n;
    while ((n = fread(*out + *len, 1, cap - *len - 1, f)) > 0) {
        *len += n;
        if (cap - *len < 1024)
            *out = realloc(*out, cap *= 2);
    }
    (*out)[*len] = 0;
    int rc = pclose(f);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* No byte a terminal acts on: C0 other than the newline, DEL, C1 (as UTF-8 or raw), ESC. */
static void assert_no_controls(const char *what, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        cr_assert(c == '\n' || (c >= 0x20 && c != 0x7f), "%s: control byte 0x%02x at %zu", what, c, i);
        cr_assert(!(c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] < 0xa0), "%s: a C1 control at %zu", what, i);
        if (c >= 0x80) { /* a whole UTF-8 sequence, or a lone byte */
            size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
            cr_assert(len && i + len <= n, "%s: a lone byte 0x%02x at %zu", what, c, i);
            for (size_t k = 1; k < len; k++)
                cr_assert(((unsigned char)s[i + k] & 0xc0) == 0x80, "%s: a broken sequence at %zu", what, i);
            i += len - 1;
        }
    }
}

static size_t count_lines(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += s[i] == '\n';
    return k;
}

TestSuite(hostile_names, .init = write_hostile_trace);

Test(hostile_names, samples_one_line_of_four_fields_per_sample)
{
    char *o;
    size_t n;
    cr_assert_eq(run("samples", &o, &n), 0);
    assert_no_controls("samples", o, n);
    cr_assert_eq(count_lines(o, n), NSAMPLES, "%s", o);
    for (char *line = strtok(o, "\n"); line; line = strtok(NULL, "\n")) {
        int spaces = 0;
        for (char *c = line; *c; c++)
            spaces += *c == ' ';
        cr_assert_eq(spaces, 3, "a name added a field: %s", line);
        cr_assert(strstr(line, "Forged") == NULL || strstr(line, "\\x0A5\\x20999"), "%s", line);
        char *frames = strrchr(line, ' ') + 1;
        int semis = 0;
        for (char *c = frames; *c; c++)
            semis += *c == ';';
        cr_assert_eq(semis, 1, "a name added a frame: %s", line);
    }
    free(o);
    unlink(g_path);
}

Test(hostile_names, top_folded_and_info_print_no_control_bytes)
{
    char *o;
    size_t n;
    cr_assert_eq(run("top -n 0", &o, &n), 0);
    assert_no_controls("top", o, n);
    cr_assert(strstr(o, "Evil\\x0A5 999 M Forged!Evil.Method"), "%s", o);
    free(o);
    cr_assert_eq(run("stacks", &o, &n), 0);
    assert_no_controls("folded", o, n);
    cr_assert_eq(count_lines(o, n), NHOSTILE, "%s", o);
    free(o);
    cr_assert_eq(run("info", &o, &n), 0);
    assert_no_controls("info", o, n);
    free(o);
    cr_assert_eq(run("top --json", &o, &n), 0);
    cr_assert(strstr(o, "\"Evil\\u001b[2J!Ns;Type\\n.Evil\\n5 999 M Forged!Evil.Method\"") != NULL, "%s", o);
    free(o);
    unlink(g_path);
}

Test(hostile_names, a_full_device_is_an_error)
{
    const char *top = getenv("top_builddir");
    char cmd[1024];
    static const char *const cmds[] = { "info", "info --json", "top", "top --json", "samples", "stacks" };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        snprintf(cmd, sizeof cmd, "'%s/nettrace' %s '%s' >/dev/full 2>/dev/null", top ? top : ".", cmds[i], g_path);
        int rc = system(cmd);
        cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 1, "%s exited %d, want 1", cmds[i], WEXITSTATUS(rc));
    }
    unlink(g_path);
}

/* ---- events the runtime dropped are said on standard error (issue 16) ---- */

Test(dropped, top_stacks_and_samples_say_how_many_events_were_dropped)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    uint64_t ips[1] = { 0x1008 };
    const uint64_t *stacks[1] = { ips };
    uint32_t depths[1] = { 1 };
    pb_stacks(&p, 1, 1, stacks, depths);
    pb_sample(&p, 42, 1, 1000, NT_SAMPLE_MANAGED);
    p.seq += 7; /* the runtime skipped seven sequence numbers: seven events lost */
    pb_sample(&p, 42, 1, 2000, NT_SAMPLE_MANAGED);
    pb_end(&p);
    snprintf(g_path, sizeof g_path, "/tmp/nt-dropped-%d.nettrace", (int)getpid());
    save_trace(&p);
    const char *top = getenv("top_builddir");
    static const char *const cmds[] = { "top", "stacks", "samples" };
    for (size_t i = 0; i < 3; i++) {
        char cmd[1024], err[2048];
        snprintf(cmd, sizeof cmd, "'%s/nettrace' %s '%s' 2>&1 >/dev/null", top ? top : ".", cmds[i], g_path);
        FILE *pf = popen(cmd, "r");
        cr_assert(pf);
        err[fread(err, 1, sizeof err - 1, pf)] = 0;
        pclose(pf);
        cr_assert(strstr(err, "dropped 7 events"), "%s says: %s", cmds[i], err);
    }
    unlink(g_path);
}
