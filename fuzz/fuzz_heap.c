/* The heap graph: nt_heap_from_buffer on any stream, with heap limits
 * chosen from the input's hash (small ones reach every limit's path), then
 * every accessor, the dominators, the type table, paths, top retainers, a
 * diff with itself and the three flame-graph exports, with the graph's
 * invariants checked: every reference and root names an object; a dominator
 * is another object or the virtual root, its retained size at least its
 * own; the virtual root's children retain every byte once; the type table
 * counts every object once; a path starts at a root object and follows
 * references; folded lines end in " <weight>".  Differential: the same
 * stream through the builder fed in chunks gives the same counts.  The
 * checks are heap_checks.c's, shared with the gcdump harness. */
#include "fuzz.h"
#include "heap_checks.h"

#include <stdlib.h>
#include <string.h>

/* The same stream through the builder in chunks. */
static void check_chunked(const uint8_t *data, size_t size, uint64_t hash, const nt_heap_limits *hl,
                          const nt_limits *lim, const nt_heap *whole)
{
    nt_heap_builder *b = nt_heap_builder_new(hl, NULL);
    nt_callbacks cb;
    nt_heap_builder_callbacks(&cb);
    nt_parser *p = b ? nt_parser_new(&cb, b, lim, NULL) : NULL;
    if (!p)
        fz_fail("out of memory");
    size_t off = 0, max = 1 + (size_t)(hash % 97);
    nt_status s = NT_OK;
    while (off < size && s == NT_OK) {
        size_t n = 1 + (size_t)(fz_next(&hash) % max);
        if (n > size - off)
            n = size - off;
        s = nt_parser_feed(p, data + off, n);
        off += n;
    }
    if (s == NT_OK)
        s = nt_parser_finish(p);
    nt_heap *h = NULL;
    nt_heap_builder_finish(b, p, s, &h);
    nt_parser_free(p);
    nt_heap_stats a = { 0 }, c = { 0 };
    nt_heap_stats_get(whole, &a);
    nt_heap_stats_get(h, &c);
    if (!h || a.objects != c.objects || a.edges != c.edges || a.roots != c.roots || a.complete != c.complete)
        fz_fail("the chunk-fed builder read a different heap");
    nt_heap_free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nt_limits lim;
    fz_harness_limits(&lim);
    uint64_t hash = fz_hash(data, size);
    nt_heap_limits hl = { 0 };
    if (hash & 1) { /* small limits, so that each limit's path runs */
        hl.max_objects = 1 + (uint32_t)(fz_next(&hash) % 64);
        hl.max_edges = 1 + (uint32_t)(fz_next(&hash) % 256);
        hl.max_roots = 1 + (uint32_t)(fz_next(&hash) % 16);
        hl.max_types = 1 + (uint32_t)(fz_next(&hash) % 16);
        hl.max_name_bytes = 16 + (uint32_t)(fz_next(&hash) % 4096);
    }
    nt_heap_options o = { .limits = &lim, .heap_limits = &hl };
    nt_heap *h = NULL;
    char msg[256];
    nt_status s = nt_heap_from_buffer(data, size, &o, &h, msg, sizeof msg);
    if (!fz_parse_status_ok(s) && s != NT_ERR_LIMIT)
        fz_fail("nt_heap_from_buffer: status %d", (int)s);
    if (!h)
        return 0;
    fz_heap_check_graph(h);
    if (!(size >= 24 && memcmp(data + 4, "!FastSerialization.1", 20) == 0)) /* a .gcdump is no stream for the builder */
        check_chunked(data, size, hash, &hl, &lim, h);
    fz_heap_check_dominators(h);
    fz_heap_check_paths(h, hash);
    fz_heap_check_exports(h, hash);
    nt_heap_free(h);
    return 0;
}
