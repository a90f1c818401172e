/* The address sort of a walk not in address order (a .gcdump's nodes are in
 * the converter's order): a merge sort with the comparison reading each
 * object's address through its index cost a random read per comparison,
 * n log n of them.  Here each address, less the lowest and shifted by the
 * alignment all share, is a 32-bit key packed above its object index in one
 * 64-bit word; an LSD radix sort by the key's 11-bit digits (stable, so
 * equal addresses keep walk order, as the lookup needs) reads and writes
 * sequentially, three passes at most, in the 16 bytes per object the merge
 * sort's arrays took.  Addresses spread wider (runtimes with regions
 * reserve far apart) are left to the merge sort. */
#include "heap/heap_addr_sort.h"

#include <string.h>

#define RADIX_BITS 11u
#define RADIX_SIZE (1u << RADIX_BITS)

/* The shift of the alignment every address shares above lo, and whether
 * the keys then fit in 32 bits. */
static bool key_shift(const uint64_t *addr, uint32_t n, uint64_t lo, unsigned *shift, unsigned *bits)
{
    uint64_t any = 0, hi = lo;
    for (uint32_t i = 0; i < n; i++) {
        any |= addr[i] - lo;
        if (addr[i] > hi)
            hi = addr[i];
    }
    unsigned s = 0;
    while (s < 63 && any && !((any >> s) & 1))
        s++;
    uint64_t range = (hi - lo) >> s;
    if (range > UINT32_MAX)
        return false;
    unsigned b = 0;
    while (b < 32 && (range >> b))
        b++;
    *shift = s;
    *bits = b;
    return true;
}

/* One stable pass of src into dst by the digit at bit 32 + d of each word. */
static void radix_pass(const uint64_t *src, uint64_t *dst, uint32_t n, unsigned d, uint32_t *count)
{
    memset(count, 0, RADIX_SIZE * sizeof *count);
    for (uint32_t i = 0; i < n; i++)
        count[(src[i] >> (32 + d)) & (RADIX_SIZE - 1)]++;
    uint32_t at = 0;
    for (uint32_t k = 0; k < RADIX_SIZE; k++) {
        uint32_t c = count[k];
        count[k] = at;
        at += c;
    }
    for (uint32_t i = 0; i < n; i++)
        dst[count[(src[i] >> (32 + d)) & (RADIX_SIZE - 1)]++] = src[i];
}

bool hp_addr_radix_sort(cm_mem *m, const uint64_t *addr, uint32_t n, uint64_t **sorted, uint32_t **order,
                        bool *fits)
{
    uint64_t lo = UINT64_MAX;
    for (uint32_t i = 0; i < n; i++)
        if (addr[i] < lo)
            lo = addr[i];
    unsigned shift = 0, bits = 0;
    *fits = n > 0 && key_shift(addr, n, lo, &shift, &bits);
    if (!*fits)
        return false;
    uint64_t *a = cm_mem_alloc(m, (size_t)n * sizeof *a), *b = cm_mem_alloc(m, (size_t)n * sizeof *b);
    uint32_t *count = cm_mem_alloc(m, RADIX_SIZE * sizeof *count);
    if (!a || !b || !count) {
        cm_mem_free(m, a, (size_t)n * sizeof *a);
        cm_mem_free(m, b, (size_t)n * sizeof *b);
        cm_mem_free(m, count, RADIX_SIZE * sizeof *count);
        return false;
    }
    for (uint32_t i = 0; i < n; i++)
        a[i] = ((addr[i] - lo) >> shift) << 32 | i;
    for (unsigned d = 0; d < bits; d += RADIX_BITS) {
        radix_pass(a, b, n, d, count);
        uint64_t *t = a;
        a = b;
        b = t;
    }
    cm_mem_free(m, count, RADIX_SIZE * sizeof *count);
    cm_mem_free(m, b, (size_t)n * sizeof *b);
    uint32_t *o = cm_mem_alloc(m, (size_t)n * sizeof *o);
    if (!o) {
        cm_mem_free(m, a, (size_t)n * sizeof *a);
        return false;
    }
    /* the packed words become the sorted addresses in place */
    for (uint32_t i = 0; i < n; i++) {
        o[i] = (uint32_t)a[i];
        a[i] = addr[o[i]];
    }
    *sorted = a;
    *order = o;
    return true;
}
