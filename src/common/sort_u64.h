/* Sorting 64-bit keys (code addresses) ascending: an LSD radix sort,
 * 8 bits a pass, passing over a byte every key shares.  The trace's
 * queried addresses (symbols.c) and a set of frame addresses (addr_set.c). */
#ifndef CM_SORT_U64_H
#define CM_SORT_U64_H

#include "common/alloc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sorts the n keys at a; false (a unchanged) when memory for the n-key scratch is short. */
bool cm_sort_u64(cm_mem *m, uint64_t *a, size_t n);

#endif
