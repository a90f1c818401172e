#include "trace_build.h"
#include "nettrace.h"

#include <string.h>

void pb_begin(pb *p, uint32_t pointer_size, int64_t freq)
{
    memset(p, 0, sizeof *p);
    p->ptr = pointer_size;
    tb_header(&p->b, pointer_size, freq);
    tb_metadata_block(&p->b, MD_SAMPLE, NT_PROVIDER_SAMPLE_PROFILER, 0, 0);
    tb_metadata_block(&p->b, MD_LOAD, NT_PROVIDER_RUNTIME, 143, 1);
    tb_metadata_block(&p->b, MD_UNLOAD, NT_PROVIDER_RUNTIME, 144, 1);
    tb_metadata_block(&p->b, MD_DCEND, NT_PROVIDER_RUNDOWN, 144, 1);
    tb_metadata_block(&p->b, MD_MODULE, NT_PROVIDER_RUNTIME, 152, 1);
    tb_metadata_block(&p->b, MD_ASSEMBLY, NT_PROVIDER_RUNTIME, 154, 1);
}

void pb_flush(pb *p)
{
    if (!p->in_block)
        return;
    tb_block_end(&p->b, p->block_pos);
    p->in_block = false;
}

void pb_stacks(pb *p, uint32_t first_id, uint32_t count, const uint64_t *const *ips, const uint32_t *depths)
{
    pb_flush(p);
    tb_stack_block(&p->b, first_id, count, ips, depths, p->ptr);
}

void pb_one_frame_stack(pb *p, uint64_t ip)
{
    const uint64_t *ips[] = { &ip };
    const uint32_t depth = 1;
    pb_stacks(p, 1, 1, ips, &depth);
}

static void event(pb *p, uint32_t md, uint64_t thread, uint32_t stack_id, int64_t ts, const tb *payload)
{
    /* Timestamps are delta-coded within a block: an older event starts a new block. */
    if (p->in_block && ts < p->prev.timestamp)
        pb_flush(p);
    if (!p->in_block) {
        p->block_pos = tb_block_begin(&p->b, "EventBlock");
        tb_event_header(&p->b, 1);
        memset(&p->prev, 0, sizeof p->prev);
        p->in_block = true;
    }
    tb_event e = { 0 };
    e.metadata_id = md;
    e.seq = ++p->seq;
    e.stack_id = stack_id;
    e.thread_id = thread;
    e.capture_thread_id = 1;
    e.timestamp = ts;
    e.payload = payload->d;
    e.payload_size = (uint32_t)payload->n;
    tb_compressed_event(&p->b, &e, &p->prev);
}

void pb_sample(pb *p, uint64_t thread, uint32_t stack_id, int64_t ts, uint32_t type)
{
    tb pl = { 0 };
    tb_u32(&pl, type);
    event(p, MD_SAMPLE, thread, stack_id, ts, &pl);
    tb_free(&pl);
}

void pb_method(pb *p, uint32_t md, int64_t ts, uint64_t method_id, uint64_t module_id, uint64_t start,
               uint32_t size, const char *ns, const char *name)
{
    tb pl = { 0 };
    tb_u64(&pl, method_id);
    tb_u64(&pl, module_id);
    tb_u64(&pl, start);
    tb_u32(&pl, size);
    tb_u32(&pl, 0x06000001);
    tb_u32(&pl, 0x8);
    tb_utf16z(&pl, ns);
    tb_utf16z(&pl, name);
    tb_utf16z(&pl, "void  ()");
    tb_u16(&pl, 1);
    event(p, md, 1, 0, ts, &pl);
    tb_free(&pl);
}

void pb_module(pb *p, int64_t ts, uint64_t module_id, uint64_t assembly_id, const char *il_path)
{
    tb pl = { 0 };
    tb_u64(&pl, module_id);
    tb_u64(&pl, assembly_id);
    tb_u32(&pl, 0);
    tb_u32(&pl, 0);
    tb_utf16z(&pl, il_path);
    tb_utf16z(&pl, "");
    tb_u16(&pl, 1);
    event(p, MD_MODULE, 1, 0, ts, &pl);
    tb_free(&pl);
}

void pb_assembly(pb *p, int64_t ts, uint64_t assembly_id, const char *name)
{
    tb pl = { 0 };
    tb_u64(&pl, assembly_id);
    tb_u64(&pl, 1);  /* app domain */
    tb_u64(&pl, 0);  /* binding id */
    tb_u32(&pl, 0);
    tb_utf16z(&pl, name);
    tb_u16(&pl, 1);
    event(p, MD_ASSEMBLY, 1, 0, ts, &pl);
    tb_free(&pl);
}

void pb_sp(pb *p, int64_t ts)
{
    pb_flush(p);
    uint64_t tid = 1;
    tb_sp_block(&p->b, ts, 1, &tid, &p->seq);
}

void pb_end(pb *p)
{
    pb_flush(p);
    tb_end(&p->b);
}
