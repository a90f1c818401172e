#include "common/alloc.h"

#include <stdlib.h>
#include <string.h>

static void *default_realloc(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    return realloc(ptr, size);
}

static void default_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

void cm_mem_init(cm_mem *m, const nt_allocator *a)
{
    if (a && a->realloc && a->free) {
        m->a = *a;
    } else {
        m->a.realloc = default_realloc;
        m->a.free = default_free;
        m->a.ctx = NULL;
    }
    m->used = 0;
    m->peak = 0;
}

bool cm_mem_resize(cm_mem *m, void **ptr, size_t old_size, size_t new_size)
{
    if (new_size == 0) {
        cm_mem_free(m, *ptr, old_size);
        *ptr = NULL;
        return true;
    }
    void *n = m->a.realloc(m->a.ctx, *ptr, new_size);
    if (!n)
        return false;
    *ptr = n;
    m->used = m->used - old_size + new_size;
    if (m->used > m->peak)
        m->peak = m->used;
    return true;
}

void *cm_mem_alloc(cm_mem *m, size_t size)
{
    void *p = NULL;
    if (!cm_mem_resize(m, &p, 0, size ? size : 1))
        return NULL;
    return p;
}

void cm_mem_free(cm_mem *m, void *ptr, size_t size)
{
    if (!ptr)
        return;
    m->a.free(m->a.ctx, ptr);
    m->used -= size;
}

bool cm_mem_reserve(cm_mem *m, void **ptr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return false;
        ncap *= 2;
    }
    if (ncap > SIZE_MAX / elem)
        return false;
    if (!cm_mem_resize(m, ptr, *cap * elem, ncap * elem))
        return false;
    *cap = ncap;
    return true;
}

void *cm_mem_new_object(const nt_allocator *a, size_t size, size_t mem_at)
{
    cm_mem mem;
    cm_mem_init(&mem, a);
    unsigned char *obj = cm_mem_alloc(&mem, size);
    if (!obj)
        return NULL;
    memset(obj, 0, size);
    memcpy(obj + mem_at, &mem, sizeof mem);
    return obj;
}

void cm_mem_delete_object(void *obj, size_t size, size_t mem_at)
{
    if (!obj)
        return;
    cm_mem mem;
    memcpy(&mem, (unsigned char *)obj + mem_at, sizeof mem);
    cm_mem_free(&mem, obj, size);
}
