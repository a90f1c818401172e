/* Queries over the graph: shortest paths from the roots (one breadth-first
 * search from every root at once, kept with the heap), the objects of a
 * type closest to a root, and the largest retainers. */
#include "heap/heap_internal.h"

#include <string.h>

nt_status hp_bfs(nt_heap *h)
{
    if (h->bfs_parent)
        return NT_OK;
    size_t n = h->n ? h->n : 1;
    uint32_t *parent = cm_mem_alloc(&h->mem, n * sizeof *parent);
    uint32_t *root = cm_mem_alloc(&h->mem, n * sizeof *root);
    uint32_t *rank = cm_mem_alloc(&h->mem, n * sizeof *rank);
    uint32_t *queue = cm_mem_alloc(&h->mem, n * sizeof *queue);
    if (!parent || !root || !rank || !queue) {
        cm_mem_free(&h->mem, parent, n * sizeof *parent);
        cm_mem_free(&h->mem, root, n * sizeof *root);
        cm_mem_free(&h->mem, rank, n * sizeof *rank);
        cm_mem_free(&h->mem, queue, n * sizeof *queue);
        return NT_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < h->n; i++) {
        parent[i] = root[i] = NT_HEAP_NONE;
        rank[i] = UINT32_MAX;
    }
    size_t head = 0, tail = 0;
    for (size_t r = 0; r < h->nroots; r++) {
        uint32_t o = (uint32_t)h->roots[r].obj;
        if (root[o] != NT_HEAP_NONE)
            continue;
        root[o] = (uint32_t)r;
        rank[o] = (uint32_t)tail;
        queue[tail++] = o;
    }
    while (head < tail) {
        uint32_t v = queue[head++];
        for (uint32_t k = h->edge_start[v]; k < h->edge_start[v + 1]; k++) {
            uint32_t w = h->edges[k];
            if (root[w] != NT_HEAP_NONE)
                continue;
            root[w] = root[v];
            parent[w] = v;
            rank[w] = (uint32_t)tail;
            queue[tail++] = w;
        }
    }
    cm_mem_free(&h->mem, queue, n * sizeof *queue);
    h->bfs_parent = parent;
    h->bfs_root = root;
    h->bfs_rank = rank;
    return NT_OK;
}

nt_status nt_heap_path(nt_heap *h, uint32_t i, uint32_t *path, size_t cap, size_t *len, size_t *root)
{
    if (!h || i >= h->n || !len)
        return NT_ERR_INVALID_ARG;
    *len = 0;
    nt_status s = hp_bfs(h);
    if (s != NT_OK)
        return s;
    if (h->bfs_root[i] == NT_HEAP_NONE)
        return NT_ERR_INVALID_ARG;
    size_t l = 1;
    for (uint32_t v = i; h->bfs_parent[v] != NT_HEAP_NONE; v = h->bfs_parent[v])
        l++;
    *len = l;
    if (root)
        *root = h->bfs_root[i];
    if (l > cap)
        return NT_ERR_LIMIT;
    size_t k = l;
    for (uint32_t v = i;; v = h->bfs_parent[v]) {
        path[--k] = v;
        if (h->bfs_parent[v] == NT_HEAP_NONE)
            break;
    }
    return NT_OK;
}

/* Does object i's row carry this name (with or without its size class)? */
static bool named(const nt_heap *h, uint32_t i, const char *name, size_t len)
{
    const char *tn = hp_name(h, h->types[h->type[i]].name);
    if (strncmp(tn, name, len) != 0)
        return false;
    if (tn[len] != '\0')
        return false;
    return true;
}

size_t nt_heap_objects_of_type(nt_heap *h, const char *name, uint32_t *out, size_t n)
{
    if (!h || !name || !out || n == 0 || hp_bfs(h) != NT_OK)
        return 0;
    /* "T (Bytes > 1K)" selects the objects of T in that size class. */
    size_t len = strlen(name);
    unsigned cls = 7;
    for (unsigned c = 1; c < 7; c++) {
        size_t sl = strlen(hp_size_class_suffix(c));
        if (len > sl && strcmp(name + len - sl, hp_size_class_suffix(c)) == 0) {
            cls = c;
            len -= sl;
            break;
        }
    }
    /* Keep the n of smallest rank (closest to a root), by insertion into a sorted array. */
    size_t got = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        if (!named(h, i, name, len) || (cls != 7 && hp_size_class(hp_size(h, i)) != cls))
            continue;
        uint32_t r = h->bfs_rank[i];
        if (got == n && r >= h->bfs_rank[out[n - 1]])
            continue;
        size_t k = got < n ? got++ : n - 1;
        while (k > 0 && h->bfs_rank[out[k - 1]] > r) {
            out[k] = out[k - 1];
            k--;
        }
        out[k] = i;
    }
    return got;
}

size_t nt_heap_top_retainers(nt_heap *h, uint32_t *out, size_t n)
{
    if (!h || !out || n == 0 || nt_heap_dominators(h) != NT_OK)
        return 0;
    /* A min-heap of the n largest so far, then sorted largest first. */
    size_t got = 0;
    const uint64_t *ret = h->retained;
#define LESS(a, b) (ret[a] < ret[b] || (ret[a] == ret[b] && (a) > (b)))
    for (uint32_t i = 0; i < h->n; i++) {
        if (got == n && !LESS(out[0], i))
            continue;
        size_t k;
        if (got < n) {
            k = got++;
            while (k > 0 && LESS(i, out[(k - 1) / 2])) {
                out[k] = out[(k - 1) / 2];
                k = (k - 1) / 2;
            }
            out[k] = i;
            continue;
        }
        k = 0; /* replace the smallest and sift down */
        for (;;) {
            size_t c = 2 * k + 1;
            if (c >= got)
                break;
            if (c + 1 < got && LESS(out[c + 1], out[c]))
                c++;
            if (!LESS(out[c], i))
                break;
            out[k] = out[c];
            k = c;
        }
        out[k] = i;
    }
    /* Heap-sort in place: the smallest goes last. */
    for (size_t end = got; end > 1; end--) {
        uint32_t x = out[end - 1];
        out[end - 1] = out[0];
        size_t k = 0;
        for (;;) {
            size_t c = 2 * k + 1;
            if (c >= end - 1)
                break;
            if (c + 1 < end - 1 && LESS(out[c + 1], out[c]))
                c++;
            if (!LESS(out[c], x))
                break;
            out[k] = out[c];
            k = c;
        }
        out[k] = x;
    }
#undef LESS
    return got;
}
