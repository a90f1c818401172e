/* Code addresses as a sorted set (addr_set.h). */
#include "common/addr_set.h"
#include "common/sort.h"
#include "common/sort_u64.h"

#include <string.h>

static size_t recent_slot(uint64_t ip) { return (size_t)((ip * 0x9E3779B97F4A7C15ull) >> 54); }
_Static_assert(CM_ADDR_SET_RECENT == 1u << 10, "recent_slot keeps 10 bits");

bool cm_addr_set_add(cm_mem *m, cm_addr_set *s, const uint64_t *ips, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t ip = ips[i];
        size_t h = recent_slot(ip);
        if (ip && s->recent[h] == ip)
            continue;
        s->recent[h] = ip;
        if (s->n == s->cap && !cm_mem_reserve(m, (void **)&s->ips, &s->cap, s->n + 1, sizeof *s->ips))
            return false;
        s->ips[s->n++] = ip;
    }
    return true;
}

bool cm_addr_set_seal(cm_mem *m, cm_addr_set *s)
{
    if (s->n < 2)
        return true;
    if (!cm_sort_u64(m, s->ips, s->n))
        return false;
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
