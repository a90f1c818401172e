/* Allocation through the caller's nt_allocator, with a running byte count so
 * the parser can report (and tests can bound) the memory it holds. */
#ifndef NT_ALLOC_H
#define NT_ALLOC_H

#include "nettrace.h"

#include <stddef.h>

typedef struct nt_mem {
    nt_allocator a;
    size_t used;   /* bytes currently held through this nt_mem */
    size_t peak;
} nt_mem;

void nt_mem_init(nt_mem *m, const nt_allocator *a);
/* Resize *ptr from old_size to new_size bytes.  On failure *ptr is untouched
 * and false is returned.  new_size 0 frees. */
bool nt_mem_resize(nt_mem *m, void **ptr, size_t old_size, size_t new_size);
void *nt_mem_alloc(nt_mem *m, size_t size);
void nt_mem_free(nt_mem *m, void *ptr, size_t size);

/* Grow *ptr, an array of *cap elements of `elem` bytes, to hold at least `need`
 * elements: the capacity doubles (from 16) until it does.  There is no upper
 * bound here beyond size_t overflow, so callers check their limits before
 * calling.  False, with *ptr and *cap untouched, when memory is short. */
bool nt_mem_reserve(nt_mem *m, void **ptr, size_t *cap, size_t need, size_t elem);

/* A new zeroed object of `size` bytes allocated through a fresh nt_mem over
 * `a` (NULL: malloc), which is then stored in the object at byte `mem_at`, so
 * the object's own bytes count in its running total.  NULL when memory is
 * short.  NT_MEM_NEW(type, a) does this for a type whose member `mem` is its
 * nt_mem. */
void *nt_mem_new_object(const nt_allocator *a, size_t size, size_t mem_at);
#define NT_MEM_NEW(type, a) ((type *)nt_mem_new_object((a), sizeof(type), offsetof(type, mem)))

/* Frees an object made by nt_mem_new_object: its nt_mem is copied out first,
 * since it lives in the bytes being freed.  NULL does nothing. */
void nt_mem_delete_object(void *obj, size_t size, size_t mem_at);
#define NT_MEM_DELETE(type, obj) nt_mem_delete_object((obj), sizeof(type), offsetof(type, mem))

#endif
