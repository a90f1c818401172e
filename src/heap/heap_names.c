/* The heap's name pool: NUL-terminated names by offset, 0 being "". */
#include "heap/heap_internal.h"

#include <string.h>

bool hp_names_add(cm_mem *mem, hp_names *pool, const char *s, size_t len, size_t max, uint32_t *off)
{
    if (len == 0) {
        *off = 0;
        return true;
    }
    size_t start = pool->len ? pool->len : 1; /* byte 0 is the empty name */
    if (start + len + 1 > max)
        return false;
    if (!cm_mem_reserve(mem, (void **)&pool->p, &pool->cap, start + len + 1, 1))
        return false;
    pool->p[0] = '\0';
    memcpy(pool->p + start, s, len);
    pool->p[start + len] = '\0';
    pool->len = start + len + 1;
    *off = (uint32_t)start;
    return true;
}
