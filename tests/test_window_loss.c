/* Loss accounting per thread: the gaps the parser finds in each capture
 * thread's sequence numbers (nt_callbacks.sequence_gap) and what the windows
 * count of them (nt_trace_window_loss_get), on writer-built V4 and V6 streams
 * whose gaps are known: which thread, which numbers, found where. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "nettrace_trace.h"
#include "nettrace_writer.h"

#include <stddef.h>
#include <string.h>

/* Where the stream's windows end (bytes), and their times (ticks = ns: a 1 GHz clock). */
typedef struct lossy {
    nt_membuf mb;
    size_t mark[3];
} lossy;

static uint32_t stack_a;

static void sample(nt_writer *w, uint64_t tid, uint32_t seq, int64_t ts)
{
    nt_writer_event hdr = { .thread_id = tid, .sequence_number = seq, .timestamp = ts, .is_sorted = true };
    cr_assert_eq(nt_writer_stack(w, (const uint64_t[]){ 0x1010 }, 1, &stack_a), NT_OK);
    hdr.stack_id = stack_a;
    cr_assert_eq(nt_writer_sample(w, &hdr, NT_SAMPLE_MANAGED), NT_OK, "%s", nt_writer_message(w));
}

/* Window 1 (ticks 1000..1999): thread 101 numbers 1-3 then 7 (4-6 lost), 102 numbers 1 then 9 (2-8 lost),
 * 103 numbers 1-2: a sequence point at 1900.  Window 2 (2000..2999): 103 numbers 3, 6, 8 (4-5 and 7
 * lost), 101 number 8, then a sequence point at 2500 that gives 101 number 12 (9-12 lost there).
 * Window 3 (3000..): 101 number 13, 102 number 10: nothing lost. */
static void lossy_stream(uint32_t format, lossy *out)
{
    memset(out, 0, sizeof *out);
    nt_writer_options opt = { .format = format };
    nt_writer *w = nt_writer_new(&opt, nt_membuf_write, &out->mb, NULL);
    cr_assert_not_null(w);
    sample(w, 101, 1, 1000);
    sample(w, 102, 1, 1001);
    sample(w, 103, 1, 1002);
    sample(w, 101, 2, 1010);
    sample(w, 101, 3, 1020);
    sample(w, 103, 2, 1030);
    sample(w, 101, 7, 1100);
    sample(w, 102, 9, 1200);
    cr_assert_eq(nt_writer_sequence_point(w, 1900, 0), NT_OK, "%s", nt_writer_message(w));
    out->mark[0] = out->mb.len;
    sample(w, 103, 3, 2000);
    sample(w, 103, 6, 2100);
    sample(w, 103, 8, 2200);
    sample(w, 101, 8, 2300);
    const nt_sp_thread th[] = { { 101, 12, 0 }, { 102, 9, 0 }, { 103, 8, 0 } };
    cr_assert_eq(nt_writer_sequence_point_threads(w, 2500, 0, th, 3), NT_OK, "%s", nt_writer_message(w));
    out->mark[1] = out->mb.len;
    sample(w, 101, 13, 3000);
    sample(w, 102, 10, 3100);
    cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
    out->mark[2] = out->mb.len;
    nt_writer_free(w);
}

#define MAX_GAPS 16

typedef struct seen {
    nt_sequence_gap gaps[MAX_GAPS];
    size_t ngaps;
    uint64_t sp_dropped;
} seen;

static int on_gap(void *user, const nt_sequence_gap *g)
{
    seen *s = user;
    cr_assert_lt(s->ngaps, MAX_GAPS);
    s->gaps[s->ngaps++] = *g;
    return 0;
}

static int on_sp(void *user, const nt_sequence_point *sp)
{
    seen *s = user;
    for (uint32_t i = 0; i < sp->thread_count; i++)
        s->sp_dropped += sp->threads[i].dropped;
    return 0;
}

/* Every parameterized case runs on both format families. */
static struct criterion_test_params both_formats(void)
{
    static uint32_t formats[] = { 4, 6 };
    return cr_make_param_array(uint32_t, formats, 2);
}

ParameterizedTestParameters(window_loss, the_parser_reports_each_gap) { return both_formats(); }

ParameterizedTest(uint32_t *format, window_loss, the_parser_reports_each_gap)
{
    lossy s;
    lossy_stream(*format, &s);
    seen got = { .ngaps = 0 };
    nt_callbacks cb = { .sequence_gap = on_gap, .sequence_point = on_sp, .struct_size = sizeof cb };
    nt_parser *p = nt_parser_new(&cb, &got, NULL, NULL);
    cr_assert_eq(nt_parser_feed(p, s.mb.data, s.mb.len), NT_OK, "%s", nt_parser_message(p));
    cr_assert_eq(nt_parser_finish(p), NT_OK, "%s", nt_parser_message(p));
    const struct {
        uint64_t tid;
        uint32_t first, lost, at;
        int64_t ts;
    } want[] = {
        { 101, 4, 3, NT_GAP_AT_EVENT, 1100 },        { 102, 2, 7, NT_GAP_AT_EVENT, 1200 },
        { 103, 4, 2, NT_GAP_AT_EVENT, 2100 },        { 103, 7, 1, NT_GAP_AT_EVENT, 2200 },
        { 101, 9, 4, NT_GAP_AT_SEQUENCE_POINT, 2500 },
    };
    size_t n = sizeof want / sizeof want[0];
    cr_assert_eq(got.ngaps, n, "V%u: %zu gaps reported, want %zu", *format, got.ngaps, n);
    for (size_t i = 0; i < n; i++) {
        const nt_sequence_gap *g = &got.gaps[i];
        cr_expect_eq(g->capture_thread_id, want[i].tid, "gap %zu: thread %llu", i,
                     (unsigned long long)g->capture_thread_id);
        cr_expect_eq(g->first, want[i].first, "gap %zu: first %u, want %u", i, g->first, want[i].first);
        cr_expect_eq(g->lost, want[i].lost, "gap %zu: lost %u, want %u", i, g->lost, want[i].lost);
        cr_expect_eq(g->found_at, want[i].at, "gap %zu: found at %u", i, g->found_at);
        cr_expect_eq(g->timestamp, want[i].ts, "gap %zu: at tick %lld", i, (long long)g->timestamp);
        cr_expect_eq(g->time_ns, want[i].ts, "gap %zu: 1 GHz clock", i);
        cr_expect(g->offset > 0 && g->offset < s.mb.len, "gap %zu: offset %llu inside the stream", i,
                  (unsigned long long)g->offset);
    }
    nt_parser_stats ps = { .struct_size = sizeof ps };
    nt_parser_stats_get(p, &ps);
    cr_assert_eq(ps.events_dropped, 17, "the stats count what the gaps lost");
    cr_assert_eq(got.sp_dropped, 17, "the sequence points count the same losses");
    nt_parser_free(p);
    nt_membuf_free(&s.mb);
}

static void expect_loss(const nt_window_loss *l, uint64_t window, const nt_thread_loss *want, size_t n)
{
    cr_assert_eq(l->window, window, "loss of window %llu, want %llu", (unsigned long long)l->window,
                 (unsigned long long)window);
    cr_assert_eq(l->thread_count, n, "window %llu: %llu threads lost events, want %zu", (unsigned long long)window,
                 (unsigned long long)l->thread_count, n);
    uint64_t gaps = 0, dropped = 0;
    for (size_t i = 0; i < n; i++) {
        cr_expect_eq(l->threads[i].thread_id, want[i].thread_id, "window %llu row %zu: thread %llu",
                     (unsigned long long)window, i, (unsigned long long)l->threads[i].thread_id);
        cr_expect_eq(l->threads[i].gaps, want[i].gaps, "window %llu thread %llu: %llu gaps",
                     (unsigned long long)window, (unsigned long long)want[i].thread_id,
                     (unsigned long long)l->threads[i].gaps);
        cr_expect_eq(l->threads[i].dropped, want[i].dropped, "window %llu thread %llu: %llu dropped",
                     (unsigned long long)window, (unsigned long long)want[i].thread_id,
                     (unsigned long long)l->threads[i].dropped);
        gaps += want[i].gaps;
        dropped += want[i].dropped;
    }
    cr_assert_eq(l->gaps, gaps);
    cr_assert_eq(l->dropped, dropped);
    cr_assert_eq(l->unplaced, 0);
}

/* Feed the stream up to each mark and take a window there. */
static void take_at(nt_trace_window *w, nt_parser *p, const lossy *s, size_t from, size_t to)
{
    cr_assert_eq(nt_parser_feed(p, s->mb.data + from, to - from), NT_OK, "%s", nt_parser_message(p));
    nt_trace *t;
    cr_assert_eq(nt_trace_window_take(w, &t), NT_OK);
    nt_trace_free(t);
}

ParameterizedTestParameters(window_loss, continuous_windows_count_their_threads_losses) { return both_formats(); }

ParameterizedTest(uint32_t *format, window_loss, continuous_windows_count_their_threads_losses)
{
    lossy s;
    lossy_stream(*format, &s);
    nt_trace_window *w = nt_trace_window_new(NULL, NULL);
    cr_assert_not_null(w);
    nt_window_loss l = { .struct_size = sizeof l };
    nt_trace_window_loss_get(w, &l);
    cr_assert_eq(l.window, 0, "no window handed out yet");
    cr_assert_eq(l.thread_count, 0);
    nt_callbacks cb = NT_STRUCT_INIT(nt_callbacks);
    nt_trace_window_callbacks(&cb);
    cr_assert_not_null(cb.sequence_gap, "the window counts gaps");
    nt_callbacks old = { 0 };
    nt_trace_window_callbacks(&old);
    cr_assert_eq(old.struct_size, (uint32_t)offsetof(nt_callbacks, sequence_gap),
                 "a caller of the first layout gets no more than it holds");
    nt_parser *p = nt_parser_new(&cb, w, NULL, NULL);

    take_at(w, p, &s, 0, s.mark[0]);
    nt_trace_window_loss_get(w, &l);
    expect_loss(&l, 1, (const nt_thread_loss[]){ { 101, 1, 3 }, { 102, 1, 7 } }, 2);

    take_at(w, p, &s, s.mark[0], s.mark[1]);
    nt_trace_window_loss_get(w, &l);
    expect_loss(&l, 2, (const nt_thread_loss[]){ { 101, 1, 4 }, { 103, 2, 3 } }, 2);

    take_at(w, p, &s, s.mark[1], s.mark[2]);
    cr_assert_eq(nt_parser_finish(p), NT_OK, "%s", nt_parser_message(p));
    nt_trace_window_loss_get(w, &l);
    expect_loss(&l, 3, NULL, 0);
    cr_assert_null(l.threads, "no rows when nothing was lost");

    nt_trace_window_stats ws = { .struct_size = sizeof ws };
    nt_trace_window_stats_get(w, &ws);
    cr_assert_eq(ws.events_dropped, 17, "the sequence points' count agrees");
    nt_parser_free(p);
    nt_trace_window_free(w);
    nt_membuf_free(&s.mb);
}

static uint64_t dropped_of(const nt_trace *t)
{
    nt_trace_stats ts = NT_STRUCT_INIT(nt_trace_stats);
    nt_trace_stats_get(t, &ts);
    return ts.events_dropped;
}

/* A request window counts the gaps found in its span on its threads, beside the continuous window. */
Test(window_loss, request_windows_count_their_span_and_threads)
{
    lossy s;
    lossy_stream(6, &s);
    nt_trace_window *w = nt_trace_window_new(NULL, NULL);
    nt_callbacks cb = NT_STRUCT_INIT(nt_callbacks);
    nt_trace_window_callbacks(&cb);
    nt_parser *p = nt_parser_new(&cb, w, NULL, NULL);
    take_at(w, p, &s, 0, s.mark[0]);

    const uint64_t only_103[] = { 103 };
    nt_window_filter f = { .struct_size = sizeof f, .thread_ids = only_103, .thread_count = 1 };
    nt_window_id one, all, early;
    cr_assert_eq(nt_trace_window_open(w, 2000, &f, &one), NT_OK);
    cr_assert_eq(nt_trace_window_open(w, 2000, NULL, &all), NT_OK);
    cr_assert_eq(nt_trace_window_open(w, 2000, NULL, &early), NT_OK);
    cr_assert_eq(nt_parser_feed(p, s.mb.data + s.mark[0], s.mark[1] - s.mark[0]), NT_OK);

    nt_trace *t;
    nt_window_loss l = { .struct_size = sizeof l };
    cr_assert_eq(nt_trace_window_close(w, one, 3000, &t), NT_OK);
    cr_assert_eq(dropped_of(t), 3, "the request's trace says what its thread lost in its span");
    nt_trace_free(t);
    nt_trace_window_loss_get(w, &l);
    expect_loss(&l, 2, (const nt_thread_loss[]){ { 103, 2, 3 } }, 1);

    cr_assert_eq(nt_trace_window_close(w, all, 3000, &t), NT_OK);
    cr_assert_eq(dropped_of(t), 7);
    nt_trace_free(t);
    nt_trace_window_loss_get(w, &l);
    expect_loss(&l, 3, (const nt_thread_loss[]){ { 101, 1, 4 }, { 103, 2, 3 } }, 2);

    cr_assert_eq(nt_trace_window_close(w, early, 2150, &t), NT_OK, "ends before the second gap of 103");
    cr_assert_eq(dropped_of(t), 2);
    nt_trace_free(t);
    nt_trace_window_loss_get(w, &l);
    expect_loss(&l, 4, (const nt_thread_loss[]){ { 103, 1, 2 } }, 1);

    /* The continuous window still counts everything since its last take. */
    cr_assert_eq(nt_trace_window_take(w, &t), NT_OK);
    nt_trace_free(t);
    nt_trace_window_loss_get(w, &l);
    expect_loss(&l, 5, (const nt_thread_loss[]){ { 101, 1, 4 }, { 103, 2, 3 } }, 2);
    nt_parser_free(p);
    nt_trace_window_free(w);
    nt_membuf_free(&s.mb);
}

/* An older caller's struct (the first layout) is filled no further than its struct_size. */
Test(window_loss, a_short_struct_is_not_overrun)
{
    nt_trace_window *w = nt_trace_window_new(NULL, NULL);
    nt_trace *t;
    cr_assert_eq(nt_trace_window_take(w, &t), NT_OK);
    nt_trace_free(t);
    struct {
        nt_window_loss l;
        uint8_t canary[16];
    } buf;
    memset(&buf, 0xAB, sizeof buf);
    buf.l.struct_size = 0;
    nt_trace_window_loss_get(w, &buf.l);
    cr_assert_eq(buf.l.window, 1);
    cr_assert_eq(buf.l.struct_size, sizeof buf.l);
    for (size_t i = 0; i < sizeof buf.canary; i++)
        cr_assert_eq(buf.canary[i], 0xAB);
    nt_trace_window_loss_get(NULL, &buf.l);
    cr_assert_eq(buf.l.window, 0, "no window object: nothing");
    nt_trace_window_loss_get(w, NULL);
    nt_trace_window_free(w);
}
