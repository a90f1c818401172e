/* The payload field decoder.  The first input byte picks how the rest is used:
 *
 *   0  a whole stream: every field of every event is read;
 *   1  a self-describing layout (a field list read from the input, V4 or V6)
 *      and a payload, written as a one-event stream with the writer;
 *   2  a runtime table entry (chosen by the next two bytes) and a payload.
 *
 * Invariants, for every event: values come in balanced BEGIN/END pairs with
 * as many children as they announce; offsets lie in the payload and grow;
 * strings are valid UTF-8 of their stated length; the work is linear in the
 * payload (values yielded <= (payload + 1) x (2 fields + 2)); an error has an
 * offset in the payload and a message; reading twice gives the same values;
 * nt_event_field finds each top-level field the iteration yielded. */
#include "fuzz.h"
#include "nettrace_writer.h"
#include "parse/clr_event_table.h"

#include <string.h>

typedef struct fz_value {
    nt_value_kind kind;
    uint32_t depth, offset, count;
    uint64_t bits;
} fz_value;

static bool valid_utf8(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *e = p + len;
    while (p < e) {
        unsigned c = *p, n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!n || (size_t)(e - p) < n || (n == 2 && c < 0xC2))
            return false;
        for (unsigned k = 1; k < n; k++)
            if ((p[k] & 0xC0) != 0x80)
                return false;
        p += n;
    }
    return true;
}

/* One pass; returns the number of values, digest in *h. */
static uint64_t walk(const nt_event *ev, uint64_t *h, nt_field_iter *out)
{
    nt_field_iter it;
    nt_field_value v;
    if (nt_event_fields_begin(ev, &it) != NT_OK && it.status != NT_ERR_NOMEM)
        fz_fail("fields_begin refused a parser event: %s", nt_status_name(it.status));
    uint32_t open_count[NT_FIELD_ITER_MAX_DEPTH + 2] = { 0 }, seen[NT_FIELD_ITER_MAX_DEPTH + 2] = { 0 };
    uint32_t depth = 0, last_off = 0;
    uint64_t n = 0, fields = ev->desc ? ev->desc->field_count + (ev->desc->schema ? ev->desc->schema->field_count : 0) : 0;
    *h = 1469598103934665603ull;
    while (nt_field_next(&it, &v)) {
        n++;
        /* every struct element takes a byte and yields at most a BEGIN, an END
         * and one value per layout node: linear in payload x layout */
        if (n > ((uint64_t)ev->payload_size + 1) * (2 * fields + 2))
            fz_fail("%llu values from a %u-byte payload", (unsigned long long)n, ev->payload_size);
        bool end = v.kind == NT_VALUE_STRUCT_END || v.kind == NT_VALUE_ARRAY_END;
        /* an END value carries its BEGIN's offset */
        if (v.offset > ev->payload_size || (!end && v.offset < last_off))
            fz_fail("value offset %u (previous %u, payload %u)", v.offset, last_off, ev->payload_size);
        if (!end)
            last_off = v.offset;
        if (end) {
            if (depth == 0 || v.depth != depth - 1 || seen[depth] != open_count[depth] || v.count != open_count[depth])
                fz_fail("unbalanced end at depth %u", v.depth);
            depth--;
        } else if (v.depth != depth) {
            fz_fail("value at depth %u inside depth %u", v.depth, depth);
        }
        if (!end)
            seen[depth]++;
        if (v.kind == NT_VALUE_STRUCT_BEGIN || v.kind == NT_VALUE_ARRAY_BEGIN) {
            if (++depth > NT_FIELD_ITER_MAX_DEPTH)
                fz_fail("depth %u", depth);
            open_count[depth] = v.count;
            seen[depth] = 0;
        }
        uint64_t bits = v.v.u;
        if (v.kind == NT_VALUE_STRING) {
            if (strlen(v.v.str.ptr) != v.v.str.len || !valid_utf8(v.v.str.ptr, v.v.str.len))
                fz_fail("string of %zu bytes is not valid UTF-8 of that length", v.v.str.len);
            bits = fz_hash((const uint8_t *)v.v.str.ptr, v.v.str.len);
        } else if (v.kind == NT_VALUE_BINARY) {
            if (v.v.bin.ptr < ev->payload || v.v.bin.ptr + v.v.bin.len > ev->payload + ev->payload_size)
                fz_fail("binary span outside the payload");
            bits = fz_hash(v.v.bin.ptr, v.v.bin.len);
        } else if (v.kind == NT_VALUE_GUID) {
            bits = fz_hash(v.v.guid, 16);
        } else if (v.kind >= NT_VALUE_STRUCT_BEGIN) {
            bits = v.count;
        }
        *h = (*h ^ (bits + v.kind * 31u + v.depth)) * 1099511628211ull;
        if (depth == 0 && !end && v.kind != NT_VALUE_STRUCT_BEGIN && v.kind != NT_VALUE_ARRAY_BEGIN) {
            nt_field_value f;
            if (nt_event_field(ev, v.name, &f) != NT_OK || f.offset > v.offset)
                fz_fail("nt_event_field does not find top-level field \"%s\"", v.name);
        }
    }
    if (it.status == NT_OK) {
        if (depth != 0 || it.leftover > ev->payload_size)
            fz_fail("iteration ended at depth %u with %u bytes left of %u", depth, it.leftover, ev->payload_size);
    } else if (it.error_offset > ev->payload_size || !it.message || !*it.message) {
        fz_fail("error %s at %u of %u without a message", nt_status_name(it.status), it.error_offset, ev->payload_size);
    }
    *out = it;
    return n;
}

static int on_event(void *user, const nt_event *ev)
{
    (void)user;
    uint64_t h1, h2;
    nt_field_iter a, b;
    uint64_t n1 = walk(ev, &h1, &a), n2 = walk(ev, &h2, &b);
    if (n1 != n2 || h1 != h2 || a.status != b.status || a.error_offset != b.error_offset || a.leftover != b.leftover)
        fz_fail("two reads of one event differ");
    return 0;
}

static void parse(const uint8_t *data, size_t size, uint32_t max_array)
{
    nt_limits lim = { 0 };
    fz_harness_limits(&lim);
    lim.max_array_elements = max_array;
    nt_callbacks cb = { .event = on_event };
    nt_status s = nt_parse_buffer(data, size, &cb, NULL, &lim, NULL, 0);
    if (!fz_parse_status_ok(s))
        fz_fail("parse ended %s", nt_status_name(s));
}

/* A field list from the input: per field a type byte and a depth step.
 * The writer refuses what it cannot express; then nothing is written. */
static size_t read_fields(const uint8_t *d, size_t n, nt_field *f, size_t max, bool v6)
{
    static const uint8_t types[] = { NT_TYPE_OBJECT, NT_TYPE_BOOLEAN32, NT_TYPE_CHAR, NT_TYPE_SBYTE, NT_TYPE_BYTE,
                                     NT_TYPE_INT16, NT_TYPE_UINT16, NT_TYPE_INT32, NT_TYPE_UINT32, NT_TYPE_INT64,
                                     NT_TYPE_UINT64, NT_TYPE_SINGLE, NT_TYPE_DOUBLE, NT_TYPE_DECIMAL,
                                     NT_TYPE_DATETIME, NT_TYPE_GUID, NT_TYPE_STRING, NT_TYPE_ARRAY,
                                     NT_TYPE_VARINT, NT_TYPE_VARUINT, NT_TYPE_UTF8_CHAR, NT_TYPE_BOOLEAN8 };
    static const char *const names[] = { "A", "B", "C", "D", "E", "F", "G", "H" };
    size_t k = 0;
    uint32_t depth = 0;
    for (size_t i = 0; i + 1 < n && k < max; i += 2) {
        size_t ntypes = v6 ? sizeof types : 18;
        uint32_t t = types[d[i] % ntypes];
        uint32_t elem = 0;
        if (t == NT_TYPE_ARRAY) {
            elem = types[(d[i] / ntypes) % 17]; /* no arrays of arrays */
        }
        f[k] = (nt_field){ names[k % 8], t, elem, depth };
        if (t == NT_TYPE_OBJECT || elem == NT_TYPE_OBJECT)
            depth++;
        else if ((d[i + 1] & 3) == 0 && depth > 0)
            depth--;
        k++;
    }
    return k;
}

static void one_event(const nt_event_desc *d, const uint8_t *payload, size_t len, uint32_t format, uint32_t ps,
                      uint32_t max_array)
{
    nt_membuf out = { 0 };
    nt_writer_options o = { 0 };
    nt_writer_options_default(&o);
    o.format = format;
    o.pointer_size = ps;
    nt_writer *w = nt_writer_new(&o, nt_membuf_write, &out, NULL);
    uint32_t id;
    if (w && nt_writer_define(w, d, &id) == NT_OK) {
        nt_writer_event e = { .metadata_id = id, .thread_id = 1, .timestamp = 1, .payload = payload,
                              .payload_size = (uint32_t)len };
        if (nt_writer_write_event(w, &e) == NT_OK && nt_writer_finish(w) == NT_OK)
            parse(out.data, out.len, max_array);
    }
    nt_writer_free(w);
    nt_membuf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0] % 3;
    data++;
    size--;
    uint32_t max_array = 1u << (4 + (fz_hash(data, size) % 12));
    if (mode == 0) {
        parse(data, size, max_array);
    } else if (mode == 1 && size >= 2) {
        bool v6 = data[0] & 1;
        size_t nspec = data[0] >> 1;
        if (nspec > size - 1)
            nspec = size - 1;
        nt_field f[64];
        size_t nf = read_fields(data + 1, nspec, f, 64, v6);
        nt_event_desc d = { .provider = "Fuzz", .event_id = 1, .event_name = "E", .field_count = (uint32_t)nf,
                            .fields = nf ? f : NULL };
        one_event(&d, data + 1 + nspec, size - 1 - nspec, v6 ? 6 : 4, 8, max_array);
    } else if (mode == 2 && size >= 3) {
        const struct nt_schema *s = &ps_schemas[(data[0] | (uint32_t)data[1] << 8) % ps_schema_count];
        nt_event_desc d = { .provider = ps_schema_providers[s->provider], .event_id = s->event_id,
                            .version = s->version, .event_name = "" };
        one_event(&d, data + 3, size - 3, data[2] & 1 ? 6 : 4, data[2] & 2 ? 4 : 8, max_array);
    }
    return 0;
}
