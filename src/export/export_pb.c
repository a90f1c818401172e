/* Protobuf encoding of pprof's profile.proto, shared by the exporters that
 * write it (see export_pb.h for the fields). */
#include "export/export_pb.h"

#include <string.h>

static void pb_raw(pbuf *b, const void *p, size_t n)
{
    if (b->n + n > sizeof b->d) {
        b->overflow = true;
        return;
    }
    memcpy(b->d + b->n, p, n);
    b->n += n;
}

void pb_varint(pbuf *b, uint64_t v)
{
    unsigned char x[10];
    size_t n = 0;
    do {
        x[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            x[n] |= 0x80;
        n++;
    } while (v);
    pb_raw(b, x, n);
}

void pb_uint(pbuf *b, uint32_t field, uint64_t v)
{
    pb_varint(b, (uint64_t)field << 3);
    pb_varint(b, v);
}

void pb_bytes(pbuf *b, uint32_t field, const void *p, size_t n)
{
    pb_varint(b, (uint64_t)field << 3 | 2);
    pb_varint(b, n);
    pb_raw(b, p, n);
}

void pb_emit_msg(ex_gzip *g, uint32_t field, const pbuf *m)
{
    pbuf h = { .n = 0 };
    pb_varint(&h, (uint64_t)field << 3 | 2);
    pb_varint(&h, m->n);
    ex_gzip_write(g, h.d, h.n);
    ex_gzip_write(g, m->d, m->n);
}

void pb_emit_string(ex_gzip *g, const char *s, size_t n)
{
    pbuf h = { .n = 0 };
    pb_varint(&h, 6 << 3 | 2);
    pb_varint(&h, n);
    ex_gzip_write(g, h.d, h.n);
    ex_gzip_write(g, s, n);
}

void pb_emit_value_type(ex_gzip *g, uint32_t field, uint32_t type, uint32_t unit)
{
    pbuf b = { .n = 0 };
    pb_uint(&b, 1, type);
    pb_uint(&b, 2, unit);
    pb_emit_msg(g, field, &b);
}

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void pb_emit_times(ex_gzip *g, const nt_trace *t, int64_t first_ns, int64_t last_ns, int64_t period)
{
    pbuf b = { .n = 0 };
    pb_uint(&b, 12, period > 0 ? (uint64_t)period : 0);
    const nt_trace_info *info = tr_view_info(t);
    if (info->sync_time_utc.year) {
        const nt_systemtime *u = &info->sync_time_utc;
        int64_t secs = days_from_civil(u->year, u->month, u->day) * 86400 + u->hour * 3600 + u->minute * 60 +
                       u->second;
        /* Unsigned (wrapping) arithmetic: a hostile header's clock must not overflow a signed type. */
        uint64_t wall = (uint64_t)secs * 1000000000u + (uint64_t)u->milliseconds * 1000000u;
        if (first_ns != INT64_MAX)
            wall += (uint64_t)first_ns - (uint64_t)nt_ticks_to_ns(info->sync_qpc, info->qpc_frequency);
        pb_uint(&b, 9, wall);
    }
    if (first_ns != INT64_MAX)
        pb_uint(&b, 10, (uint64_t)last_ns - (uint64_t)first_ns + (uint64_t)period);
    ex_gzip_write(g, b.d, b.n);
}

/* A mapping: the address span of its sampled code and a name that belongs to it. */
typedef struct ex_mapping {
    uint64_t lo, hi;
    uint32_t rep;
} ex_mapping;

/* A mapping's file: the module's IL path, else its assembly's name; "[unresolved]"
 * for the frames no method record covers. */
static const char *mapping_file(const nt_trace *t, const nt_frame *f)
{
    if (f->method_index == NT_TRACE_NO_METHOD)
        return "[unresolved]";
    const char *path = tr_view_module_path(t, f->method->module_id);
    if (path)
        return path;
    return f->method->assembly[0] ? f->method->assembly : "[unknown module]";
}

nt_status pb_emit_names(ex_gzip *g, cm_mem *m, const nt_trace *t, const ex_names *nm, uint32_t first_string,
                        uint32_t *next_string)
{
    nt_status st = NT_OK;
    /* The mapping of each name: one per module, one for the unresolved frames. */
    uint32_t *mod_of = cm_mem_alloc(m, (nm->n + 1) * sizeof *mod_of);
    ex_mapping *maps = cm_mem_alloc(m, (nm->n + 1) * sizeof *maps);
    size_t nmaps = 0;
    cm_map map_of = { 0 };
    if (!mod_of || !maps)
        st = NT_ERR_NOMEM;
    for (size_t i = 0; st == NT_OK && i < nm->n; i++) {
        const nt_frame *f = nm->rep[i];
        bool unresolved = f->method_index == NT_TRACE_NO_METHOD;
        uint64_t key = unresolved ? UINT64_MAX : f->method->module_id;
        uint32_t k = cm_map_index(&map_of, key);
        if (k == UINT32_MAX) {
            k = (uint32_t)nmaps++;
            if (!cm_map_set(m, &map_of, key, k)) {
                st = NT_ERR_NOMEM;
                break;
            }
            maps[k] = (ex_mapping){ UINT64_MAX, 0, (uint32_t)i };
        }
        mod_of[i] = k;
        uint64_t lo = unresolved ? f->ip : f->method->start_address;
        uint64_t hi = unresolved ? f->ip + 1 : lo + f->method->size;
        maps[k].lo = lo < maps[k].lo ? lo : maps[k].lo;
        maps[k].hi = hi > maps[k].hi ? hi : maps[k].hi;
    }
    /* One function and one location per distinct name; ids are index + 1. */
    char name[1024];
    for (size_t i = 0; st == NT_OK && i < nm->n; i++) {
        size_t len = nt_frame_name_ex(nm->rep[i], nm->flags, name, sizeof name);
        if (len >= sizeof name)
            len = sizeof name - 1;
        pb_emit_string(g, name, len);
        pbuf b = { .n = 0 };
        pb_uint(&b, 1, i + 1);
        pb_uint(&b, 2, first_string + i);
        pb_uint(&b, 3, first_string + i);
        pb_uint(&b, 4, first_string + nm->n + mod_of[i]);
        pb_emit_msg(g, 5, &b);
        b.n = 0;
        pb_uint(&b, 1, i + 1);
        pb_uint(&b, 2, mod_of[i] + 1);
        if (nm->rep[i]->method_index == NT_TRACE_NO_METHOD)
            pb_uint(&b, 3, nm->rep[i]->ip);
        pbuf line = { .n = 0 };
        pb_uint(&line, 1, i + 1);
        pb_bytes(&b, 4, line.d, line.n);
        pb_emit_msg(g, 4, &b);
    }
    /* The mappings' file names follow the names in the string table, in mapping order. */
    for (size_t k = 0; st == NT_OK && k < nmaps; k++) {
        const char *file = mapping_file(t, nm->rep[maps[k].rep]);
        pb_emit_string(g, file, strlen(file));
        pbuf b = { .n = 0 };
        pb_uint(&b, 1, k + 1);
        pb_uint(&b, 2, maps[k].lo);
        pb_uint(&b, 3, maps[k].hi);
        pb_uint(&b, 5, first_string + nm->n + k);
        pb_uint(&b, 7, 1);
        pb_emit_msg(g, 3, &b);
    }
    cm_mem_free(m, mod_of, (nm->n + 1) * sizeof *mod_of);
    cm_mem_free(m, maps, (nm->n + 1) * sizeof *maps);
    cm_map_free(m, &map_of);
    *next_string = (uint32_t)(first_string + nm->n + nmaps);
    return st;
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

void pb_emit_sample(ex_gzip *g, const uint32_t *ids, const uint32_t *of_frame, uint32_t depth, const int64_t *vals,
                    size_t nvals, const pb_label *labels, size_t nlabels)
{
    size_t idlen = 0;
    for (uint32_t k = 0; k < depth; k++)
        idlen += varint_len(of_frame[ids[k]] + 1u);
    pbuf rest = { .n = 0 }, v = { .n = 0 }, lab = { .n = 0 };
    for (size_t i = 0; i < nvals; i++)
        pb_varint(&v, (uint64_t)vals[i]);
    pb_bytes(&rest, 2, v.d, v.n);
    for (size_t i = 0; i < nlabels; i++) {
        lab.n = 0;
        pb_uint(&lab, 1, labels[i].key);
        pb_uint(&lab, labels[i].is_num ? 3 : 2, labels[i].value);
        pb_bytes(&rest, 3, lab.d, lab.n);
    }
    pbuf h = { .n = 0 };
    size_t ids_field = depth ? 1 + varint_len(idlen) + idlen : 0;
    pb_varint(&h, 2 << 3 | 2);
    pb_varint(&h, ids_field + rest.n);
    if (depth) {
        pb_varint(&h, 1 << 3 | 2);
        pb_varint(&h, idlen);
    }
    ex_gzip_write(g, h.d, h.n);
    unsigned char buf[640];
    size_t n = 0;
    for (uint32_t k = 0; k < depth; k++) {
        uint64_t x = of_frame[ids[k]] + 1u;
        while (x >= 0x80) {
            buf[n++] = (unsigned char)(x | 0x80);
            x >>= 7;
        }
        buf[n++] = (unsigned char)x;
        if (n > sizeof buf - 10) {
            ex_gzip_write(g, buf, n);
            n = 0;
        }
    }
    ex_gzip_write(g, buf, n);
    ex_gzip_write(g, rest.d, rest.n);
}
