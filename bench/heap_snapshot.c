/* heap_snapshot N FILE: write a made-up heap snapshot of N objects (a
 * NetTrace stream of the runtime's heap-dump events, as nettrace gcdump
 * records them) for the heap benchmark.  The graph: a binary tree over the
 * objects (object i references 2i+1 and 2i+2), every third object also
 * referencing a pseudo-random one (cross references and cycles), the last
 * tenth as linked lists of 1,000; 64 types, sizes 24 to 536 bytes; 1,000 roots
 * of three kinds.  Deterministic: the same N gives the same bytes. */
#include "heap_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 10000u
#define NTYPES 64u

static uint64_t addr_of(uint64_t i) { return 0x7f0000000000ull + 64 * i; }

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: heap_snapshot N FILE\n");
        return 2;
    }
    uint64_t n = strtoull(argv[1], NULL, 10);
    FILE *f = fopen(argv[2], "wbx");
    if (!f || n < 2 || n > 100000000) {
        fprintf(stderr, "heap_snapshot: %s: cannot create it (it must not exist) or N out of range\n", argv[2]);
        return 1;
    }
    hw w;
    if (!hw_begin(&w, 4, 8))
        return 1;
    static char names[NTYPES][48];
    hw_type types[NTYPES];
    for (uint32_t t = 0; t < NTYPES; t++) {
        snprintf(names[t], sizeof names[t], t % 8 ? "Bench.Type%u" : "System.Collections.Generic.List`1[Bench.Type%u]",
                 t);
        types[t] = (hw_type){ 0x1000 + t, 0x10, 0, names[t] };
    }
    hw_gc_start(&w, 1, 2, 1, 0);
    hw_types(&w, types, NTYPES); /* inside the GC, as the runtime sends them (dotnet-gcdump's reader takes no type before its GC's start) */
    hw_node *nd = malloc(CHUNK * sizeof *nd);
    uint64_t *tg = malloc(3 * CHUNK * sizeof *tg);
    uint64_t lists = n - n / 10, x = 88172645463325252ull, edges = 0;
    for (uint64_t at = 0; at < n; at += CHUNK) {
        uint32_t k = (uint32_t)(n - at < CHUNK ? n - at : CHUNK), e = 0;
        for (uint32_t j = 0; j < k; j++) {
            uint64_t i = at + j;
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint32_t first = e;
            if (i < lists) {
                if (2 * i + 1 < lists)
                    tg[e++] = addr_of(2 * i + 1);
                if (2 * i + 2 < lists)
                    tg[e++] = addr_of(2 * i + 2);
                if (i % 3 == 0)
                    tg[e++] = addr_of(x % n);
            } else if ((i - lists) % 1000 != 999 && i + 1 < n) {
                tg[e++] = addr_of(i + 1);
            }
            nd[j] = (hw_node){ addr_of(i), 24 + 8 * (x % 64), 0x1000 + (x >> 8) % NTYPES, first, e - first };
        }
        hw_nodes(&w, nd, k, 1000); /* about the runtime's bulk event size (32 KB of nodes) */
        hw_edges(&w, tg, e, 2500);
        edges += e;
        /* stream out what the writer holds, so memory stays flat */
        if (w.out.len > (64u << 20)) {
            if (fwrite(w.out.data, 1, w.out.len, f) != w.out.len)
                return 1;
            w.out.len = 0;
        }
    }
    hw_root roots[1000];
    for (uint32_t r = 0; r < 1000; r++) {
        uint64_t i = r == 0 ? 0 : lists + (uint64_t)r * ((n - lists) / 1000);
        roots[r] = (hw_root){ addr_of(i < n ? i : 0), (uint8_t)(r % 3), 0 };
    }
    hw_roots(&w, roots, 1000);
    hw_gc_end(&w, 1);
    hw_module(&w, 0x10, "/bench/Bench.dll"); /* at the end, as the rundown sends it */
    if (hw_finish(&w) != NT_OK || fwrite(w.out.data, 1, w.out.len, f) != w.out.len || fclose(f) != 0)
        return 1;
    hw_free(&w);
    free(nd);
    free(tg);
    fprintf(stderr, "heap_snapshot: %s: %llu objects, %llu references\n", argv[2], (unsigned long long)n,
            (unsigned long long)edges);
    return 0;
}
