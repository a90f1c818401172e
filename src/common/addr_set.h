/* A set of code addresses, and the one test of "does this code hold a frame
 * of them": a method record names a frame when its code [start, start +
 * size) holds the frame's address.  Filled by appending (any order, repeats
 * allowed), then sealed (sorted, each address once) before it is asked.
 * Used where method records are cut to the frames a window needs: a slice
 * (convert_frames.c) and a windowed read (feed_window.c). */
#ifndef CM_ADDR_SET_H
#define CM_ADDR_SET_H

#include "common/alloc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cm_addr_set {
    uint64_t *ips;
    size_t n, cap;
} cm_addr_set;

/* Append n addresses; false when memory is short (the set is then unchanged). */
bool cm_addr_set_add(cm_mem *m, cm_addr_set *s, const uint64_t *ips, size_t n);
/* Sort and drop repeats; false when memory is short for the sort. */
bool cm_addr_set_seal(cm_mem *m, cm_addr_set *s);
/* Whether [start, start + size) holds an address of the sealed set. */
bool cm_addr_set_holds(const cm_addr_set *s, uint64_t start, uint64_t size);
void cm_addr_set_free(cm_mem *m, cm_addr_set *s);

#endif
