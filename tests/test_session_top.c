/* nt_live_top, the live counting core, fed by hand-made records. */
#include <criterion/criterion.h>

#include "nettrace_session.h"

#include <stdio.h>
#include <string.h>

static void method(nt_live_top *t, uint64_t id, uint64_t start, uint32_t size, const char *type, const char *name,
                   uint64_t module)
{
    nt_method m;
    memset(&m, 0, sizeof m);
    m.which = NT_METHOD_DC_END;
    m.method_id = id;
    m.start_address = start;
    m.size = size;
    m.declaring_type = type;
    m.name = name;
    m.module_id = module;
    cr_assert_eq(nt_live_top_on_method(t, &m), 0);
}

static void sample(nt_live_top *t, uint64_t tid, uint32_t type, const uint64_t *ips, uint32_t n)
{
    nt_stack st = { 1, n, ips };
    nt_sample s;
    memset(&s, 0, sizeof s);
    s.thread_id = tid;
    s.type = type;
    s.stack = &st;
    s.stack_id = 1;
    cr_assert_eq(nt_live_top_on_sample(t, &s), 0);
}

static const nt_live_top_thread *thread_in(const nt_live_top_snapshot *s, uint64_t tid)
{
    for (uint32_t i = 0; i < s->thread_count; i++)
        if (s->threads[i].thread_id == tid)
            return &s->threads[i];
    cr_assert_fail("thread %llu missing", (unsigned long long)tid);
    return NULL;
}

Test(live_top, exclusive_inclusive_and_names)
{
    nt_live_top *t = nt_live_top_new(NULL, NULL);
    nt_module mod = { .which = NT_RECORD_DC_END, .module_id = 7, .assembly_id = 70 };
    nt_assembly as = { .which = NT_RECORD_DC_END, .assembly_id = 70, .name = "App, Version=1.0.0.0, Culture=neutral" };
    nt_live_top_on_module(t, &mod);
    nt_live_top_on_assembly(t, &as);
    method(t, 1, 0x1000, 0x100, "App.Leaf", "Spin", 7);
    method(t, 2, 0x2000, 0x100, "App.Mid", "Call", 7);
    method(t, 3, 0x3000, 0x100, "App.Root", "Main", 7);
    const uint64_t a[] = { 0x1010, 0x2020, 0x3030 };
    const uint64_t recursive[] = { 0x2010, 0x2050, 0x2090, 0x3030 }; /* Mid three times: once inclusively */
    for (int i = 0; i < 6; i++)
        sample(t, 11, NT_SAMPLE_MANAGED, a, 3);
    for (int i = 0; i < 2; i++)
        sample(t, 11, NT_SAMPLE_MANAGED, recursive, 4);
    sample(t, 11, NT_SAMPLE_EXTERNAL, a, 3); /* not counted by default */
    sample(t, 22, NT_SAMPLE_MANAGED, recursive, 4);
    nt_live_top_snapshot *s;
    cr_assert_eq(nt_live_top_snapshot_take(t, 0, false, &s), NT_OK);
    cr_assert_eq(s->samples, 10);
    cr_assert_eq(s->thread_count, 2);
    cr_assert_eq(s->threads[0].thread_id, 11, "threads by samples, descending");
    const nt_live_top_thread *th = thread_in(s, 11);
    cr_assert_eq(th->samples, 9);
    cr_assert_eq(th->external, 1);
    cr_assert_eq(th->entry_count, 3);
    cr_assert_str_eq(th->entries[0].method, "Spin");
    cr_assert_str_eq(th->entries[0].type, "App.Leaf");
    cr_assert_str_eq(th->entries[0].assembly, "App");
    cr_assert_eq(th->entries[0].exclusive, 6);
    cr_assert_eq(th->entries[0].inclusive, 6);
    cr_assert_eq(th->entries[0].address, 0x1000);
    cr_assert_str_eq(th->entries[1].method, "Call");
    cr_assert_eq(th->entries[1].exclusive, 2);
    cr_assert_eq(th->entries[1].inclusive, 8, "recursion counts once per sample");
    cr_assert_str_eq(th->entries[2].method, "Main");
    cr_assert_eq(th->entries[2].inclusive, 8);
    nt_live_top_snapshot_free(t, s);
    /* top_n and reset */
    cr_assert_eq(nt_live_top_snapshot_take(t, 1, true, &s), NT_OK);
    cr_assert_eq(thread_in(s, 11)->entry_count, 1);
    nt_live_top_snapshot_free(t, s);
    cr_assert_eq(nt_live_top_snapshot_take(t, 0, false, &s), NT_OK);
    cr_assert_eq(s->thread_count, 0, "reset cleared the counts");
    cr_assert_eq(s->methods_known, 3, "and kept the names");
    nt_live_top_snapshot_free(t, s);
    nt_live_top_free(t);
}

Test(live_top, names_arriving_later_attach_to_earlier_samples)
{
    nt_live_top *t = nt_live_top_new(NULL, NULL);
    const uint64_t ips[] = { 0x5010, 0x6010 };
    for (int i = 0; i < 4; i++)
        sample(t, 1, NT_SAMPLE_MANAGED, ips, 2);
    nt_live_top_snapshot *s;
    cr_assert_eq(nt_live_top_snapshot_take(t, 0, false, &s), NT_OK);
    cr_assert_str_eq(s->threads[0].entries[0].method, "", "not named yet");
    cr_assert_eq(s->threads[0].entries[0].address, 0x5010);
    nt_live_top_snapshot_free(t, s);
    method(t, 9, 0x5000, 0x40, "Late.Type", "Hot", 0);
    sample(t, 1, NT_SAMPLE_MANAGED, ips, 2); /* one more, resolved at sample time */
    cr_assert_eq(nt_live_top_snapshot_take(t, 0, false, &s), NT_OK);
    const nt_live_top_thread *th = &s->threads[0];
    cr_assert_str_eq(th->entries[0].method, "Hot");
    cr_assert_str_eq(th->entries[0].type, "Late.Type");
    cr_assert_eq(th->entries[0].exclusive, 5, "earlier raw-IP counts merged with the named ones");
    cr_assert_eq(th->entries[0].address, 0x5000);
    nt_live_top_snapshot_free(t, s);
    const char *name;
    cr_assert(nt_live_top_resolve(t, 0x503F, &name, NULL, NULL));
    cr_assert_str_eq(name, "Hot");
    cr_assert_not(nt_live_top_resolve(t, 0x5040, NULL, NULL, NULL));
    nt_live_top_free(t);
}

Test(live_top, code_versions_count_as_one_method)
{
    nt_live_top *t = nt_live_top_new(NULL, NULL);
    method(t, 42, 0x1000, 0x100, "T", "M", 0);   /* tier 0 */
    method(t, 42, 0x9000, 0x80, "T", "M", 0);    /* OSR / tier 1: same method id */
    const uint64_t v0[] = { 0x1010 }, v1[] = { 0x9010 };
    sample(t, 1, NT_SAMPLE_MANAGED, v0, 1);
    sample(t, 1, NT_SAMPLE_MANAGED, v1, 1);
    sample(t, 1, NT_SAMPLE_MANAGED, v1, 1);
    nt_live_top_snapshot *s;
    cr_assert_eq(nt_live_top_snapshot_take(t, 0, false, &s), NT_OK);
    cr_assert_eq(s->threads[0].entry_count, 1);
    cr_assert_eq(s->threads[0].entries[0].exclusive, 3);
    nt_live_top_snapshot_free(t, s);
    nt_live_top_free(t);
}

Test(live_top, many_methods_in_any_order)
{
    nt_live_top *t = nt_live_top_new(NULL, NULL);
    /* 5,000 methods arriving in a scrambled order (the sorted array plus pending tail). */
    for (uint64_t i = 0; i < 5000; i++) {
        uint64_t k = (i * 2654435761u) % 5000;
        char name[32];
        snprintf(name, sizeof name, "m%llu", (unsigned long long)k);
        method(t, 100000 + k, 0x100000 + k * 0x100, 0x100, "T", name, 0);
    }
    for (uint64_t k = 0; k < 5000; k += 37) {
        const char *name;
        cr_assert(nt_live_top_resolve(t, 0x100000 + k * 0x100 + 0x80, &name, NULL, NULL));
        char want[32];
        snprintf(want, sizeof want, "m%llu", (unsigned long long)k);
        cr_assert_str_eq(name, want);
    }
    nt_live_top_free(t);
}

Test(live_top, memory_is_bounded)
{
    nt_live_top_config cfg = { .max_threads = 2, .max_methods = 3, .max_entries_per_thread = 2 };
    nt_live_top *t = nt_live_top_new(&cfg, NULL);
    for (uint64_t i = 0; i < 10; i++)
        method(t, i + 1, 0x1000 * (i + 1), 0x100, "T", "M", 0);
    const uint64_t deep[] = { 0x1000, 0x2000, 0x3000, 0x4000, 0x5000 };
    for (uint64_t tid = 1; tid <= 5; tid++)
        sample(t, tid, NT_SAMPLE_MANAGED, deep, 5);
    nt_live_top_snapshot *s;
    cr_assert_eq(nt_live_top_snapshot_take(t, 0, false, &s), NT_OK);
    cr_assert_eq(s->methods_known, 3);
    cr_assert_eq(s->thread_count, 2);
    for (uint32_t i = 0; i < s->thread_count; i++)
        cr_assert_eq(s->threads[i].entry_count, 2);
    /* 7 methods not kept + 3 threads not kept + 2 threads x 3 frames not kept */
    cr_assert_eq(s->dropped, 7 + 3 + 6, "dropped %llu", (unsigned long long)s->dropped);
    nt_live_top_snapshot_free(t, s);
    nt_live_top_free(t);
}

/* Through the parser's callbacks: nt_live_top_callbacks wires them. */
Test(live_top, callbacks_fill_only_what_they_own)
{
    nt_callbacks cb;
    memset(&cb, 0, sizeof cb);
    nt_live_top_callbacks(&cb);
    cr_assert_not_null(cb.sample);
    cr_assert_not_null(cb.method);
    cr_assert_not_null(cb.module);
    cr_assert_not_null(cb.assembly);
    cr_assert_null(cb.event);
    cr_assert_null(cb.trace);
}
