/* Dominators and retained sizes: Lengauer–Tarjan, the simple form (path
 * compression without balancing: O(E log N) time), from a virtual root whose
 * successors are the root objects and then every object no root reaches
 * (each such object starts its own search, so every byte is retained by
 * something).  The depth-first search and the path compression are
 * iterative: a linked list of millions of objects is a search as deep. */
#include "heap/heap_internal.h"

#include <string.h>

typedef struct lt_node {
    uint32_t semi, label, ancestor, parent;
} lt_node;

/* The search's state, every array indexed by DFS number (1 .. count; 0 is "none"). */
typedef struct lt {
    cm_mem *mem;
    uint32_t n;          /* objects; node n is the virtual root */
    uint32_t count;      /* nodes numbered */
    uint32_t *num;       /* node -> number (0: not yet reached) */
    uint32_t *vertex;    /* number -> node */
    lt_node *nd;         /* by number: what EVAL and LINK read together, in one cache line's quarter */
    uint32_t *dom, *bucket, *next; /* by number */
    uint32_t *pred_start, *preds; /* by number: the numbers of its predecessors */
    uint8_t *from_root;  /* node: the virtual root has an edge to it */
} lt;

#define LT_ARRAYS 5

static uint32_t **lt_array(lt *s, int i)
{
    uint32_t **a[LT_ARRAYS] = { &s->num, &s->vertex, &s->dom, &s->bucket, &s->next };
    return a[i];
}

static void lt_free(lt *s, size_t nedges)
{
    size_t nodes = (size_t)s->n + 2;
    for (int i = 0; i < LT_ARRAYS; i++)
        cm_mem_free(s->mem, *lt_array(s, i), nodes * sizeof(uint32_t));
    cm_mem_free(s->mem, s->pred_start, ((size_t)s->count + 2) * sizeof(uint32_t));
    cm_mem_free(s->mem, s->preds, nedges * sizeof(uint32_t));
    cm_mem_free(s->mem, s->from_root, nodes);
    cm_mem_free(s->mem, s->nd, nodes * sizeof *s->nd);
}

static bool lt_alloc(lt *s)
{
    size_t nodes = (size_t)s->n + 2;
    for (int i = 0; i < LT_ARRAYS; i++) {
        uint32_t *p = cm_mem_alloc(s->mem, nodes * sizeof(uint32_t));
        if (!p)
            return false;
        memset(p, 0, nodes * sizeof(uint32_t));
        *lt_array(s, i) = p;
    }
    s->from_root = cm_mem_alloc(s->mem, nodes);
    s->nd = cm_mem_alloc(s->mem, nodes * sizeof *s->nd);
    if (!s->from_root || !s->nd)
        return false;
    memset(s->from_root, 0, nodes);
    memset(s->nd, 0, nodes * sizeof *s->nd);
    return true;
}

/* The successor at position pos of node v (false past the end).  The
 * virtual root's are the root objects, then every object (those already
 * reached are skipped by the caller). */
static bool successor(const nt_heap *h, uint32_t v, uint64_t pos, uint32_t *w)
{
    if (v == h->n) {
        if (pos < h->nroots) {
            *w = (uint32_t)h->roots[pos].obj;
            return true;
        }
        if (pos - h->nroots < h->n) {
            *w = (uint32_t)(pos - h->nroots);
            return true;
        }
        return false;
    }
    uint64_t k = (uint64_t)h->edge_start[v] + pos;
    if (k >= h->edge_start[v + 1])
        return false;
    *w = h->edges[k];
    return true;
}

/* Number the nodes in depth-first preorder from the virtual root.  The
 * search's stack (a node and its next successor's position per level) lives
 * in the semi and label fields, which the dominator pass only fills afterwards. */
static bool lt_search(nt_heap *h, lt *s)
{
    size_t top = 0;
    uint32_t root = h->n;
    s->num[root] = ++s->count;
    s->vertex[s->count] = root;
    s->nd[top].semi = root;
    s->nd[top++].label = 0;
    uint64_t reached_from_roots = 0;
    bool past_roots = false;
    while (top) {
        uint32_t v = s->nd[top - 1].semi, pos = s->nd[top - 1].label;
        if (v == root && !past_roots && pos >= h->nroots) {
            past_roots = true; /* every object numbered from here on is one no root reaches */
            reached_from_roots = s->count - 1;
        }
        uint32_t w;
        if (!successor(h, v, pos, &w)) {
            top--;
            continue;
        }
        s->nd[top - 1].label = pos + 1;
        /* The virtual root leads to every root object, and to each object no root reaches that
         * starts a search of its own. */
        if (v == root && (!past_roots || !s->num[w]))
            s->from_root[w] = 1;
        if (s->num[w])
            continue;
        s->num[w] = ++s->count;
        s->vertex[s->count] = w;
        s->nd[s->count].parent = s->num[v];
        s->nd[top].semi = w;
        s->nd[top++].label = 0;
    }
    if (!past_roots)
        reached_from_roots = s->count - 1;
    h->stats.unreachable = h->n - reached_from_roots;
    return true;
}

/* Predecessor lists by DFS number, of numbers: the references reversed and
 * the virtual root (number 1) before the objects it leads to.  Numbered so
 * that the dominator pass reads them in order; the node -> number table is
 * freed after. */
static bool lt_preds(const nt_heap *h, lt *s, size_t nedges)
{
    size_t slots = (size_t)s->count + 2;
    s->pred_start = cm_mem_alloc(s->mem, slots * sizeof(uint32_t));
    s->preds = cm_mem_alloc(s->mem, (nedges ? nedges : 1) * sizeof(uint32_t));
    if (!s->pred_start || !s->preds)
        return false;
    uint32_t *cnt = s->pred_start;
    const uint32_t *num = s->num;
    memset(cnt, 0, slots * sizeof(uint32_t));
    for (uint32_t v = 0; v < h->n; v++) {
        cnt[num[v] + 1] += s->from_root[v];
        for (uint32_t k = h->edge_start[v]; k < h->edge_start[v + 1]; k++)
            cnt[num[h->edges[k]] + 1]++;
    }
    for (size_t i = 1; i < slots; i++)
        cnt[i] += cnt[i - 1];
    /* Fill with cnt[x] as x's write cursor, then shift back to starts. */
    for (uint32_t v = 0; v < h->n; v++)
        if (s->from_root[v])
            s->preds[cnt[num[v]]++] = 1;
    for (uint32_t v = 0; v < h->n; v++)
        for (uint32_t k = h->edge_start[v]; k < h->edge_start[v + 1]; k++)
            s->preds[cnt[num[h->edges[k]]]++] = num[v];
    for (size_t i = slots - 1; i > 0; i--)
        cnt[i] = cnt[i - 1];
    cnt[0] = 0;
    cm_mem_free(s->mem, s->num, ((size_t)s->n + 2) * sizeof(uint32_t));
    s->num = NULL;
    return true;
}

/* EVAL with path compression, iteratively: the ancestors of v below the
 * root of its tree in the forest are pushed on stack, then compressed from
 * the one nearest that root down. */
static uint32_t lt_eval(lt *s, uint32_t v, uint32_t *stack)
{
    if (s->nd[v].ancestor == 0)
        return v;
    size_t top = 0;
    uint32_t x = v;
    while (s->nd[s->nd[x].ancestor].ancestor != 0) {
        stack[top++] = x;
        x = s->nd[x].ancestor;
    }
    while (top) {
        x = stack[--top];
        uint32_t a = s->nd[x].ancestor;
        if (s->nd[s->nd[a].label].semi < s->nd[s->nd[x].label].semi)
            s->nd[x].label = s->nd[a].label;
        s->nd[x].ancestor = s->nd[a].ancestor;
    }
    return s->nd[v].label;
}

static void lt_dominators(lt *s, uint32_t *stack)
{
    for (uint32_t i = 1; i <= s->count; i++)
        s->nd[i].semi = s->nd[i].label = i;
    for (uint32_t i = s->count; i >= 2; i--) {
        for (uint32_t k = s->pred_start[i]; k < s->pred_start[i + 1]; k++) {
            uint32_t u = lt_eval(s, s->preds[k], stack);
            if (s->nd[u].semi < s->nd[i].semi)
                s->nd[i].semi = s->nd[u].semi;
        }
        s->next[i] = s->bucket[s->nd[i].semi];
        s->bucket[s->nd[i].semi] = i;
        uint32_t p = s->nd[i].parent;
        s->nd[i].ancestor = p; /* LINK */
        for (uint32_t v = s->bucket[p]; v; v = s->next[v]) {
            uint32_t u = lt_eval(s, v, stack);
            s->dom[v] = s->nd[u].semi < s->nd[v].semi ? u : p;
        }
        s->bucket[p] = 0;
    }
    for (uint32_t i = 2; i <= s->count; i++)
        if (s->dom[i] != s->nd[i].semi)
            s->dom[i] = s->dom[s->dom[i]];
    s->dom[1] = 0;
}

/* idom and retained from the numbered result: a node's dominator has a
 * smaller number, so one pass from the last number down sums retained sizes. */
static bool lt_results(nt_heap *h, lt *s)
{
    size_t n = h->n;
    h->idom = cm_mem_alloc(&h->mem, (n ? n : 1) * sizeof *h->idom);
    h->retained = cm_mem_alloc(&h->mem, (n ? n : 1) * sizeof *h->retained);
    if (!h->idom || !h->retained)
        return false;
    for (uint32_t i = 0; i < h->n; i++)
        h->retained[i] = h->size[i];
    for (uint32_t i = s->count; i >= 2; i--) {
        uint32_t v = s->vertex[i], d = s->vertex[s->dom[i]];
        h->idom[v] = d == h->n ? NT_HEAP_NONE : d;
        if (d != h->n)
            h->retained[d] += h->retained[v];
    }
    return true;
}

nt_status nt_heap_dominators(nt_heap *h)
{
    if (!h)
        return NT_ERR_INVALID_ARG;
    if (h->idom)
        return NT_OK;
    lt s = { 0 };
    s.mem = &h->mem;
    s.n = h->n;
    size_t nedges = (size_t)h->stats.edges + h->n; /* and the virtual root's: at most one per object */
    uint32_t *stack = NULL;
    bool ok = lt_alloc(&s) && lt_search(h, &s) && lt_preds(h, &s, nedges);
    if (ok) {
        stack = cm_mem_alloc(s.mem, ((size_t)h->n + 2) * sizeof *stack);
        ok = stack != NULL;
    }
    if (ok) {
        lt_dominators(&s, stack);
        ok = lt_results(h, &s);
    }
    cm_mem_free(s.mem, stack, ((size_t)h->n + 2) * sizeof *stack);
    lt_free(&s, nedges ? nedges : 1);
    if (!ok) {
        cm_mem_free(&h->mem, h->idom, (h->n ? h->n : 1) * sizeof *h->idom);
        cm_mem_free(&h->mem, h->retained, (h->n ? h->n : 1) * sizeof *h->retained);
        h->idom = NULL;
        h->retained = NULL;
        return NT_ERR_NOMEM;
    }
    h->stats.memory = h->mem.used;
    return NT_OK;
}

uint32_t nt_heap_idom(const nt_heap *h, uint32_t i)
{
    return h && h->idom && i < h->n ? h->idom[i] : NT_HEAP_NONE;
}

uint64_t nt_heap_retained(const nt_heap *h, uint32_t i)
{
    return h && h->retained && i < h->n ? h->retained[i] : 0;
}

nt_status hp_dom_children(nt_heap *h, uint32_t **start_out, uint32_t **child_out)
{
    nt_status s = nt_heap_dominators(h);
    if (s != NT_OK)
        return s;
    size_t n = h->n;
    uint32_t *start = cm_mem_alloc(&h->mem, (n + 2) * sizeof *start);
    uint32_t *child = cm_mem_alloc(&h->mem, (n ? n : 1) * sizeof *child);
    if (!start || !child) {
        cm_mem_free(&h->mem, start, (n + 2) * sizeof *start);
        cm_mem_free(&h->mem, child, (n ? n : 1) * sizeof *child);
        return NT_ERR_NOMEM;
    }
    /* Slot n holds the virtual root's children; count at d + 1, then prefix sums. */
    memset(start, 0, (n + 2) * sizeof *start);
    for (uint32_t i = 0; i < h->n; i++) {
        uint32_t d = h->idom[i] == NT_HEAP_NONE ? h->n : h->idom[i];
        start[d + 1]++;
    }
    for (size_t i = 1; i < n + 2; i++)
        start[i] += start[i - 1];
    for (uint32_t i = 0; i < h->n; i++) {
        uint32_t d = h->idom[i] == NT_HEAP_NONE ? h->n : h->idom[i];
        child[start[d]++] = i;
    }
    for (size_t i = n + 1; i > 0; i--)
        start[i] = start[i - 1];
    start[0] = 0;
    *start_out = start;
    *child_out = child;
    return NT_OK;
}
