/* Dominators and retained sizes: Lengauer–Tarjan, the simple form (path
 * compression without balancing: O(E log N) time), from a virtual root whose
 * successors are the root objects and then every object no root reaches
 * (each such object starts its own search, so every byte is retained by
 * something).  The depth-first search and the path compression are
 * iterative: a linked list of millions of objects is a search as deep. */
#include "heap/heap_internal.h"

#include "common/compiler.h"

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
    size_t root_edges;   /* how many nodes that is */
    bool past_roots;     /* the search has gone past the root objects */
    uint64_t reached_from_roots; /* objects numbered before that */
} lt;

#define LT_ARRAYS 5

static uint32_t **lt_array(lt *s, int i)
{
    uint32_t **a[LT_ARRAYS] = { &s->num, &s->vertex, &s->dom, &s->bucket, &s->next };
    return a[i];
}

/* How many references ahead the passes over all of them ask for their targets' lines. */
#define LT_AHEAD 16u

/* All but the result (vertex, dom): freed before the heap's idom and
 * retained arrays are made, so the two never add up in the peak. */
static void lt_free_search(lt *s, size_t nedges)
{
    size_t nodes = (size_t)s->n + 2;
    uint32_t **a[] = { &s->num, &s->bucket, &s->next };
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        cm_mem_free(s->mem, *a[i], nodes * sizeof(uint32_t));
        *a[i] = NULL;
    }
    cm_mem_free(s->mem, s->pred_start, ((size_t)s->count + 2) * sizeof(uint32_t));
    cm_mem_free(s->mem, s->preds, nedges * sizeof(uint32_t));
    cm_mem_free(s->mem, s->from_root, nodes);
    cm_mem_free(s->mem, s->nd, nodes * sizeof *s->nd);
    s->pred_start = s->preds = NULL;
    s->from_root = NULL;
    s->nd = NULL;
}

static void lt_free(lt *s, size_t nedges)
{
    lt_free_search(s, nedges);
    size_t nodes = (size_t)s->n + 2;
    cm_mem_free(s->mem, s->vertex, nodes * sizeof(uint32_t));
    cm_mem_free(s->mem, s->dom, nodes * sizeof(uint32_t));
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

/* Give node w the next DFS number under parent number pv and push it; ask
 * for the lines its own visit reads (its edge range, its targets' numbers),
 * so that the misses of a node's children overlap. */
static inline void lt_enter(const nt_heap *h, lt *s, size_t *top, uint32_t w, uint32_t pv)
{
    s->num[w] = ++s->count;
    s->vertex[s->count] = w;
    s->nd[s->count].parent = pv;
    s->nd[*top].semi = w;
    s->nd[(*top)++].label = h->edge_start[w];
    for (uint32_t k = h->edge_start[w], e = h->edge_start[w + 1]; k < e && k < h->edge_start[w] + 8; k++) {
        CC_PREFETCH(&s->num[h->edges[k]]);
        CC_PREFETCH(&h->edge_start[h->edges[k]]);
    }
}

/* The virtual root's next successor not yet numbered, from position *pos:
 * the root objects, then every object (an object no root reaches starts a
 * search of its own).  Past the roots, the objects numbered so far are those
 * the roots reach.  False past the end. */
static bool lt_root_next(const nt_heap *h, lt *s, uint32_t *pos, uint32_t *w)
{
    while (*pos < h->nroots) {
        uint32_t x = (uint32_t)h->roots[(*pos)++].obj;
        if (!s->from_root[x]) {
            s->from_root[x] = 1;
            s->root_edges++;
        }
        if (!s->num[x]) {
            *w = x;
            return true;
        }
    }
    if (!s->past_roots) {
        s->past_roots = true;
        s->reached_from_roots = s->count - 1;
    }
    while (*pos - h->nroots < h->n) {
        uint32_t x = (uint32_t)(*pos - h->nroots);
        (*pos)++;
        if (!s->num[x]) {
            s->from_root[x] = 1;
            s->root_edges++;
            *w = x;
            return true;
        }
    }
    return false;
}

/* Number the nodes in depth-first preorder from the virtual root.  The
 * search's stack (a node and the position of its next reference per level)
 * lives in the semi and label fields, which the dominator pass only fills
 * afterwards. */
static bool lt_search(nt_heap *h, lt *s)
{
    size_t top = 0;
    uint32_t root = h->n, root_pos = 0;
    s->num[root] = ++s->count;
    s->vertex[s->count] = root;
    uint32_t w;
    for (;;) {
        if (top == 0) { /* back at the virtual root */
            if (!lt_root_next(h, s, &root_pos, &w))
                break;
            lt_enter(h, s, &top, w, 1);
            continue;
        }
        uint32_t v = s->nd[top - 1].semi, k = s->nd[top - 1].label, e = h->edge_start[v + 1];
        while (k < e && s->num[h->edges[k]])
            k++;
        if (k == e) {
            top--;
            continue;
        }
        s->nd[top - 1].label = k + 1;
        lt_enter(h, s, &top, h->edges[k], s->num[v]);
    }
    h->stats.unreachable = h->n - s->reached_from_roots;
    return true;
}

/* Predecessor lists by DFS number, of numbers: the references reversed and
 * the virtual root (number 1) before the objects it leads to.  Numbered so
 * that the dominator pass reads them in order. */
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
    /* Two passes over every reference, each reading its target's number and
     * then that number's slot: both asked for ahead, as the targets are
     * anywhere. */
    const uint32_t *edges = h->edges;
    size_t m = h->stats.edges;
    for (uint32_t v = 0; v < h->n; v++)
        cnt[num[v] + 1] += s->from_root[v];
    for (size_t k = 0; k < m; k++) {
        if (k + 2 * LT_AHEAD < m)
            CC_PREFETCH(&num[edges[k + 2 * LT_AHEAD]]);
        if (k + LT_AHEAD < m)
            CC_PREFETCH(&cnt[num[edges[k + LT_AHEAD]] + 1]);
        cnt[num[edges[k]] + 1]++;
    }
    for (size_t i = 1; i < slots; i++)
        cnt[i] += cnt[i - 1];
    /* Fill with cnt[x] as x's write cursor, then shift back to starts. */
    for (uint32_t v = 0; v < h->n; v++)
        if (s->from_root[v])
            s->preds[cnt[num[v]]++] = 1;
    for (uint32_t v = 0; v < h->n; v++) {
        uint32_t nv = num[v];
        for (uint32_t k = h->edge_start[v]; k < h->edge_start[v + 1]; k++) {
            if (k + 2 * LT_AHEAD < m)
                CC_PREFETCH(&num[edges[k + 2 * LT_AHEAD]]);
            if (k + LT_AHEAD < m)
                CC_PREFETCH(&cnt[num[edges[k + LT_AHEAD]]]);
            s->preds[cnt[num[edges[k]]]++] = nv;
        }
    }
    for (size_t i = slots - 1; i > 0; i--)
        cnt[i] = cnt[i - 1];
    cnt[0] = 0;
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
        if (s->pred_start[i] >= LT_AHEAD) /* the numbers below are read next, their predecessors' state soon */
            CC_PREFETCH(&s->nd[s->preds[s->pred_start[i] - LT_AHEAD]]);
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
    bool ok = lt_alloc(&s) && lt_search(h, &s);
    size_t nedges = (size_t)h->stats.edges + s.root_edges; /* the references and the virtual root's */
    ok = ok && lt_preds(h, &s, nedges);
    if (ok) {
        lt_dominators(&s, s.num); /* the node -> number table, done with, is EVAL's stack */
        lt_free_search(&s, nedges ? nedges : 1);
        ok = lt_results(h, &s);
    }
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
