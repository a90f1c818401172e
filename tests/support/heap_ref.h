/* An independent dominator computation for the tests: Cooper, Harvey and
 * Kennedy's iterative algorithm ("A Simple, Fast Dominance Algorithm"),
 * over nt_heap's public accessors, from the same virtual root (the root
 * objects, then each object no root reaches in index order). */
#ifndef TEST_HEAP_REF_H
#define TEST_HEAP_REF_H

#include "nettrace_heap.h"

/* idom[i] for every object (NT_HEAP_NONE: the virtual root) and retained[i];
 * both malloc'd, n entries.  False when memory is short. */
bool heap_ref_dominators(const nt_heap *h, uint32_t **idom, uint64_t **retained);

#endif
