/* The heap graph's invariants, checked by the heap and gcdump harnesses on
 * whatever heap their input gave: every reference and root names an object,
 * each object is found at its address, the stats agree with the graph; a
 * dominator is another object or the virtual root and retains at least the
 * object's own bytes, the virtual root's children retain every byte once;
 * the type table counts every object once, in order; a table's diff with
 * itself is empty; a path starts at its root's object and follows
 * references; folded lines end in " <weight>", speedscope is a JSON object,
 * pprof is gzip. */
#ifndef FUZZ_HEAP_CHECKS_H
#define FUZZ_HEAP_CHECKS_H

#include "nettrace_heap.h"

#include <stdint.h>

void fz_heap_check_graph(nt_heap *h);
void fz_heap_check_dominators(nt_heap *h);
void fz_heap_check_paths(nt_heap *h, uint64_t hash);
void fz_heap_check_exports(nt_heap *h, uint64_t hash);

#endif
