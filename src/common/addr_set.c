/* Code addresses as a sorted set (addr_set.h). */
#include "common/addr_set.h"
#include "common/sort.h"

#include <string.h>

bool cm_addr_set_add(cm_mem *m, cm_addr_set *s, const uint64_t *ips, size_t n)
{
    if (n > SIZE_MAX / sizeof *s->ips - s->n || !cm_mem_reserve(m, (void **)&s->ips, &s->cap, s->n + n, sizeof *s->ips))
        return false;
    memcpy(s->ips + s->n, ips, n * sizeof *ips);
    s->n += n;
    return true;
}

static int cmp_u64(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

bool cm_addr_set_seal(cm_mem *m, cm_addr_set *s)
{
    if (s->n < 2)
        return true;
    uint64_t *tmp = cm_mem_alloc(m, s->n * sizeof *tmp);
    if (!tmp)
        return false;
    cm_merge_sort(s->ips, tmp, s->n, sizeof *s->ips, cmp_u64, NULL);
    cm_mem_free(m, tmp, s->n * sizeof *tmp);
    size_t n = 1;
    for (size_t i = 1; i < s->n; i++)
        if (s->ips[i] != s->ips[n - 1])
            s->ips[n++] = s->ips[i];
    s->n = n;
    return true;
}

bool cm_addr_set_holds(const cm_addr_set *s, uint64_t start, uint64_t size)
{
    size_t lo = cm_lower_bound_u64(s->ips, s->n, start); /* the first address >= start */
    return lo < s->n && s->ips[lo] - start < size;
}

void cm_addr_set_free(cm_mem *m, cm_addr_set *s)
{
    cm_mem_free(m, s->ips, s->cap * sizeof *s->ips);
    *s = (cm_addr_set){ 0 };
}
