/* The parser seeds made by hand with the test stream builder: each block type,
 * both event encodings, every typed event and its payload versions, field
 * lists (V1 nested, V2Params, tags), stacks of both pointer sizes across
 * sequence points, drops, unknown blocks, and the early exits (bad magic,
 * NetPerf, V6 header, truncations). */
#include "seeds.h"
#include "common/format.h"

#include <string.h>

/* ---- payloads ----------------------------------------------------------- */

static void method_payload(tb *p, uint32_t version, uint64_t id, const char *ns, const char *name)
{
    tb_u64(p, id);
    tb_u64(p, 0x7f0000001000ull);   /* module */
    tb_u64(p, 0x7f1000000000ull + id * 0x40); /* start */
    tb_u32(p, 0x40);
    tb_u32(p, 0x06000001);
    tb_u32(p, NT_METHOD_FLAG_JITTED | (2u << 7));
    tb_utf16z(p, ns);
    tb_utf16z(p, name);
    tb_utf16z(p, "void  (int32)");
    if (version >= 1)
        tb_u16(p, 7);
    if (version >= 2)
        tb_u64(p, 3);
}

static void module_payload(tb *p, uint32_t version, bool domain)
{
    tb_u64(p, 0x7f0000001000ull);
    tb_u64(p, 0x7f0000002000ull);
    if (domain)
        tb_u64(p, 0x7f0000003000ull);
    tb_u32(p, 8);
    tb_u32(p, 0);
    tb_utf16z(p, "/app/App.dll");
    tb_utf16z(p, "");
    if (version >= 1)
        tb_u16(p, 7);
}

static void assembly_payload(tb *p, uint32_t version)
{
    tb_u64(p, 0x7f0000002000ull);
    tb_u64(p, 0x7f0000003000ull);
    if (version >= 1)
        tb_u64(p, 0);
    tb_u32(p, 0);
    tb_utf16z(p, "App, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null");
    if (version >= 1)
        tb_u16(p, 7);
}

/* A metadata record with a V1 field list (one nested object). */
static void metadata_with_v1_fields(tb *p, uint32_t id)
{
    tb_u32(p, id);
    tb_utf16z(p, "My-Event-Source");
    tb_u32(p, 1);
    tb_utf16z(p, "Request/Start");
    tb_u64(p, 0xF00000000000ull);
    tb_u32(p, 1);
    tb_u32(p, 4);
    tb_u32(p, 3);                  /* three fields */
    tb_u32(p, NT_TYPE_STRING);
    tb_utf16z(p, "Url");
    tb_u32(p, NT_TYPE_OBJECT);     /* nested */
    tb_u32(p, 2);
    tb_u32(p, NT_TYPE_INT32);
    tb_utf16z(p, "Major");
    tb_u32(p, NT_TYPE_INT32);
    tb_utf16z(p, "Minor");
    tb_utf16z(p, "Version");
    tb_u32(p, NT_TYPE_DOUBLE);
    tb_utf16z(p, "Load");
    /* OpCode tag: size, kind, opcode 1. */
    tb_u32(p, 1);
    tb_u8(p, CM_META_TAG_OPCODE);
    tb_u8(p, 1);
}

/* A V5 record: empty V1 list then a V2Params tag (kind 2) with an array of objects. */
static void metadata_with_v2_fields(tb *p, uint32_t id)
{
    tb_u32(p, id);
    tb_utf16z(p, "My-Event-Source");
    tb_u32(p, 2);
    tb_utf16z(p, "Batch");
    tb_u64(p, 0);
    tb_u32(p, 0);
    tb_u32(p, 4);
    tb_u32(p, 0);
    tb params = { 0 };
    tb_u32(&params, 2);
    /* field 1: UInt64 "Count" */
    tb f1 = { 0 };
    tb_utf16z(&f1, "Count");
    tb_u32(&f1, NT_TYPE_UINT64);
    tb_u32(&params, (uint32_t)f1.n + 4);
    tb_bytes(&params, f1.d, f1.n);
    /* field 2: Array of Object { Int32 "X" } */
    tb f2 = { 0 };
    tb_utf16z(&f2, "Items");
    tb_u32(&f2, NT_TYPE_ARRAY);
    tb_u32(&f2, NT_TYPE_OBJECT);
    tb_u32(&f2, 1);
    tb inner = { 0 };
    tb_utf16z(&inner, "X");
    tb_u32(&inner, NT_TYPE_INT32);
    tb_u32(&f2, (uint32_t)inner.n + 4);
    tb_bytes(&f2, inner.d, inner.n);
    tb_u32(&params, (uint32_t)f2.n + 4);
    tb_bytes(&params, f2.d, f2.n);
    tb_u32(p, (uint32_t)params.n);
    tb_u8(p, CM_META_TAG_V2PARAMS);
    tb_bytes(p, params.d, params.n);
    tb_free(&params);
    tb_free(&f1);
    tb_free(&f2);
    tb_free(&inner);
}

/* ---- blocks --------------------------------------------------------------- */

/* A metadata block holding several records (payloads given). */
static void metadata_block(tb *b, tb *payloads, size_t n)
{
    size_t pos = tb_block_begin(b, "MetadataBlock");
    tb_event_header(b, CM_EVENT_BLOCK_COMPRESSED);
    tb_event prev = { 0 };
    for (size_t i = 0; i < n; i++) {
        tb_event e = { 0 };
        e.payload = payloads[i].d;
        e.payload_size = (uint32_t)payloads[i].n;
        tb_compressed_event(b, &e, &prev);
        tb_free(&payloads[i]);
    }
    tb_block_end(b, pos);
}

static void std_metadata(tb *b, uint32_t id, const char *provider, uint32_t event_id, uint32_t version)
{
    tb_metadata_block(b, id, provider, event_id, version);
}

typedef struct evspec {
    uint32_t meta, stack;
    uint64_t tid;
    tb payload;
} evspec;

static void event_block(tb *b, evspec *ev, size_t n, bool compressed, uint32_t *seq, int64_t *ts)
{
    size_t pos = tb_block_begin(b, "EventBlock");
    tb_event_header(b, compressed ? CM_EVENT_BLOCK_COMPRESSED : 0);
    tb_event prev = { 0 };
    for (size_t i = 0; i < n; i++) {
        tb_event e = { 0 };
        e.metadata_id = ev[i].meta;
        e.seq = ++*seq;
        e.thread_id = ev[i].tid;
        e.capture_thread_id = ev[i].tid;
        e.processor = 1;
        e.stack_id = ev[i].stack;
        *ts += 1000 + 37 * (int64_t)i;
        e.timestamp = *ts;
        e.payload = ev[i].payload.d;
        e.payload_size = (uint32_t)ev[i].payload.n;
        if (compressed)
            tb_compressed_event(b, &e, &prev);
        else
            tb_uncompressed_event(b, &e);
        tb_free(&ev[i].payload);
    }
    tb_block_end(b, pos);
}

static void u32_payload(tb *p, uint32_t v) { tb_u32(p, v); }

/* ---- seeds ------------------------------------------------------------- */

static void seed_minimal(void)
{
    tb b = { 0 };
    tb_header(&b, 8, 10000000);
    std_metadata(&b, 1, "My-Event-Source", 1, 0);
    uint32_t seq = 0;
    int64_t ts = 5000;
    evspec e[1] = { { 1, 0, 100, { 0 } } };
    tb_bytes(&e[0].payload, "hi", 2);
    event_block(&b, e, 1, true, &seq, &ts);
    tb_end(&b);
    fuzz_save("minimal", &b);
}

static void seed_header_only(void)
{
    tb b = { 0 };
    tb_header(&b, 8, 10000000);
    tb_end(&b);
    fuzz_save("header-only-no-events", &b);
    tb_header(&b, 8, 10000000);
    fuzz_save("header-only-no-end-tag", &b);
}

/* Samples with stacks over two sequence-point intervals, both pointer sizes. */
static void seed_samples(uint32_t ptr, bool compressed, const char *name)
{
    tb b = { 0 };
    tb_header(&b, ptr, 1000000000);
    std_metadata(&b, 1, NT_PROVIDER_SAMPLE_PROFILER, 0, 0);
    uint32_t seq = 0;
    int64_t ts = 1;
    for (int interval = 0; interval < 2; interval++) {
        uint64_t s1[] = { 0x1000, 0x2000, 0x3000 }, s2[] = { 0x1010 }, s3[1] = { 0 };
        const uint64_t *ips[] = { s1, s2, s3 };
        uint32_t depths[] = { 3, 1, 0 };
        tb_stack_block(&b, 1, 3, ips, depths, ptr);
        evspec e[4] = { { 1, 1, 11, { 0 } }, { 1, 2, 12, { 0 } }, { 1, 3, 11, { 0 } }, { 1, 9, 13, { 0 } } };
        u32_payload(&e[0].payload, NT_SAMPLE_MANAGED);
        u32_payload(&e[1].payload, NT_SAMPLE_EXTERNAL);
        /* e[2]: empty payload (early runtimes) */
        u32_payload(&e[3].payload, 7); /* unknown type, unknown stack id */
        event_block(&b, e, 4, compressed, &seq, &ts);
        uint64_t tids[] = { 11, 12, 13 };
        uint32_t seqs[] = { seq, seq, seq + 5 };
        tb_sp_block(&b, ts, 3, tids, seqs);
    }
    tb_end(&b);
    fuzz_save(name, &b);
}

/* Every typed runtime/rundown event in each payload version. */
static void seed_typed(int only_cls, const char *name)
{
    tb b = { 0 };
    tb_header(&b, 8, 10000000);
    /* cls: 0 method, 1 module, 2 domain module, 3 assembly */
    struct { const char *prov; uint32_t id; int cls; } kinds[] = {
        { NT_PROVIDER_RUNTIME, 143, 0 }, { NT_PROVIDER_RUNTIME, 144, 0 }, { NT_PROVIDER_RUNDOWN, 143, 0 },
        { NT_PROVIDER_RUNDOWN, 144, 0 }, { NT_PROVIDER_RUNTIME, 152, 1 }, { NT_PROVIDER_RUNTIME, 153, 1 },
        { NT_PROVIDER_RUNTIME, 151, 2 }, { NT_PROVIDER_RUNDOWN, 153, 1 }, { NT_PROVIDER_RUNDOWN, 154, 1 },
        { NT_PROVIDER_RUNDOWN, 151, 2 }, { NT_PROVIDER_RUNDOWN, 152, 2 }, { NT_PROVIDER_RUNTIME, 154, 3 },
        { NT_PROVIDER_RUNTIME, 155, 3 }, { NT_PROVIDER_RUNDOWN, 155, 3 }, { NT_PROVIDER_RUNDOWN, 156, 3 },
    };
    enum { NK = sizeof kinds / sizeof *kinds };
    uint32_t id = 1;
    for (size_t k = 0; k < NK; k++)
        for (uint32_t v = 0; v < 3; v++, id++)
            if (kinds[k].cls == only_cls)
                std_metadata(&b, id, kinds[k].prov, kinds[k].id, v);
    uint32_t seq = 0;
    int64_t ts = 100;
    evspec e[3 * NK];
    memset(e, 0, sizeof e);
    size_t n = 0;
    id = 1;
    for (size_t k = 0; k < NK; k++) {
        for (uint32_t v = 0; v < 3; v++, id++) {
            if (kinds[k].cls != only_cls)
                continue;
            evspec *x = &e[n++];
            x->meta = id;
            x->tid = 42;
            switch (kinds[k].cls) {
            case 0: method_payload(&x->payload, v, id, "App.Program", "Main"); break;
            case 1: module_payload(&x->payload, v, false); break;
            case 2: module_payload(&x->payload, v, true); break;
            default: assembly_payload(&x->payload, v); break;
            }
        }
    }
    event_block(&b, e, n, true, &seq, &ts);
    tb_end(&b);
    fuzz_save(name, &b);
}

static void seed_fields(void)
{
    tb b = { 0 };
    tb_header(&b, 8, 10000000);
    tb recs[2] = { { 0 }, { 0 } };
    metadata_with_v1_fields(&recs[0], 1);
    metadata_with_v2_fields(&recs[1], 2);
    metadata_block(&b, recs, 2);
    uint32_t seq = 0;
    int64_t ts = 1;
    evspec e[2] = { { 1, 0, 5, { 0 } }, { 2, 0, 5, { 0 } } };
    tb_utf16z(&e[0].payload, "http://x/");
    tb_u32(&e[0].payload, 1);
    tb_u32(&e[0].payload, 2);
    tb_u64(&e[0].payload, 0);
    tb_u64(&e[1].payload, 1);
    event_block(&b, e, 2, false, &seq, &ts);
    tb_end(&b);
    fuzz_save("metadata-fields", &b);
}

/* Unknown block type, non-ASCII provider name, activity ids, unsorted events, drops. */
static void seed_odd(void)
{
    tb b = { 0 };
    tb_header(&b, 4, 3000000);
    size_t pos = tb_block_begin(&b, "FutureBlock");
    tb_u64(&b, 0x1122334455667788ull);
    tb_block_end(&b, pos);
    /* provider with a surrogate pair, an unpaired surrogate and a 2-byte char */
    tb meta = { 0 };
    tb_u32(&meta, 1);
    tb_u16(&meta, 'P');
    tb_u16(&meta, 0xD83D);
    tb_u16(&meta, 0xDE00);
    tb_u16(&meta, 0xDC00);
    tb_u16(&meta, 0x00E9);
    tb_u16(&meta, 0x4E2D);
    tb_u16(&meta, 0);
    tb_u32(&meta, 3);
    tb_utf16z(&meta, "");
    tb_u64(&meta, 0);
    tb_u32(&meta, 0);
    tb_u32(&meta, 4);
    metadata_block(&b, &meta, 1);
    /* hand-made compressed blobs with every header flag */
    pos = tb_block_begin(&b, "EventBlock");
    tb_event_header(&b, CM_EVENT_BLOCK_COMPRESSED);
    tb_u8(&b, 0xFF);                /* all flags */
    tb_varu(&b, 1);                 /* metadata */
    tb_varu(&b, 4);                 /* seq delta: 4 dropped */
    tb_varu(&b, 77);                /* capture thread */
    tb_varu(&b, 3);                 /* processor */
    tb_varu(&b, 78);                /* thread */
    tb_varu(&b, 0);                 /* stack */
    tb_varu(&b, 0x7FFFFFFFFFFFull); /* timestamp delta */
    for (int i = 0; i < 32; i++)
        tb_u8(&b, (uint8_t)i);      /* activity ids */
    tb_varu(&b, 3);
    tb_bytes(&b, "abc", 3);
    tb_u8(&b, 0);                   /* everything inherited (payload size 3), unsorted */
    tb_varu(&b, 5);
    tb_bytes(&b, "def", 3);
    tb_u8(&b, PS_HDR_CAPTURE_THREAD_AND_SEQUENCE | PS_HDR_PAYLOAD_SIZE); /* huge seq delta, empty payload */
    tb_varu(&b, 0xFFFFFFFFu);
    tb_varu(&b, 0xFFFFFFFFFFFFFFFFull);
    tb_varu(&b, 0);
    tb_varu(&b, 1);
    tb_varu(&b, 0);
    tb_block_end(&b, pos);
    uint64_t tids[] = { 77, 0xFFFFFFFFFFFFFFFFull };
    uint32_t seqs[] = { 9, 1 };
    tb_sp_block(&b, 1 << 20, 2, tids, seqs);
    tb_sp_block(&b, 1 << 21, 0, NULL, NULL);
    tb_end(&b);
    tb_bytes(&b, "trailing", 8);
    fuzz_save("odd-blocks", &b);
}

/* Stack ids that start high, leave a gap, and restart after a sequence point. */
static void seed_stack_ids(void)
{
    tb b = { 0 };
    tb_header(&b, 8, 10000000);
    std_metadata(&b, 1, NT_PROVIDER_SAMPLE_PROFILER, 0, 0);
    uint64_t s1[] = { 1, 2 };
    const uint64_t *ips[] = { s1, s1 };
    uint32_t depths[] = { 2, 1 };
    tb_stack_block(&b, 1000, 2, ips, depths, 8);
    tb_stack_block(&b, 1005, 1, ips, depths, 8);
    uint32_t seq = 0;
    int64_t ts = 1;
    evspec e[3] = { { 1, 1000, 1, { 0 } }, { 1, 1003, 1, { 0 } }, { 1, 1005, 1, { 0 } } };
    for (int i = 0; i < 3; i++)
        u32_payload(&e[i].payload, 2);
    event_block(&b, e, 3, true, &seq, &ts);
    uint64_t tids[] = { 1 };
    uint32_t seqs[] = { seq };
    tb_sp_block(&b, ts, 1, tids, seqs);
    tb_stack_block(&b, 1, 1, ips, depths, 8);
    evspec e2[1] = { { 1, 1, 1, { 0 } } };
    u32_payload(&e2[0].payload, 2);
    event_block(&b, e2, 1, true, &seq, &ts);
    tb_end(&b);
    fuzz_save("stack-ids", &b);
}

/* Early exits and broken framing. */
static void seed_bad(void)
{
    tb b = { 0 };
    fuzz_save("empty", &b);
    tb_bytes(&b, "Nettr", 5);
    fuzz_save("short-magic", &b);
    tb_bytes(&b, "NotATraceFile....", 17);
    fuzz_save("bad-magic", &b);
    tb_u32(&b, 20);
    tb_bytes(&b, "!FastSerialization.1", 20);
    fuzz_save("netperf", &b);
    tb_bytes(&b, "Nettrace", 8);
    tb_u32(&b, 0);
    tb_u32(&b, 6);
    tb_u32(&b, 0);
    fuzz_save("v6-header", &b);
    /* a complete stream cut inside its event block */
    tb_header(&b, 8, 10000000);
    std_metadata(&b, 1, "P", 1, 0);
    uint32_t seq = 0;
    int64_t ts = 1;
    evspec e[2] = { { 1, 0, 1, { 0 } }, { 1, 0, 2, { 0 } } };
    tb_bytes(&e[0].payload, "0123456789", 10);
    event_block(&b, e, 2, true, &seq, &ts);
    b.n -= 7;
    fuzz_save("truncated-block", &b);
    /* an event that references undefined metadata, then a bad EndObject */
    tb_header(&b, 8, 10000000);
    evspec e2[1] = { { 9, 0, 1, { 0 } } };
    event_block(&b, e2, 1, true, &seq, &ts);
    b.d[b.n - 1] = 0x07;
    tb_end(&b);
    fuzz_save("bad-end-object", &b);
}


/* More metadata records and capture threads than the first table sizes (64
 * slots each, grown at half load), so both tables rehash. */
static void seed_many(void)
{
    tb b = { 0 };
    tb_header(&b, 8, 10000000);
    tb recs[40];
    for (uint32_t i = 0; i < 40; i++) {
        memset(&recs[i], 0, sizeof recs[i]);
        tb_metadata_payload(&recs[i], 100 + 7 * i, "P", i, 0);
    }
    metadata_block(&b, recs, 40);
    size_t pos = tb_block_begin(&b, "EventBlock");
    tb_event_header(&b, CM_EVENT_BLOCK_COMPRESSED);
    tb_event prev = { 0 };
    uint64_t tids[40];
    uint32_t seqs[40];
    for (uint32_t i = 0; i < 40; i++) {
        tb_event e = { 0 };
        e.metadata_id = 100 + 7 * i;
        e.seq = 1;
        e.thread_id = e.capture_thread_id = 1000 + 13 * (uint64_t)i;
        e.timestamp = 10 + i;
        tb_compressed_event(&b, &e, &prev);
        tids[i] = e.capture_thread_id;
        seqs[i] = 1;
    }
    tb_block_end(&b, pos);
    tb_sp_block(&b, 100, 40, tids, seqs);
    tb_end(&b);
    fuzz_save("many-threads-and-metadata", &b);
}

void fuzz_streams(void)
{
    seed_minimal();
    seed_header_only();
    seed_samples(8, true, "samples-ptr8");
    seed_samples(4, false, "samples-ptr4-uncompressed");
    seed_typed(0, "typed-methods");
    seed_typed(1, "typed-modules");
    seed_typed(2, "typed-domain-modules");
    seed_typed(3, "typed-assemblies");
    seed_fields();
    seed_odd();
    seed_stack_ids();
    seed_bad();
    seed_many();
}
