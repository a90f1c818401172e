/* 64-bit keys sorted ascending (sort_u64.h). */
#include "common/sort_u64.h"

#include <string.h>

/* LSD radix sort, 8 bits a pass; passes where every key has the same byte
 * are skipped (addresses share their high bytes). */
bool cm_sort_u64(cm_mem *m, uint64_t *a, size_t n)
{
    if (n < 2)
        return true;
    uint64_t *tmp = cm_mem_alloc(m, n * sizeof *tmp);
    if (!tmp)
        return false;
    uint64_t *src = a, *dst = tmp;
    for (int shift = 0; shift < 64; shift += 8) {
        size_t count[256] = { 0 };
        for (size_t i = 0; i < n; i++)
            count[(src[i] >> shift) & 0xff]++;
        if (count[(src[0] >> shift) & 0xff] == n)
            continue;
        size_t pos = 0;
        for (int b = 0; b < 256; b++) {
            size_t c = count[b];
            count[b] = pos;
            pos += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & 0xff]++] = src[i];
        uint64_t *x = src;
        src = dst;
        dst = x;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
    cm_mem_free(m, tmp, n * sizeof *tmp);
    return true;
}
