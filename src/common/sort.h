/* The one stable sort: a bottom-up merge sort over elements of any size,
 * with a context for the comparison (qsort has none in C11, and is not
 * stable).  Ties keep their order.  Inline, so that at each call site the
 * element size is a constant and every element move a plain copy. */
#ifndef CM_SORT_H
#define CM_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Negative when a goes before b. */
typedef int (*cm_sort_cmp)(const void *a, const void *b, void *ctx);

/* Sorts n elements of size elem at base; tmp has room for n elements. */
static inline void cm_merge_sort(void *base, void *tmp, size_t n, size_t elem, cm_sort_cmp cmp, void *ctx)
{
    char *src = base, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            /* Already in order (the usual case for runs of samples): one copy. */
            if (mid < hi && cmp(src + mid * elem, src + (mid - 1) * elem, ctx) >= 0) {
                memcpy(dst + lo * elem, src + lo * elem, (hi - lo) * elem);
                continue;
            }
            while (i < mid && j < hi) {
                /* Take from the right only when strictly smaller: stable. */
                size_t from = cmp(src + j * elem, src + i * elem, ctx) < 0 ? j++ : i++;
                memcpy(dst + k++ * elem, src + from * elem, elem);
            }
            memcpy(dst + k * elem, src + i * elem, (mid - i) * elem);
            k += mid - i;
            memcpy(dst + k * elem, src + j * elem, (hi - j) * elem);
        }
        char *x = src;
        src = dst;
        dst = x;
    }
    if (src != (char *)base)
        memcpy(base, src, n * elem);
}

/* In the n ascending values at a, the index of the first that is >= key (n when none is). */
static inline size_t cm_lower_bound_u64(const uint64_t *a, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif
