/* The .gcdump reader: the input as a .gcdump (the magic put in front when it
 * lacks it, so that mutations are spent on the graph), read by
 * nt_heap_from_buffer with heap limits from the input's hash (tiny ones for
 * half the inputs), then the heap graph's invariants (heap_checks.c).
 * Differential: the same bytes cut at a point the hash picks never give more
 * objects than the whole (objects come in node order and the addresses
 * last), and an error always names its byte offset. */
#include "fuzz.h"
#include "heap_checks.h"

#include <stdlib.h>
#include <string.h>

static const uint8_t magic[24] = { 20, 0, 0, 0, '!', 'F', 'a', 's', 't', 'S', 'e', 'r', 'i', 'a', 'l', 'i', 'z',
                                   'a', 't', 'i', 'o', 'n', '.', '1' };

static nt_heap *read_gcdump(const uint8_t *d, size_t n, const nt_heap_limits *hl, nt_status *s)
{
    nt_heap_options o = { .heap_limits = hl };
    nt_heap *h = NULL;
    char msg[256] = "";
    *s = nt_heap_from_buffer(d, n, &o, &h, msg, sizeof msg);
    if (*s != NT_OK && *s != NT_ERR_NOMEM && !strstr(msg, "byte"))
        fz_fail("status %d without a byte offset: '%s'", (int)*s, msg);
    if (!h && *s != NT_ERR_NOMEM)
        fz_fail("status %d and no heap", (int)*s);
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = NULL;
    const uint8_t *d = data;
    size_t n = size;
    if (size < sizeof magic || memcmp(data, magic, sizeof magic) != 0) {
        buf = malloc(size + sizeof magic);
        if (!buf)
            return 0;
        memcpy(buf, magic, sizeof magic);
        if (size)
            memcpy(buf + sizeof magic, data, size);
        d = buf;
        n = size + sizeof magic;
    }
    uint64_t hash = fz_hash(data, size);
    nt_heap_limits hl = { 0 };
    if (hash & 1) {
        hl.max_objects = 1 + (uint32_t)(fz_next(&hash) % 64);
        hl.max_edges = 1 + (uint32_t)(fz_next(&hash) % 256);
        hl.max_roots = 1 + (uint32_t)(fz_next(&hash) % 16);
        hl.max_types = 1 + (uint32_t)(fz_next(&hash) % 16);
        hl.max_name_bytes = 16 + (uint32_t)(fz_next(&hash) % 4096);
    }
    nt_status s;
    nt_heap *h = read_gcdump(d, n, &hl, &s);
    if (h) {
        fz_heap_check_graph(h);
        fz_heap_check_dominators(h);
        fz_heap_check_paths(h, hash);
        fz_heap_check_exports(h, hash);
        size_t cut = sizeof magic + (size_t)(fz_next(&hash) % (n - sizeof magic + 1));
        nt_status cs;
        nt_heap *part = read_gcdump(d, cut, &hl, &cs);
        if (part && s == NT_OK && nt_heap_object_count(part) > nt_heap_object_count(h))
            fz_fail("a cut at %zu gives %zu objects, the whole %zu", cut, nt_heap_object_count(part),
                    nt_heap_object_count(h));
        nt_heap_free(part);
        nt_heap_free(h);
    }
    free(buf);
    return 0;
}
