/* The built heap's accessors. */
#include "heap/heap_internal.h"
#include "common/abi.h"

#include <string.h>

static const char *const root_kind_names[NT_HEAP_ROOT_KIND_COUNT_] = {
    [NT_HEAP_ROOT_STACK] = "[local vars]",
    [NT_HEAP_ROOT_FINALIZER] = "[finalizer Handles]",
    [NT_HEAP_ROOT_STRONG_HANDLE] = "[strong Handles]",
    [NT_HEAP_ROOT_PINNING_HANDLE] = "[pinning Handles]",
    [NT_HEAP_ROOT_OTHER_HANDLE] = "[other Handles]",
    [NT_HEAP_ROOT_COM] = "[COM/WinRT Objects]",
    [NT_HEAP_ROOT_STATIC] = "[static vars]",
    [NT_HEAP_ROOT_THREAD_STATIC] = "[thread static vars]",
    [NT_HEAP_ROOT_DEPENDENT_HANDLE] = "[Dependent Handles]",
    [NT_HEAP_ROOT_CCW] = "[CCW targets]",
    [NT_HEAP_ROOT_UNREACHABLE] = "[unreachable]",
};

const char *nt_heap_root_kind_name(nt_heap_root_kind kind)
{
    return (unsigned)kind < NT_HEAP_ROOT_KIND_COUNT_ ? root_kind_names[kind] : "";
}

uint64_t hp_big_size_of(const nt_heap *h, uint32_t i)
{
    size_t lo = 0, hi = h->nbig;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->big[mid].obj < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < h->nbig && h->big[lo].obj == i ? h->big[lo].size : HP_SIZE_BIG;
}

size_t nt_heap_object_count(const nt_heap *h) { return h ? h->n : 0; }

nt_heap_object nt_heap_object_at(const nt_heap *h, uint32_t i)
{
    nt_heap_object o = { 0 };
    if (h && i < h->n) {
        o.address = h->addr[i];
        o.size = hp_size(h, i);
        o.type = h->type[i];
        o.edge_count = h->edge_start[i + 1] - h->edge_start[i];
    }
    return o;
}

const uint32_t *nt_heap_edges(const nt_heap *h, uint32_t i, uint32_t *count)
{
    if (!h || i >= h->n || !h->edges) {
        if (count)
            *count = 0;
        return NULL;
    }
    if (count)
        *count = h->edge_start[i + 1] - h->edge_start[i];
    return h->edges + h->edge_start[i];
}

bool nt_heap_find(const nt_heap *h, uint64_t address, uint32_t *index)
{
    if (!h || h->n == 0)
        return false;
    const uint32_t *order = h->by_addr; /* NULL: the objects are in address order */
    uint32_t lo = 0, hi = h->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (h->addr[order ? order[mid] : mid] < address)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t at = lo < h->n && order ? order[lo] : lo;
    if (lo >= h->n || h->addr[at] != address)
        return false;
    if (index)
        *index = at;
    return true;
}

size_t nt_heap_root_count(const nt_heap *h) { return h ? h->nroots : 0; }

nt_heap_root nt_heap_root_at(const nt_heap *h, size_t i)
{
    nt_heap_root r = { NT_HEAP_NONE, NT_HEAP_ROOT_KIND_COUNT_, "" };
    if (h && i < h->nroots) {
        r.object = (uint32_t)h->roots[i].obj;
        r.kind = (nt_heap_root_kind)h->roots[i].kind;
        r.name = hp_name(h, h->roots[i].name);
    }
    return r;
}

size_t nt_heap_type_count(const nt_heap *h) { return h ? h->ntypes : 0; }

const char *nt_heap_type_name(const nt_heap *h, uint32_t type)
{
    return h && type < h->ntypes ? hp_name(h, h->types[type].name) : "";
}

const char *nt_heap_type_module(const nt_heap *h, uint32_t type)
{
    return h && type < h->ntypes ? hp_name(h, h->types[type].module) : "";
}

void nt_heap_stats_get(const nt_heap *h, nt_heap_stats *out)
{
    if (!out)
        return;
    nt_heap_stats st = { 0 };
    if (h) {
        st = h->stats;
        st.memory = h->mem.used;
        if (st.memory_peak < h->mem.peak)
            st.memory_peak = h->mem.peak;
    }
    st.struct_size = sizeof st;
    ABI_OUT(nt_heap_stats, out, &st);
}

const char *nt_heap_message(const nt_heap *h) { return h ? h->message : ""; }
