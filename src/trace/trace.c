/* The built trace: its accessors, statistics, frame names, and freeing. */
#include "common/abi.h"
#include "trace/trace_internal.h"

#include <stdio.h>
#include <string.h>

static void free_samples(nt_trace *t)
{
    for (size_t i = 0; i < t->nschunks; i++)
        cm_mem_free(&t->mem, t->schunks[i], (i + 1 == t->nschunks ? t->last_chunk : TR_SCHUNK) * sizeof **t->schunks);
    cm_mem_free(&t->mem, t->schunks, t->schunks_cap * sizeof *t->schunks);
    t->schunks = NULL;
    t->nschunks = t->schunks_cap = 0;
}

void nt_trace_free(nt_trace *t)
{
    if (!t)
        return;
    cm_mem *m = &t->mem;
    tr_strings_free(m, &t->strings);
    free_samples(t);
    cm_mem_free(m, t->threads, t->threads_cap * sizeof *t->threads);
    cm_mem_free(m, t->methods, t->methods_cap * sizeof *t->methods);
    cm_mem_free(m, t->modules, t->modules_cap * sizeof *t->modules);
    cm_mem_free(m, t->assemblies, t->assemblies_cap * sizeof *t->assemblies);
    cm_map_free(m, &t->module_index);
    cm_map_free(m, &t->assembly_index);
    cm_mem_free(m, t->frames, t->frames_cap * sizeof *t->frames);
    cm_mem_free(m, t->ids, t->ids_cap * sizeof *t->ids);
    cm_mem_free(m, t->stacks, t->stacks_cap * sizeof *t->stacks);
    cm_mem_free(m, t->agg, t->agg_cap * sizeof *t->agg);
    cm_mem_free(m, t->label_sets, t->label_sets_cap * sizeof *t->label_sets);
    cm_mem_free(m, t->sample_labels, t->sample_labels_cap * sizeof *t->sample_labels);
    CM_MEM_DELETE(nt_trace, t);
}
/* ---- accessors ----
 * A NULL trace is an empty one: counts 0, pointers NULL, a zeroed struct, "" (nettrace.h's convention). */

const nt_trace_info *nt_trace_header(const nt_trace *t) { return t && t->have_info ? &t->info : NULL; }
int64_t nt_trace_frequency(const nt_trace *t) { return t ? t->info.qpc_frequency : 0; }
uint32_t nt_trace_pointer_size(const nt_trace *t) { return t ? t->info.pointer_size : 0; }
size_t nt_trace_sample_count(const nt_trace *t) { return t ? t->nsamples : 0; }

nt_trace_sample nt_trace_sample_at(const nt_trace *t, size_t i)
{
    nt_trace_sample o = { 0 };
    if (!t)
        return o;
    const tr_sample *s = TR_SAMPLE(t, i);
    const tr_rstack *r = &t->stacks[s->stack];
    o.timestamp = s->ticks;
    o.time_ns = nt_ticks_to_ns(s->ticks, t->info.qpc_frequency);
    o.thread_id = t->threads[TR_THREAD(s)];
    o.type = TR_TYPE(s);
    o.stack_index = s->stack;
    o.frame_count = r->count;
    o.frame_ids = tr_stack_ids(t, s->stack);
    o.count = tr_count(t, i);
    return o;
}

size_t nt_trace_stack_count(const nt_trace *t) { return t ? t->nstacks : 0; }

nt_trace_stack nt_trace_stack_at(const nt_trace *t, size_t i)
{
    nt_trace_stack s = { 0, NULL };
    if (t)
        s = (nt_trace_stack){ t->stacks[i].count, tr_stack_ids(t, (uint32_t)i) };
    return s;
}

size_t nt_trace_frame_count(const nt_trace *t) { return t ? t->nframes : 0; }
const nt_frame *nt_trace_frame_at(const nt_trace *t, uint32_t id) { return t ? &t->frames[id] : NULL; }

size_t nt_trace_method_count(const nt_trace *t) { return t ? t->nmethods : 0; }
const nt_trace_method *nt_trace_method_at(const nt_trace *t, size_t i) { return t ? &t->methods[i] : NULL; }
size_t nt_trace_module_count(const nt_trace *t) { return t ? t->nmodules : 0; }
const nt_trace_module *nt_trace_module_at(const nt_trace *t, size_t i) { return t ? &t->modules[i] : NULL; }
size_t nt_trace_assembly_count(const nt_trace *t) { return t ? t->nassemblies : 0; }
const nt_trace_assembly *nt_trace_assembly_at(const nt_trace *t, size_t i) { return t ? &t->assemblies[i] : NULL; }

const char *nt_trace_assembly_name(const nt_trace *t, uint64_t assembly_id)
{
    uint32_t i = t ? cm_map_index(&t->assembly_index, assembly_id) : UINT32_MAX;
    return i == UINT32_MAX ? NULL : t->assemblies[i].name;
}

bool nt_trace_module_assembly(const nt_trace *t, uint64_t module_id, uint64_t *assembly_id)
{
    uint32_t i = t ? cm_map_index(&t->module_index, module_id) : UINT32_MAX;
    if (i == UINT32_MAX)
        return false;
    *assembly_id = t->modules[i].assembly_id;
    return true;
}

size_t nt_trace_thread_count(const nt_trace *t) { return t ? t->nthreads : 0; }
uint64_t nt_trace_thread_id(const nt_trace *t, size_t i) { return t ? t->threads[i] : 0; }
const char *nt_trace_message(const nt_trace *t) { return t ? t->message : ""; }
bool nt_trace_counts_exact(const nt_trace *t) { return !t || !t->inexact; }

void nt_trace_stats_get(const nt_trace *t, nt_trace_stats *out)
{
    nt_trace_stats st = { 0 }, *o = &st;
    if (!t) {
        ABI_OUT(nt_trace_stats, out, o);
        return;
    }
    o->status = t->status;
    o->stream_bytes = t->stream_bytes;
    o->samples = t->agg ? t->total_samples : t->nsamples;
    o->samples_unknown_stack = t->samples_unknown_stack;
    o->frames = t->total_frames;
    o->resolved_frames = t->resolved_frames;
    o->stacks = t->nstacks;
    o->threads = t->nthreads;
    o->method_records = t->nmethods;
    o->jit_records = t->jit_records;
    o->rundown_records = t->rundown_records;
    o->unload_records = t->unload_records;
    o->modules = t->nmodules;
    o->assemblies = t->nassemblies;
    o->events_dropped = t->events_dropped;
    o->memory = t->mem.used;
    o->memory_peak = t->mem.peak;
    ABI_OUT(nt_trace_stats, out, o);
}

/* Appends n bytes at *len as snprintf would: what fits (room kept for the NUL), the length counted in full. */
static void put(char *buf, size_t size, size_t *len, const char *p, size_t n)
{
    if (*len + 1 < size) {
        size_t room = size - 1 - *len;
        memcpy(buf + *len, p, n < room ? n : room);
    }
    *len += n;
}

/* Exporters name every frame of every stack: formatted by hand, not by snprintf. */
size_t nt_frame_name(const nt_frame *f, char *buf, size_t size)
{
    size_t len = 0;
    const nt_trace_method *m = f->method;
    if (f->method_index == NT_TRACE_NO_METHOD || !m) {
        char hex[2 + 16];
        size_t n = sizeof hex;
        uint64_t v = f->ip;
        do {
            hex[--n] = "0123456789abcdef"[v & 15];
            v >>= 4;
        } while (v);
        hex[--n] = 'x';
        hex[--n] = '0';
        put(buf, size, &len, hex + n, sizeof hex - n);
    } else {
        const char *a = m->assembly;
        size_t alen = strcspn(a, ",");
        if (!alen) {
            a = "?";
            alen = 1;
        }
        put(buf, size, &len, a, alen);
        put(buf, size, &len, "!", 1);
        if (*m->declaring_type) {
            put(buf, size, &len, m->declaring_type, strlen(m->declaring_type));
            put(buf, size, &len, ".", 1);
        }
        put(buf, size, &len, m->name, strlen(m->name));
    }
    if (size)
        buf[len < size ? len : size - 1] = 0;
    return len;
}

size_t nt_frame_name_ex(const nt_frame *f, unsigned flags, char *buf, size_t size)
{
    size_t n = nt_frame_name(f, buf, size);
    const nt_trace_method *m = f->method;
    if (!(flags & NT_NAME_SIGNATURE) || f->method_index == NT_TRACE_NO_METHOD || !m || !m->signature ||
        !*m->signature)
        return n;
    /* "void  (int32,class System.String)": the parameters tell overloads apart, as profilers show them. */
    const char *params = strchr(m->signature, '(');
    int k = snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0, "%s%s", params ? "" : " ",
                     params ? params : m->signature);
    return n + (k < 0 ? 0 : (size_t)k);
}

