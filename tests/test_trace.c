/* The aggregator on hand-made streams: the cases real traces in the corpus do
 * not exercise (re-JIT, rundown after samples, code address reuse, samples
 * out of order across threads, return addresses at a method's very end,
 * truncation). */
#include "nettrace_trace.h"
#include "ltest.h"
#include "support.h"
#include "trace_build.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


static nt_trace *build(pb *p, nt_status want)
{
    nt_trace *t = NULL;
    char msg[256];
    nt_status s = nt_trace_from_buffer(p->b.d, p->b.n, NULL, &t, msg, sizeof msg);
    cr_assert_eq(s, want, "status %s (%s)", nt_status_name(s), msg);
    cr_assert_not_null(t);
    return t;
}

/* Frame k of sample i by its display name. */
static const char *fname(const nt_trace *t, size_t i, uint32_t k)
{
    static char buf[8][256];
    static int slot;
    char *b = buf[slot++ & 7];
    nt_trace_sample s = nt_trace_sample_at(t, i);
    cr_assert_lt(k, s.frame_count, "sample %zu has %u frames", i, s.frame_count);
    nt_frame_name(nt_trace_frame_at(t, s.frame_ids[k]), b, 256);
    return b;
}

static const uint64_t MOD = 0x7700, ASM = 0x8800;

static void names(pb *p, int64_t ts)
{
    pb_assembly(p, ts, ASM, "App, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null");
    pb_module(p, ts, MOD, ASM, "/app/App.dll");
}

LTest(trace, rejit_gives_one_method_several_code_versions)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    const uint64_t tier0[] = { 0x1010 }, tier1[] = { 0x5010 }, tier0b[] = { 0x1020 };
    const uint64_t *ips[] = { tier0, tier1, tier0b };
    const uint32_t d[] = { 1, 1, 1 };
    pb_stacks(&p, 1, 3, ips, d);
    names(&p, 10);
    pb_method(&p, MD_LOAD, 100, 0xAA, MOD, 0x1000, 0x100, "NS.C", "Hot");
    pb_sample(&p, 7, 1, 200, NT_SAMPLE_MANAGED);
    pb_method(&p, MD_LOAD, 500, 0xAA, MOD, 0x5000, 0x80, "NS.C", "Hot");
    pb_sample(&p, 7, 2, 600, NT_SAMPLE_MANAGED);
    pb_sample(&p, 7, 3, 700, NT_SAMPLE_MANAGED); /* tier-0 code still runs on an old frame */
    pb_end(&p);
    nt_trace *t = build(&p, NT_OK);
    cr_assert_eq(nt_trace_method_count(t), 2);
    cr_assert_eq(nt_trace_sample_count(t), 3);
    for (size_t i = 0; i < 3; i++)
        cr_assert_str_eq(fname(t, i, 0), "App!NS.C.Hot");
    cr_assert_neq(nt_trace_frame_at(t, nt_trace_sample_at(t, 0).frame_ids[0])->method_index, nt_trace_frame_at(t, nt_trace_sample_at(t, 1).frame_ids[0])->method_index);
    cr_assert_str_eq(nt_trace_frame_at(t, nt_trace_sample_at(t, 0).frame_ids[0])->method->assembly,
                     "App, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null");
    nt_trace_free(t);
    tb_free(&p.b);
}

/* Stack id 1 in two sequence-point intervals with the same depth, first and
 * last IP: only the interval the parser gives each stack tells them apart. */
LTest(trace, stack_ids_are_scoped_by_the_parsers_interval)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    const uint64_t one[] = { 0x1000, 0x2000, 0x3000 }, two[] = { 0x1000, 0x2222, 0x3000 };
    const uint64_t *ips1[] = { one }, *ips2[] = { two };
    const uint32_t d[] = { 3 };
    pb_stacks(&p, 1, 1, ips1, d);
    pb_sample(&p, 7, 1, 100, NT_SAMPLE_MANAGED);
    pb_sp(&p, 200);
    pb_stacks(&p, 1, 1, ips2, d);
    pb_sample(&p, 7, 1, 300, NT_SAMPLE_MANAGED);
    pb_end(&p);
    nt_trace *t = build(&p, NT_OK);
    cr_assert_eq(nt_trace_sample_count(t), 2);
    nt_trace_sample a = nt_trace_sample_at(t, 0), b = nt_trace_sample_at(t, 1);
    cr_expect_neq(a.stack_index, b.stack_index, "one id in two intervals is two stacks");
    cr_assert_eq(b.frame_count, 3);
    cr_expect_eq(nt_trace_frame_at(t, b.frame_ids[1])->ip, 0x2222);
    cr_expect_eq(nt_trace_frame_at(t, a.frame_ids[1])->ip, 0x2000);
    nt_trace_free(t);
    tb_free(&p.b);
}

LTest(trace, rundown_after_samples_and_return_address_at_method_end)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    /* A = [0x2000,0x2100), B = [0x2100,0x2200).  Frame 1 is a return address
     * equal to A's end: the call was A's last instruction, so it is A. */
    const uint64_t s1[] = { 0x2150, 0x2100, 0x2010 }, s2[] = { 0x2100 };
    const uint64_t *ips[] = { s1, s2 };
    const uint32_t d[] = { 3, 2 - 1 };
    pb_stacks(&p, 1, 2, ips, d);
    pb_sample(&p, 7, 1, 100, NT_SAMPLE_MANAGED);
    pb_sample(&p, 7, 2, 200, NT_SAMPLE_MANAGED);
    pb_sp(&p, 300);
    names(&p, 400);
    pb_method(&p, MD_DCEND, 400, 0xA, MOD, 0x2000, 0x100, "NS.C", "A");
    pb_method(&p, MD_DCEND, 400, 0xB, MOD, 0x2100, 0x100, "NS.C", "B");
    pb_end(&p);
    nt_trace *t = build(&p, NT_OK);
    cr_assert_str_eq(fname(t, 0, 0), "App!NS.C.B");
    cr_assert_str_eq(fname(t, 0, 1), "App!NS.C.A");
    cr_assert_str_eq(fname(t, 0, 2), "App!NS.C.A");
    cr_assert_str_eq(fname(t, 1, 0), "App!NS.C.B", "the interrupted IP itself is not moved back");
    nt_trace_stats st = { 0 };
    nt_trace_stats_get(t, &st);
    cr_assert_eq(st.frames, 4);
    cr_assert_eq(st.resolved_frames, 4);
    cr_assert_eq(st.rundown_records, 2);
    nt_trace_free(t);
    tb_free(&p.b);
}

LTest(trace, rundown_of_code_no_sample_ran_in_is_not_kept)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    const uint64_t s1[] = { 0x2010 }, s2[] = { 0x9020, 0x2050 }, s3[] = { 0x2090 };
    const uint64_t *ips[] = { s1, s2, s3 };
    const uint32_t d[] = { 1, 2, 1 };
    pb_stacks(&p, 1, 3, ips, d);
    names(&p, 10);
    pb_sample(&p, 7, 1, 100, NT_SAMPLE_MANAGED);
    pb_sample(&p, 7, 2, 200, NT_SAMPLE_MANAGED);
    pb_method(&p, MD_UNLOAD, 250, 0xE, MOD, 0x70000, 0x100, "NS.C", "Gone");  /* no sample there */
    pb_method(&p, MD_DCEND, 400, 0xA, MOD, 0x2000, 0x60, "NS.C", "A");
    pb_method(&p, MD_DCEND, 400, 0xB, MOD, 0x50000, 0x100, "NS.C", "Far");   /* nowhere near a sample */
    pb_method(&p, MD_DCEND, 400, 0xC, MOD, 0x9000, 0x40, "NS.D", "C");
    pb_method(&p, MD_DCEND, 400, 0xD, MOD, 0x2080, 0x40, "NS.D", "Near");    /* near one, not yet its code */
    pb_sample(&p, 7, 3, 500, NT_SAMPLE_MANAGED);                              /* ... now it is */
    pb_end(&p);
    nt_trace *t = build(&p, NT_OK);
    cr_assert_str_eq(fname(t, 0, 0), "App!NS.C.A");
    cr_assert_str_eq(fname(t, 1, 0), "App!NS.D.C");
    cr_assert_str_eq(fname(t, 1, 1), "App!NS.C.A");
    cr_assert_str_eq(fname(t, 2, 0), "App!NS.D.Near", "judged against every sample when a sample was near it");
    nt_trace_stats st = { 0 };
    nt_trace_stats_get(t, &st);
    cr_assert_eq(st.rundown_records, 4);
    cr_assert_eq(st.unload_records, 1);
    cr_assert_eq(st.method_records, 3, "A, C and Near are kept; Gone and Far are not");
    cr_assert_eq(nt_trace_method_count(t), 3);
    /* Kept records stay in stream order with their fields. */
    const char *want[] = { "A", "C", "Near" };
    const uint64_t start[] = { 0x2000, 0x9000, 0x2080 };
    for (size_t i = 0; i < 3; i++) {
        const nt_trace_method *m = nt_trace_method_at(t, i);
        cr_assert_str_eq(m->name, want[i]);
        cr_assert_eq(m->start_address, start[i]);
        cr_assert_eq(m->valid_from, INT64_MIN);
        cr_assert_eq(m->valid_until, INT64_MAX);
        cr_assert_eq(m->source, NT_RECORD_DC_END);
        cr_assert_str_eq(m->assembly, "App, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null");
    }
    cr_assert_str_eq(nt_trace_method_at(t, 1)->declaring_type, "NS.D");
    nt_trace_free(t);
    tb_free(&p.b);
}

LTest(trace, code_address_reused_after_unload)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    pb_one_frame_stack(&p, 0x3010);
    names(&p, 10);
    pb_method(&p, MD_LOAD, 100, 0xA1, MOD, 0x3000, 0x40, "Dyn", "X");
    pb_sample(&p, 7, 1, 200, NT_SAMPLE_MANAGED);
    pb_sample(&p, 7, 1, 250, NT_SAMPLE_MANAGED);
    pb_method(&p, MD_UNLOAD, 300, 0xA1, MOD, 0x3000, 0x40, "Dyn", "X");
    pb_sample(&p, 7, 1, 350, NT_SAMPLE_MANAGED);
    pb_method(&p, MD_LOAD, 400, 0xB2, MOD, 0x3000, 0x40, "Dyn", "Y");
    pb_sample(&p, 7, 1, 500, NT_SAMPLE_MANAGED);
    pb_sp(&p, 600);
    pb_method(&p, MD_DCEND, 700, 0xB2, MOD, 0x3000, 0x40, "Dyn", "Y"); /* rundown repeats the live Y */
    pb_end(&p);
    nt_trace *t = build(&p, NT_OK);
    cr_assert_eq(nt_trace_method_count(t), 2, "rundown of live code merges with its load");
    cr_assert_str_eq(fname(t, 0, 0), "App!Dyn.X");
    cr_assert_str_eq(fname(t, 1, 0), "App!Dyn.X");
    cr_assert_str_eq(fname(t, 2, 0), "0x3010", "nothing lived there between unload and reload");
    cr_assert_str_eq(fname(t, 3, 0), "App!Dyn.Y");
    nt_trace_sample a = nt_trace_sample_at(t, 0), b = nt_trace_sample_at(t, 1), c = nt_trace_sample_at(t, 3);
    cr_assert_eq(a.frame_ids, b.frame_ids, "samples resolving alike share one frame id array");
    cr_assert_eq(a.stack_index, b.stack_index);
    cr_assert_neq(a.stack_index, c.stack_index);
    cr_assert_eq(nt_trace_stack_count(t), 3);
    nt_trace_free(t);
    tb_free(&p.b);
}

LTest(trace, rundown_code_is_not_older_than_an_unload_at_its_address)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    pb_one_frame_stack(&p, 0x3010);
    pb_method(&p, MD_LOAD, 100, 0xA1, MOD, 0x3000, 0x40, "Dyn", "X");
    pb_sample(&p, 7, 1, 50, NT_SAMPLE_MANAGED);  /* before X: nothing known lived here */
    pb_sample(&p, 7, 1, 200, NT_SAMPLE_MANAGED);
    pb_method(&p, MD_UNLOAD, 300, 0xA1, MOD, 0x3000, 0x40, "Dyn", "X");
    pb_sample(&p, 7, 1, 400, NT_SAMPLE_MANAGED);
    pb_sp(&p, 600);
    /* Z's load was not traced; rundown says it is there at the end. */
    pb_method(&p, MD_DCEND, 700, 0xC3, MOD, 0x3000, 0x40, "Dyn", "Z");
    pb_end(&p);
    nt_trace *t = build(&p, NT_OK);
    cr_assert_str_eq(fname(t, 0, 0), "0x3010");
    cr_assert_str_eq(fname(t, 1, 0), "?!Dyn.X", "no module record: assembly '?'");
    cr_assert_str_eq(fname(t, 2, 0), "?!Dyn.Z");
    nt_trace_free(t);
    tb_free(&p.b);
}

LTest(trace, samples_out_of_order_across_threads_are_sorted_stably)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    pb_one_frame_stack(&p, 0x10);
    pb_sample(&p, 1, 1, 300, NT_SAMPLE_MANAGED);
    pb_sample(&p, 1, 1, 400, NT_SAMPLE_EXTERNAL);
    pb_sample(&p, 2, 1, 100, NT_SAMPLE_MANAGED);   /* older: a new block */
    pb_sample(&p, 2, 1, 300, NT_SAMPLE_EXTERNAL);  /* same time as thread 1's first */
    pb_sample(&p, 3, 0, 300, 7);                   /* no stack, odd type */
    pb_end(&p);
    nt_trace *t = build(&p, NT_OK);
    cr_assert_eq(nt_trace_sample_count(t), 5);
    const int64_t ts[] = { 100, 300, 300, 300, 400 };
    const uint64_t th[] = { 2, 1, 2, 3, 1 };
    for (size_t i = 0; i < 5; i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        cr_assert_eq(s.time_ns, ts[i], "sample %zu at %lld", i, (long long)s.time_ns);
        cr_assert_eq(s.thread_id, th[i], "sample %zu on thread %llu (ties keep stream order)", i,
                     (unsigned long long)s.thread_id);
    }
    cr_assert_eq(nt_trace_sample_at(t, 3).type, 7);
    cr_assert_eq(nt_trace_sample_at(t, 3).frame_count, 0);
    cr_assert_null(nt_trace_sample_at(t, 3).frame_ids);
    cr_assert_eq(nt_trace_thread_count(t), 3);
    nt_trace_free(t);
    tb_free(&p.b);
}

LTest(trace, jit_event_after_a_sample_in_its_code_still_names_it)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    pb_one_frame_stack(&p, 0x4004);
    pb_sample(&p, 7, 1, 90, NT_SAMPLE_MANAGED);
    pb_method(&p, MD_LOAD, 100, 0xD, MOD, 0x4000, 0x10, "NS", "Raced");
    pb_end(&p);
    nt_trace *t = build(&p, NT_OK);
    cr_assert_str_eq(fname(t, 0, 0), "?!NS.Raced");
    nt_trace_free(t);
    tb_free(&p.b);
}

LTest(trace, timestamps_convert_exactly_and_32_bit_stacks_widen)
{
    pb p;
    const int64_t freq = 3124099;
    pb_begin(&p, 4, freq);
    const uint64_t s1[] = { 0xFFFFFFF0u, 0x80000000u };
    const uint64_t *ips[] = { s1 };
    const uint32_t d[] = { 2 };
    pb_stacks(&p, 1, 1, ips, d);
    const int64_t ticks = 100935252313 + 987654321;
    pb_sample(&p, 7, 1, ticks, NT_SAMPLE_MANAGED);
    pb_end(&p);
    nt_trace *t = build(&p, NT_OK);
    nt_trace_sample s = nt_trace_sample_at(t, 0);
    /* floor(ticks * 1e9 / freq) without a 128-bit type: split ticks by freq. */
    int64_t want = (ticks / freq) * 1000000000 + (ticks % freq) * 1000000000 / freq;
    cr_assert_eq(s.time_ns, want);
    cr_assert_eq(s.timestamp, ticks);
    cr_assert_eq(nt_trace_pointer_size(t), 4);
    cr_assert_eq(nt_trace_frequency(t), freq);
    cr_assert_eq(nt_trace_frame_at(t, s.frame_ids[0])->ip, 0xFFFFFFF0u);
    cr_assert_str_eq(fname(t, 0, 1), "0x80000000");
    cr_assert_eq(nt_trace_frame_at(t, s.frame_ids[1])->method_index, NT_TRACE_NO_METHOD);
    cr_assert_not_null(nt_trace_frame_at(t, s.frame_ids[1])->method, "unresolved frames point to an empty record, never NULL");
    cr_assert_str_eq(nt_trace_frame_at(t, s.frame_ids[1])->method->name, "");
    cr_assert_str_eq(nt_trace_frame_at(t, s.frame_ids[1])->method->assembly, "");
    nt_trace_free(t);
    tb_free(&p.b);
}

LTest(trace, truncated_stream_keeps_every_sample_read)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    pb_one_frame_stack(&p, 0x2010);
    for (int i = 0; i < 10; i++)
        pb_sample(&p, 7, 1, 100 + i, NT_SAMPLE_MANAGED);
    pb_flush(&p);
    size_t cut_after_samples = p.b.n;
    for (int i = 0; i < 10; i++)
        pb_sample(&p, 8, 1, 200 + i, NT_SAMPLE_MANAGED);
    pb_flush(&p);
    size_t second_block_end = p.b.n;
    pb_method(&p, MD_DCEND, 400, 0xA, MOD, 0x2000, 0x100, "NS.C", "A");
    pb_end(&p);

    /* Cut at a block boundary, then inside the second sample block. */
    const size_t cuts[] = { cut_after_samples, cut_after_samples + 7, second_block_end - 3 };
    for (size_t c = 0; c < 3; c++) {
        nt_trace *t = NULL;
        char msg[256];
        nt_status s = nt_trace_from_buffer(p.b.d, cuts[c], NULL, &t, msg, sizeof msg);
        cr_assert_eq(s, NT_ERR_TRUNCATED, "cut %zu: %s", cuts[c], nt_status_name(s));
        cr_assert_not_null(t);
        cr_assert_eq(nt_trace_sample_count(t), 10, "cut %zu: every sample of the complete block, got %zu", cuts[c], nt_trace_sample_count(t));
        nt_trace_stats st = { 0 };
        nt_trace_stats_get(t, &st);
        cr_assert_eq(st.status, NT_ERR_TRUNCATED);
        cr_assert_eq(st.resolved_frames, 0, "the rundown was cut off");
        cr_assert(strstr(msg, "offset") || strlen(msg) > 0, "message: %s", msg);
        nt_trace_free(t);
    }
    nt_trace *t = build(&p, NT_OK);
    cr_assert_eq(nt_trace_sample_count(t), 20);
    nt_trace_free(t);
    tb_free(&p.b);
}

LTest(trace, not_a_trace_gives_no_trace)
{
    nt_trace *t = (nt_trace *)1;
    char msg[128];
    nt_status s = nt_trace_from_buffer("hello world, not a trace", 24, NULL, &t, msg, sizeof msg);
    cr_assert_eq(s, NT_ERR_NOT_NETTRACE);
    cr_assert_null(t);
    s = nt_trace_from_file("/nonexistent/file.nettrace", NULL, &t, msg, sizeof msg);
    cr_assert_eq(s, NT_ERR_IO);
    cr_assert_null(t);
    cr_assert(strstr(msg, "/nonexistent/file.nettrace") != NULL);
}

LTest(trace, file_fd_and_buffer_agree_and_stacks_are_shared)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    const uint64_t s1[] = { 0x2010, 0x2020 };
    const uint64_t *ips[] = { s1 };
    const uint32_t d[] = { 2 };
    /* The same stack under a new id after every sequence point. */
    for (int k = 0; k < 3; k++) {
        pb_stacks(&p, 1, 1, ips, d);
        pb_sample(&p, 7, 1, 100 + k * 100, NT_SAMPLE_MANAGED);
        pb_sample(&p, 8, 1, 150 + k * 100, NT_SAMPLE_EXTERNAL);
        pb_sp(&p, 199 + k * 100);
    }
    pb_method(&p, MD_DCEND, 900, 0xA, MOD, 0x2000, 0x100, "NS.C", "A");
    pb_end(&p);
    char path[] = "/tmp/nt_trace_test_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, p.b.d, p.b.n), (ssize_t)p.b.n);
    nt_trace *a = build(&p, NT_OK), *b = NULL, *c = NULL;
    cr_assert_eq(nt_trace_from_file(path, NULL, &b, NULL, 0), NT_OK);
    lseek(fd, 0, SEEK_SET);
    nt_trace_options o = { 0 };
    o.deadline_ns = 0;
    cr_assert_eq(nt_trace_from_fd(fd, &o, &c, NULL, 0), NT_OK);
    close(fd);
    unlink(path);
    cr_assert_eq(nt_trace_sample_count(a), 6);
    cr_assert_eq(nt_trace_stack_count(a), 1, "one interned stack across sequence points");
    const nt_trace *all[] = { a, b, c };
    for (int k = 1; k < 3; k++) {
        cr_assert_eq(nt_trace_sample_count(all[k]), 6);
        for (size_t i = 0; i < 6; i++) {
            nt_trace_sample x = nt_trace_sample_at(a, i), y = nt_trace_sample_at(all[k], i);
            cr_assert_eq(x.time_ns, y.time_ns);
            cr_assert_eq(x.thread_id, y.thread_id);
            cr_assert_eq(x.type, y.type);
            cr_assert_str_eq(fname(a, i, 1), fname(all[k], i, 1));
        }
    }
    nt_trace_free(a);
    nt_trace_free(b);
    nt_trace_free(c);
    tb_free(&p.b);
}

typedef struct sinkbuf {
    char d[8192];
    size_t n;
    int fail_after; /* calls before failing; 0 = never */
    int calls;
} sinkbuf;

static int to_buf(void *user, const void *data, size_t len)
{
    sinkbuf *s = user;
    if (s->fail_after && ++s->calls >= s->fail_after)
        return -1;
    if (s->n + len >= sizeof s->d)
        return -1;
    memcpy(s->d + s->n, data, len);
    s->n += len;
    s->d[s->n] = 0;
    return 0;
}

static nt_trace *two_thread_trace(pb *p)
{
    pb_begin(p, 8, 1000000000);
    const uint64_t a[] = { 0x2010, 0x3010 }, b[] = { 0x3020 };
    const uint64_t *ips[] = { a, b };
    const uint32_t d[] = { 2, 1 };
    pb_stacks(p, 1, 2, ips, d);
    pb_sample(p, 7, 1, 100, NT_SAMPLE_MANAGED);
    pb_sample(p, 7, 1, 200, NT_SAMPLE_MANAGED);
    pb_sample(p, 8, 2, 250, NT_SAMPLE_EXTERNAL);
    pb_sample(p, 7, 2, 400, NT_SAMPLE_EXTERNAL);
    pb_sp(p, 500);
    names(p, 600);
    pb_method(p, MD_DCEND, 600, 0xA, MOD, 0x2000, 0x100, "NS.C", "Leaf");
    pb_method(p, MD_DCEND, 600, 0xB, MOD, 0x3000, 0x100, "NS.C", "Root");
    pb_end(p);
    return build(p, NT_OK);
}

LTest(trace, folded_merges_filters_and_weighs_by_time)
{
    pb p;
    nt_trace *t = two_thread_trace(&p);
    sinkbuf s = { .n = 0 };
    nt_export_options o = { 0 };
    cr_assert_eq(nt_export_folded(t, &o, to_buf, &s), NT_OK);
    cr_assert_str_eq(s.d, "App!NS.C.Root 2\nApp!NS.C.Root;App!NS.C.Leaf 2\n");
    /* By time: ns to the thread's next sample; a thread's last sample weighs
     * the header's sampling interval (1 ms). */
    s.n = 0;
    o.weight = NT_WEIGHT_TIME;
    cr_assert_eq(nt_export_folded(t, &o, to_buf, &s), NT_OK);
    cr_assert_str_eq(s.d, "App!NS.C.Root 2000000\nApp!NS.C.Root;App!NS.C.Leaf 300\n");
    s.n = 0;
    o = (nt_export_options){ .filter.managed_only = true };
    cr_assert_eq(nt_export_folded(t, &o, to_buf, &s), NT_OK);
    cr_assert_str_eq(s.d, "App!NS.C.Root;App!NS.C.Leaf 2\n");
    s.n = 0;
    o = (nt_export_options){ .filter = { .has_thread = true, .thread_id = 8 } };
    cr_assert_eq(nt_export_folded(t, &o, to_buf, &s), NT_OK);
    cr_assert_str_eq(s.d, "App!NS.C.Root 1\n");
    s.n = 0;
    o = (nt_export_options){ .filter = { .from = { true, true, 150 }, .to = { true, true, 400 } } };
    cr_assert_eq(nt_export_folded(t, &o, to_buf, &s), NT_OK);
    cr_assert_str_eq(s.d, "App!NS.C.Root 1\nApp!NS.C.Root;App!NS.C.Leaf 1\n");
    nt_trace_free(t);
    tb_free(&p.b);
}

LTest(trace, exporters_report_a_failing_sink)
{
    pb p;
    nt_trace *t = two_thread_trace(&p);
    nt_status (*const fns[])(const nt_trace *, const nt_export_options *, nt_sink_fn, void *) = {
        nt_export_folded, nt_export_speedscope, nt_export_pprof
    };
    for (int i = 0; i < 3; i++) {
        sinkbuf s = { .n = 0, .fail_after = 1 };
        cr_assert_eq(fns[i](t, NULL, to_buf, &s), NT_ERR_IO, "exporter %d", i);
        sinkbuf ok = { .n = 0 };
        cr_assert_eq(fns[i](t, NULL, to_buf, &ok), NT_OK, "exporter %d", i);
        cr_assert_gt(ok.n, 0);
    }
    nt_trace_free(t);
    tb_free(&p.b);
}

/* Samples whose stacks are all empty, in two intervals: before any stack
 * holds an IP the builder has no id storage, so an empty stack met again
 * (a hash hit) and every exporter must not offset its NULL (UBSan's
 * "applying zero offset to null pointer", found by fuzz_trace). */
LTest(trace, empty_stacks_alone_intern_once_and_export)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    const uint64_t none[1] = { 0 };
    const uint64_t *ips[] = { none, none };
    const uint32_t d[] = { 0, 0 };
    pb_stacks(&p, 1, 2, ips, d);
    pb_sample(&p, 7, 1, 100, NT_SAMPLE_MANAGED);
    pb_sample(&p, 8, 2, 200, NT_SAMPLE_EXTERNAL);
    pb_sp(&p, 300);
    pb_stacks(&p, 1, 1, ips, d);
    pb_sample(&p, 7, 1, 400, NT_SAMPLE_MANAGED);
    pb_end(&p);
    nt_trace *t = build(&p, NT_OK);
    cr_assert_eq(nt_trace_sample_count(t), 3);
    for (size_t i = 0; i < 3; i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        cr_expect_eq(s.frame_count, 0, "sample %zu", i);
        cr_expect_null(s.frame_ids, "sample %zu: an empty stack has no ids", i);
    }
    cr_expect_eq(nt_trace_stack_count(t), 1, "one distinct (empty) stack, %zu found", nt_trace_stack_count(t));
    nt_status (*const fns[])(const nt_trace *, const nt_export_options *, nt_sink_fn, void *) = {
        nt_export_folded, nt_export_speedscope, nt_export_pprof
    };
    for (int i = 0; i < 3; i++) {
        sinkbuf ok = { .n = 0 };
        cr_assert_eq(fns[i](t, NULL, to_buf, &ok), NT_OK, "exporter %d", i);
        cr_assert_gt(ok.n, 0, "exporter %d wrote nothing", i);
    }
    nt_trace_free(t);
    tb_free(&p.b);
}

LTest(trace, speedscope_lists_frames_once_and_stacks_root_first)
{
    pb p;
    nt_trace *t = two_thread_trace(&p);
    sinkbuf s = { .n = 0 };
    cr_assert_eq(nt_export_speedscope(t, NULL, to_buf, &s), NT_OK);
    cr_assert(strstr(s.d, "\"frames\":[\n{\"name\":\"App!NS.C.Leaf\"},\n{\"name\":\"App!NS.C.Root\"}]"), "%s", s.d);
    cr_assert(strstr(s.d, "\"name\":\"Thread 7\",\"unit\":\"none\",\"startValue\":0,\"endValue\":3,\n"
                          "\"samples\":[[1,0],[1,0],[1]],\n\"weights\":[1,1,1]}"),
              "%s", s.d);
    cr_assert(strstr(s.d, "\"name\":\"Thread 8\""), "%s", s.d);
    nt_trace_free(t);
    tb_free(&p.b);
}

LTest(trace, many_code_versions_at_one_address_stay_bounded)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    pb_one_frame_stack(&p, 0x5010);
    /* 300 load/unload cycles of different methods at one address, a sample in each. */
    char name[32];
    for (int i = 0; i < 300; i++) {
        snprintf(name, sizeof name, "V%d", i);
        pb_method(&p, MD_LOAD, 1000 + 10 * i, 0x100 + (uint64_t)i, MOD, 0x5000, 0x40, "Gen", name);
        pb_sample(&p, 7, 1, 1000 + 10 * i + 2, NT_SAMPLE_MANAGED);
        pb_method(&p, MD_UNLOAD, 1000 + 10 * i + 5, 0x100 + (uint64_t)i, MOD, 0x5000, 0x40, "Gen", name);
    }
    pb_end(&p);
    nt_trace *t = build(&p, NT_OK);
    cr_assert_eq(nt_trace_sample_count(t), 300);
    cr_assert_eq(nt_trace_method_count(t), 300);
    /* The newest versions resolve exactly; each sample its own. */
    for (int i = 250; i < 300; i++) {
        char want[40];
        snprintf(want, sizeof want, "?!Gen.V%d", i);
        cr_assert_str_eq(fname(t, (size_t)i, 0), want);
    }
    nt_trace_free(t);
    tb_free(&p.b);
}

static int null_sink(void *user, const void *data, size_t len)
{
    (void)data;
    *(size_t *)user += len;
    return 0;
}

/* Damaged streams (flipped bytes, cut anywhere) build a trace from what was
 * read, and every exporter handles it: no crash, leak or hang. */
LTest(trace, damaged_streams_build_and_export)
{
    uint8_t *data;
    size_t len;
    const char *path = ts_path(ts_own_corpus(), "call-tree.nettrace");
    if (!ts_read_file(path, &data, &len))
        cr_skip_test("%s is absent", path);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    int built = 0;
    for (int round = 0; round < 120; round++) {
        uint8_t *d = malloc(len);
        memcpy(d, data, len);
        size_t n = len;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (round % 3 == 0) {
            n = (size_t)(x % len);              /* cut */
        } else {
            for (int k = 0; k < 1 + round % 8; k++) {  /* flip bytes */
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                d[x % len] ^= (uint8_t)(x >> 40) | 1;
            }
        }
        nt_trace *t = NULL;
        nt_trace_from_buffer(d, n, NULL, &t, NULL, 0);
        if (t) {
            built++;
            size_t out = 0;
            nt_export_options o = { .weight = round % 2 ? NT_WEIGHT_TIME : NT_WEIGHT_SAMPLES };
            cr_assert_eq(nt_export_folded(t, &o, null_sink, &out), NT_OK);
            cr_assert_eq(nt_export_speedscope(t, &o, null_sink, &out), NT_OK);
            cr_assert_eq(nt_export_pprof(t, &o, null_sink, &out), NT_OK);
            for (size_t i = 0; i < nt_trace_sample_count(t); i++) {
                nt_trace_sample s = nt_trace_sample_at(t, i);
                for (uint32_t k = 0; k < s.frame_count; k++)
                    cr_assert(nt_trace_frame_at(t, s.frame_ids[k])->method_index == NT_TRACE_NO_METHOD ||
                              nt_trace_frame_at(t, s.frame_ids[k])->method_index < nt_trace_method_count(t));
                if (i)
                    cr_assert_geq(s.timestamp, nt_trace_sample_at(t, i - 1).timestamp);
            }
            nt_trace_free(t);
        }
        free(d);
    }
    cr_assert_gt(built, 60, "only %d of 120 damaged streams gave a trace", built);
    free(data);
}

/* More threads than the exporters scan for: they group samples by thread. */
LTest(trace, exporters_with_many_threads)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    pb_one_frame_stack(&p, 0x2010);
    for (int round = 0; round < 2; round++)
        for (uint64_t th = 0; th < 70; th++)
            pb_sample(&p, 100 + th, 1, 1000 * (round + 1) + (int64_t)th, NT_SAMPLE_MANAGED);
    pb_end(&p);
    nt_trace *t = build(&p, NT_OK);
    cr_assert_eq(nt_trace_thread_count(t), 70);
    sinkbuf s = { .n = 0 };
    nt_export_options o = { .weight = NT_WEIGHT_TIME };
    cr_assert_eq(nt_export_folded(t, &o, to_buf, &s), NT_OK);
    cr_assert_str_eq(s.d, "0x2010 70070000\n", "70 x (1000 ns to the next sample + 1 ms for the last)");
    o = (nt_export_options){ .filter = { .has_thread = true, .thread_id = 169 }, .weight = NT_WEIGHT_TIME };
    s.n = 0;
    cr_assert_eq(nt_export_folded(t, &o, to_buf, &s), NT_OK);
    cr_assert_str_eq(s.d, "0x2010 1001000\n");
    size_t n = 0;
    cr_assert_eq(nt_export_speedscope(t, NULL, null_sink, &n), NT_OK);
    cr_assert_gt(n, 70 * 60);
    nt_trace_free(t);
    tb_free(&p.b);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Reading a pipe that never ends gives up at the deadline with what it read. */
LTest(trace, fd_read_honours_the_deadline)
{
    pb p;
    pb_begin(&p, 8, 1000000000);
    pb_one_frame_stack(&p, 0x2010);
    pb_sample(&p, 7, 1, 100, NT_SAMPLE_MANAGED);
    pb_flush(&p);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    cr_assert_eq(write(fds[1], p.b.d, p.b.n), (ssize_t)p.b.n);
    nt_trace_options o = { 0 };
    int64_t t0 = mono_ns();
    o.deadline_ns = t0 + 100000000; /* 100 ms; the writer stays open */
    nt_trace *t = NULL;
    char msg[128];
    nt_status s = nt_trace_from_fd(fds[0], &o, &t, msg, sizeof msg);
    int64_t took = mono_ns() - t0;
    cr_assert_eq(s, NT_ERR_TIMEOUT, "%s", nt_status_name(s));
    cr_assert_geq(took, 90000000);
    cr_assert_lt(took, 2000000000, "took %lld ns", (long long)took);
    cr_assert_not_null(t);
    cr_assert_eq(nt_trace_sample_count(t), 1, "what arrived before the deadline is kept");
    nt_trace_free(t);
    close(fds[0]);
    close(fds[1]);
    tb_free(&p.b);
}
