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

/* Addresses remembered to drop repeats as they come: stacks share most of
 * their frames, so most of what is appended was appended just before. */
#define CM_ADDR_SET_RECENT 1024u

typedef struct cm_addr_set {
    uint64_t *ips;
    size_t n, cap;
    uint64_t recent[CM_ADDR_SET_RECENT]; /* by a hash of the address; 0 = none (0 is never dropped) */
} cm_addr_set;

/* Append n addresses (those seen among the recent ones dropped as repeats);
 * false when memory is short (the set then holds some of them). */
bool cm_addr_set_add(cm_mem *m, cm_addr_set *s, const uint64_t *ips, size_t n);
/* Sort and drop repeats; false when memory is short for the sort. */
bool cm_addr_set_seal(cm_mem *m, cm_addr_set *s);
/* Whether [start, start + size) holds an address of the sealed set. */
bool cm_addr_set_holds(const cm_addr_set *s, uint64_t start, uint64_t size);
void cm_addr_set_free(cm_mem *m, cm_addr_set *s);

#endif
