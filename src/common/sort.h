/* The one stable sort: a bottom-up merge sort over elements of any size,
 * with a context for the comparison (qsort has none in C11, and is not
 * stable).  Ties keep their order. */
#ifndef NT_COMMON_SORT_H
#define NT_COMMON_SORT_H

#include <stddef.h>

/* Negative when a goes before b. */
typedef int (*nt_sort_cmp)(const void *a, const void *b, void *ctx);

/* Sorts n elements of size elem at base; tmp has room for n elements. */
void nt_merge_sort(void *base, void *tmp, size_t n, size_t elem, nt_sort_cmp cmp, void *ctx);

#endif
