/* nt_trace_window, the live view's core, fed by hand-made records: each
 * window is a trace resolved by the file rules, counted by nt_top_build. */
#include <criterion/criterion.h>

#include "nettrace_trace.h"
#include "nettrace_writer.h"

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#if HAVE_ZLIB
#include <zlib.h>
#endif

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

/* Past max_records the budget's rule evicts: records no sample hit although
 * a window was taken since they came go first, oldest first; then sampled
 * ones; the current window's own records last. */
Test(trace_window, records_beyond_the_limit_evict_the_unsampled_first)
{
    nt_trace_window_config cfg = { .max_records = 5 };
    nt_trace_window *w = nt_trace_window_new(&cfg, NULL);
    nt_trace_window_callbacks(&cb);
    feed_app(w);
    for (uint64_t i = 1; i <= 3; i++)
        feed_method(w, i, 0x1000 * i, 0x100, "T", i == 1 ? "First" : "Unsampled", 7);
    const uint64_t first[] = { 0x1010 };
    feed_sample(w, 1, 1, NT_SAMPLE_MANAGED, first, 1);
    nt_top *top = window_top(w, NULL, NT_OK);
    cr_assert_str_eq(top->tables[0].rows[0].name, "App!T.First");
    nt_top_free(top);
    for (uint64_t i = 4; i <= 7; i++)
        feed_method(w, i, 0x1000 * i, 0x100, "T", "Fresh", 7);
    const uint64_t ips[] = { 0x1010, 0x7010, 0x2010 };
    feed_sample(w, 2, 1, NT_SAMPLE_MANAGED, ips, 3);
    nt_trace *t;
    cr_assert_eq(nt_trace_window_take(w, &t), NT_ERR_LIMIT, "records were evicted (the trace is still delivered)");
    nt_trace_stats ts;
    nt_trace_stats_get(t, &ts);
    cr_assert_eq(ts.resolved_frames, 2, "First and the fresh 7 are named; 2, never sampled, was evicted");
    cr_assert_eq(ts.jit_records, 7, "the window counts the stream's records");
    nt_trace_free(t);
    nt_trace_window_stats ws = { 0 };
    nt_trace_window_stats_get(w, &ws);
    cr_assert_eq(ws.records.entries, 5);
    cr_assert_eq(ws.records_evicted, 2, "2 and 3: unsampled through a window, oldest first");
    cr_assert_eq(ws.records_evicted_sampled, 0);
    /* Now 4, 5 and 6 went unsampled through a window: they go before First and 7. */
    for (uint64_t i = 8; i <= 9; i++)
        feed_method(w, i, 0x1000 * i, 0x100, "T", "Fresh", 7);
    const uint64_t both[] = { 0x1010, 0x7010 }, gone[] = { 0x4010 };
    feed_sample(w, 3, 1, NT_SAMPLE_MANAGED, both, 2);
    feed_sample(w, 4, 1, NT_SAMPLE_MANAGED, gone, 1);
    cr_assert_eq(nt_trace_window_take(w, &t), NT_ERR_LIMIT);
    nt_trace_stats_get(t, &ts);
    cr_assert_eq(ts.resolved_frames, 2);
    nt_trace_free(t);
    nt_trace_window_stats_get(w, &ws);
    cr_assert_eq(ws.records_evicted, 4);
    cr_assert_eq(nt_trace_window_take(w, &t), NT_OK, "nothing evicted since the last take");
    nt_trace_free(t);
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

static void feed_unload(nt_trace_window *w, uint64_t id, uint64_t start, uint32_t size, int64_t ticks)
{
    nt_method m = { .which = NT_METHOD_UNLOAD, .method_id = id, .start_address = start, .size = size,
                    .declaring_type = "T", .name = "Gone", .module_id = 7, .timestamp = ticks };
    cr_assert_eq(cb.method(w, &m), 0);
}

/* A window's resolved frames; evicted: NT_ERR_LIMIT (records were evicted since the last take) is expected too. */
static uint64_t resolved_taking(nt_trace_window *w, bool evicted)
{
    nt_trace *t;
    nt_status st = nt_trace_window_take(w, &t);
    cr_assert(st == NT_OK || (evicted && st == NT_ERR_LIMIT), "take: %d", (int)st);
    nt_trace_stats ts;
    nt_trace_stats_get(t, &ts);
    nt_trace_free(t);
    return ts.resolved_frames;
}

static uint64_t resolved_of(nt_trace_window *w) { return resolved_taking(w, false); }

/* Unloaded code serves the window of its unload and the next one (late
 * samples), then leaves the store: memory follows the loaded code. */
Test(trace_window, unloaded_records_retire_after_a_window)
{
    nt_trace_window *w = nt_trace_window_new(NULL, NULL);
    nt_trace_window_callbacks(&cb);
    feed_app(w);
    nt_method m = { .which = NT_METHOD_LOAD, .method_id = 1, .start_address = 0x1000, .size = 0x100,
                    .declaring_type = "T", .name = "Dyn", .module_id = 7, .timestamp = 1 };
    cr_assert_eq(cb.method(w, &m), 0);
    const uint64_t ips[] = { 0x1010 };
    feed_sample(w, 2, 1, NT_SAMPLE_MANAGED, ips, 1);
    feed_unload(w, 1, 0x1000, 0x100, 3);
    cr_assert_eq(resolved_of(w), 1);
    nt_trace_window_stats ws = { 0 };
    nt_trace_window_stats_get(w, &ws);
    cr_assert_eq(ws.records.entries, 1, "the window just taken began before the unload");
    feed_sample(w, 2, 1, NT_SAMPLE_MANAGED, ips, 1); /* late: older than the unload */
    feed_sample(w, 5, 1, NT_SAMPLE_MANAGED, ips, 1);
    cr_assert_eq(resolved_of(w), 1, "the late sample is named, the one after the unload is not");
    nt_trace_window_stats_get(w, &ws);
    cr_assert_eq(ws.records.entries, 0);
    cr_assert_eq(ws.records_retired, 1);
    cr_assert_eq(ws.records_evicted, 0);
    cr_assert_eq(ws.address_index.entries, 0, "the page index forgets it too");
    nt_trace_window_free(w);
}

/* Sampling ip alone in a window: 1 when a record names it, else 0 (the page test evicts). */
static uint64_t names_ip(nt_trace_window *w, uint64_t ip, int64_t ticks)
{
    feed_sample(w, ticks, 1, NT_SAMPLE_MANAGED, &ip, 1);
    return resolved_taking(w, true);
}

/* The address index's page chains (doubly linked, each entry holding its own
 * nodes): records leave one page's chain from its head, middle and tail, a
 * record over two pages leaves both, and the page, filled up (256 records),
 * evicts its oldest through the tail kept at the head; what stays is found. */
Test(trace_window, page_chains_lose_any_record_and_keep_the_rest)
{
    nt_trace_window *w = nt_trace_window_new(NULL, NULL);
    nt_trace_window_callbacks(&cb);
    feed_app(w);
    for (uint64_t k = 1; k <= 5; k++) /* one page, 0x10000-0x10140: the chain is 5 4 3 2 1 */
        feed_method(w, k, 0x10000 + (k - 1) * 0x40, 0x40, "T", "InPage", 7);
    feed_method(w, 6, 0x10f00, 0x200, "T", "TwoPages", 7); /* the head of 0x10's chain and alone in 0x11's */
    feed_unload(w, 1, 0x10000, 0x40, 3);  /* the tail */
    feed_unload(w, 3, 0x10080, 0x40, 3);  /* the middle */
    feed_unload(w, 6, 0x10f00, 0x200, 3); /* the head, and 0x11's only record */
    resolved_of(w);
    resolved_of(w); /* the unloads retire once a window began after them */
    nt_trace_window_stats ws = { 0 };
    nt_trace_window_stats_get(w, &ws);
    cr_assert_eq(ws.records_retired, 3);
    cr_assert_eq(ws.records.entries, 3);
    cr_assert_eq(ws.address_index.entries, 3, "one node each for 2, 4 and 5");
    int64_t t = 10;
    cr_assert_eq(names_ip(w, 0x10050, t++), 1, "2 is found");
    cr_assert_eq(names_ip(w, 0x100d0, t++), 1, "4 is found");
    cr_assert_eq(names_ip(w, 0x10110, t++), 1, "5 is found");
    cr_assert_eq(names_ip(w, 0x10010, t++), 0, "1 is gone");
    cr_assert_eq(names_ip(w, 0x10090, t++), 0, "3 is gone");
    cr_assert_eq(names_ip(w, 0x11010, t++), 0, "6 is gone from its second page too");

    /* The same page filled up (its tail, 2, came after the tail that left): the 257th record evicts 2. */
    for (uint64_t k = 0; k < 254; k++)
        feed_method(w, 100 + k, 0x10200 + k * 8, 8, "T", "Fill", 7);
    nt_trace_window_stats_get(w, &ws);
    cr_assert_eq(ws.records_evicted, 1);
    cr_assert_eq(ws.address_index.entries, 256);
    cr_assert_eq(names_ip(w, 0x10050, t++), 0, "the page's oldest record, 2, went");
    cr_assert_eq(names_ip(w, 0x100d0, t++), 1, "4 stays");
    cr_assert_eq(names_ip(w, 0x10204, t++), 1, "the first filler stays");
    cr_assert_eq(names_ip(w, 0x10200 + 253 * 8 + 4, t++), 1, "the newest stays");
    for (uint64_t k = 0; k < 254; k++)
        feed_unload(w, 100 + k, 0x10200 + k * 8, 8, t);
    names_ip(w, 0, t++);
    names_ip(w, 0, t++);
    nt_trace_window_stats_get(w, &ws);
    cr_assert_eq(ws.address_index.entries, 2, "the fillers left node by node");
    cr_assert_eq(names_ip(w, 0x100d0, t++), 1, "4 is still found");
    cr_assert_eq(names_ip(w, 0x10110, t++), 1, "5 is still found");
    nt_trace_window_free(w);
}

/* A collectible context's module unload takes its code with it. */
Test(trace_window, a_module_unload_retires_its_records)
{
    nt_trace_window *w = nt_trace_window_new(NULL, NULL);
    nt_trace_window_callbacks(&cb);
    feed_app(w);
    for (uint64_t i = 0; i < 5; i++)
        feed_method(w, 100 + i, 0x40000 + i * 0x100, 0x100, "Plugin.T", "Run", 9);
    nt_module mod = { .which = NT_RECORD_LOAD, .module_id = 9, .assembly_id = 90, .timestamp = 1 };
    nt_assembly as = { .which = NT_RECORD_LOAD, .assembly_id = 90, .name = "Plugin", .flags = 0x8, .timestamp = 1 };
    cr_assert_eq(cb.module(w, &mod), 0);
    cr_assert_eq(cb.assembly(w, &as), 0);
    const uint64_t ips[] = { 0x40210 };
    feed_sample(w, 10, 1, NT_SAMPLE_MANAGED, ips, 1);
    mod.which = as.which = NT_RECORD_UNLOAD;
    mod.timestamp = as.timestamp = 20;
    cr_assert_eq(cb.module(w, &mod), 0);
    cr_assert_eq(cb.assembly(w, &as), 0);
    nt_top *top = window_top(w, NULL, NT_OK);
    cr_assert_str_eq(top->tables[0].rows[0].name, "Plugin!Plugin.T.Run", "named before its unload");
    nt_top_free(top);
    feed_sample(w, 30, 1, NT_SAMPLE_MANAGED, ips, 1);
    top = window_top(w, NULL, NT_OK);
    cr_assert_str_eq(top->tables[0].rows[0].name, "0x40210", "its code is gone");
    nt_top_free(top);
    nt_trace_window_stats ws = { 0 };
    nt_trace_window_stats_get(w, &ws);
    cr_assert_eq(ws.records_retired, 5);
    cr_assert_eq(ws.records.entries, 0);
    cr_assert_eq(ws.modules.entries, 2, "App's module and assembly stay; Plugin's are gone");
    nt_trace_window_free(w);
}

static void sample_at(nt_trace_window *w, int64_t ns, uint64_t tid, const uint64_t *ips, uint32_t n)
{
    static uint32_t id = 1000000;
    nt_stack st = { .id = ++id, .count = n, .ips = ips };
    nt_sample s = { .timestamp = ns, .time_ns = ns, .thread_id = tid, .type = NT_SAMPLE_MANAGED, .stack = &st,
                    .stack_id = st.id };
    cr_assert_eq(cb.sample(w, &s), 0);
}

static uint64_t samples_of(nt_trace *t)
{
    cr_assert_not_null(t);
    uint64_t n = nt_trace_sample_count(t);
    nt_trace_free(t);
    return n;
}

/* Request windows: many open at once over one stream, each with its own
 * start, end and threads; a closed window's handle is refused. */
Test(trace_window, request_windows_overlap)
{
    nt_trace_window *w = nt_trace_window_new(NULL, NULL);
    nt_trace_window_callbacks(&cb);
    feed_app(w);
    feed_method(w, 1, 0x1000, 0x100, "App.Handler", "Serve", 7);
    const uint64_t ips[] = { 0x1010 };
    nt_window_id all, t2, late;
    cr_assert_eq(nt_trace_window_open(w, 100, NULL, &all), NT_OK);
    const uint64_t threads[] = { 2 };
    nt_window_filter f = { .thread_ids = threads, .thread_count = 1 };
    cr_assert_eq(nt_trace_window_open(w, 100, &f, &t2), NT_OK);
    for (int64_t ns = 100; ns < 200; ns += 10) {
        sample_at(w, ns, 1, ips, 1);
        sample_at(w, ns, 2, ips, 1);
    }
    cr_assert_eq(nt_trace_window_open(w, 150, NULL, &late), NT_OK);
    for (int64_t ns = 200; ns < 300; ns += 10)
        sample_at(w, ns, 1, ips, 1);
    nt_trace *t;
    cr_assert_eq(nt_trace_window_close(w, t2, 250, &t), NT_OK);
    cr_assert_eq(samples_of(t), 10, "thread 2 from 100 to 250");
    cr_assert_eq(nt_trace_window_close(w, t2, 250, &t), NT_ERR_INVALID_ARG, "closed once");
    cr_assert_null(t);
    nt_window_id again;
    cr_assert_eq(nt_trace_window_open(w, 0, NULL, &again), NT_OK);
    cr_assert_neq(again, t2, "a reused slot gets another handle");
    cr_assert_eq(nt_trace_window_close(w, t2, 250, &t), NT_ERR_INVALID_ARG, "the old handle stays refused");
    cr_assert_eq(nt_trace_window_close(w, late, 1000, &t), NT_OK);
    nt_top *top;
    cr_assert_eq(nt_top_build(t, NULL, &top), NT_OK);
    cr_assert_str_eq(top->tables[0].rows[0].name, "App!App.Handler.Serve", "named like any window");
    nt_top_free(top);
    cr_assert_eq(samples_of(t), 5 * 2 + 10, "both threads from 150 on");
    cr_assert_eq(nt_trace_window_close(w, all, 1000, &t), NT_OK);
    cr_assert_eq(samples_of(t), 30);
    cr_assert_eq(nt_trace_window_close(w, again, 1000, &t), NT_OK);
    cr_assert_eq(samples_of(t), 30, "the log held what the oldest open window needed");
    nt_trace_window_stats ws = { 0 };
    nt_trace_window_stats_get(w, &ws);
    cr_assert_eq(ws.open_windows, 0);
    cr_assert_eq(ws.recorder.bytes, 0, "no window open, no recorder: nothing logged");
    /* The continuous window saw every sample too. */
    cr_assert_eq(nt_trace_window_take(w, &t), NT_OK);
    cr_assert_eq(samples_of(t), 30);
    nt_trace_window_free(w);
}

/* The flight recorder: the last recorder_ns of samples, cut after the fact. */
Test(trace_window, the_recorder_cuts_windows_after_the_fact)
{
    nt_trace_window_config cfg = { .struct_size = sizeof cfg, .recorder_ns = 100000, .no_continuous = true };
    nt_trace_window *w = nt_trace_window_new(&cfg, NULL);
    nt_trace_window_callbacks(&cb);
    feed_app(w);
    feed_method(w, 1, 0x1000, 0x100, "App.Slow", "Query", 7);
    const uint64_t ips[] = { 0x1010 };
    /* 1,000,000 ns of samples, one every 10 ns on two threads: the recorder keeps about its last 100,000. */
    for (int64_t ns = 0; ns < 1000000; ns += 10) {
        sample_at(w, ns, 1, ips, 1);
        sample_at(w, ns, 2, ips, 1);
    }
    int64_t lo, hi;
    cr_assert(nt_trace_window_recorder_span(w, &lo, &hi));
    cr_assert_eq(hi, 1000000 - 10);
    cr_assert_geq(lo, 0);
    cr_assert_leq(lo, 1000000 - 100000, "it holds at least its span");
    nt_trace *t;
    const uint64_t threads[] = { 1 };
    nt_window_filter f = { .thread_ids = threads, .thread_count = 1 };
    cr_assert_eq(nt_trace_window_cut(w, 950000, 960000, &f, &t), NT_OK);
    cr_assert_eq(nt_trace_sample_count(t), 1000);
    nt_top *top;
    cr_assert_eq(nt_top_build(t, NULL, &top), NT_OK);
    cr_assert_str_eq(top->tables[0].rows[0].name, "App!App.Slow.Query");
    nt_top_free(top);
    nt_trace_free(t);
    cr_assert_eq(nt_trace_window_cut(w, 0, 1000, NULL, &t), NT_ERR_LIMIT, "those samples were dropped");
    cr_assert_eq(samples_of(t), 0);
    cr_assert_eq(nt_trace_window_take(w, &t), NT_ERR_INVALID_ARG, "no continuous window");
    nt_trace_window_stats ws = { 0 };
    nt_trace_window_stats_get(w, &ws);
    cr_assert_gt(ws.recorder.entries, 0);
    cr_assert_lt(ws.recorder.entries, 200000, "the recorder dropped what fell out of its span");
    cr_assert_eq(ws.windows, 2);
    nt_trace_window_free(w);
    nt_trace_window *plain = nt_trace_window_new(NULL, NULL);
    cr_assert_eq(nt_trace_window_cut(plain, 0, 1, NULL, &t), NT_ERR_INVALID_ARG, "no recorder");
    cr_assert_not(nt_trace_window_recorder_span(plain, &lo, &hi));
    nt_trace_window_free(plain);
}

/* Loss accounting: what the sequence points say was dropped, per window. */
Test(trace_window, dropped_events_are_counted_per_window)
{
    nt_trace_window *w = nt_trace_window_new(NULL, NULL);
    nt_trace_window_callbacks(&cb);
    feed_app(w);
    nt_sp_thread th[] = { { 1, 10, 3 }, { 2, 20, 4 } };
    nt_sequence_point sp = { .timestamp = 5, .thread_count = 2, .threads = th };
    cr_assert_eq(cb.sequence_point(w, &sp), 0);
    nt_trace *t;
    cr_assert_eq(nt_trace_window_take(w, &t), NT_OK);
    nt_trace_stats ts;
    nt_trace_stats_get(t, &ts);
    cr_assert_eq(ts.events_dropped, 7);
    nt_trace_free(t);
    cr_assert_eq(nt_trace_window_take(w, &t), NT_OK);
    nt_trace_stats_get(t, &ts);
    cr_assert_eq(ts.events_dropped, 0, "the next window lost nothing");
    nt_trace_free(t);
    nt_trace_window_stats ws = { 0 };
    nt_trace_window_stats_get(w, &ws);
    cr_assert_eq(ws.events_dropped, 7);
    nt_trace_window_free(w);
}

/* Labels: a V6 stream's label lists (TraceId, SpanId) select a request
 * window's and a cut's samples, as a span profiler attaches one per span. */
/* A V6 stream of 30 samples of one stack on two threads: every third with
 * label list B (TraceId BB.., SpanId 2), the others with A (AA.., SpanId
 * 0x0807060504030201). */
static void labeled_stream(nt_membuf *outp)
{
    nt_writer_options o;
    nt_writer_options_default(&o);
    o.format = 6;
    nt_writer *wr = nt_writer_new(&o, nt_membuf_write, outp, NULL);
    cr_assert_not_null(wr);
    nt_writer_event h = { .thread_id = 1, .timestamp = 1 };
    nt_method m = { .which = NT_METHOD_LOAD, .method_id = 1, .start_address = 0x1000, .size = 0x100,
                    .declaring_type = "App.Api", .name = "Get", .signature = "void ()", .module_id = 7 };
    cr_assert_eq(nt_writer_method(wr, &h, &m), NT_OK);
    const uint64_t ips[] = { 0x1010 };
    uint32_t stack, la, lb;
    cr_assert_eq(nt_writer_stack(wr, ips, 1, &stack), NT_OK);
    nt_label a[2] = { { .kind = NT_LABEL_TRACE_ID }, { .kind = NT_LABEL_SPAN_ID, .value = 0x0807060504030201ull } };
    nt_label b[2] = { { .kind = NT_LABEL_TRACE_ID }, { .kind = NT_LABEL_SPAN_ID, .value = 2 } };
    memset(a[0].guid, 0xAA, 16);
    memset(b[0].guid, 0xBB, 16);
    cr_assert_eq(nt_writer_label_list(wr, a, 2, &la), NT_OK);
    cr_assert_eq(nt_writer_label_list(wr, b, 2, &lb), NT_OK);
    for (int i = 0; i < 30; i++) {
        nt_writer_event e = { .thread_id = 1 + (uint64_t)(i % 2), .timestamp = 10 + i, .stack_id = stack,
                              .label_list_id = i % 3 == 0 ? lb : la };
        cr_assert_eq(nt_writer_sample(wr, &e, NT_SAMPLE_MANAGED), NT_OK, "%s", nt_writer_message(wr));
    }
    cr_assert_eq(nt_writer_finish(wr), NT_OK);
    nt_writer_free(wr);

}

/* That stream parsed into window w. */
static void feed_labeled_stream(nt_trace_window *w)
{
    nt_membuf out = { 0 };
    labeled_stream(&out);
    nt_callbacks wcb;
    nt_trace_window_callbacks(&wcb);
    char msg[256];
    cr_assert_eq(nt_parse_buffer(out.data, out.len, &wcb, w, NULL, msg, sizeof msg), NT_OK, "%s", msg);
    nt_membuf_free(&out);
}

Test(trace_window, windows_filter_by_trace_and_span_id)
{
    nt_trace_window_config cfg = { .struct_size = sizeof cfg, .recorder_ns = UINT64_MAX / 2 };
    nt_trace_window *w = nt_trace_window_new(&cfg, NULL);
    nt_window_filter fa = { .has_trace_id = true };
    memset(fa.trace_id, 0xAA, 16);
    nt_window_filter fspan = { .has_span_id = true, .span_id = { 1, 2, 3, 4, 5, 6, 7, 8 } };
    nt_window_id ida, idspan;
    cr_assert_eq(nt_trace_window_open(w, INT64_MIN, &fa, &ida), NT_OK);
    cr_assert_eq(nt_trace_window_open(w, INT64_MIN, &fspan, &idspan), NT_OK);
    feed_labeled_stream(w);
    nt_trace *t;
    cr_assert_eq(nt_trace_window_close(w, ida, INT64_MAX, &t), NT_OK);
    cr_assert_eq(samples_of(t), 20, "the samples of trace AA..");
    cr_assert_eq(nt_trace_window_close(w, idspan, INT64_MAX, &t), NT_OK);
    cr_assert_eq(samples_of(t), 20, "the span's bytes as the stream holds them");
    nt_window_filter fb = { .has_trace_id = true };
    memset(fb.trace_id, 0xBB, 16);
    cr_assert_eq(nt_trace_window_cut(w, INT64_MIN, INT64_MAX, &fb, &t), NT_OK);
    nt_top *top;
    cr_assert_eq(nt_top_build(t, NULL, &top), NT_OK);
    cr_assert_eq(top->tables[0].samples, 10);
    cr_assert_str_eq(top->tables[0].rows[0].name, "?!App.Api.Get");
    nt_top_free(top);
    nt_trace_free(t);
    nt_trace_window_free(w);
}

/* With sample_labels every window keeps each sample's labels: in the trace,
 * and in pprof as trace_id / span_id labels (samples of other spans apart). */
Test(trace_window, samples_carry_their_labels_into_pprof)
{
    nt_trace_window_config cfg = { .struct_size = sizeof cfg, .sample_labels = true };
    nt_trace_window *w = nt_trace_window_new(&cfg, NULL);
    feed_labeled_stream(w);
    nt_trace *t;
    cr_assert_eq(nt_trace_window_take(w, &t), NT_OK);
    cr_assert_eq(nt_trace_sample_count(t), 30);
    size_t in_b = 0;
    for (size_t i = 0; i < 30; i++) {
        nt_event_labels l;
        cr_assert(nt_trace_sample_labels(t, i, &l), "sample %zu", i);
        cr_assert(l.has_trace_id && l.has_span_id);
        in_b += l.trace_id[0] == 0xBB;
        if (l.trace_id[0] == 0xAA)
            cr_assert_eq(l.span_id[0], 1, "span bytes as the stream holds them");
    }
    cr_assert_eq(in_b, 10);
    nt_membuf pp = { 0 };
    cr_assert_eq(nt_export_pprof(t, NULL, nt_membuf_write, &pp), NT_OK);
    const uint8_t *data = pp.data;
    size_t len = pp.len;
#if HAVE_ZLIB
    static uint8_t plain[1 << 16];
    z_stream z = { 0 };
    cr_assert_eq(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
    z.next_in = (Bytef *)pp.data;
    z.avail_in = (uInt)pp.len;
    z.next_out = plain;
    z.avail_out = sizeof plain;
    cr_assert_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
    len = z.total_out;
    inflateEnd(&z);
    data = plain;
#endif
    const char *want[] = { "trace_id", "span_id", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                           "0102030405060708" };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        bool found = false;
        size_t n = strlen(want[k]);
        for (size_t i = 0; !found && i + n <= len; i++)
            found = memcmp(data + i, want[k], n) == 0;
        cr_assert(found, "pprof has no string %s", want[k]);
    }
    nt_membuf_free(&pp);
    nt_trace_free(t);
    /* Without the option nothing is kept. */
    nt_trace_window *plain_w = nt_trace_window_new(NULL, NULL);
    feed_labeled_stream(plain_w);
    cr_assert_eq(nt_trace_window_take(plain_w, &t), NT_OK);
    cr_assert_not(nt_trace_sample_labels(t, 0, NULL));
    nt_trace_free(t);
    nt_trace_window_free(plain_w);
    nt_trace_window_free(w);
}
