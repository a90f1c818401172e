/* nt_trace_window, the live view's core, fed by hand-made records: each
 * window is a trace resolved by the file rules, counted by nt_top_build. */
#include <criterion/criterion.h>

#include "nettrace_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static nt_callbacks cb;

static void feed_method(nt_trace_window *w, uint64_t id, uint64_t start, uint32_t size, const char *type,
                        const char *name, uint64_t module)
{
    nt_method m;
    memset(&m, 0, sizeof m);
    m.which = NT_METHOD_LOAD;
    m.method_id = id;
    m.start_address = start;
    m.size = size;
    m.declaring_type = type;
    m.name = name;
    m.signature = "void ()";
    m.module_id = module;
    cr_assert_eq(cb.method(w, &m), 0);
}

static void feed_sample(nt_trace_window *w, int64_t ticks, uint64_t tid, uint32_t type, const uint64_t *ips,
                        uint32_t n)
{
    static uint32_t id; /* a new stack id each time: ids are only stable within an interval */
    nt_stack st = { .id = ++id, .count = n, .ips = ips }; /* interval 0: one interval, no sequence point */
    nt_sample s;
    memset(&s, 0, sizeof s);
    s.timestamp = ticks;
    s.thread_id = tid;
    s.type = type;
    s.stack = &st;
    s.stack_id = st.id;
    cr_assert_eq(cb.sample(w, &s), 0);
}

static void feed_app(nt_trace_window *w)
{
    nt_trace_info info;
    memset(&info, 0, sizeof info);
    info.qpc_frequency = 1000000000;
    info.pointer_size = 8;
    cr_assert_eq(cb.trace(w, &info), 0);
    nt_module mod = { .which = NT_RECORD_LOAD, .module_id = 7, .assembly_id = 70 };
    nt_assembly as = { .which = NT_RECORD_LOAD, .assembly_id = 70, .name = "App, Version=1.0.0.0, Culture=neutral" };
    cr_assert_eq(cb.module(w, &mod), 0);
    cr_assert_eq(cb.assembly(w, &as), 0);
}

static nt_top *window_top(nt_trace_window *w, const nt_top_options *opt, nt_status want)
{
    nt_trace *t;
    cr_assert_eq(nt_trace_window_take(w, &t), want);
    cr_assert_not_null(t);
    nt_top *top;
    cr_assert_eq(nt_top_build(t, opt, &top), NT_OK);
    nt_trace_free(t); /* the tables do not point into the trace */
    return top;
}

static const nt_top_row *row_of(const nt_top_table *tb, const char *name)
{
    for (size_t i = 0; i < tb->row_count; i++)
        if (strcmp(tb->rows[i].name, name) == 0)
            return &tb->rows[i];
    cr_assert_fail("no row %s", name);
    return NULL;
}

Test(trace_window, counts_like_the_file_top)
{
    nt_trace_window *w = nt_trace_window_new(NULL, NULL);
    cr_assert_not_null(w);
    nt_trace_window_callbacks(&cb);
    feed_app(w);
    feed_method(w, 1, 0x1000, 0x100, "App.Leaf", "Spin", 7);
    feed_method(w, 2, 0x2000, 0x100, "App.Mid", "Call", 7);
    feed_method(w, 3, 0x3000, 0x100, "App.Root", "Main", 7);
    const uint64_t a[] = { 0x1010, 0x2020, 0x3030 };
    const uint64_t recursive[] = { 0x2010, 0x2050, 0x2090, 0x3030 }; /* Mid three times: once inclusively */
    int64_t ticks = 100;
    for (int i = 0; i < 6; i++)
        feed_sample(w, ticks++, 11, NT_SAMPLE_MANAGED, a, 3);
    for (int i = 0; i < 2; i++)
        feed_sample(w, ticks++, 11, NT_SAMPLE_MANAGED, recursive, 4);
    feed_sample(w, ticks++, 11, NT_SAMPLE_EXTERNAL, a, 3); /* counted, as the file top counts it */
    feed_sample(w, ticks++, 22, NT_SAMPLE_MANAGED, recursive, 4);
    nt_top *top = window_top(w, NULL, NT_OK);
    cr_assert_eq(top->table_count, 1);
    const nt_top_table *tb = &top->tables[0];
    cr_assert_eq(tb->samples, 10, "external samples are in the denominator");
    cr_assert_eq(tb->row_count, 3);
    cr_assert_str_eq(tb->rows[0].name, "App!App.Leaf.Spin", "the file trace's name format");
    cr_assert_eq(tb->rows[0].exclusive, 7);
    cr_assert_eq(row_of(tb, "App!App.Mid.Call")->inclusive, 10, "recursion counts once per sample");
    cr_assert_eq(row_of(tb, "App!App.Root.Main")->exclusive, 0);
    nt_top_free(top);

    /* The next window holds only what came after the first. */
    feed_sample(w, ticks++, 11, NT_SAMPLE_EXTERNAL, a, 3);
    feed_sample(w, ticks++, 22, NT_SAMPLE_MANAGED, recursive, 4);
    nt_top_options opt = { .filter.managed_only = true, .by_thread = true };
    top = window_top(w, &opt, NT_OK);
    cr_assert_eq(top->table_count, 2, "one table per thread of the window");
    cr_assert_eq(top->tables[0].thread_id, 11);
    cr_assert_eq(top->tables[0].samples, 0, "--managed-only leaves the external sample out");
    cr_assert_eq(top->tables[1].thread_id, 22);
    cr_assert_eq(top->tables[1].samples, 1);
    cr_assert_str_eq(top->tables[1].rows[0].name, "App!App.Mid.Call", "names are kept across windows");
    nt_top_free(top);
    nt_trace_window_free(w);
}

/* Frames after the first are return addresses, looked up at ip - 1: the
 * address just past a method's code is still that method's call. */
Test(trace_window, return_addresses_resolve_at_ip_minus_one)
{
    nt_trace_window *w = nt_trace_window_new(NULL, NULL);
    nt_trace_window_callbacks(&cb);
    feed_app(w);
    feed_method(w, 1, 0x1000, 0x100, "App.Caller", "Run", 7);
    feed_method(w, 2, 0x1100, 0x100, "App.Next", "Other", 7);
    const uint64_t ips[] = { 0x1100, 0x1100 }; /* leaf: Next.Other; return address: Caller.Run */
    feed_sample(w, 1, 5, NT_SAMPLE_MANAGED, ips, 2);
    nt_top_options opt = { .by_inclusive = true };
    nt_top *top = window_top(w, &opt, NT_OK);
    const nt_top_table *tb = &top->tables[0];
    cr_assert_eq(row_of(tb, "App!App.Next.Other")->exclusive, 1);
    cr_assert_eq(row_of(tb, "App!App.Caller.Run")->inclusive, 1);
    cr_assert_eq(row_of(tb, "App!App.Caller.Run")->exclusive, 0);
    nt_top_free(top);
    nt_trace_window_free(w);
}

Test(trace_window, names_arriving_later_in_the_window_name_its_samples)
{
    nt_trace_window *w = nt_trace_window_new(NULL, NULL);
    nt_trace_window_callbacks(&cb);
    feed_app(w);
    const uint64_t ips[] = { 0x5010 };
    for (int i = 0; i < 4; i++)
        feed_sample(w, 10 + i, 1, NT_SAMPLE_MANAGED, ips, 1);
    nt_top *top = window_top(w, NULL, NT_OK);
    cr_assert_str_eq(top->tables[0].rows[0].name, "0x5010", "not named yet");
    nt_top_free(top);
    for (int i = 0; i < 3; i++)
        feed_sample(w, 20 + i, 1, NT_SAMPLE_MANAGED, ips, 1);
    /* A rundown record after the samples, as at the end of a file. */
    nt_method m = { .which = NT_METHOD_DC_END, .method_id = 9, .start_address = 0x5000, .size = 0x40,
                    .declaring_type = "Late.Type", .name = "Hot", .module_id = 7, .timestamp = 30 };
    cr_assert_eq(cb.method(w, &m), 0);
    top = window_top(w, NULL, NT_OK);
    cr_assert_str_eq(top->tables[0].rows[0].name, "App!Late.Type.Hot");
    cr_assert_eq(top->tables[0].rows[0].exclusive, 3);
    nt_top_free(top);
    nt_trace_window_free(w);
}

Test(trace_window, code_versions_share_a_row)
{
    nt_trace_window *w = nt_trace_window_new(NULL, NULL);
    nt_trace_window_callbacks(&cb);
    feed_app(w);
    feed_method(w, 42, 0x1000, 0x100, "T", "M", 7); /* tier 0 */
    feed_method(w, 42, 0x9000, 0x80, "T", "M", 7);  /* tier 1: same method */
    const uint64_t v0[] = { 0x1010 }, v1[] = { 0x9010 };
    feed_sample(w, 1, 1, NT_SAMPLE_MANAGED, v0, 1);
    feed_sample(w, 2, 1, NT_SAMPLE_MANAGED, v1, 1);
    feed_sample(w, 3, 1, NT_SAMPLE_MANAGED, v1, 1);
    nt_top *top = window_top(w, NULL, NT_OK);
    cr_assert_eq(top->tables[0].row_count, 1);
    cr_assert_eq(top->tables[0].rows[0].exclusive, 3);
    nt_top_free(top);
    nt_trace_window_free(w);
}

Test(trace_window, records_beyond_the_limit_are_reported)
{
    nt_trace_window_config cfg = { .max_records = 3 };
    nt_trace_window *w = nt_trace_window_new(&cfg, NULL);
    nt_trace_window_callbacks(&cb);
    feed_app(w); /* two records */
    for (uint64_t i = 0; i < 10; i++)
        feed_method(w, i + 1, 0x1000 * (i + 1), 0x100, "T", "M", 7);
    const uint64_t ips[] = { 0x1010, 0x2010 };
    feed_sample(w, 1, 1, NT_SAMPLE_MANAGED, ips, 2);
    nt_top *top = window_top(w, NULL, NT_ERR_LIMIT); /* the trace is still delivered */
    cr_assert_eq(top->tables[0].samples, 1);
    cr_assert_str_eq(top->tables[0].rows[0].name, "App!T.M", "the first record was kept");
    nt_top_free(top);
    nt_trace_window_free(w);
}

/* An allocator that fails once a budget is spent. */
typedef struct budget {
    size_t left;
} budget;

static void *budget_realloc(void *ctx, void *p, size_t n)
{
    budget *b = ctx;
    if (n > b->left)
        return NULL;
    b->left -= n;
    return realloc(p, n);
}

static void budget_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

Test(trace_window, out_of_memory_is_reported)
{
    budget bud = { 256 * 1024 };
    nt_allocator al = { budget_realloc, budget_free, &bud };
    nt_trace_window *w = nt_trace_window_new(NULL, &al);
    cr_assert_not_null(w);
    nt_trace_window_callbacks(&cb);
    feed_app(w);
    char name[64];
    for (int i = 0; i < 4000; i++) {
        snprintf(name, sizeof name, "Method%d", i);
        feed_method(w, (uint64_t)i + 1, 0x100000 + (uint64_t)i * 0x100, 0x100, "T", name, 7);
    }
    nt_trace *t = NULL;
    cr_assert_eq(nt_trace_window_take(w, &t), NT_ERR_NOMEM, "running out of memory is not swallowed");
    nt_trace_free(t);
    nt_trace_window_free(w);
}

Test(trace_window, callbacks_are_cleared_then_filled)
{
    nt_callbacks c = { 0 };
    memset(&c, 0xff, sizeof c); /* garbage: the call clears it */
    nt_trace_window_callbacks(&c);
    cr_assert_not_null(c.sample);
    cr_assert_not_null(c.method);
    cr_assert_not_null(c.module);
    cr_assert_not_null(c.assembly);
    cr_assert_not_null(c.sequence_point);
    cr_assert_null(c.event);
}

/* A parser with lazy names hands records over as UTF-16 spans only. */
Test(trace_window, lazy_names_are_converted_when_kept)
{
    nt_trace_window *w = nt_trace_window_new(NULL, NULL);
    nt_trace_window_callbacks(&cb);
    feed_app(w);
    static const uint8_t type16[] = { 'A', 0, '.', 0, 'T', 0 }, name16[] = { 'R', 0, 'u', 0, 'n', 0 };
    nt_method m = { .which = NT_METHOD_LOAD, .method_id = 5, .start_address = 0x7000, .size = 0x10, .module_id = 7,
                    .declaring_type16 = { type16, 3 }, .name16 = { name16, 3 } };
    cr_assert_eq(cb.method(w, &m), 0);
    const uint64_t ips[] = { 0x7004 };
    feed_sample(w, 1, 1, NT_SAMPLE_MANAGED, ips, 1);
    nt_top *top = window_top(w, NULL, NT_OK);
    cr_assert_str_eq(top->tables[0].rows[0].name, "App!A.T.Run");
    nt_top_free(top);
    nt_trace_window_free(w);
}
