/* Payload fields: self-describing layouts (V4 V1 lists, V5 V2Params, V6),
 * the runtime table (names, pointer-size fields, counted arrays of structs,
 * newer versions' extra bytes, short payloads), and hostile payloads. */
#include "nettrace.h"
#include "nettrace_writer.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXV 64

/* Everything one event yielded, copied out of the callback. */
typedef struct seen {
    int n;
    nt_field_value v[MAXV];
    char s[MAXV][64];
    nt_status status;
    uint32_t error_offset, leftover;
    char name[64], task[64], opcode[64];
    bool state_ok;
} seen;

typedef struct run {
    seen ev[8];
    int count;
} run;

/* What an iteration yields, copied out (strings included). */
static void collect(seen *s, nt_field_iter *it)
{
    nt_field_value v;
    while (s->n < MAXV && nt_field_next(it, &v)) {
        s->v[s->n] = v;
        if (v.kind == NT_VALUE_STRING)
            snprintf(s->s[s->n], sizeof s->s[0], "%s", v.v.str.ptr);
        s->n++;
    }
    s->status = it->status;
    s->error_offset = it->error_offset;
    s->leftover = it->leftover;
}

static int on_event(void *user, const nt_event *ev)
{
    run *r = user;
    if (r->count >= 8)
        return 0;
    seen *s = &r->ev[r->count++];
    snprintf(s->name, sizeof s->name, "%s", nt_event_name(ev));
    snprintf(s->task, sizeof s->task, "%s", ev->desc ? ev->desc->task_name : "");
    snprintf(s->opcode, sizeof s->opcode, "%s", ev->desc ? ev->desc->opcode_name : "");
    nt_field_iter it;
    s->state_ok = nt_event_fields_begin(ev, &it) == NT_OK;
    collect(s, &it);
    return 0;
}

/* A one-event stream: desc defined, then one event with this payload. */
static void one_event(uint32_t format, uint32_t pointer_size, const nt_event_desc *d, const void *payload,
                      uint32_t size, run *r)
{
    nt_membuf out = { 0 };
    nt_writer_options o = { 0 };
    nt_writer_options_default(&o);
    o.format = format;
    o.pointer_size = pointer_size;
    nt_writer *w = nt_writer_new(&o, nt_membuf_write, &out, NULL);
    cr_assert(w);
    uint32_t id;
    cr_assert_eq(nt_writer_define(w, d, &id), NT_OK, "%s", nt_writer_message(w));
    nt_writer_event e = { .metadata_id = id, .thread_id = 1, .timestamp = 5, .payload = payload,
                          .payload_size = size };
    cr_assert_eq(nt_writer_write_event(w, &e), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    memset(r, 0, sizeof *r);
    nt_callbacks cb = { .event = on_event };
    char msg[256];
    cr_assert_eq(nt_parse_buffer(out.data, out.len, &cb, r, NULL, msg, sizeof msg), NT_OK, "%s", msg);
    cr_assert_eq(r->count, 1);
    nt_membuf_free(&out);
}

/* Little-endian payload builder. */
typedef struct pb {
    uint8_t b[512];
    uint32_t n;
} pb;
static void put(pb *p, uint64_t v, int size)
{
    for (int i = 0; i < size; i++)
        p->b[p->n++] = (uint8_t)(v >> (8 * i));
}
static void put_str(pb *p, const char *s)
{
    for (; *s; s++)
        put(p, (uint8_t)*s, 2);
    put(p, 0, 2);
}

Test(fields, self_describing_every_type)
{
    /* Id:int32 Name:string G:guid When:datetime Ok:bool F:double B:byte S:sbyte
     * P:{X:int64 Y:uint16} Items:[{K:string V:int32}] Nums:[uint32] */
    const nt_field f[] = {
        { "Id", NT_TYPE_INT32, 0, 0 },      { "Name", NT_TYPE_STRING, 0, 0 },   { "G", NT_TYPE_GUID, 0, 0 },
        { "When", NT_TYPE_DATETIME, 0, 0 }, { "Ok", NT_TYPE_BOOLEAN32, 0, 0 },  { "F", NT_TYPE_DOUBLE, 0, 0 },
        { "B", NT_TYPE_BYTE, 0, 0 },        { "S", NT_TYPE_SBYTE, 0, 0 },       { "P", NT_TYPE_OBJECT, 0, 0 },
        { "X", NT_TYPE_INT64, 0, 1 },       { "Y", NT_TYPE_UINT16, 0, 1 },      { "Items", NT_TYPE_ARRAY, NT_TYPE_OBJECT, 0 },
        { "K", NT_TYPE_STRING, 0, 1 },      { "V", NT_TYPE_INT32, 0, 1 },       { "Nums", NT_TYPE_ARRAY, NT_TYPE_UINT32, 0 },
    };
    nt_event_desc d = { .provider = "My-Source", .event_id = 3, .event_name = "Work", .field_count = 15, .fields = f };
    pb p = { .n = 0 };
    put(&p, (uint32_t)-7, 4);
    put_str(&p, "h\"i");
    for (int i = 0; i < 16; i++)
        put(&p, (uint64_t)i, 1);
    put(&p, 132000000000000000ull, 8);
    put(&p, 1, 4);
    double dv = 2.5;
    uint64_t db;
    memcpy(&db, &dv, 8);
    put(&p, db, 8);
    put(&p, 200, 1);
    put(&p, 0xFE, 1);
    put(&p, (uint64_t)-3, 8);
    put(&p, 9, 2);
    put(&p, 2, 2); /* Items: 2 elements */
    put_str(&p, "a");
    put(&p, 1, 4);
    put_str(&p, "bb");
    put(&p, 2, 4);
    put(&p, 3, 2); /* Nums: 3 */
    put(&p, 10, 4);
    put(&p, 20, 4);
    put(&p, 30, 4);
    for (uint32_t format = 4; format <= 6; format += 2) {
        run r;
        one_event(format, 8, &d, p.b, p.n, &r);
        seen *s = &r.ev[0];
        cr_assert(s->state_ok);
        cr_expect_str_eq(s->name, "Work");
        cr_assert_eq(s->status, NT_OK, "status %d at %u", s->status, s->error_offset);
        cr_expect_eq(s->leftover, 0);
        /* 8 scalars, P begin + 2 + end, Items begin + 2 x (begin + 2 + end) + end, Nums begin + 3 + end */
        cr_assert_eq(s->n, 8 + 4 + 10 + 5, "%d values", s->n);
        cr_expect_eq(s->v[0].kind, NT_VALUE_INT);
        cr_expect_eq(s->v[0].v.i, -7);
        cr_expect_str_eq(s->s[1], "h\"i");
        cr_expect_eq(s->v[2].kind, NT_VALUE_GUID);
        cr_expect_eq(s->v[2].v.guid[15], 15);
        cr_expect_eq(s->v[3].kind, NT_VALUE_DATETIME);
        cr_expect_eq(s->v[3].v.i, 132000000000000000ll);
        cr_expect_eq(s->v[4].kind, NT_VALUE_BOOL);
        cr_expect_eq(s->v[4].v.u, 1);
        cr_expect_eq(s->v[5].v.f, 2.5);
        cr_expect_eq(s->v[6].v.u, 200);
        cr_expect_eq(s->v[7].v.i, -2);
        cr_expect_eq(s->v[8].kind, NT_VALUE_STRUCT_BEGIN);
        cr_expect_eq(s->v[8].count, 2);
        cr_expect_eq(s->v[9].v.i, -3);
        cr_expect_eq(s->v[9].depth, 1);
        cr_expect_eq(s->v[11].kind, NT_VALUE_STRUCT_END);
        cr_expect_eq(s->v[12].kind, NT_VALUE_ARRAY_BEGIN);
        cr_expect_eq(s->v[12].count, 2);
        cr_expect_eq(s->v[13].kind, NT_VALUE_STRUCT_BEGIN);
        cr_expect(s->v[13].in_array);
        cr_expect_str_eq(s->s[14], "a");
        cr_expect_eq(s->v[14].depth, 2);
        cr_expect_eq(s->v[19].v.i, 2);
        cr_expect_eq(s->v[19].depth, 2);
        cr_expect_eq(s->v[21].kind, NT_VALUE_ARRAY_END);
        cr_expect_eq(s->v[22].kind, NT_VALUE_ARRAY_BEGIN);
        cr_expect_eq(s->v[25].v.u, 30);
        cr_expect_eq(s->v[25].index, 2);
        cr_expect_eq(s->v[26].kind, NT_VALUE_ARRAY_END);
        cr_expect_eq(s->v[26].depth, 0);
    }
}

/* GCStart_V2: Count u32, Depth u32, Reason u32, Type u32, ClrInstanceID u16, ClientSequenceNumber u64. */
static uint32_t gcstart(pb *p)
{
    p->n = 0;
    put(p, 12, 4);
    put(p, 1, 4);
    put(p, 4, 4);
    put(p, 0, 4);
    put(p, 7, 2);
    put(p, 99, 8);
    return p->n;
}

Test(fields, runtime_table)
{
    nt_event_desc d = { .provider = NT_PROVIDER_RUNTIME, .event_id = 1, .version = 2, .event_name = "" };
    pb p;
    run r;
    one_event(4, 8, &d, p.b, gcstart(&p), &r);
    seen *s = &r.ev[0];
    cr_expect_str_eq(s->name, "GCStart_V2");
    cr_expect_str_eq(s->task, "GarbageCollection");
    cr_expect_str_eq(s->opcode, "Start");
    cr_assert_eq(s->status, NT_OK);
    cr_assert_eq(s->n, 6);
    cr_expect_str_eq(s->v[0].name, "Count");
    cr_expect_eq(s->v[0].v.u, 12);
    cr_expect_str_eq(s->v[5].name, "ClientSequenceNumber");
    cr_expect_eq(s->v[5].v.u, 99);
    cr_expect_eq(s->v[5].offset, 18);

    /* a version newer than the table knows: the known prefix, the rest left over */
    d.version = 200;
    put(&p, 0xAB, 3);
    one_event(4, 8, &d, p.b, p.n, &r);
    cr_expect_str_eq(r.ev[0].name, "GCStart_V2");
    cr_expect_eq(r.ev[0].status, NT_OK);
    cr_expect_eq(r.ev[0].n, 6);
    cr_expect_eq(r.ev[0].leftover, 3);

    /* too short: an error of this event, at the offset of the field that did not fit */
    d.version = 2;
    one_event(4, 8, &d, p.b, 20, &r);
    cr_expect_eq(r.ev[0].status, NT_ERR_MALFORMED);
    cr_expect_eq(r.ev[0].error_offset, 18);
    cr_expect_eq(r.ev[0].n, 5);
}

Test(fields, runtime_pointer_size_and_counted_structs)
{
    /* GCAllocationTick_V3 has win:Pointer fields: their width is the trace's pointer size */
    nt_event_desc d = { .provider = NT_PROVIDER_RUNTIME, .event_id = 10, .version = 3, .event_name = "" };
    for (uint32_t ps = 4; ps <= 8; ps += 4) {
        pb p = { .n = 0 };
        put(&p, 100, 4);
        put(&p, 1, 4);
        put(&p, 0, 2);
        put(&p, 100000, 8);
        put(&p, 0x1234, ps);
        put_str(&p, "System.String");
        put(&p, 0, 4);
        put(&p, 0x5678, ps);
        run r;
        one_event(4, ps, &d, p.b, p.n, &r);
        seen *s = &r.ev[0];
        cr_assert_eq(s->status, NT_OK, "ps %u: status %d at %u", ps, s->status, s->error_offset);
        cr_assert_eq(s->n, 8);
        cr_expect_eq(s->v[4].v.u, 0x1234);
        cr_expect_str_eq(s->s[5], "System.String");
        cr_expect_eq(s->v[7].v.u, 0x5678);
        cr_expect_eq(s->leftover, 0);
    }
    /* MethodILToNativeMap (190): two arrays counted by CountOfMapEntries */
    nt_event_desc m = { .provider = NT_PROVIDER_RUNTIME, .event_id = 190, .version = 0, .event_name = "" };
    pb p = { .n = 0 };
    put(&p, 1, 8);
    put(&p, 0, 8);
    put(&p, 0, 1);
    put(&p, 2, 2);
    put(&p, 10, 4);
    put(&p, 11, 4);
    put(&p, 20, 4);
    put(&p, 21, 4);
    put(&p, 0, 2);
    run r;
    one_event(4, 8, &m, p.b, p.n, &r);
    seen *s = &r.ev[0];
    cr_assert_eq(s->status, NT_OK);
    cr_expect_str_eq(s->name, "MethodILToNativeMap");
    cr_assert_eq(s->n, 4 + 4 + 4 + 1, "%d values", s->n);
    cr_expect_eq(s->v[4].kind, NT_VALUE_ARRAY_BEGIN);
    cr_expect_eq(s->v[4].count, 2);
    cr_expect_eq(s->v[10].v.u, 21);
    /* a count beyond the payload is refused before any element */
    p.b[17] = 0xFF;
    one_event(4, 8, &m, p.b, p.n, &r);
    cr_expect_eq(r.ev[0].status, NT_ERR_MALFORMED);
    cr_expect_eq(r.ev[0].error_offset, 19);
}

Test(fields, hostile_strings_and_counts)
{
    const nt_field f[] = { { "A", NT_TYPE_ARRAY, NT_TYPE_OBJECT, 0 }, { "S", NT_TYPE_STRING, 0, 1 } };
    nt_event_desc d = { .provider = "P", .event_id = 1, .event_name = "E", .field_count = 2, .fields = f };
    /* unterminated string inside an array element */
    uint8_t a[] = { 1, 0, 'x', 0, 'y' };
    run r;
    one_event(4, 8, &d, a, sizeof a, &r);
    cr_expect_eq(r.ev[0].status, NT_ERR_MALFORMED);
    cr_expect_eq(r.ev[0].error_offset, 2);
    /* a huge count: refused at once */
    uint8_t b[] = { 0xFF, 0xFF, 0, 0 };
    one_event(4, 8, &d, b, sizeof b, &r);
    cr_expect_eq(r.ev[0].status, NT_ERR_MALFORMED);
    cr_expect_eq(r.ev[0].error_offset, 0);
    /* unpaired surrogates and control characters come out as valid UTF-8 */
    uint8_t c[] = { 1, 0, 0x00, 0xD8, 0x01, 0x00, 'z', 0, 0, 0 };
    one_event(4, 8, &d, c, sizeof c, &r);
    cr_assert_eq(r.ev[0].status, NT_OK);
    cr_expect_str_eq(r.ev[0].s[2], "\xEF\xBF\xBD\x01z");
    /* empty structs in an array would cost work without bytes: refused */
    const nt_field g[] = { { "A", NT_TYPE_ARRAY, NT_TYPE_OBJECT, 0 } };
    nt_event_desc e = { .provider = "P", .event_id = 1, .event_name = "E", .field_count = 1, .fields = g };
    uint8_t z[] = { 3, 0, 0, 0, 0 };
    one_event(4, 8, &e, z, sizeof z, &r);
    cr_expect_eq(r.ev[0].status, NT_ERR_MALFORMED);
}

Test(fields, outside_a_callback)
{
    nt_event ev = { 0 };
    nt_field_iter it;
    nt_field_value v;
    cr_expect_eq(nt_event_fields_begin(&ev, &it), NT_ERR_STATE);
    cr_expect_not(nt_field_next(&it, &v));
    cr_expect_eq(nt_event_field(&ev, "X", &v), NT_ERR_STATE);
    const char *name, *task, *op;
    cr_expect(nt_runtime_event_names(NT_PROVIDER_RUNDOWN, 144, 1, &name, &task, &op));
    cr_expect_str_eq(name, "MethodDCEndVerbose_V1");
    cr_expect_not(nt_runtime_event_names("Nope", 1, 0, &name, NULL, NULL));
    cr_expect_str_eq(name, "");
}

/* Payload-only decoding yields what the parsed event yields: one layout table, one iterator. */
static void same_as_parsed(nt_payload_decoder *dec, const nt_event_desc *d, uint32_t ps, const void *payload,
                           uint32_t size)
{
    run r;
    one_event(4, ps, d, payload, size, &r);
    const seen *want = &r.ev[0];
    seen got = { 0 };
    nt_field_iter it;
    cr_assert_eq(nt_payload_fields_begin(dec, d->provider, d->event_id, d->version, ps, payload, size, &it), NT_OK);
    collect(&got, &it);
    cr_expect_str_eq(nt_event_name(nt_payload_event(dec)), want->name);
    cr_assert_eq(got.n, want->n, "event %u v%u: %d values, parsed %d", d->event_id, d->version, got.n, want->n);
    cr_expect_eq(got.status, want->status);
    cr_expect_eq(got.error_offset, want->error_offset);
    cr_expect_eq(got.leftover, want->leftover);
    for (int i = 0; i < got.n; i++) {
        cr_expect_str_eq(got.v[i].name, want->v[i].name);
        cr_expect_eq(got.v[i].kind, want->v[i].kind, "%s", want->v[i].name);
        cr_expect_eq(got.v[i].offset, want->v[i].offset, "%s", want->v[i].name);
        cr_expect_eq(got.v[i].count, want->v[i].count, "%s", want->v[i].name);
        if (got.v[i].kind == NT_VALUE_STRING)
            cr_expect_str_eq(got.s[i], want->s[i]);
        else if (got.v[i].kind == NT_VALUE_UINT || got.v[i].kind == NT_VALUE_INT)
            cr_expect_eq(got.v[i].v.u, want->v[i].v.u, "%s", want->v[i].name);
    }
}

Test(fields, payload_only_decoding_matches_the_parsed_event)
{
    nt_payload_decoder *dec = nt_payload_decoder_new(NULL, NULL);
    cr_assert_not_null(dec);
    nt_event_desc gc = { .provider = NT_PROVIDER_RUNTIME, .event_id = 1, .version = 2, .event_name = "" };
    pb p;
    uint32_t n = gcstart(&p);
    same_as_parsed(dec, &gc, 8, p.b, n);
    same_as_parsed(dec, &gc, 8, p.b, 20); /* too short: the same error at the same offset */
    nt_event_desc tick = { .provider = NT_PROVIDER_RUNTIME, .event_id = 10, .version = 3, .event_name = "" };
    for (uint32_t ps = 4; ps <= 8; ps += 4) {
        p.n = 0;
        put(&p, 100, 4);
        put(&p, 1, 4);
        put(&p, 0, 2);
        put(&p, 100000, 8);
        put(&p, 0x1234, (int)ps);
        put_str(&p, "System.String");
        put(&p, 0, 4);
        put(&p, 0x5678, (int)ps);
        same_as_parsed(dec, &tick, ps, p.b, p.n); /* pointers as wide as the caller says */
    }
    nt_field_value v;
    cr_assert_eq(nt_event_field(nt_payload_event(dec), "TypeName", &v), NT_OK, "the event serves nt_event_field");
    cr_expect_str_eq(v.v.str.ptr, "System.String");
    nt_field_iter it;
    cr_expect_eq(nt_payload_fields_begin(dec, NT_PROVIDER_RUNTIME, 60000, 0, 8, p.b, p.n, &it), NT_ERR_INVALID_ARG,
                 "no layout for an unknown event");
    cr_expect_eq(nt_payload_fields_begin(dec, NT_PROVIDER_RUNTIME, 1, 2, 6, p.b, p.n, &it), NT_ERR_INVALID_ARG,
                 "pointers are 4 or 8 bytes");
    cr_expect_eq(nt_payload_fields_begin(dec, "Some-Other-Provider", 1, 2, 8, p.b, p.n, &it), NT_ERR_INVALID_ARG);
    cr_expect_not(nt_field_next(&it, &v), "a refused begin yields nothing");
    nt_payload_decoder_free(dec);
}
