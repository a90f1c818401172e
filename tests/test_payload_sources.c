/* Payload-only decoding of EventSource events against the parser's own
 * decoding of the same events in real traces: every TplEventSource,
 * System.Diagnostics.Metrics and EventCounters payload of
 * corpus/event-sources.nettrace (and the TPL events of event-fields.nettrace
 * and of the shared corpus's sentry trace) decodes from the well-known table
 * by name and, for the manifest EventSources, by id and version, value for
 * value (names, kinds, types, offsets, values) as the parser decodes it; and
 * every EventSource event of those traces (Workloads-EventFields: every field
 * type EventPipe carries) decodes from a metadata blob built from the event's
 * description, read by nt_payload_describe, the same way. */
#include <criterion/criterion.h>

#include "nettrace.h"
#include "support.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct text {
    char *s;
    size_t n, cap;
} text;

static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    cr_assert_geq(k, 0);
    if (t->n + (size_t)k + 1 > t->cap) {
        t->cap = (t->n + (size_t)k + 1) * 2;
        t->s = realloc(t->s, t->cap);
        cr_assert_not_null(t->s);
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
    t->n += (size_t)k;
}

static void put_hex(text *t, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put(t, "%02x", b[i]);
}

/* Every value of the iteration and how it ended, one line each. */
static void render(text *t, nt_field_iter *it)
{
    t->n = 0;
    put(t, "");
    nt_field_value v;
    while (nt_field_next(it, &v)) {
        put(t, "%s k%d t%u d%u i%u c%u a%d @%u =", v.name, (int)v.kind, v.type, v.depth, v.index, v.count,
            (int)v.in_array, v.offset);
        switch (v.kind) {
        case NT_VALUE_INT:
        case NT_VALUE_DATETIME: put(t, "%lld", (long long)v.v.i); break;
        case NT_VALUE_UINT:
        case NT_VALUE_BOOL: put(t, "%llu", (unsigned long long)v.v.u); break;
        case NT_VALUE_FLOAT: put(t, "%a", v.v.f); break;
        case NT_VALUE_GUID: put_hex(t, v.v.guid, 16); break;
        case NT_VALUE_STRING: put(t, "\"%.*s\"", (int)v.v.str.len, v.v.str.ptr); break;
        case NT_VALUE_BINARY: put_hex(t, v.v.bin.ptr, v.v.bin.len); break;
        default: break;
        }
        put(t, "\n");
    }
    put(t, "end %d @%u leftover %u\n", (int)it->status, it->error_offset, it->leftover);
}

/* ---- a metadata blob as EventPipe hands it out, from a description ---- */

typedef struct blob {
    uint8_t b[8192];
    size_t n;
} blob;

static void b_bytes(blob *o, const void *p, size_t n)
{
    cr_assert_leq(o->n + n, sizeof o->b);
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

static void b_u32(blob *o, uint32_t v) { b_bytes(o, &v, 4); }

/* ASCII names only (those of the traces here): UTF-16LE with its NUL. */
static void b_name(blob *o, const char *s)
{
    for (; *s; s++) {
        cr_assert_lt((unsigned char)*s, 0x80);
        uint8_t u[2] = { (uint8_t)*s, 0 };
        b_bytes(o, u, 2);
    }
    b_bytes(o, (const uint8_t[]){ 0, 0 }, 2);
}

static bool nests(const nt_field *f) { return f->type == NT_TYPE_OBJECT || f->element_type == NT_TYPE_OBJECT; }

/* The fields at depth from *i on (pre-order), as the V1 list (type, nested list, name) or the V2Params
 * list (size, name, type, element type, nested list). */
static void b_fields(blob *o, const nt_field *f, uint32_t n, uint32_t *i, uint32_t depth, bool v2)
{
    uint32_t count = 0;
    for (uint32_t j = *i; j < n && f[j].depth >= depth; j++)
        count += f[j].depth == depth;
    b_u32(o, count);
    while (*i < n && f[*i].depth >= depth) {
        const nt_field *x = &f[(*i)++];
        size_t start = o->n;
        if (v2) {
            b_u32(o, 0);
            b_name(o, x->name);
            b_u32(o, x->type);
            if (x->type == NT_TYPE_ARRAY)
                b_u32(o, x->element_type);
        } else {
            b_u32(o, x->type);
        }
        if (nests(x))
            b_fields(o, f, n, i, depth + 1, v2);
        if (v2) {
            uint32_t size = (uint32_t)(o->n - start);
            memcpy(o->b + start, &size, 4);
        } else {
            b_name(o, x->name);
        }
    }
}

/* The blob the runtime gives for d: V1 fields, or (with arrays) an empty V1 list and a V2Params tag. */
static void encode(blob *o, const nt_event_desc *d)
{
    o->n = 0;
    b_u32(o, d->event_id);
    b_name(o, d->event_name);
    b_bytes(o, &d->keywords, 8);
    b_u32(o, d->version);
    b_u32(o, d->level);
    bool arrays = false;
    for (uint32_t k = 0; k < d->field_count; k++)
        arrays |= d->fields[k].type == NT_TYPE_ARRAY;
    uint32_t i = 0;
    if (!arrays) {
        b_fields(o, d->fields, d->field_count, &i, 0, false);
    } else {
        b_u32(o, 0);
        blob t = { .n = 0 };
        b_fields(&t, d->fields, d->field_count, &i, 0, true);
        b_u32(o, (uint32_t)t.n);
        b_bytes(o, (const uint8_t[]){ 2 }, 1); /* V2Params */
        b_bytes(o, t.b, t.n);
    }
    if (d->opcode) {
        b_u32(o, 1);
        b_bytes(o, (const uint8_t[]){ 1, (uint8_t)d->opcode }, 2); /* OpCode */
    }
}

/* ---- the comparison over a trace ---- */

#define MAX_META 4096

typedef struct run {
    nt_payload_decoder *dec;
    uint32_t pointer_size;
    uint32_t described[MAX_META]; /* metadata id -> nt_payload_describe's id (0: not yet) */
    text want, got;
    unsigned by_name, by_id, by_blob, tpl, metrics, counters_mean, counters_sum;
} run;

static bool known_source(const char *p)
{
    return strcmp(p, "System.Threading.Tasks.TplEventSource") == 0 || strcmp(p, "System.Diagnostics.Metrics") == 0;
}

static int on_trace(void *user, const nt_trace_info *info)
{
    ((run *)user)->pointer_size = info->pointer_size;
    return 0;
}

static void expect_same(run *r, const nt_event *ev, const char *how, nt_status st, nt_field_iter *it)
{
    cr_assert_eq(st, NT_OK, "%s %s (%s): begin %d", ev->desc->provider, ev->desc->event_name, how, (int)st);
    render(&r->got, it);
    cr_assert_str_eq(r->got.s, r->want.s, "%s %s at byte %llu, %s:\n%s\nparsed:\n%s", ev->desc->provider,
                     ev->desc->event_name, (unsigned long long)ev->offset, how, r->got.s, r->want.s);
}

static int on_event(void *user, const nt_event *ev)
{
    run *r = user;
    const nt_event_desc *d = ev->desc;
    if (!d || strncmp(d->provider, "Microsoft-", 10) == 0)
        return 0; /* the runtime's own events: tests/test_fields.c */
    nt_field_iter it;
    cr_assert_eq(nt_event_fields_begin(ev, &it), NT_OK);
    render(&r->want, &it);
    /* The payload alone, in a buffer of its exact size (ASan sees an over-read). */
    uint8_t *copy = malloc(ev->payload_size ? ev->payload_size : 1);
    cr_assert_not_null(copy);
    memcpy(copy, ev->payload, ev->payload_size);
    bool counters = strcmp(d->event_name, "EventCounters") == 0;
    if (known_source(d->provider) || counters) {
        expect_same(r, ev, "by name",
                    nt_payload_fields_begin_named(r->dec, d->provider, d->event_name, r->pointer_size, copy,
                                                  ev->payload_size, &it),
                    &it);
        r->by_name++;
        r->tpl += strcmp(d->provider, "System.Threading.Tasks.TplEventSource") == 0;
        r->metrics += strcmp(d->provider, "System.Diagnostics.Metrics") == 0;
        r->counters_mean += counters && strstr(r->want.s, "CounterType k7 t18 d2 i9") != NULL;
        r->counters_sum += counters && strstr(r->want.s, "CounterType k7 t18 d2 i7") != NULL;
    }
    if (known_source(d->provider)) {
        expect_same(r, ev, "by id and version",
                    nt_payload_fields_begin(r->dec, d->provider, d->event_id, d->version, r->pointer_size, copy,
                                            ev->payload_size, &it),
                    &it);
        cr_expect_str_eq(nt_event_name(nt_payload_event(r->dec)), d->event_name);
        r->by_id++;
    }
    cr_assert_lt(d->metadata_id, MAX_META);
    uint32_t *id = &r->described[d->metadata_id];
    if (!*id) {
        blob b;
        encode(&b, d);
        cr_assert_eq(nt_payload_describe(r->dec, d->provider, b.b, (uint32_t)b.n, id), NT_OK,
                     "%s %s: its blob is refused", d->provider, d->event_name);
    }
    expect_same(r, ev, "from its metadata blob",
                nt_payload_fields_begin_described(r->dec, *id, r->pointer_size, copy, ev->payload_size, &it), &it);
    cr_expect_str_eq(nt_event_name(nt_payload_event(r->dec)), d->event_name);
    r->by_blob++;
    free(copy);
    return 0;
}

static void compare_trace(const char *path, run *r)
{
    memset(r, 0, sizeof *r);
    r->dec = nt_payload_decoder_new(NULL, NULL);
    cr_assert_not_null(r->dec);
    uint8_t *data;
    size_t len;
    cr_assert(ts_read_file(path, &data, &len), "cannot read %s", path);
    nt_callbacks cb = { .trace = on_trace, .event = on_event };
    char msg[256];
    cr_assert_eq(nt_parse_buffer(data, len, &cb, r, NULL, msg, sizeof msg), NT_OK, "%s: %s", path, msg);
    free(data);
    free(r->want.s);
    free(r->got.s);
    nt_payload_decoder_free(r->dec);
}

Test(payload_sources, the_well_known_sources_decode_as_parsed)
{
    run r;
    compare_trace(ts_path(ts_own_corpus(), "event-sources.nettrace"), &r);
    cr_expect_geq(r.tpl, 100, "TplEventSource payloads compared: %u", r.tpl);
    cr_expect_geq(r.metrics, 20, "System.Diagnostics.Metrics payloads compared: %u", r.metrics);
    cr_expect_geq(r.counters_mean, 20, "EventCounters (Mean) payloads compared: %u", r.counters_mean);
    cr_expect_geq(r.counters_sum, 10, "EventCounters (Sum) payloads compared: %u", r.counters_sum);
    cr_expect_eq(r.by_blob, r.by_name, "every event also from its blob");
}

Test(payload_sources, every_eventsource_event_decodes_from_its_blob)
{
    run r;
    compare_trace(ts_path(ts_own_corpus(), "event-fields.nettrace"), &r);
    cr_expect_geq(r.tpl, 500, "TplEventSource payloads compared: %u", r.tpl);
    cr_expect_geq(r.by_blob, r.by_name + 1000, "the workload's own events too: %u of %u", r.by_blob, r.by_name);
}

Test(payload_sources, the_shared_corpus_tpl_events)
{
    const char *dir = ts_shared_corpus();
    if (!dir)
        cr_skip_test("../shared/corpus is absent: the reference traces are not available here");
    run r;
    compare_trace(ts_path(dir, "sentry-dotnet__sample.nettrace"), &r);
    cr_expect_geq(r.tpl, 60, "TplEventSource payloads compared: %u", r.tpl);
}

/* What the decoder refuses, and that a refused blob costs the earlier descriptions nothing. */
Test(payload_sources, refusals)
{
    nt_payload_decoder *dec = nt_payload_decoder_new(NULL, NULL);
    nt_field_iter it;
    nt_field_value v;
    const uint8_t p4[4] = { 1, 0, 0, 0 };
    cr_expect_eq(nt_payload_fields_begin_named(dec, "System.Threading.Tasks.TplEventSource", "NoSuchEvent", 8, p4, 4,
                                               &it),
                 NT_ERR_INVALID_ARG);
    cr_expect_not(nt_field_next(&it, &v), "a refused begin yields nothing");
    cr_expect_eq(nt_payload_fields_begin(dec, "System.Threading.Tasks.TplEventSource", 7, 99, 8, p4, 4, &it),
                 NT_ERR_INVALID_ARG, "a version the table does not hold");
    cr_expect_eq(nt_payload_fields_begin_described(dec, 1, 8, p4, 4, &it), NT_ERR_INVALID_ARG, "nothing described");
    /* One int32 field "Value" of event 5 of provider "My-Source". */
    nt_field f = { "Value", NT_TYPE_INT32, 0, 0 };
    nt_event_desc d = { .event_id = 5, .event_name = "Thing", .version = 1, .field_count = 1, .fields = &f };
    blob b;
    encode(&b, &d);
    uint32_t id = 0, bad = 7;
    cr_assert_eq(nt_payload_describe(dec, "My-Source", b.b, (uint32_t)b.n, &id), NT_OK);
    cr_assert_eq(nt_payload_describe(dec, "My-Source", b.b, 6, &bad), NT_ERR_MALFORMED, "a cut blob");
    cr_expect_eq(bad, 0u, "no id for a refused blob");
    cr_assert_eq(nt_payload_fields_begin_described(dec, id, 8, p4, 4, &it), NT_OK, "the first is still there");
    cr_assert(nt_field_next(&it, &v));
    cr_expect_str_eq(v.name, "Value");
    cr_expect_eq(v.v.i, 1);
    cr_expect_str_eq(nt_payload_event(dec)->desc->provider, "My-Source");
    cr_assert_eq(nt_payload_fields_begin_described(dec, id, 8, p4, 2, &it), NT_OK);
    cr_expect_not(nt_field_next(&it, &v), "a short payload");
    cr_expect_eq(it.status, NT_ERR_MALFORMED);
    cr_expect_eq(it.error_offset, 0u);
    cr_expect_eq(nt_payload_fields_begin_described(dec, id + 1, 8, p4, 4, &it), NT_ERR_INVALID_ARG);
    cr_expect_eq(nt_payload_describe(dec, "", b.b, (uint32_t)b.n, &id), NT_ERR_INVALID_ARG, "no provider");
    cr_expect_eq(nt_payload_describe(NULL, "My-Source", b.b, (uint32_t)b.n, &id), NT_ERR_INVALID_ARG);
    nt_payload_decoder_free(dec);
}
