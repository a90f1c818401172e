/* nt_convert / nt_convert_bytes (nettrace_convert.h) as a library call: a
 * slice keeps the window's samples and the method records whose code holds
 * their frames (every one on request, or from a pipe), so its frames are
 * named as the original's; a cut input still gives a complete output of
 * what was read; a failing sink is the output's failure; bad options are
 * refused before anything is written. */
#include "nettrace_convert.h"

#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#define MS 1000000 /* the writer's default clock: 1 GHz, so ticks are ns */

/* A method "name" over [start, start + 0x100), as a JIT load (which = NT_RECORD_LOAD) or a rundown, at ts. */
static void method(nt_writer *w, uint32_t which, uint64_t id, uint64_t start, const char *name, int64_t ts)
{
    nt_method m = { .which = which, .method_id = id, .module_id = 1, .start_address = start, .size = 0x100,
                    .flags = NT_METHOD_FLAG_JITTED, .declaring_type = "T", .name = name, .signature = "",
                    .timestamp = ts };
    nt_writer_event hdr = { .thread_id = 1, .timestamp = ts };
    cr_assert_eq(nt_writer_method(w, &hdr, &m), NT_OK, "%s", nt_writer_message(w));
}

/* Early loaded at 0.5 ms, then ten samples in it at 1..10 ms (thread 7), Late loaded at 10.5 ms (never
 * sampled), a rundown of Early at 11 ms. */
static nt_membuf trace(uint32_t format)
{
    nt_membuf out = { 0 };
    nt_writer_options o = { .format = format, .block_bytes = 64 }; /* many blocks: a cut input keeps some */
    nt_writer *w = nt_writer_new(&o, nt_membuf_write, &out, NULL);
    cr_assert_not_null(w);
    method(w, NT_RECORD_LOAD, 1, 0x1000, "Early", MS / 2);
    uint64_t ip = 0x1010;
    uint32_t stack = 0;
    cr_assert_eq(nt_writer_stack(w, &ip, 1, &stack), NT_OK);
    for (int i = 1; i <= 10; i++) {
        nt_writer_event hdr = { .thread_id = 7, .timestamp = (int64_t)i * MS, .stack_id = stack };
        cr_assert_eq(nt_writer_sample(w, &hdr, NT_SAMPLE_MANAGED), NT_OK, "%s", nt_writer_message(w));
    }
    method(w, NT_RECORD_LOAD, 2, 0x2000, "Late", 10 * MS + MS / 2);
    method(w, NT_RECORD_DC_END, 1, 0x1000, "Early", 11 * MS);
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    return out;
}

static nt_trace *load(const nt_membuf *b, nt_status want)
{
    nt_trace *t = NULL;
    char msg[256];
    nt_status s = nt_trace_from_buffer(b->data, b->len, NULL, &t, msg, sizeof msg);
    cr_assert_eq(s, want, "%s", msg);
    cr_assert_not_null(t);
    return t;
}

static void assert_named(const nt_trace *t, size_t i, const char *want)
{
    nt_trace_sample s = nt_trace_sample_at(t, i);
    cr_assert_eq(s.frame_count, 1);
    char name[128];
    nt_frame_name(nt_trace_frame_at(t, s.frame_ids[0]), name, sizeof name);
    cr_assert(strstr(name, want), "sample %zu is named '%s', want '%s'", i, name, want);
}

Test(convert_api, a_slice_keeps_the_windows_samples_and_the_records_they_need)
{
    nt_membuf in = trace(4);
    nt_convert_options o = { .struct_size = sizeof o,
                             .from = { .set = true, .absolute = true, .ns = 3 * MS },
                             .to = { .set = true, .absolute = true, .ns = 6 * MS } };
    nt_convert_stats st = { .struct_size = sizeof st };
    nt_membuf out = { 0 };
    /* Every record asked for: Late's load too. */
    o.records = NT_CONVERT_RECORDS_ALL;
    cr_assert_eq(nt_convert_bytes(in.data, in.len, &o, nt_membuf_write, &out, &st), NT_OK, "%s", st.message);
    cr_assert_eq(st.records_outside_window, 3, "Early's load, Late's load, the rundown");
    cr_assert_eq(st.method_records_left_out, 0);
    size_t all_bytes = out.len;
    out.len = 0;
    o.records = NT_CONVERT_RECORDS_NEEDED;
    cr_assert_eq(nt_convert_bytes(in.data, in.len, &o, nt_membuf_write, &out, &st), NT_OK, "%s", st.message);
    cr_assert_eq(st.events_outside_window, 7, "the samples at 1, 2 and 6..10 ms");
    cr_assert_eq(st.records_outside_window, 2, "Early's load and rundown: its code holds the window's frames");
    cr_assert_eq(st.method_records_left_out, 1, "Late's load: no frame of the window is in its code");
    cr_assert_lt(out.len, all_bytes);
    cr_assert_eq(st.events_written, 5);
    cr_assert_eq(st.output_bytes, out.len);
    nt_trace *t = load(&out, NT_OK);
    cr_assert_eq(nt_trace_header(t)->format_major, 4, "format 0 keeps the input's");
    cr_assert_eq(nt_trace_sample_count(t), 3);
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(nt_trace_sample_at(t, i).time_ns, (int64_t)(3 + i) * MS);
        assert_named(t, i, "Early");
    }
    nt_trace_free(t);

    /* A relative window is resolved against the header: the writer's trace starts at clock 0. */
    o.from = (nt_time_bound){ .set = true, .ns = 9 * MS };
    o.to = (nt_time_bound){ 0 };
    o.format = 6;
    out.len = 0;
    cr_assert_eq(nt_convert_bytes(in.data, in.len, &o, nt_membuf_write, &out, &st), NT_OK, "%s", st.message);
    t = load(&out, NT_OK);
    cr_assert_eq(nt_trace_header(t)->format_major, 6);
    cr_assert_eq(nt_trace_sample_count(t), 2, "9 and 10 ms");
    assert_named(t, 1, "Early");
    nt_trace_free(t);

    /* A pipe is read once: which records the frames need is not known, every one is kept. */
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    cr_assert_lt(in.len, 65536, "the trace fits a pipe's buffer");
    cr_assert_eq(write(fds[1], in.data, in.len), (ssize_t)in.len);
    close(fds[1]);
    o.from = (nt_time_bound){ .set = true, .absolute = true, .ns = 3 * MS };
    o.to = (nt_time_bound){ .set = true, .absolute = true, .ns = 6 * MS };
    out.len = 0;
    cr_assert_eq(nt_convert(fds[0], &o, nt_membuf_write, &out, &st), NT_OK, "%s", st.message);
    close(fds[0]);
    cr_assert_eq(st.method_records_left_out, 0);
    cr_assert_eq(st.records_outside_window, 3);
    nt_membuf_free(&out);
    nt_membuf_free(&in);
}

Test(convert_api, a_cut_input_gives_a_complete_output_of_what_was_read)
{
    nt_membuf in = trace(6);
    /* Cut inside the header (nothing to write), in the middle, and inside the end-of-stream tag (every event read). */
    const size_t cuts[] = { 10, in.len / 2, in.len - 1 };
    for (size_t k = 0; k < 3; k++) {
        nt_convert_stats st = { .struct_size = sizeof st };
        nt_membuf out = { 0 };
        nt_status s = nt_convert_bytes(in.data, cuts[k], &(nt_convert_options){ .format = 4 }, nt_membuf_write,
                                       &out, &st);
        cr_assert_eq(s, NT_ERR_TRUNCATED, "cut at %zu: %s", cuts[k], nt_status_name(s));
        cr_assert_not(st.output_failed);
        cr_assert(strstr(st.message, "byte"), "the message names the offset: %s", st.message);
        cr_assert(st.error_offset <= cuts[k]);
        cr_assert_eq(st.output_bytes, out.len);
        if (k == 0)
            cr_assert_eq(out.len, 0, "no header read, nothing written");
        if (k == 2) {
            cr_assert_eq(st.events_written, 13, "every event was read before the cut");
            nt_trace *t = load(&out, NT_OK);
            cr_assert_eq(nt_trace_sample_count(t), 10);
            assert_named(t, 9, "Early");
            nt_trace_free(t);
        }
        nt_membuf_free(&out);
    }
    nt_membuf_free(&in);
}

static int failing_sink(void *user, const void *data, size_t len)
{
    (void)data;
    (void)len;
    ++*(int *)user;
    return -1;
}

Test(convert_api, a_failing_sink_is_the_outputs_failure)
{
    nt_membuf in = trace(4);
    nt_convert_stats st = { .struct_size = sizeof st };
    int calls = 0;
    cr_assert_eq(nt_convert_bytes(in.data, in.len, NULL, failing_sink, &calls, &st), NT_ERR_IO);
    cr_assert(st.output_failed);
    cr_assert_eq(st.status, NT_ERR_IO);
    cr_assert_gt(calls, 0);
    cr_assert_neq(st.message[0], 0);
    nt_membuf_free(&in);
}

Test(convert_api, bad_arguments_are_refused_before_anything_is_written)
{
    nt_membuf in = trace(4);
    nt_membuf out = { 0 };
    nt_convert_stats st = { .struct_size = sizeof st };
    nt_convert_options o = { .format = 5 };
    cr_assert_eq(nt_convert_bytes(in.data, in.len, &o, nt_membuf_write, &out, &st), NT_ERR_INVALID_ARG);
    cr_assert_neq(st.message[0], 0);
    o = (nt_convert_options){ .from = { .set = true, .ns = 5 }, .to = { .set = true, .ns = 4 } };
    cr_assert_eq(nt_convert_bytes(in.data, in.len, &o, nt_membuf_write, &out, NULL), NT_ERR_INVALID_ARG);
    /* Ends given differently are ordered once the header places them: the relative 1 s is after @5 ms. */
    o = (nt_convert_options){ .from = { .set = true, .ns = 1000 * MS }, .to = { .set = true, .absolute = true, .ns = 5 * MS } };
    cr_assert_eq(nt_convert_bytes(in.data, in.len, &o, nt_membuf_write, &out, &st), NT_ERR_INVALID_ARG);
    cr_assert(st.output_failed);
    cr_assert_eq(out.len, 0);
    cr_assert_eq(nt_convert_bytes(in.data, in.len, NULL, NULL, NULL, NULL), NT_ERR_INVALID_ARG);
    cr_assert_eq(nt_convert(-1, NULL, nt_membuf_write, &out, NULL), NT_ERR_INVALID_ARG);
    cr_assert_eq(nt_convert_bytes("not a trace", 11, NULL, nt_membuf_write, &out, &st), NT_ERR_NOT_NETTRACE);
    cr_assert_not(st.output_failed);
    cr_assert_eq(out.len, 0, "nothing is written before a header is read");
    nt_membuf_free(&in);
}
