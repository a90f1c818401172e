/* The .gcdump reader (src/heap/gcdump_read.c) on damaged and hostile input:
 * every cut of a real file, bit flips, graphs written here with overlapping
 * nodes, references out of the graph, unknown types, enormous counts, and
 * limits; and how the entry points tell a .gcdump from a NetTrace stream. */
#include "nettrace_heap.h"
#include "support.h"

#include "ltest.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint8_t *own_file(const char *name, size_t *len)
{
    uint8_t *data = NULL;
    cr_assert(ts_read_file(ts_path(ts_own_corpus(), name), &data, len), "cannot read %s", name);
    return data;
}

static nt_status read_buf(const void *p, size_t len, const nt_heap_limits *lim, nt_heap **h, char *msg, size_t n)
{
    nt_heap_options o = { 0 };
    o.heap_limits = lim;
    return nt_heap_from_buffer(p, len, &o, h, msg, n);
}

/* Every cut of a real file: a clear error with a byte offset, never a crash, and the heap still made;
 * a cut after the graph (inside the fields that follow it) loses nothing. */
LTest(gcdump, every_cut_of_a_real_file)
{
    size_t len;
    uint8_t *data = own_file("heap/shape.gcdump", &len);
    nt_heap *whole = NULL;
    char msg[256];
    cr_assert_eq(read_buf(data, len, NULL, &whole, msg, sizeof msg), NT_OK, "%s", msg);
    size_t objects = nt_heap_object_count(whole);
    nt_heap_free(whole);
    size_t ok = 0, partial = 0;
    for (size_t cut = 24; cut < len; cut += cut < 2048 ? 1 : 37) {
        nt_heap *h = NULL;
        nt_status s = read_buf(data, cut, NULL, &h, msg, sizeof msg);
        cr_assert_not_null(h, "cut at %zu: no heap (%s)", cut, msg);
        if (s == NT_OK) {
            cr_assert_eq(nt_heap_object_count(h), objects, "cut at %zu read as whole with fewer objects", cut);
            ok++;
        } else {
            cr_assert(strstr(msg, "at byte") != NULL, "cut at %zu: '%s' names no offset", cut, msg);
            nt_heap_stats st = { .struct_size = sizeof st };
            nt_heap_stats_get(h, &st);
            cr_assert(!st.complete, "cut at %zu: an error and a complete heap", cut);
            if (nt_heap_object_count(h) > 0)
                partial++;
        }
        nt_heap_free(h);
    }
    cr_assert(ok > 0, "no cut after the graph read whole");
    cr_assert(partial > 0, "no cut inside the addresses kept the objects before it");
    free(data);
}

/* Flipped bytes anywhere: never a crash (the sanitizers watch), an error always names its offset. */
LTest(gcdump, flipped_bytes)
{
    size_t len;
    uint8_t *data = own_file("heap/shape.gcdump", &len);
    uint8_t *copy = malloc(len);
    cr_assert_not_null(copy);
    uint32_t seed = 12345;
    for (int k = 0; k < 3000; k++) {
        memcpy(copy, data, len);
        for (int f = 0; f < 1 + k % 4; f++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = 24 + (seed >> 8) % (len - 24);
            copy[at] ^= (uint8_t)(1u << ((seed >> 4) & 7));
        }
        nt_heap *h = NULL;
        char msg[256] = "";
        nt_status s = read_buf(copy, len, NULL, &h, msg, sizeof msg);
        if (s != NT_OK && s != NT_ERR_NOMEM)
            cr_assert(strstr(msg, "byte") != NULL, "mutation %d: '%s' names no offset", k, msg);
        if (h) {
            nt_heap_table *t = NULL;
            cr_assert_eq(nt_heap_type_table(h, NT_HEAP_BY_RETAINED, &t), NT_OK);
            nt_heap_table_free(t);
        }
        nt_heap_free(h);
    }
    free(copy);
    free(data);
}

/* ---- graphs written here ---- */

typedef struct gw {
    uint8_t buf[1 << 16];
    size_t len;
} gw;

static void put(gw *w, const void *p, size_t n)
{
    cr_assert(w->len + n <= sizeof w->buf);
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}
static void put8(gw *w, uint8_t v) { put(w, &v, 1); }
static void put32(gw *w, int32_t v)
{
    uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
    put(w, b, 4);
}
static void put64(gw *w, uint64_t v)
{
    put32(w, (int32_t)(uint32_t)v);
    put32(w, (int32_t)(uint32_t)(v >> 32));
}
static void put_str(gw *w, const char *s)
{
    if (!s) {
        put32(w, -1);
        return;
    }
    put32(w, (int32_t)strlen(s)); /* ASCII: one byte per unit */
    put(w, s, strlen(s));
}
/* PerfView's compressed integer, written by its rule (most significant 7-bit group first). */
static void put_cint(gw *w, int32_t v)
{
    int groups = 1;
    while (groups < 5 && ((int32_t)((uint32_t)v << (32 - 7 * groups)) >> (32 - 7 * groups)) != v)
        groups++;
    for (int g = groups - 1; g > 0; g--)
        put8(w, (uint8_t)((((uint32_t)v >> (7 * g)) & 0x7F) | 0x80));
    put8(w, (uint8_t)(v & 0x7F));
}
static void put_type_header(gw *w, const char *name, int32_t version, int32_t min_reader)
{
    put8(w, 4);
    put8(w, 4);
    put8(w, 1);
    put32(w, version);
    put32(w, min_reader);
    put_str(w, name);
    put8(w, 6);
}

/* A node of the graph to write: its type, size (-1: the type's), children by node index. */
typedef struct gnode {
    int32_t type, size;
    uint64_t address;
    int nchildren;
    int32_t children[4];
    int same_label_as; /* >= 0: share that node's bytes (hostile) */
} gnode;

static void write_graph(gw *w, const gnode *nodes, int n, int32_t root, int32_t ntypes_claimed)
{
    static const char *const names[] = { "[.NET Roots]", "[static vars]", "[static var App.Holder.Root]",
                                         "App.Node", "System.Byte[] (Bytes > 10K)" };
    static const int32_t sizes[] = { 0, 0, 0, 24, 20024 };
    w->len = 0;
    put_str(w, "!FastSerialization.1");
    put_type_header(w, "GCHeapDump", 10, 8);
    put_type_header(w, "Graphs.MemoryGraph", 1, 0);
    put64(w, 0);
    put32(w, root);
    put32(w, ntypes_claimed);
    for (int t = 0; t < 5; t++) {
        put_str(w, names[t]);
        put32(w, sizes[t]);
        put_str(w, t >= 3 ? "/usr/share/dotnet/App.dll" : NULL);
    }
    gw blob = { .len = 0 };
    int32_t labels[16];
    put_cint(&blob, 0); /* the UNDEFINED node at label 0 */
    put_cint(&blob, 0);
    for (int i = 0; i < n; i++) {
        if (nodes[i].same_label_as >= 0) {
            labels[i] = labels[nodes[i].same_label_as];
            continue;
        }
        labels[i] = (int32_t)blob.len;
        bool explicit_size = nodes[i].size >= 0;
        put_cint(&blob, nodes[i].type * 2 + (explicit_size ? 1 : 0));
        if (explicit_size)
            put_cint(&blob, nodes[i].size);
        put_cint(&blob, nodes[i].nchildren);
        for (int k = 0; k < nodes[i].nchildren; k++)
            put_cint(&blob, nodes[i].children[k] - i);
    }
    put32(w, n);
    for (int i = 0; i < n; i++)
        put32(w, labels[i]);
    put32(w, (int32_t)blob.len);
    put(w, blob.buf, blob.len);
    put32(w, n);
    for (int i = 0; i < n; i++)
        put64(w, nodes[i].address);
    put8(w, 8);
    put8(w, 1);
    put8(w, 6);
}

/* root -> [static vars] -> [static var App.Holder.Root] -> A; A -> B, B -> A (a cycle), B -> B (a self
 * reference), big (20,024 bytes) held by A. */
static const gnode shape[] = {
    { 0, -1, 0, 1, { 1 }, -1 },
    { 1, -1, 0, 1, { 2 }, -1 },
    { 2, -1, 0, 1, { 3 }, -1 },
    { 3, -1, 0x1000, 2, { 4, 5 }, -1 },
    { 3, -1, 0x1018, 2, { 3, 4 }, -1 },
    { 4, -1, 0x2000, 0, { 0 }, -1 },
};

LTest(gcdump, written_graph)
{
    gw w;
    write_graph(&w, shape, 6, 0, 5);
    nt_heap *h = NULL;
    char msg[256];
    cr_assert_eq(read_buf(w.buf, w.len, NULL, &h, msg, sizeof msg), NT_OK, "%s", msg);
    cr_assert_eq(nt_heap_object_count(h), 3);
    cr_assert_eq(nt_heap_root_count(h), 1);
    nt_heap_root r = nt_heap_root_at(h, 0);
    cr_assert_eq(r.kind, NT_HEAP_ROOT_STATIC);
    cr_assert_str_eq(r.name, "App.Holder.Root");
    cr_assert_eq(nt_heap_object_at(h, r.object).address, 0x1000);
    cr_assert_str_eq(nt_heap_type_module(h, nt_heap_object_at(h, 0).type), "App.dll");
    nt_heap_table *t;
    cr_assert_eq(nt_heap_type_table(h, NT_HEAP_BY_RETAINED, &t), NT_OK);
    cr_assert_eq(t->count, 2);
    cr_assert_str_eq(t->rows[0].name, "App.Node");
    cr_assert_eq(t->rows[0].count, 2);
    cr_assert_eq(t->rows[0].shallow_bytes, 48);
    cr_assert_eq(t->rows[0].retained_bytes, 48 + 20024);
    cr_assert_str_eq(t->rows[1].name, "System.Byte[] (Bytes > 10K)", "the size class comes back from the size");
    nt_heap_table_free(t);
    nt_heap_free(h);
}

/* Nodes that share their bytes (each would announce the blob's references again): refused, not quadratic. */
LTest(gcdump, overlapping_nodes)
{
    gnode g[16];
    memcpy(g, shape, sizeof shape);
    for (int i = 6; i < 16; i++)
        g[i] = (gnode){ 3, -1, 0x3000 + (uint64_t)i * 0x18, 0, { 0 }, 4 };
    gw w;
    write_graph(&w, g, 16, 0, 5);
    nt_heap *h = NULL;
    char msg[256];
    cr_assert_eq(read_buf(w.buf, w.len, NULL, &h, msg, sizeof msg), NT_ERR_MALFORMED, "%s", msg);
    cr_assert(strstr(msg, "share their bytes") && strstr(msg, "at byte"), "%s", msg);
    nt_heap_free(h);
}

/* A reference out of the graph and a node of a type the table lacks: counted, the rest kept. */
LTest(gcdump, bad_references_and_types)
{
    gnode g[6];
    memcpy(g, shape, sizeof shape);
    g[4].children[1] = 1000; /* past the last node */
    g[5].type = 9;           /* no such type */
    gw w;
    write_graph(&w, g, 6, 0, 5);
    nt_heap *h = NULL;
    char msg[256];
    cr_assert_eq(read_buf(w.buf, w.len, NULL, &h, msg, sizeof msg), NT_OK, "%s", msg);
    nt_heap_stats st = { .struct_size = sizeof st };
    nt_heap_stats_get(h, &st);
    cr_assert_eq(st.objects, 2);
    cr_assert_eq(st.bad_events, 1);
    cr_assert_gt(st.first_bad_offset, 24);
    cr_assert_eq(st.edges_unresolved, 2, "the reference out of the graph and the one to the damaged node");
    cr_assert(!st.complete);
    cr_assert(strstr(nt_heap_message(h), "incomplete") != NULL, "%s", nt_heap_message(h));
    nt_heap_free(h);
}

/* Enormous counts: an error at once, nothing allocated for them. */
LTest(gcdump, enormous_counts)
{
    gw w;
    write_graph(&w, shape, 6, 0, 0x7FFFFFFF);
    nt_heap *h = NULL;
    char msg[256];
    nt_status s = read_buf(w.buf, w.len, NULL, &h, msg, sizeof msg);
    cr_assert(s == NT_ERR_LIMIT || s == NT_ERR_TRUNCATED, "%d %s", s, msg);
    cr_assert(strstr(msg, "type table") && strstr(msg, "at byte"), "%s", msg);
    nt_heap_free(h);
    write_graph(&w, shape, 6, 0, -5);
    cr_assert_eq(read_buf(w.buf, w.len, NULL, &h, msg, sizeof msg), NT_ERR_MALFORMED, "%s", msg);
    cr_assert(strstr(msg, "negative") != NULL, "%s", msg);
    nt_heap_free(h);
}

LTest(gcdump, limits)
{
    size_t len;
    uint8_t *data = own_file("heap/shape.gcdump", &len);
    nt_heap_limits lim = { .struct_size = sizeof lim, .max_objects = 100 };
    nt_heap *h = NULL;
    char msg[256];
    cr_assert_eq(read_buf(data, len, &lim, &h, msg, sizeof msg), NT_ERR_LIMIT);
    cr_assert(strstr(msg, "node table") && strstr(msg, "(100)") && strstr(msg, "at byte"), "%s", msg);
    nt_heap_free(h);
    lim = (nt_heap_limits){ .struct_size = sizeof lim, .max_edges = 100 };
    cr_assert_eq(read_buf(data, len, &lim, &h, msg, sizeof msg), NT_ERR_LIMIT);
    cr_assert(strstr(msg, "max_edges") != NULL, "%s", msg);
    cr_assert_gt(nt_heap_object_count(h), 0, "the objects before the limit are kept");
    nt_heap_free(h);
    free(data);
}

/* The entry points tell the kinds apart by the first bytes: a file, a regular file's descriptor (from
 * its current offset), a buffer; and an unknown type's name is refused, not guessed. */
LTest(gcdump, detection)
{
    const char *path = ts_path(ts_own_corpus(), "heap/shape.gcdump");
    nt_heap *h = NULL;
    char msg[256];
    cr_assert_eq(nt_heap_from_file(path, NULL, &h, msg, sizeof msg), NT_OK, "%s", msg);
    size_t n = nt_heap_object_count(h);
    nt_heap_stats st = { .struct_size = sizeof st };
    nt_heap_stats_get(h, &st);
    cr_assert_eq(st.format, NT_HEAP_FROM_GCDUMP);
    nt_heap_free(h);
    cr_assert_eq(nt_heap_from_file(ts_path(ts_own_corpus(), "heap/shape.nettrace"), NULL, &h, msg, sizeof msg), NT_OK);
    nt_heap_stats_get(h, &st);
    cr_assert_eq(st.format, NT_HEAP_FROM_NETTRACE);
    nt_heap_free(h);
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0);
    cr_assert_eq(nt_heap_from_fd(fd, NULL, &h, msg, sizeof msg), NT_OK, "%s", msg);
    cr_assert_eq(nt_heap_object_count(h), n);
    nt_heap_free(h);
    close(fd);
    gw w;
    write_graph(&w, shape, 6, 0, 5);
    memcpy(w.buf + 24 + 3 + 8 + 4, "GCHeapDumq", 10);
    cr_assert_eq(read_buf(w.buf, w.len, NULL, &h, msg, sizeof msg), NT_ERR_MALFORMED);
    cr_assert(strstr(msg, "GCHeapDumq") && strstr(msg, "at byte"), "%s", msg);
    nt_heap_free(h);
    static const char not_either[] = "!FastSerialization.2 and more bytes";
    cr_assert_neq(read_buf(not_either, sizeof not_either, NULL, &h, msg, sizeof msg), NT_OK);
    nt_heap_free(h);
}
