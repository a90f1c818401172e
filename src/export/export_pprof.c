/* pprof: a gzipped profile.proto message (github.com/google/pprof, proto/
 * profile.proto).  Fields are written as they are ready, since a protobuf
 * message may list its fields in any order and repeated fields concatenate;
 * only the string table has to keep its own order, and it does.
 *
 * Profile: 1 sample_type, 2 sample, 4 location, 5 function, 6 string_table,
 *          9 time_nanos, 10 duration_nanos, 11 period_type, 12 period
 * ValueType: 1 type, 2 unit (string indices)
 * Sample: 1 location_id (packed, leaf first), 2 value (packed), 3 label
 * Label: 1 key, 2 str, 3 num
 * Location: 1 id, 2 mapping_id, 3 address, 4 line;  Line: 1 function_id
 * Function: 1 id, 2 name, 3 system_name, 4 filename
 * Mapping: 1 id, 2 memory_start, 3 memory_limit, 5 filename, 7 has_functions
 *
 * One mapping per module a frame resolved to (its file from the module
 * record), spanning that module's sampled methods, and one more for the
 * frames no method record covers, so every location has a mapping with a
 * file name and pprof has a "main binary" to name.
 *
 * Samples are merged per (stack, thread, sample type) with two values: the
 * sample count and the wall time (ns to the thread's next sample). */
#include "export/export_gzip.h"
#include "export/export_names.h"

#include <string.h>

typedef struct pbuf {
    unsigned char d[4096];
    size_t n;
    bool overflow;
} pbuf;

static void pb_raw(pbuf *b, const void *p, size_t n)
{
    if (b->n + n > sizeof b->d) {
        b->overflow = true;
        return;
    }
    memcpy(b->d + b->n, p, n);
    b->n += n;
}

static void pb_varint(pbuf *b, uint64_t v)
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

static void pb_uint(pbuf *b, uint32_t field, uint64_t v)
{
    pb_varint(b, (uint64_t)field << 3);
    pb_varint(b, v);
}

static void pb_bytes(pbuf *b, uint32_t field, const void *p, size_t n)
{
    pb_varint(b, (uint64_t)field << 3 | 2);
    pb_varint(b, n);
    pb_raw(b, p, n);
}

/* Write one top-level field holding the message in m. */
static void emit_msg(tr_gzip *g, uint32_t field, const pbuf *m)
{
    pbuf h = { .n = 0 };
    pb_varint(&h, (uint64_t)field << 3 | 2);
    pb_varint(&h, m->n);
    tr_gzip_write(g, h.d, h.n);
    tr_gzip_write(g, m->d, m->n);
}

static void emit_string(tr_gzip *g, const char *s, size_t n)
{
    pbuf h = { .n = 0 };
    pb_varint(&h, 6 << 3 | 2);
    pb_varint(&h, n);
    tr_gzip_write(g, h.d, h.n);
    tr_gzip_write(g, s, n);
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

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* One Sample message; its location ids (any number of them) are streamed. */
static void emit_sample(tr_gzip *g, const uint32_t *names, uint32_t depth, int64_t count, int64_t wall,
                        uint64_t thread, uint32_t state_str);

/* A mapping: the address span of its sampled code and a name that belongs to it. */
typedef struct tr_mapping {
    uint64_t lo, hi;
    uint32_t rep;
} tr_mapping;

/* A mapping's file: the module's IL path, else its assembly's name; "[unresolved]"
 * for the frames no method record covers. */
static const char *mapping_file(const nt_trace *t, const nt_frame *f)
{
    if (f->method_index == NT_TRACE_NO_METHOD)
        return "[unresolved]";
    uint32_t k = tr_index(&t->module_index, f->method->module_id);
    if (k != UINT32_MAX && t->modules[k].il_path && t->modules[k].il_path[0])
        return t->modules[k].il_path;
    return f->method->assembly[0] ? f->method->assembly : "[unknown module]";
}

enum { S_EMPTY, S_SAMPLES, S_COUNT, S_WALL, S_NS, S_THREAD, S_STATE, S_MANAGED, S_EXTERNAL, S_OTHER, S_FIRST_NAME };
static const char *const FIXED[] = { "", "samples", "count", "wall", "nanoseconds", "thread_id", "state",
                                     "managed", "external", "other" };

nt_status nt_export_pprof(const nt_trace *t, const nt_export_options *opt, nt_sink_fn w, void *user)
{
    tr_export x;
    nt_status st = tr_export_open(&x, t, opt, w);
    if (st != NT_OK)
        return st;
    const tr_selection *sel = &x.sel;
    const tr_names *nm = &x.nm;
    tr_walk *wk = &x.wk;
    nt_mem *m = &x.m;
    nt_map agg = { 0 };
    int64_t *vals = NULL; /* per merged sample: count, wall */
    uint64_t *keys = NULL;
    size_t nagg = 0, agg_cap = 0, keys_cap = 0;
    int64_t first_ns = INT64_MAX, last_ns = INT64_MIN;
    for (uint32_t th = 0; st == NT_OK && th < t->nthreads; th++) {
        if (!tr_walk_thread_selected(wk, th))
            continue;
        tr_walk_it it;
        tr_walk_begin(wk, th, &it);
        int64_t wall;
        for (size_t i; st == NT_OK && (i = tr_walk_next(wk, &it, true, &wall)) != SIZE_MAX;) {
            const tr_sample *s = TR_SAMPLE(t, i);
            uint64_t key = (uint64_t)s->stack << 32 | s->thread_type;
            uint32_t a = tr_index(&agg, key);
            if (a == UINT32_MAX) {
                if (nagg >= UINT32_MAX - 2 ||
                    !nt_mem_reserve(m, (void **)&vals, &agg_cap, 2 * (nagg + 1), sizeof *vals) ||
                    !nt_mem_reserve(m, (void **)&keys, &keys_cap, nagg + 1, sizeof *keys) ||
                    !nt_map_set(m, &agg, key, (uint32_t)nagg)) {
                    st = NT_ERR_NOMEM;
                    break;
                }
                a = (uint32_t)nagg++;
                keys[a] = key;
                vals[2 * a] = vals[2 * a + 1] = 0;
            }
            vals[2 * a] += (int64_t)tr_count(t, i);
            vals[2 * a + 1] = tr_add_weight(vals[2 * a + 1], wall);
            int64_t ns = nt_ticks_to_ns(s->ticks, t->info.qpc_frequency);
            int64_t ns_last = t->agg ? nt_ticks_to_ns(t->agg[i].last_ticks, t->info.qpc_frequency) : ns;
            if (ns < first_ns)
                first_ns = ns;
            if (ns_last > last_ns)
                last_ns = ns_last;
        }
    }
    tr_walk_free(wk); /* not needed for writing: its memory is better spent on the output */
    tr_out o;
    tr_out_init(&o, w, user);
    tr_gzip g;
    if (st == NT_OK)
        st = tr_gzip_begin(&g, &o);
    if (st == NT_OK) {
        for (size_t i = 0; i < sizeof FIXED / sizeof FIXED[0]; i++)
            emit_string(&g, FIXED[i], strlen(FIXED[i]));
        pbuf b = { .n = 0 };
        pb_uint(&b, 1, S_SAMPLES);
        pb_uint(&b, 2, S_COUNT);
        emit_msg(&g, 1, &b);
        b.n = 0;
        pb_uint(&b, 1, S_WALL);
        pb_uint(&b, 2, S_NS);
        emit_msg(&g, 1, &b);
        emit_msg(&g, 11, &b); /* period_type: wall nanoseconds */
        b.n = 0;
        pb_uint(&b, 12, sel->default_ns > 0 ? (uint64_t)sel->default_ns : 0);
        if (t->have_info && t->info.sync_time_utc.year) {
            const nt_systemtime *u = &t->info.sync_time_utc;
            int64_t secs = days_from_civil(u->year, u->month, u->day) * 86400 + u->hour * 3600 + u->minute * 60 +
                           u->second;
            /* Unsigned (wrapping) arithmetic: a hostile header's clock must not overflow a signed type. */
            uint64_t wall = (uint64_t)secs * 1000000000u + (uint64_t)u->milliseconds * 1000000u;
            if (first_ns != INT64_MAX)
                wall += (uint64_t)first_ns - (uint64_t)nt_ticks_to_ns(t->info.sync_qpc, t->info.qpc_frequency);
            pb_uint(&b, 9, wall);
        }
        if (first_ns != INT64_MAX)
            pb_uint(&b, 10, (uint64_t)last_ns - (uint64_t)first_ns + (uint64_t)sel->default_ns);
        tr_gzip_write(&g, b.d, b.n);

        /* The mapping of each name: one per module, one for the unresolved frames. */
        uint32_t *mod_of = nt_mem_alloc(m, (nm->n + 1) * sizeof *mod_of);
        tr_mapping *maps = nt_mem_alloc(m, (nm->n + 1) * sizeof *maps);
        size_t nmaps = 0;
        nt_map map_of = { 0 };
        if (!mod_of || !maps)
            st = NT_ERR_NOMEM;
        for (size_t i = 0; st == NT_OK && i < nm->n; i++) {
            const nt_frame *f = nm->rep[i];
            bool unresolved = f->method_index == NT_TRACE_NO_METHOD;
            uint64_t key = unresolved ? UINT64_MAX : f->method->module_id;
            uint32_t k = tr_index(&map_of, key);
            if (k == UINT32_MAX) {
                k = (uint32_t)nmaps++;
                if (!nt_map_set(m, &map_of, key, k)) {
                    st = NT_ERR_NOMEM;
                    break;
                }
                maps[k] = (tr_mapping){ UINT64_MAX, 0, (uint32_t)i };
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
            emit_string(&g, name, len);
            b.n = 0;
            pb_uint(&b, 1, i + 1);
            pb_uint(&b, 2, S_FIRST_NAME + i);
            pb_uint(&b, 3, S_FIRST_NAME + i);
            pb_uint(&b, 4, S_FIRST_NAME + nm->n + mod_of[i]);
            emit_msg(&g, 5, &b);
            b.n = 0;
            pb_uint(&b, 1, i + 1);
            pb_uint(&b, 2, mod_of[i] + 1);
            if (nm->rep[i]->method_index == NT_TRACE_NO_METHOD)
                pb_uint(&b, 3, nm->rep[i]->ip);
            pbuf line = { .n = 0 };
            pb_uint(&line, 1, i + 1);
            pb_bytes(&b, 4, line.d, line.n);
            emit_msg(&g, 4, &b);
        }
        /* The mappings' file names follow the names in the string table, in mapping order. */
        for (size_t k = 0; st == NT_OK && k < nmaps; k++) {
            const char *file = mapping_file(t, nm->rep[maps[k].rep]);
            emit_string(&g, file, strlen(file));
            b.n = 0;
            pb_uint(&b, 1, k + 1);
            pb_uint(&b, 2, maps[k].lo);
            pb_uint(&b, 3, maps[k].hi);
            pb_uint(&b, 5, S_FIRST_NAME + nm->n + k);
            pb_uint(&b, 7, 1);
            emit_msg(&g, 3, &b);
        }
        nt_mem_free(m, mod_of, (nm->n + 1) * sizeof *mod_of);
        nt_mem_free(m, maps, (nm->n + 1) * sizeof *maps);
        nt_map_free(m, &map_of);
        for (size_t a = 0; st == NT_OK && a < nagg && !g.failed && !o.failed; a++) {
            const tr_rstack *r = &t->stacks[keys[a] >> 32];
            uint32_t tt = (uint32_t)keys[a];
            uint32_t type = tt >> 24;
            emit_sample(&g, nm->of_frame + r->off, r->count, vals[2 * a], vals[2 * a + 1],
                        t->threads[tt & 0xFFFFFFu],
                        type == NT_SAMPLE_MANAGED ? S_MANAGED : type == NT_SAMPLE_EXTERNAL ? S_EXTERNAL : S_OTHER);
        }
        nt_status gs = tr_gzip_end(&g), built = st;
        st = tr_out_flush(&o);
        if (st == NT_OK)
            st = built != NT_OK ? built : gs;
    }
    nt_map_free(m, &agg);
    nt_mem_free(m, vals, agg_cap * sizeof *vals);
    nt_mem_free(m, keys, keys_cap * sizeof *keys);
    tr_export_close(&x);
    return st;
}

static void emit_sample(tr_gzip *g, const uint32_t *names, uint32_t depth, int64_t count, int64_t wall,
                        uint64_t thread, uint32_t state_str)
{
    size_t idlen = 0;
    for (uint32_t k = 0; k < depth; k++)
        idlen += varint_len(names[k] + 1u);
    pbuf rest = { .n = 0 }, v = { .n = 0 }, lab = { .n = 0 };
    pb_varint(&v, (uint64_t)count);
    pb_varint(&v, (uint64_t)wall);
    pb_bytes(&rest, 2, v.d, v.n);
    pb_uint(&lab, 1, S_THREAD);
    pb_uint(&lab, 3, thread);
    pb_bytes(&rest, 3, lab.d, lab.n);
    lab.n = 0;
    pb_uint(&lab, 1, S_STATE);
    pb_uint(&lab, 2, state_str);
    pb_bytes(&rest, 3, lab.d, lab.n);
    pbuf h = { .n = 0 };
    size_t ids_field = depth ? 1 + varint_len(idlen) + idlen : 0;
    pb_varint(&h, 2 << 3 | 2);
    pb_varint(&h, ids_field + rest.n);
    if (depth) {
        pb_varint(&h, 1 << 3 | 2);
        pb_varint(&h, idlen);
    }
    tr_gzip_write(g, h.d, h.n);
    unsigned char buf[640];
    size_t n = 0;
    for (uint32_t k = 0; k < depth; k++) {
        uint64_t x = names[k] + 1u;
        while (x >= 0x80) {
            buf[n++] = (unsigned char)(x | 0x80);
            x >>= 7;
        }
        buf[n++] = (unsigned char)x;
        if (n > sizeof buf - 10) {
            tr_gzip_write(g, buf, n);
            n = 0;
        }
    }
    tr_gzip_write(g, buf, n);
    tr_gzip_write(g, rest.d, rest.n);
}
