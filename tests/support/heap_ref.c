/* Cooper-Harvey-Kennedy over the heap graph (see heap_ref.h). */
#include "heap_ref.h"

#include <stdlib.h>
#include <string.h>

typedef struct { uint32_t node; uint32_t pos; } frame;

/* Successors of node v; node n is the virtual root, whose successors are
 * given in vsucc. */
static uint32_t succ_count(const nt_heap *h, uint32_t n, uint32_t v, size_t nvs)
{
    uint32_t c = 0;
    if (v == n)
        return (uint32_t)nvs;
    nt_heap_edges(h, v, &c);
    return c;
}

static uint32_t succ_at(const nt_heap *h, uint32_t n, uint32_t v, const uint32_t *vsucc, uint32_t k)
{
    if (v == n)
        return vsucc[k];
    uint32_t c;
    return nt_heap_edges(h, v, &c)[k];
}

bool heap_ref_dominators(const nt_heap *h, uint32_t **idom_out, uint64_t **ret_out)
{
    uint32_t n = (uint32_t)nt_heap_object_count(h), N = n + 1;
    uint32_t *vsucc = malloc(((size_t)nt_heap_root_count(h) + n + 1) * sizeof *vsucc);
    uint32_t *po = malloc((size_t)N * sizeof *po);        /* postorder number of node, UINT32_MAX unseen */
    uint32_t *order = malloc((size_t)N * sizeof *order);  /* node by postorder number */
    frame *stack = malloc((size_t)N * sizeof *stack);
    uint8_t *seen = calloc(N, 1);
    uint32_t *dom = malloc((size_t)N * sizeof *dom);
    /* predecessors as a simple CSR */
    uint32_t *pstart = calloc((size_t)N + 1, sizeof *pstart);
    if (!vsucc || !po || !order || !stack || !seen || !dom || !pstart)
        return false;
    size_t nvs = 0;
    /* reachability marking in index order, to find the virtual root's successors */
    {
        uint8_t *mark = calloc(N, 1);
        uint32_t *q = malloc((size_t)N * sizeof *q);
        size_t qt = 0;
        for (size_t r = 0; r < nt_heap_root_count(h); r++) {
            uint32_t o = nt_heap_root_at(h, r).object;
            vsucc[nvs++] = o;
            if (!mark[o]) {
                mark[o] = 1;
                q[qt++] = o;
            }
        }
        for (uint32_t s = 0;; s++) {
            while (qt) {
                uint32_t v = q[--qt], c;
                const uint32_t *e = nt_heap_edges(h, v, &c);
                for (uint32_t k = 0; k < c; k++)
                    if (!mark[e[k]]) {
                        mark[e[k]] = 1;
                        q[qt++] = e[k];
                    }
            }
            while (s < n && mark[s])
                s++;
            if (s >= n)
                break;
            vsucc[nvs++] = s;
            mark[s] = 1;
            q[qt++] = s;
        }
        free(mark);
        free(q);
    }
    /* postorder by an iterative DFS from the virtual root */
    uint32_t count = 0;
    size_t top = 0;
    stack[top++] = (frame){ n, 0 };
    seen[n] = 1;
    while (top) {
        frame *f = &stack[top - 1];
        if (f->pos >= succ_count(h, n, f->node, nvs)) {
            po[f->node] = count;
            order[count++] = f->node;
            top--;
            continue;
        }
        uint32_t w = succ_at(h, n, f->node, vsucc, f->pos++);
        if (!seen[w]) {
            seen[w] = 1;
            stack[top++] = (frame){ w, 0 };
        }
    }
    for (uint32_t v = 0; v < N; v++) {
        uint32_t c = succ_count(h, n, v, nvs);
        for (uint32_t k = 0; k < c; k++)
            pstart[succ_at(h, n, v, vsucc, k) + 1]++;
    }
    for (uint32_t v = 0; v < N; v++)
        pstart[v + 1] += pstart[v];
    uint32_t *preds = malloc(((size_t)pstart[N] + 1) * sizeof *preds);
    uint32_t *fill = malloc((size_t)N * sizeof *fill);
    memcpy(fill, pstart, (size_t)N * sizeof *fill);
    for (uint32_t v = 0; v < N; v++) {
        uint32_t c = succ_count(h, n, v, nvs);
        for (uint32_t k = 0; k < c; k++) {
            uint32_t w = succ_at(h, n, v, vsucc, k);
            preds[fill[w]++] = v;
        }
    }
    free(fill);
    /* the iteration: dom by node, UINT32_MAX undefined */
    for (uint32_t v = 0; v < N; v++)
        dom[v] = UINT32_MAX;
    dom[n] = n;
    bool changed = true;
    while (changed) {
        changed = false;
        for (uint32_t i = count; i-- > 0;) { /* reverse postorder */
            uint32_t b = order[i];
            if (b == n)
                continue;
            uint32_t nd = UINT32_MAX;
            for (uint32_t k = pstart[b]; k < pstart[b + 1]; k++) {
                uint32_t p = preds[k];
                if (dom[p] == UINT32_MAX)
                    continue;
                if (nd == UINT32_MAX) {
                    nd = p;
                    continue;
                }
                uint32_t x = p, y = nd;
                while (x != y) {
                    while (po[x] < po[y])
                        x = dom[x];
                    while (po[y] < po[x])
                        y = dom[y];
                }
                nd = x;
            }
            if (dom[b] != nd) {
                dom[b] = nd;
                changed = true;
            }
        }
    }
    uint32_t *idom = malloc(((size_t)n + 1) * sizeof *idom);
    uint64_t *ret = malloc(((size_t)n + 1) * sizeof *ret);
    for (uint32_t v = 0; v < n; v++) {
        idom[v] = dom[v] == n ? NT_HEAP_NONE : dom[v];
        ret[v] = nt_heap_object_at(h, v).size;
    }
    for (uint32_t i = 0; i < count; i++) { /* postorder: children before their dominators */
        uint32_t v = order[i];
        if (v != n && dom[v] != n)
            ret[dom[v]] += ret[v];
    }
    free(vsucc); free(po); free(order); free(stack); free(seen); free(dom); free(pstart); free(preds);
    *idom_out = idom;
    *ret_out = ret;
    return true;
}
