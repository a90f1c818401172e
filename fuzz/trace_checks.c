/* See trace_checks.h. */
#include "trace_checks.h"
#include "fuzz.h"

#include <string.h>

static volatile size_t sink_hole; /* keeps the walk from being optimized away */

static void touch(const char *s)
{
    if (!s)
        fz_fail("NULL string from an accessor");
    sink_hole += strlen(s);
}

static void touch_frames(const nt_trace *t, const uint32_t *ids, uint32_t n)
{
    char name[64];
    for (uint32_t i = 0; i < n; i++) {
        if (ids[i] >= nt_trace_frame_count(t))
            fz_fail("frame id %u of %zu", ids[i], nt_trace_frame_count(t));
        const nt_frame *f = nt_trace_frame_at(t, ids[i]);
        if (!f->method)
            fz_fail("a frame without a method record");
        if (f->method_index != NT_TRACE_NO_METHOD &&
            (f->method_index >= nt_trace_method_count(t) || f->method != nt_trace_method_at(t, f->method_index)))
            fz_fail("frame method %u is not the trace's record", f->method_index);
        touch(f->method->name);
        touch(f->method->declaring_type);
        touch(f->method->assembly);
        size_t need = nt_frame_name(f, name, sizeof name);
        if (need < sizeof name && strlen(name) != need)
            fz_fail("nt_frame_name length %zu, wrote %zu", need, strlen(name));
    }
}

void fz_walk_trace(const nt_trace *t)
{
    size_t ns = nt_trace_sample_count(t), nk = nt_trace_stack_count(t);
    int64_t prev = INT64_MIN;
    uint64_t counted = 0;
    for (size_t i = 0; i < ns; i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        if (s.count == 0)
            fz_fail("sample %zu stands for no sample", i);
        counted += s.count;
        if (s.time_ns < prev)
            fz_fail("samples out of time order at %zu", i);
        prev = s.time_ns;
        if (s.stack_index >= nk)
            fz_fail("sample %zu: stack index %u of %zu", i, s.stack_index, nk);
        if (s.frame_count && !s.frame_ids)
            fz_fail("sample %zu: %u frames, NULL array", i, s.frame_count);
        touch_frames(t, s.frame_ids, s.frame_count);
    }
    for (size_t i = 0; i < nk; i++) {
        nt_trace_stack k = nt_trace_stack_at(t, i);
        touch_frames(t, k.frame_ids, k.frame_count);
    }
    for (size_t i = 0; i < nt_trace_method_count(t); i++) {
        const nt_trace_method *m = nt_trace_method_at(t, i);
        touch(m->name);
        touch(m->declaring_type);
        touch(m->signature);
        touch(m->assembly);
    }
    for (size_t i = 0; i < nt_trace_module_count(t); i++)
        touch(nt_trace_module_at(t, i)->il_path);
    for (size_t i = 0; i < nt_trace_assembly_count(t); i++)
        touch(nt_trace_assembly_at(t, i)->name);
    for (size_t i = 0; i < nt_trace_thread_count(t); i++)
        sink_hole += (size_t)nt_trace_thread_id(t, i);
    nt_trace_stats st = { 0 };
    nt_trace_stats_get(t, &st);
    if (st.samples != counted)
        fz_fail("stats say %llu samples, the trace holds %llu", (unsigned long long)st.samples,
                (unsigned long long)counted);
    touch(nt_trace_message(t));
}
