/* Heap-dump streams written with nt_writer (see heap_writer.h). */
#include "heap_writer.h"

#include <stdlib.h>
#include <string.h>

bool hw_begin(hw *h, uint32_t format, uint32_t ptr)
{
    memset(h, 0, sizeof *h);
    nt_writer_options o;
    nt_writer_options_default(&o);
    o.format = format;
    o.pointer_size = ptr;
    /* a real date: TraceEvent (dotnet-gcdump convert) refuses a zero one */
    o.sync_time_utc = (nt_systemtime){ 2026, 12, 2, 1, 0, 0, 0, 0 };
    o.process_id = 4242;
    h->ptr = ptr;
    h->w = nt_writer_new(&o, nt_membuf_write, &h->out, NULL);
    return h->w != NULL;
}

static unsigned char *room(hw *h, size_t n)
{
    if (n > h->cap) {
        size_t c = h->cap ? h->cap : 4096;
        while (c < n)
            c *= 2;
        unsigned char *p = realloc(h->buf, c);
        if (!p)
            abort();
        h->buf = p;
        h->cap = c;
    }
    return h->buf;
}

void hw_raw(hw *h, uint32_t event_id, uint32_t version, const void *payload, size_t len)
{
    uint32_t *md = &h->md[event_id & 63][version & 3];
    if (!*md) {
        nt_event_desc d = { 0 };
        d.provider = NT_PROVIDER_RUNTIME;
        d.event_id = event_id;
        d.version = version;
        d.level = 5;
        d.keywords = 0x1980001;
        nt_writer_define(h->w, &d, md);
    }
    nt_writer_event ev = { 0 };
    ev.metadata_id = *md;
    ev.thread_id = 1;
    ev.timestamp = ++h->ts;
    ev.payload = payload;
    ev.payload_size = (uint32_t)len;
    nt_writer_write_event(h->w, &ev);
}

static size_t put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); return 4; }
static size_t put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); return 8; }
static size_t put16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); return 2; }
static size_t putptr(hw *h, unsigned char *p, uint64_t v)
{
    return h->ptr == 4 ? put32(p, (uint32_t)v) : put64(p, v);
}
/* ASCII as UTF-16z. */
static size_t put_str(unsigned char *p, const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += put16(p + n, (uint8_t)*s);
    return n + put16(p + n, 0);
}

void hw_gc_start(hw *h, uint32_t count, uint32_t depth, uint32_t reason, uint32_t type)
{
    unsigned char p[32];
    size_t n = put32(p, count);
    n += put32(p + n, depth);
    n += put32(p + n, reason);
    n += put32(p + n, type);
    n += put16(p + n, 0);
    n += put64(p + n, 0);
    hw_raw(h, 1, 2, p, n);
    h->node_index = h->edge_index = h->root_index = 0;
}

void hw_gc_end(hw *h, uint32_t count)
{
    unsigned char p[16];
    size_t n = put32(p, count);
    n += put32(p + n, 2);
    n += put16(p + n, 0);
    hw_raw(h, 2, 1, p, n);
}

void hw_types(hw *h, const hw_type *t, size_t count)
{
    size_t need = 6;
    for (size_t i = 0; i < count; i++)
        need += 8 + 8 + 4 + 4 + 1 + 2 * strlen(t[i].name) + 2 + 4;
    unsigned char *p = room(h, need);
    size_t n = put32(p, (uint32_t)count);
    n += put16(p + n, 0);
    for (size_t i = 0; i < count; i++) {
        n += put64(p + n, t[i].id);
        n += put64(p + n, t[i].module);
        n += put32(p + n, (uint32_t)t[i].id);
        n += put32(p + n, t[i].flags);
        p[n++] = 0;
        n += put_str(p + n, t[i].name);
        n += put32(p + n, 0);
    }
    hw_raw(h, 15, 0, p, n);
}

void hw_nodes(hw *h, const hw_node *nd, size_t count, size_t per)
{
    for (size_t at = 0; at < count; at += per) {
        size_t k = count - at < per ? count - at : per;
        unsigned char *p = room(h, 10 + k * (h->ptr + 24));
        size_t n = put32(p, h->node_index++);
        n += put32(p + n, (uint32_t)k);
        n += put16(p + n, 0);
        for (size_t i = 0; i < k; i++) {
            n += putptr(h, p + n, nd[at + i].addr);
            n += put64(p + n, nd[at + i].size);
            n += put64(p + n, nd[at + i].type);
            n += put64(p + n, nd[at + i].count);
        }
        hw_raw(h, 18, 0, p, n);
    }
}

void hw_edges(hw *h, const uint64_t *t, size_t count, size_t per)
{
    for (size_t at = 0; at < count; at += per) {
        size_t k = count - at < per ? count - at : per;
        unsigned char *p = room(h, 10 + k * (h->ptr + 4));
        size_t n = put32(p, h->edge_index++);
        n += put32(p + n, (uint32_t)k);
        n += put16(p + n, 0);
        for (size_t i = 0; i < k; i++) {
            n += putptr(h, p + n, t[at + i]);
            n += put32(p + n, 0);
        }
        hw_raw(h, 19, 0, p, n);
    }
}

void hw_roots(hw *h, const hw_root *r, size_t count)
{
    unsigned char *p = room(h, 10 + count * (2 * h->ptr + 5));
    size_t n = put32(p, h->root_index++);
    n += put32(p + n, (uint32_t)count);
    n += put16(p + n, 0);
    for (size_t i = 0; i < count; i++) {
        n += putptr(h, p + n, r[i].addr);
        p[n++] = r[i].kind;
        n += put32(p + n, r[i].flags);
        n += putptr(h, p + n, 0x1000 + i);
    }
    hw_raw(h, 16, 0, p, n);
}

void hw_static(hw *h, uint64_t obj, uint64_t type, uint32_t flags, const char *field)
{
    unsigned char *p = room(h, 14 + 28 + 2 * strlen(field) + 2);
    size_t n = put32(p, 1);
    n += put64(p + n, 1);
    n += put16(p + n, 0);
    n += put64(p + n, 0x2000);
    n += put64(p + n, obj);
    n += put64(p + n, type);
    n += put32(p + n, flags);
    n += put_str(p + n, field);
    hw_raw(h, 38, 0, p, n);
}

void hw_cwt(hw *h, uint64_t key, uint64_t value)
{
    unsigned char p[64];
    size_t n = put32(p, 0);
    n += put32(p + n, 1);
    n += put16(p + n, 0);
    n += putptr(h, p + n, key);
    n += putptr(h, p + n, value);
    n += putptr(h, p + n, 0x3000);
    hw_raw(h, 17, 0, p, n);
}

void hw_module(hw *h, uint64_t id, const char *path)
{
    nt_module m = { 0 };
    m.which = NT_RECORD_LOAD;
    m.module_id = id;
    m.il_path = path;
    m.native_path = "";
    nt_writer_module(h->w, NULL, &m);
}

nt_status hw_finish(hw *h)
{
    nt_status s = nt_writer_finish(h->w);
    nt_writer_free(h->w);
    h->w = NULL;
    return s;
}

void hw_free(hw *h)
{
    nt_writer_free(h->w);
    nt_membuf_free(&h->out);
    free(h->buf);
    memset(h, 0, sizeof *h);
}

void hw_snapshot(hw *h, const hw_graph *g, size_t per)
{
    hw_gc_start(h, 1, 2, 1, 0);
    if (g->ntypes) /* inside the GC, as the runtime sends them */
        hw_types(h, g->types, g->ntypes);
    hw_nodes(h, g->nodes, g->nnodes, per);
    hw_edges(h, g->targets, g->ntargets, per);
    if (g->nroots)
        hw_roots(h, g->roots, g->nroots);
    hw_gc_end(h, 1);
}
