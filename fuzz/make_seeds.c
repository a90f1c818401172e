/* Writes the parser seed corpus: small hand-made NetTrace streams that cover
 * each block type, both event encodings, every typed event and its payload
 * versions, field lists (V1 nested, V2Params, tags), stacks of both pointer
 * sizes across sequence points, drops, unknown blocks, and the early exits
 * (bad magic, NetPerf, V6 header, truncations).  Run by `make fuzz-seeds`:
 *   fuzz/make_seeds <parser-dir> <parser_limits-dir> <ipc_reply-dir> [<recorded-corpus-dir>]
 * The outputs are committed under corpus/fuzz/; nothing here is copied from
 * any recorded trace. */
#include "streams.h"
#include "support.h"
#include "nettrace.h"
#include "nettrace_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *out_dir, *limits_dir, *ipc_dir;
static int written;

static void save_to(const char *dir, const char *name, const uint8_t *d, size_t n, const uint8_t *prefix)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (prefix && fwrite(prefix, 1, 8, f) != 8) || (n && fwrite(d, 1, n, f) != n) || fclose(f) != 0) {
        fprintf(stderr, "make_seeds: cannot write %s\n", path);
        exit(1);
    }
    written++;
}

/* A diagnostics IPC reply header: magic, total size, command set and id, reserved. */
static void ipc_header(tb *r, uint16_t size, uint8_t set, uint8_t id)
{
    tb_bytes(r, "DOTNET_IPC_V1", 14);
    tb_u16(r, size);
    tb_u8(r, set);
    tb_u8(r, id);
    tb_u16(r, 0);
}

/* The CollectTracing OK reply (session id) followed by the stream. */
static void save_ipc_ok(const char *name, const uint8_t *d, size_t n)
{
    tb r = { 0 };
    ipc_header(&r, 28, 0xFF, 0x00);
    tb_u64(&r, 0x1122334455667788ull);
    tb_bytes(&r, d, n);
    char n2[512];
    snprintf(n2, sizeof n2, "ok-%s", name);
    save_to(ipc_dir, n2, r.d, r.n, NULL);
    tb_free(&r);
}

/* Replies that are not a plain OK. */
static void ipc_replies(void)
{
    tb r = { 0 };
    ipc_header(&r, 24, 0xFF, 0xFF);
    tb_u32(&r, 0x80131384u); /* refused with an HRESULT */
    save_to(ipc_dir, "error-hresult", r.d, r.n, NULL);
    tb_free(&r);
    ipc_header(&r, 20, 0xFF, 0xFF); /* refused, no HRESULT */
    save_to(ipc_dir, "error-empty", r.d, r.n, NULL);
    tb_free(&r);
    ipc_header(&r, 120, 0xFF, 0xFF); /* long error payload, more than is kept */
    for (int i = 0; i < 100; i++)
        tb_u8(&r, (uint8_t)i);
    save_to(ipc_dir, "error-long", r.d, r.n, NULL);
    tb_free(&r);
    ipc_header(&r, 32, 0xFF, 0x00); /* OK with the wrong payload size */
    tb_u64(&r, 1);
    tb_u32(&r, 2);
    save_to(ipc_dir, "ok-wrong-size", r.d, r.n, NULL);
    tb_free(&r);
    ipc_header(&r, 28, 0x02, 0x00); /* not a server response */
    tb_u64(&r, 1);
    save_to(ipc_dir, "wrong-command-set", r.d, r.n, NULL);
    tb_free(&r);
    ipc_header(&r, 28, 0xFF, 0x00); /* cut inside the session id */
    tb_u32(&r, 7);
    save_to(ipc_dir, "ok-cut", r.d, r.n, NULL);
    tb_free(&r);
    tb_bytes(&r, "DOTNET_IPC_V2\0\x1c\0\xff\0\0\0", 20); /* wrong magic */
    save_to(ipc_dir, "bad-magic", r.d, r.n, NULL);
    tb_free(&r);
    ipc_header(&r, 28, 0xFF, 0x00); /* OK, then no stream at all */
    tb_u64(&r, 42);
    save_to(ipc_dir, "ok-no-stream", r.d, r.n, NULL);
    tb_free(&r);
}

/* Every seed goes to the parser corpus; a few limit settings of it to the
 * limits corpus (8 setting bytes + the stream). */
static void save(const char *name, tb *b)
{
    save_to(out_dir, name, b->d, b->n, NULL);
    static const char *const ipc_streams[] = { "minimal", "samples-ptr8", "writer-v4", "writer-v6",
                                               "truncated-block", "typed-methods" };
    for (size_t i = 0; i < sizeof ipc_streams / sizeof *ipc_streams; i++)
        if (strcmp(name, ipc_streams[i]) == 0)
            save_ipc_ok(name, b->d, b->n);
    static const uint8_t settings[][8] = {
        { 11, 63, 13, 31, 255, 255, 63, 0 },  /* roomy */
        { 5, 1, 4, 2, 1, 1, 1, 7 },           /* tight, chunked */
        { 0, 0, 0, 0, 0, 0, 0, 1 },           /* tightest, byte at a time */
    };
    for (size_t i = 0; i < sizeof settings / sizeof *settings; i++) {
        char n2[512];
        snprintf(n2, sizeof n2, "%s.lim%zu", name, i);
        save_to(limits_dir, n2, b->d, b->n, settings[i]);
    }
    tb_free(b);
}

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
    /* OpCode tag (kind 1). */
    tb_u32(p, 1);
    tb_u8(p, 1);
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
    tb_u8(p, 2);
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
    tb_event_header(b, 1);
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
    tb_event_header(b, compressed ? 1 : 0);
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
    save("minimal", &b);
}

static void seed_header_only(void)
{
    tb b = { 0 };
    tb_header(&b, 8, 10000000);
    tb_end(&b);
    save("header-only-no-events", &b);
    tb_header(&b, 8, 10000000);
    save("header-only-no-end-tag", &b);
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
    save(name, &b);
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
    save(name, &b);
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
    save("metadata-fields", &b);
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
    tb_event_header(&b, 1);
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
    tb_u8(&b, 0x00);                /* everything inherited (payload size 3), unsorted */
    tb_varu(&b, 5);
    tb_bytes(&b, "def", 3);
    tb_u8(&b, 0x82);                /* new capture thread, huge seq delta, empty payload */
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
    save("odd-blocks", &b);
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
    save("stack-ids", &b);
}

/* Early exits and broken framing. */
static void seed_bad(void)
{
    tb b = { 0 };
    save("empty", &b);
    tb_bytes(&b, "Nettr", 5);
    save("short-magic", &b);
    tb_bytes(&b, "NotATraceFile....", 17);
    save("bad-magic", &b);
    tb_u32(&b, 20);
    tb_bytes(&b, "!FastSerialization.1", 20);
    save("netperf", &b);
    tb_bytes(&b, "Nettrace", 8);
    tb_u32(&b, 0);
    tb_u32(&b, 6);
    tb_u32(&b, 0);
    save("v6-header", &b);
    /* a complete stream cut inside its event block */
    tb_header(&b, 8, 10000000);
    std_metadata(&b, 1, "P", 1, 0);
    uint32_t seq = 0;
    int64_t ts = 1;
    evspec e[2] = { { 1, 0, 1, { 0 } }, { 1, 0, 2, { 0 } } };
    tb_bytes(&e[0].payload, "0123456789", 10);
    event_block(&b, e, 2, true, &seq, &ts);
    b.n -= 7;
    save("truncated-block", &b);
    /* an event that references undefined metadata, then a bad EndObject */
    tb_header(&b, 8, 10000000);
    evspec e2[1] = { { 9, 0, 1, { 0 } } };
    event_block(&b, e2, 1, true, &seq, &ts);
    b.d[b.n - 1] = 0x07;
    tb_end(&b);
    save("bad-end-object", &b);
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
    tb_event_header(&b, 1);
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
    save("many-threads-and-metadata", &b);
}

/* A recorded trace of the project's own (corpus/NAME.nettrace) cut down to a
 * small seed: its first method, module and assembly records and samples,
 * with their real names and stacks, re-written by nt_writer. */
/* ---- streams from nt_writer (V4 and V6) ------------------------------------ */

#define W_OK(call) do { if ((call) != NT_OK) { fprintf(stderr, "make_seeds: %s failed: %s\n", #call, nt_writer_message(w)); exit(1); } } while (0)

/* A small sampled process: metadata with fields, typed records of each kind,
 * samples on shared and empty stacks, several threads, sequence points (with
 * V6 flush flags), labels and a removed thread in V6. */
static void writer_seed(uint32_t format, uint32_t ptr, bool uncompressed, const char *name)
{
    nt_membuf out = { 0 };
    nt_writer_options opt;
    nt_writer_options_default(&opt);
    opt.format = format;
    opt.pointer_size = ptr;
    opt.uncompressed = uncompressed;
    opt.block_bytes = 512; /* several event blocks in a small stream */
    opt.process_id = 4242;
    opt.processor_count = 4;
    nt_writer *w = nt_writer_new(&opt, nt_membuf_write, &out, NULL);
    if (!w) {
        fprintf(stderr, "make_seeds: nt_writer_new failed\n");
        exit(1);
    }
    nt_field fields[] = { { "Url", NT_TYPE_STRING, 0, 0 }, { "Version", NT_TYPE_OBJECT, 0, 0 },
                          { "Major", NT_TYPE_INT32, 0, 1 }, { "Items", NT_TYPE_ARRAY, NT_TYPE_INT64, 0 } };
    nt_event_desc d = { 0 };
    d.provider = "My-Event-Source";
    d.event_id = 7;
    d.event_name = "Request/Start";
    d.version = 1;
    d.level = 4;
    d.opcode = 1;
    d.keywords = 0x10;
    d.field_count = 4;
    d.fields = fields;
    uint32_t my_id = 0;
    W_OK(nt_writer_define(w, &d, &my_id));
    int64_t ts = 1000;
    for (int interval = 0; interval < 2; interval++) {
        nt_method m = { 0 };
        m.which = interval ? NT_METHOD_DC_END : NT_METHOD_LOAD;
        m.version = (uint32_t)interval + 1;
        m.method_id = 0x100 + (uint64_t)interval;
        m.module_id = 0x7f00;
        m.start_address = 0x4000 + 0x100 * (uint64_t)interval;
        m.size = 0x80;
        m.flags = NT_METHOD_FLAG_JITTED;
        m.declaring_type = "App.Program";
        m.name = interval ? "Work" : "Main";
        m.signature = "void  ()";
        m.timestamp = ts;
        W_OK(nt_writer_method(w, NULL, &m));
        nt_module mod = { 0 };
        mod.which = interval ? NT_RECORD_DC_END : NT_RECORD_LOAD;
        mod.domain = interval != 0;
        mod.version = 1;
        mod.module_id = 0x7f00;
        mod.assembly_id = 0x7e00;
        mod.app_domain_id = 1;
        mod.il_path = "/app/App.dll";
        mod.native_path = "";
        mod.timestamp = ts;
        W_OK(nt_writer_module(w, NULL, &mod));
        nt_assembly a = { 0 };
        a.which = NT_RECORD_LOAD;
        a.version = (uint32_t)interval;
        a.assembly_id = 0x7e00;
        a.app_domain_id = 1;
        a.name = "App";
        a.timestamp = ts;
        W_OK(nt_writer_assembly(w, NULL, &a));
        uint64_t ips[] = { 0x4010, 0x4110, 0x9000 };
        uint32_t s_full = 0, s_leaf = 0, s_empty = 0;
        W_OK(nt_writer_stack(w, ips, 3, &s_full));
        W_OK(nt_writer_stack(w, ips, 1, &s_leaf));
        W_OK(nt_writer_stack(w, ips, 0, &s_empty));
        uint32_t labels = 0;
        if (format == 6) {
            nt_label l[2] = { { NT_LABEL_ACTIVITY_ID, { 1, 2, 3 }, 0, NULL, NULL },
                              { NT_LABEL_STRING, { 0 }, 0, "route", "/api" } };
            W_OK(nt_writer_label_list(w, l, 2, &labels));
        }
        for (int i = 0; i < 12; i++) {
            nt_writer_event hdr = { 0 };
            hdr.thread_id = 10 + (uint64_t)(i % 3);
            hdr.timestamp = ts += 997;
            hdr.stack_id = i % 3 == 0 ? s_full : i % 3 == 1 ? s_leaf : s_empty;
            hdr.processor_number = (uint32_t)i % 4;
            W_OK(nt_writer_sample(w, &hdr, i % 2 ? NT_SAMPLE_MANAGED : NT_SAMPLE_EXTERNAL));
        }
        uint8_t payload[32];
        memset(payload, 0x5a, sizeof payload);
        nt_writer_event ev = { 0 };
        ev.metadata_id = my_id;
        ev.thread_id = 10;
        ev.timestamp = ts += 5;
        ev.payload = payload;
        ev.payload_size = sizeof payload;
        ev.label_list_id = labels;
        if (format != 6)
            ev.activity_id[0] = 9; /* V6 carries activity ids in the label list */
        W_OK(nt_writer_write_event(w, &ev));
        if (format == 6 && interval == 0)
            W_OK(nt_writer_remove_thread(w, 12));
        W_OK(nt_writer_sequence_point(w, ts, format == 6 ? NT_SP_FLUSH_THREADS : 0));
    }
    W_OK(nt_writer_finish(w));
    nt_writer_free(w);
    tb b = { 0 };
    b.d = out.data;
    b.n = out.len;
    b.cap = out.cap;
    save(name, &b); /* frees out.data */
}

/* Regressions for the aggregator and exporters: samples whose stacks are all
 * empty (no IP stored at all), and a hostile clock (a sync time in year
 * 65535, samples at the far ends of the tick range) that overflowed signed
 * arithmetic in the pprof wall time and the time weights. */
static void writer_hostile_clock(const char *name, bool empty_only)
{
    nt_membuf out = { 0 };
    nt_writer_options opt;
    nt_writer_options_default(&opt);
    if (!empty_only) {
        opt.sync_time_utc = (nt_systemtime){ 65535, 12, 0, 31, 23, 59, 59, 999 };
        opt.sync_qpc = INT64_MIN;
    }
    nt_writer *w = nt_writer_new(&opt, nt_membuf_write, &out, NULL);
    if (!w)
        exit(1);
    uint64_t ips[] = { 0x1000 };
    uint32_t s_empty = 0, s_one = 0;
    W_OK(nt_writer_stack(w, ips, 0, &s_empty));
    if (!empty_only)
        W_OK(nt_writer_stack(w, ips, 1, &s_one));
    int64_t times[] = { INT64_MIN + 1, -1, 0, INT64_MAX - 1 };
    for (int i = 0; i < 4; i++) {
        nt_writer_event hdr = { 0 };
        hdr.thread_id = 7;
        hdr.timestamp = empty_only ? 1000 * (i + 1) : times[i];
        hdr.stack_id = empty_only || i % 2 ? s_empty : s_one;
        W_OK(nt_writer_sample(w, &hdr, NT_SAMPLE_MANAGED));
    }
    W_OK(nt_writer_finish(w));
    nt_writer_free(w);
    tb b = { 0 };
    b.d = out.data;
    b.n = out.len;
    b.cap = out.cap;
    save(name, &b);
}

typedef struct cutter {
    nt_writer *w;
    int methods, modules, assemblies, samples;
} cutter;

static int cut_method(void *u, const nt_method *m)
{
    cutter *c = u;
    if (c->methods++ < 6)
        nt_writer_method(c->w, NULL, m);
    return 0;
}

static int cut_module(void *u, const nt_module *m)
{
    cutter *c = u;
    if (c->modules++ < 3)
        nt_writer_module(c->w, NULL, m);
    return 0;
}

static int cut_assembly(void *u, const nt_assembly *a)
{
    cutter *c = u;
    if (c->assemblies++ < 3)
        nt_writer_assembly(c->w, NULL, a);
    return 0;
}

static int cut_sample(void *u, const nt_sample *s)
{
    cutter *c = u;
    if (!s->stack || c->samples >= 10)
        return c->samples >= 10 && c->methods >= 6;
    uint32_t n = s->stack->count < 12 ? s->stack->count : 12;
    nt_writer_event hdr = { 0 };
    hdr.thread_id = s->thread_id;
    hdr.timestamp = s->timestamp;
    if (nt_writer_stack(c->w, s->stack->ips, n, &hdr.stack_id) == NT_OK &&
        nt_writer_sample(c->w, &hdr, s->type) == NT_OK)
        c->samples++;
    return 0;
}

static void seed_from_recording(const char *dir, const char *file, uint32_t format)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    uint8_t *data;
    size_t len;
    if (!ts_read_file(path, &data, &len)) {
        fprintf(stderr, "make_seeds: %s not found, no seed cut from it\n", path);
        return;
    }
    nt_membuf out = { 0 };
    nt_writer_options opt;
    nt_writer_options_default(&opt);
    opt.format = format;
    opt.block_bytes = 1024;
    cutter c = { nt_writer_new(&opt, nt_membuf_write, &out, NULL), 0, 0, 0, 0 };
    if (!c.w)
        exit(1);
    nt_callbacks cb = { 0 };
    cb.method = cut_method;
    cb.module = cut_module;
    cb.assembly = cut_assembly;
    cb.sample = cut_sample;
    nt_parse_buffer(data, len, &cb, &c, NULL, NULL, 0);
    free(data);
    nt_writer *w = c.w;
    W_OK(nt_writer_finish(w));
    nt_writer_free(w);
    tb b = { 0 };
    b.d = out.data;
    b.n = out.len;
    b.cap = out.cap;
    char name[512];
    snprintf(name, sizeof name, "cut-v%u-%s", format, file);
    save(name, &b);
}


int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: make_seeds <parser-dir> <parser_limits-dir> <ipc_reply-dir> [<recorded-corpus-dir>]\n");
        return 2;
    }
    out_dir = argv[1];
    limits_dir = argv[2];
    ipc_dir = argv[3];
    ipc_replies();
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
    writer_seed(4, 8, false, "writer-v4");
    writer_seed(4, 4, true, "writer-v4-ptr4-uncompressed");
    writer_seed(6, 8, false, "writer-v6");
    writer_seed(6, 4, false, "writer-v6-ptr4");
    writer_hostile_clock("writer-empty-stacks-only", true);
    writer_hostile_clock("writer-hostile-clock", false);
    if (argc == 5) {
        seed_from_recording(argv[4], "spin-threads.nettrace", 4);
        seed_from_recording(argv[4], "call-tree.nettrace", 4);
        seed_from_recording(argv[4], "call-tree.nettrace", 6);
    }
    printf("make_seeds: wrote %d files\n", written);
    return 0;
}
