/* Allocation through the caller's nt_allocator, with a running byte count so
 * the parser can report (and tests can bound) the memory it holds. */
#ifndef CM_ALLOC_H
#define CM_ALLOC_H

#include "nettrace.h"

#include <stddef.h>

typedef struct cm_mem {
    nt_allocator a;
    size_t used;   /* bytes currently held through this cm_mem */
    size_t peak;
} cm_mem;

void cm_mem_init(cm_mem *m, const nt_allocator *a);
/* Resize *ptr from old_size to new_size bytes.  On failure *ptr is untouched
 * and false is returned.  new_size 0 frees. */
bool cm_mem_resize(cm_mem *m, void **ptr, size_t old_size, size_t new_size);
void *cm_mem_alloc(cm_mem *m, size_t size);
void cm_mem_free(cm_mem *m, void *ptr, size_t size);

/* Grow *ptr, an array of *cap elements of `elem` bytes, to hold at least `need`
 * elements: the capacity doubles (from 16) until it does.  There is no upper
 * bound here beyond size_t overflow, so callers check their limits before
 * calling.  False, with *ptr and *cap untouched, when memory is short. */
bool cm_mem_reserve(cm_mem *m, void **ptr, size_t *cap, size_t need, size_t elem);

/* A new zeroed object of `size` bytes allocated through a fresh cm_mem over
 * `a` (NULL: malloc), which is then stored in the object at byte `mem_at`, so
 * the object's own bytes count in its running total.  NULL when memory is
 * short.  CM_MEM_NEW(type, a) does this for a type whose member `mem` is its
 * cm_mem. */
void *cm_mem_new_object(const nt_allocator *a, size_t size, size_t mem_at);
#define CM_MEM_NEW(type, a) ((type *)cm_mem_new_object((a), sizeof(type), offsetof(type, mem)))

/* Frees an object made by cm_mem_new_object: its cm_mem is copied out first,
 * since it lives in the bytes being freed.  NULL does nothing. */
void cm_mem_delete_object(void *obj, size_t size, size_t mem_at);
#define CM_MEM_DELETE(type, obj) cm_mem_delete_object((obj), sizeof(type), offsetof(type, mem))

#endif
