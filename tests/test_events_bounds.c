/* nettrace events on hostile traces (issue 21, items 3 and 7): memory stays
 * bounded whatever the output (a bounded reorder buffer with a stream-order
 * fallback said on standard error; with --stacks a spool on disk), the
 * output per byte of input is bounded by --max-output-ratio with a clear
 * error, and names from the trace reach text lines only escaped.  Traces are
 * made here with the public writer; memory is the child's peak RSS against a
 * run of the same command on a small trace (a ratio, not a time). */
#include <criterion/criterion.h>

#include "cli_run.h"
#include "support.h"
#include "nettrace_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* nettrace events ARGS... TRACE */
static cli_run run_nt(const char *const *args, const char *trace, bool keep)
{
    const char *argv[16] = { "events" };
    int argc = 1;
    for (; *args && argc < 14; args++)
        argv[argc++] = *args;
    argv[argc++] = trace;
    argv[argc] = NULL;
    cli_run r = cli_run_nettrace(argv, keep);
    cr_assert_neq(r.status, -1, "nettrace did not run");
    return r;
}

/* ---- traces ---- */

typedef struct trace_spec {
    const char *provider, *event_name, *field_name; /* NULL: harmless defaults */
    uint32_t events;
    uint16_t elements;   /* structs of one byte in each event's array: {"<inner>":0} each */
    uint32_t inner_len;  /* the length of the struct's field name (0: 1) */
    bool descending;     /* timestamps run backwards (no sequence point sorts them) */
    bool with_stack;
} trace_spec;

static void write_trace(const char *path, const trace_spec *t)
{
    nt_membuf out = { 0 };
    nt_writer *w = nt_writer_new(NULL, nt_membuf_write, &out, NULL);
    cr_assert(w);
    size_t inner_len = t->inner_len ? t->inner_len : 1;
    char *inner = malloc(inner_len + 1);
    cr_assert(inner);
    memset(inner, 'b', inner_len);
    inner[inner_len] = 0;
    nt_field fields[] = { { t->field_name ? t->field_name : "a", NT_TYPE_ARRAY, NT_TYPE_OBJECT, 0 },
                          { inner, NT_TYPE_BYTE, 0, 1 } };
    nt_event_desc d = { .provider = t->provider ? t->provider : "Test", .event_id = 1,
                        .event_name = t->event_name ? t->event_name : "Amp", .field_count = 2, .fields = fields };
    uint32_t id;
    cr_assert_eq(nt_writer_define(w, &d, &id), NT_OK, "%s", nt_writer_message(w));
    uint32_t stack = 0;
    uint64_t ips[] = { 0x1000, 0x2000, 0x3000 };
    if (t->with_stack)
        cr_assert_eq(nt_writer_stack(w, ips, 3, &stack), NT_OK);
    size_t psize = 2 + (size_t)t->elements;
    uint8_t *payload = calloc(1, psize);
    cr_assert(payload);
    payload[0] = (uint8_t)t->elements;
    payload[1] = (uint8_t)(t->elements >> 8);
    for (uint32_t i = 0; i < t->events; i++) {
        nt_writer_event ev = { .metadata_id = id, .thread_id = 7, .stack_id = stack,
                               .timestamp = t->descending ? 100000000 - i : 1000 + i, .payload = payload,
                               .payload_size = (uint32_t)psize };
        cr_assert_eq(nt_writer_write_event(w, &ev), NT_OK, "%s", nt_writer_message(w));
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    free(payload);
    free(inner);
    cr_assert(ts_write_file(path, out.data, out.len), "%s", path);
    nt_membuf_free(&out);
}

static const char *trace_path(const char *what)
{
    static char p[4][96];
    static int k;
    char *s = p[k++ & 3];
    snprintf(s, sizeof p[0], "/tmp/nt-evb-%s-%d.nettrace", what, (int)getpid());
    return s;
}

/* ---- item 3: output amplification ---- */

Test(events_bounds, amplification_stops_at_the_output_ratio_with_a_clear_error)
{
    /* 100 events of 8,000 one-byte structs with a 4,000-byte field name: 8 KB in, 32 MB out each */
    const char *path = trace_path("amp");
    write_trace(path, &(trace_spec){ .events = 100, .elements = 8000, .inner_len = 4000 });
    const char *const args[] = { NULL };
    cli_run r = run_nt(args, path, false);
    cr_assert_eq(r.status, 16, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, "--max-output-ratio") && strstr(r.err, "at the event at byte"), "%s", r.err);
    cli_run_free(&r);
    /* raised far enough, the same kind of trace prints whole */
    write_trace(path, &(trace_spec){ .events = 2, .elements = 8000, .inner_len = 4000 });
    const char *const raised[] = { "--max-output-ratio", "100000", NULL };
    r = run_nt(raised, path, false);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cli_run_free(&r);
    const char *const low[] = { "--max-output-ratio", "0", NULL };
    r = run_nt(low, path, false);
    cr_assert_eq(r.status, 2, "--max-output-ratio 0 is a usage error");
    cli_run_free(&r);
    unlink(path);
}

/* Peak RSS of `events ARGS` on a trace of n events of `elements` structs, less a run on a tiny one. */
static long rss_growth(const char *const *args, bool stacks, uint32_t n, uint16_t elements, cli_run *big)
{
    const char *small = trace_path("small"), *large = trace_path("large");
    write_trace(small, &(trace_spec){ .events = 10, .elements = 4, .with_stack = stacks });
    write_trace(large, &(trace_spec){ .events = n, .elements = elements, .with_stack = stacks });
    cli_run base = run_nt(args, small, false);
    cr_assert_eq(base.status, 0, "%s", base.err);
    *big = run_nt(args, large, false);
    unlink(small);
    unlink(large);
    long growth = big->rss_kb - base.rss_kb;
    cli_run_free(&base);
    return growth;
}

Test(events_bounds, memory_stays_bounded_without_sequence_points)
{
    /* 8,000 lines of 4 KB, no sequence point: 32 MB of output, 1 MiB of reorder buffer */
    const char *const args[] = { "--reorder-bytes", "1048576", NULL };
    cli_run big;
    long growth = rss_growth(args, false, 8000, 580, &big);
    cr_assert_eq(big.status, 0, "%s", big.err);
    cr_assert(strstr(big.err, "stream order"), "the fallback is not said: %s", big.err);
    cr_assert_lt(growth, 12 * 1024, "RSS grew %ld KB for 32 MB of output through a 1 MiB buffer", growth);
    cli_run_free(&big);
}

Test(events_bounds, memory_stays_bounded_with_stacks)
{
    /* the same output, every line waiting for the end of the stream */
    const char *const args[] = { "--stacks", NULL };
    cli_run big;
    long growth = rss_growth(args, true, 8000, 580, &big);
    cr_assert_eq(big.status, 0, "%s", big.err);
    cr_assert_lt(growth, 12 * 1024, "RSS grew %ld KB for 32 MB of --stacks output", growth);
    cli_run_free(&big);
}

static bool sorted_lines(const char *s, size_t from_line, size_t to_line)
{
    long long prev = -1;
    size_t k = 0;
    for (const char *p = s; *p; p = strchr(p, '\n') + 1, k++) {
        if (k >= from_line && k < to_line) {
            long long t = atoll(p);
            if (t < prev)
                return false;
            prev = t;
        }
        if (!strchr(p, '\n'))
            break;
    }
    return true;
}

Test(events_bounds, past_the_reorder_buffer_lines_come_in_stream_order)
{
    const char *path = trace_path("order");
    write_trace(path, &(trace_spec){ .events = 2000, .elements = 0, .descending = true });
    /* trace-clock ns first on each line: the order is read exactly */
    const char *const none[] = { "--absolute", NULL };
    cli_run r = run_nt(none, path, true);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(sorted_lines(r.out, 0, 2000), "the whole output fits the default buffer: in time order");
    cr_assert_eq(r.err[0], 0, "nothing to say: %s", r.err);
    cli_run_free(&r);
    const char *const small[] = { "--reorder-bytes", "4096", "--absolute", NULL };
    r = run_nt(small, path, true);
    cr_assert_eq(r.status, 0, "%s", r.err);
    size_t lines = 0;
    for (const char *p = r.out; *p; p++)
        lines += *p == '\n';
    cr_assert_eq(lines, 2000, "every event is printed");
    cr_assert(strstr(r.err, "stream order") && strstr(r.err, "--reorder-bytes"), "%s", r.err);
    cr_assert(sorted_lines(r.out, 0, 50), "the buffer's first lines are sorted");
    cr_assert(!sorted_lines(r.out, 0, 2000), "then stream order (descending)");
    cli_run_free(&r);
    unlink(path);
}

/* ---- item 7: names reach a text line escaped ---- */

Test(events_bounds, names_forge_no_line_and_no_terminal_control)
{
    const char *path = trace_path("names");
    write_trace(path, &(trace_spec){ .provider = "Evil\n1 2 Forged Provider", .event_name = "Title\x1b]0;pwned\x07\x1b[2J",
                                     .field_name = "x=1 y", .events = 3, .elements = 1 });
    const char *const none[] = { NULL };
    cli_run r = run_nt(none, path, true);
    cr_assert_eq(r.status, 0, "%s", r.err);
    size_t lines = 0;
    for (size_t i = 0; i < r.out_len; i++) {
        unsigned char c = (unsigned char)r.out[i];
        lines += c == '\n';
        cr_assert(c == '\n' || (c >= 0x20 && c != 0x7f), "control byte 0x%02x at %zu", c, i);
    }
    cr_assert_eq(lines, 3, "one line per event:\n%s", r.out);
    cr_assert(strstr(r.out, " Evil\\x0A1\\x202\\x20Forged\\x20Provider Title\\x1B]0;pwned\\x07\\x1B[2J x\\x3D1\\x20y=[{\"b\":0}]"),
              "%s", r.out);
    cli_run_free(&r);
    unlink(path);
}

/* ---- item 10: the stack text of samples and events --stacks is kept within a budget ---- */

/* 2,000 distinct stacks of 25 frames over 100 methods named with 1,000 bytes each: 25 KB of text per
 * stack, each sampled once (50 MB of output), from 0.6 MB of input. */
static void write_deep_stacks(const char *path)
{
    nt_membuf out = { 0 };
    nt_writer *w = nt_writer_new(NULL, nt_membuf_write, &out, NULL);
    cr_assert(w);
    char name[1001];
    for (int m = 0; m < 100; m++) {
        memset(name, 'a' + m % 26, 1000);
        char prefix[8];
        snprintf(prefix, sizeof prefix, "M%03d_", m);
        memcpy(name, prefix, strlen(prefix));
        name[1000] = 0;
        nt_method rec = { .which = NT_RECORD_LOAD, .method_id = 100 + (uint64_t)m, .module_id = 1,
                          .start_address = 0x10000 + 0x100 * (uint64_t)m, .size = 0x100,
                          .flags = NT_METHOD_FLAG_JITTED, .declaring_type = "T", .name = name, .signature = "",
                          .timestamp = 1 };
        cr_assert_eq(nt_writer_method(w, NULL, &rec), NT_OK, "%s", nt_writer_message(w));
    }
    uint64_t ips[25];
    for (uint32_t s = 0; s < 2000; s++) {
        for (int k = 0; k < 25; k++) /* a distinct stack per s: frame k from digit k of s in base 100, shifted */
            ips[k] = 0x10000 + 0x100 * ((s / (k < 2 ? (k ? 100 : 1) : 1) + (uint32_t)k * 7) % 100) + 8;
        uint32_t id;
        cr_assert_eq(nt_writer_stack(w, ips, 25, &id), NT_OK);
        nt_writer_event hdr = { .thread_id = 9, .timestamp = 1000 + s, .stack_id = id };
        cr_assert_eq(nt_writer_sample(w, &hdr, NT_SAMPLE_MANAGED), NT_OK);
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
    nt_writer_free(w);
    cr_assert(ts_write_file(path, out.data, out.len), "%s", path);
    nt_membuf_free(&out);
}

Test(stack_texts, samples_and_events_keep_stack_text_within_the_budget)
{
    const char *path = trace_path("deep");
    write_deep_stacks(path);
    const char *small = trace_path("tiny");
    write_trace(small, &(trace_spec){ .events = 10, .elements = 1, .with_stack = true });
    const char *const samples[] = { "samples", path, NULL }, *const samples_small[] = { "samples", small, NULL };
    cli_run base = cli_run_nettrace(samples_small, false), big = cli_run_nettrace(samples, true);
    cr_assert_eq(big.status, 0, "%s", big.err);
    cr_assert_gt(big.out_len, 45u << 20, "%zu bytes: the stacks are not as distinct and deep as meant", big.out_len);
    long growth = big.rss_kb - base.rss_kb;
    cr_expect_lt(growth, 30 * 1024, "samples: RSS grew %ld KB for 50 MB of distinct stack text", growth);
    cli_run_free(&base);
    cli_run_free(&big);
    const char *const st[] = { "--stacks", NULL };
    base = run_nt(st, small, false);
    big = run_nt(st, path, false);
    cr_assert_eq(big.status, 0, "%s", big.err);
    growth = big.rss_kb - base.rss_kb;
    cr_expect_lt(growth, 30 * 1024, "events --stacks: RSS grew %ld KB for 50 MB of distinct stack text", growth);
    cli_run_free(&base);
    cli_run_free(&big);
    unlink(path);
    unlink(small);
}
