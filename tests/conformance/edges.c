/* conformance_edges OUT: write a small NetTrace V4 stream whose samples hit
 * the cases where libnettrace and TraceEvent's TraceLog are known to name a
 * frame differently, none of which the real traces of the corpus contain
 * (tests/conformance/README.md, "Deliberate differences"):
 *
 *   - return addresses at the very end of a method (with another method, or
 *     nothing, right after it) and at the very start of one;
 *   - a MethodLoadVerbose without the Jitted flag (ReadyToRun code) and no
 *     rundown record for it;
 *   - code memory reused after an unload (a dynamic method unloaded, another
 *     one loaded at the same address) with no rundown after it;
 *   - a thread id wider than 32 bits;
 *   - two samples with the same timestamp.
 *
 * The stream has JIT and loader events but no method rundown, like a trace
 * whose session was cut before the rundown.  As the runtime does, the loader
 * records come from one thread and every sample from the sampler thread, and
 * an event is marked sorted where the capture thread changes: TraceEvent's
 * EventCache attributes sequence numbers to the capture thread of the last
 * sorted event and would otherwise report bogus lost events.  Output is
 * deterministic. */
#include "nettrace_writer.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static int g_failed;

static void check(nt_writer *w, nt_status s, const char *what)
{
    if (s != NT_OK) {
        fprintf(stderr, "conformance_edges: %s: %s\n", what, nt_writer_message(w));
        g_failed = 1;
    }
}

#define MODULE_ID 0x7f0000200000ull
#define ASSEMBLY_ID 0x7f0000100000ull

#define LOADER_THREAD 1
#define SAMPLER_THREAD 7

static const nt_writer_event *record_header(int64_t t)
{
    static nt_writer_event h;
    h = (nt_writer_event){ .thread_id = LOADER_THREAD, .timestamp = t, .is_sorted = true };
    return &h;
}

static void method(nt_writer *w, nt_record_event which, int64_t t, uint64_t id, uint64_t start, uint32_t flags,
                   const char *type, const char *name)
{
    nt_method m = { .which = which, .version = 2, .method_id = id, .module_id = MODULE_ID,
                    .start_address = start, .size = 0x100, .token = 0x06000000u | (uint32_t)(id & 0xff),
                    .flags = flags, .declaring_type = type, .name = name, .signature = "void  ()",
                    .clr_instance_id = 1, .timestamp = t };
    check(w, nt_writer_method(w, record_header(t), &m), name);
}

/* sorted: false only for the second of two samples with one timestamp. */
static void sample(nt_writer *w, uint64_t thread, int64_t t, const uint64_t *ips, uint32_t n, bool sorted)
{
    uint32_t stack;
    check(w, nt_writer_stack(w, ips, n, &stack), "stack");
    nt_writer_event h = { .thread_id = thread, .capture_thread_id = SAMPLER_THREAD, .timestamp = t,
                          .stack_id = stack, .is_sorted = sorted };
    check(w, nt_writer_sample(w, &h, NT_SAMPLE_MANAGED), "sample");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: conformance_edges OUT.nettrace\n");
        return 2;
    }
    nt_writer_options o = { 0 };
    nt_writer_options_default(&o);
    o.sync_time_utc = (nt_systemtime){ 2026, 11, 0, 29, 12, 0, 0, 0 };
    o.sync_qpc = 1000;
    o.process_id = 4242;
    o.processor_count = 2;
    nt_membuf out = { 0 };
    nt_writer *w = nt_writer_new(&o, nt_membuf_write, &out, NULL);
    if (!w) {
        fprintf(stderr, "conformance_edges: out of memory\n");
        return 1;
    }

    nt_assembly a = { .which = NT_RECORD_LOAD, .version = 1, .assembly_id = ASSEMBLY_ID, .app_domain_id = 1,
                      .name = "Edges, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null", .clr_instance_id = 1,
                      .timestamp = 1050 };
    check(w, nt_writer_assembly(w, record_header(a.timestamp), &a), "assembly");
    nt_module mod = { .which = NT_RECORD_LOAD, .version = 2, .module_id = MODULE_ID, .assembly_id = ASSEMBLY_ID,
                      .il_path = "/app/Edges.dll", .native_path = "", .clr_instance_id = 1, .timestamp = 1060 };
    check(w, nt_writer_module(w, record_header(mod.timestamp), &mod), "module");

    const uint32_t jit = NT_METHOD_FLAG_JITTED;
    method(w, NT_RECORD_LOAD, 1100, 1, 0x10000, jit, "Edges.Caller", "A");       /* [0x10000, 0x10100) */
    method(w, NT_RECORD_LOAD, 1101, 2, 0x10100, jit, "Edges.Next", "B");         /* starts where A ends */
    method(w, NT_RECORD_LOAD, 1102, 3, 0x30000, jit, "Edges.Program", "Main");
    method(w, NT_RECORD_LOAD, 1103, 4, 0x40000, jit, "Edges.Tail", "D");         /* nothing after it */
    method(w, NT_RECORD_LOAD, 1104, 5, 0x50000, jit, "Edges.Start", "E");        /* nothing before it */
    method(w, NT_RECORD_LOAD, 1105, 6, 0x90000, 0, "Edges.ReadyToRun", "N");     /* not jitted */
    method(w, NT_RECORD_LOAD, 1106, 7, 0x60000, jit | NT_METHOD_FLAG_DYNAMIC, "dynamicClass", "F");
    method(w, NT_RECORD_LOAD, 1107, 8, 0x70000, jit, "Edges.Leaf", "L");

    const uint64_t main_ip = 0x30010, leaf = 0x70010;
    sample(w, 42, 2000, (const uint64_t[]){ leaf, 0x10100, main_ip }, 3, true); /* returns to A's end = B's start */
    sample(w, 42, 2010, (const uint64_t[]){ leaf, 0x40100, main_ip }, 3, true); /* returns to D's end, nothing after */
    sample(w, 42, 2020, (const uint64_t[]){ leaf, 0x50000, main_ip }, 3, true); /* returns to E's start */
    sample(w, 42, 2030, (const uint64_t[]){ 0x90010, main_ip }, 2, true);       /* in ReadyToRun code */
    sample(w, 42, 2040, (const uint64_t[]){ 0x60010, main_ip }, 2, true);       /* in F, before its unload */
    sample(w, 43, 2050, (const uint64_t[]){ leaf, main_ip }, 2, true);          /* two samples, one timestamp */
    sample(w, 44, 2050, (const uint64_t[]){ main_ip }, 1, false);
    sample(w, 0x10000002aull, 2060, (const uint64_t[]){ leaf, main_ip }, 2, true); /* 64-bit thread id, low half 42 */

    method(w, NT_RECORD_UNLOAD, 3000, 7, 0x60000, jit | NT_METHOD_FLAG_DYNAMIC, "dynamicClass", "F");
    method(w, NT_RECORD_LOAD, 3100, 9, 0x60000, jit | NT_METHOD_FLAG_DYNAMIC, "dynamicClass", "G"); /* F's memory */
    sample(w, 42, 4000, (const uint64_t[]){ 0x60010, main_ip }, 2, true);       /* in G */

    check(w, nt_writer_finish(w), "finish");
    nt_writer_free(w);
    if (!g_failed) {
        FILE *f = fopen(argv[1], "wb");
        if (!f || fwrite(out.data, 1, out.len, f) != out.len || fclose(f) != 0) {
            fprintf(stderr, "conformance_edges: cannot write %s\n", argv[1]);
            g_failed = 1;
        }
    }
    nt_membuf_free(&out);
    return g_failed;
}
