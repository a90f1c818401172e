/* Object indexes in address order, by radix sort when the addresses fit. */
#ifndef HP_ADDR_SORT_H
#define HP_ADDR_SORT_H

#include "common/alloc.h"

#include <stdbool.h>
#include <stdint.h>

/* When the n addresses, less the lowest and over their common alignment,
 * fit in 32 bits: sorts them (stable: equal addresses keep walk order) into
 * *sorted (n addresses, ascending) and *order (n object indexes, sorted
 * position -> index), both allocated from m, and returns true.  False with
 * nothing allocated when they do not fit (*fits false) or memory ran out
 * (*fits true). */
bool hp_addr_radix_sort(cm_mem *m, const uint64_t *addr, uint32_t n, uint64_t **sorted, uint32_t **order,
                        bool *fits);

#endif
