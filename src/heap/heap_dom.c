/* Dominators and retained sizes: semi-NCA (Georgiadis' variant of
 * Lengauer–Tarjan: the semidominators by EVAL and LINK with path
 * compression, then each immediate dominator found by climbing the
 * dominator tree from the node's DFS parent to its semidominator, which
 * needs no buckets), with a bound on the climbs: past it (a graph made to be
 * quadratic for semi-NCA) the dominators are taken again by Lengauer–Tarjan's
 * buckets from the same semidominators' pass, so the time stays O(E log N)
 * (the simple form's, path compression without balancing) whatever the graph.
 * From a virtual root whose successors are the root objects and then every
 * object no root reaches (each such object starts its own search, so every
 * byte is retained by something).  The depth-first search is iterative (its
 * path is the DFS parents; each level's next reference in one word), and so
 * is the path compression (by pointer reversal, no stack): a linked list of
 * millions of objects is a search as deep, at no memory of its own. */
#include "heap/heap_internal.h"

#include "common/compiler.h"

#include <string.h>

/* By DFS number: what EVAL and LINK read together, in 12 bytes.  After the
 * climbs, label holds the immediate dominator's number. */
typedef struct lt_node {
    uint32_t semi, label, ancestor;
} lt_node;

/* The search's state, by DFS number (1 .. count; 0 is "none") unless said. */
typedef struct lt {
    cm_mem *mem;
    uint32_t n;          /* objects; node n is the virtual root (number 1) */
    uint32_t count;      /* nodes numbered */
    uint32_t *num;       /* by node: its number (0: not yet reached); freed after the predecessors */
    uint32_t *vertex;    /* number -> node */
    uint32_t *parent;    /* the DFS parent's number; at the end the immediate dominator's */
    uint32_t *cursor;    /* while searching: the next reference to follow; then the predecessors' counts */
    uint32_t *preds;     /* the numbers of every node's predecessors, by node; a list's first has LT_FIRST */
    uint64_t *has_preds; /* by number, a bit each: the node has predecessors in preds */
    lt_node *nd;         /* made after the predecessors, when num and from_root are gone */
    uint8_t *from_root;  /* by node: the virtual root has an edge to it (LT_TREE: the search took it) */
    uint64_t *tree;      /* by reference: the search took it (a bit each) */
    size_t root_edges;   /* how many nodes that is */
    size_t npreds;       /* entries of preds */
    size_t tree_words;
    bool past_roots;     /* the search has gone past the root objects */
    uint64_t reached_from_roots; /* objects numbered before that */
} lt;

/* A DFS tree edge offers its target's semidominator nothing below the
 * target's parent, which the semidominator starts from: tree edges are
 * left out of the predecessors (a node's parent is no predecessor to look
 * at), so those hold the references the search did not take. */
#define LT_TREE 2

/* The first predecessor of each node's list carries this bit, so the lists
 * need no start array: the dominator pass reads them from the end down.
 * Numbers stay below it (the builder takes at most HP_MAX_OBJECTS). */
#define LT_FIRST 0x80000000u

static size_t lt_tree_words(const nt_heap *h) { return ((size_t)h->stats.edges + 63) / 64 + 1; }
static bool lt_is_tree(const uint64_t *tree, size_t k) { return (tree[k / 64] >> (k % 64)) & 1; }

/* How many references ahead the passes over all of them ask for their targets' lines. */
#define LT_AHEAD 16u

static size_t lt_slots(const lt *s) { return (size_t)s->n + 3; }

static void lt_free(lt *s)
{
    size_t slots = lt_slots(s);
    uint32_t **a[] = { &s->num, &s->vertex, &s->parent, &s->cursor };
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        cm_mem_free(s->mem, *a[i], slots * sizeof(uint32_t));
        *a[i] = NULL;
    }
    cm_mem_free(s->mem, s->preds, (s->npreds ? s->npreds : 1) * sizeof(uint32_t));
    cm_mem_free(s->mem, s->from_root, slots);
    cm_mem_free(s->mem, s->tree, s->tree_words * sizeof *s->tree);
    cm_mem_free(s->mem, s->has_preds, (slots / 64 + 1) * sizeof *s->has_preds);
    cm_mem_free(s->mem, s->nd, slots * sizeof *s->nd);
    s->has_preds = NULL;
    s->tree = NULL;
    s->preds = NULL;
    s->from_root = NULL;
    s->nd = NULL;
}

static bool lt_alloc_search(lt *s)
{
    size_t slots = lt_slots(s);
    uint32_t **a[] = { &s->num, &s->vertex, &s->parent, &s->cursor };
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        *a[i] = cm_mem_alloc(s->mem, slots * sizeof(uint32_t));
        if (!*a[i])
            return false;
    }
    memset(s->num, 0, slots * sizeof(uint32_t));
    s->from_root = cm_mem_alloc(s->mem, slots);
    if (!s->from_root)
        return false;
    memset(s->from_root, 0, slots);
    s->tree = cm_mem_alloc(s->mem, s->tree_words * sizeof *s->tree);
    if (!s->tree)
        return false;
    memset(s->tree, 0, s->tree_words * sizeof *s->tree);
    return true;
}

/* Give node w the next DFS number under parent number pv; ask for the
 * lines its own visit reads (its targets' numbers and edge ranges), so that
 * the misses of a node's children overlap. */
static inline uint32_t lt_enter(const nt_heap *h, lt *s, uint32_t w, uint32_t pv)
{
    uint32_t v = ++s->count;
    s->num[w] = v;
    s->vertex[v] = w;
    s->parent[v] = pv;
    s->cursor[v] = h->edge_start[w];
    for (uint32_t k = h->edge_start[w], e = h->edge_start[w + 1]; k < e && k < h->edge_start[w] + 8; k++) {
        CC_PREFETCH(&s->num[h->edges[k]]);
        CC_PREFETCH(&h->edge_start[h->edges[k]]);
    }
    return v;
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
 * search's path is the chain of DFS parents from the current node; each
 * node's next reference to follow is kept in cursor, which the
 * predecessors fill only afterwards. */
static void lt_search(nt_heap *h, lt *s)
{
    uint32_t root_pos = 0, w;
    s->num[h->n] = ++s->count;
    s->vertex[1] = h->n;
    s->parent[1] = 0;
    uint32_t cur = 1;
    for (;;) {
        if (cur == 1) { /* at the virtual root */
            if (!lt_root_next(h, s, &root_pos, &w))
                break;
            s->from_root[w] = LT_TREE;
            cur = lt_enter(h, s, w, 1);
            continue;
        }
        uint32_t v = s->vertex[cur], k = s->cursor[cur], e = h->edge_start[v + 1];
        while (k < e && s->num[h->edges[k]])
            k++;
        if (k == e) {
            cur = s->parent[cur];
            continue;
        }
        s->cursor[cur] = k + 1;
        s->tree[k / 64] |= 1ull << (k % 64);
        cur = lt_enter(h, s, h->edges[k], cur);
    }
    h->stats.unreachable = h->n - s->reached_from_roots;
}

/* Predecessor lists by DFS number, of numbers: the references the search
 * did not take, reversed, and the virtual root (number 1) before the
 * objects it leads to but did not enter.  Numbered so that the dominator
 * pass reads them in order. */
static bool lt_preds(const nt_heap *h, lt *s)
{
    size_t slots = (size_t)s->count + 2;
    /* every node but the virtual root was entered by one tree edge */
    s->npreds = (size_t)h->stats.edges + s->root_edges - (s->count - 1);
    s->preds = cm_mem_alloc(s->mem, (s->npreds ? s->npreds : 1) * sizeof(uint32_t));
    s->has_preds = cm_mem_alloc(s->mem, (lt_slots(s) / 64 + 1) * sizeof *s->has_preds);
    if (!s->preds || !s->has_preds)
        return false;
    memset(s->has_preds, 0, (lt_slots(s) / 64 + 1) * sizeof *s->has_preds);
    uint32_t *cnt = s->cursor;
    const uint32_t *num = s->num;
    memset(cnt, 0, slots * sizeof(uint32_t));
    /* Two passes over every reference, each reading its target's number and
     * then that number's slot: both asked for ahead, as the targets are
     * anywhere. */
    const uint32_t *edges = h->edges;
    size_t m = h->stats.edges;
    const uint64_t *tree = s->tree;
    for (uint32_t v = 0; v < h->n; v++)
        cnt[num[v] + 1] += s->from_root[v] == 1;
    for (size_t k = 0; k < m; k++) {
        if (k + 2 * LT_AHEAD < m)
            CC_PREFETCH(&num[edges[k + 2 * LT_AHEAD]]);
        if (k + LT_AHEAD < m)
            CC_PREFETCH(&cnt[num[edges[k + LT_AHEAD]] + 1]);
        cnt[num[edges[k]] + 1] += !lt_is_tree(tree, k);
    }
    for (size_t i = 1; i < slots; i++)
        cnt[i] += cnt[i - 1];
    /* Fill with cnt[x] as x's write cursor. */
    for (uint32_t v = 0; v < h->n; v++)
        if (s->from_root[v] == 1)
            s->preds[cnt[num[v]]++] = 1;
    for (uint32_t v = 0; v < h->n; v++) {
        uint32_t nv = num[v];
        for (uint32_t k = h->edge_start[v]; k < h->edge_start[v + 1]; k++) {
            if (k + 2 * LT_AHEAD < m)
                CC_PREFETCH(&num[edges[k + 2 * LT_AHEAD]]);
            if (k + LT_AHEAD < m)
                CC_PREFETCH(&cnt[num[edges[k + LT_AHEAD]]]);
            if (!lt_is_tree(tree, k))
                s->preds[cnt[num[edges[k]]]++] = nv;
        }
    }
    /* cnt[x] is now where x's list ends and x + 1's starts: mark each list's first. */
    for (uint32_t x = 2; x <= s->count; x++) {
        if (cnt[x - 1] < cnt[x]) {
            s->preds[cnt[x - 1]] |= LT_FIRST;
            s->has_preds[x / 64] |= 1ull << (x % 64);
        }
    }
    return true;
}

/* EVAL with path compression.  The ancestors of v below the root of its
 * tree in the forest are walked up with their ancestor links reversed, then
 * compressed from the one nearest that root down, the links restored to
 * their compressed values on the way: no stack, however deep. */
static uint32_t lt_eval(lt_node *nd, uint32_t v)
{
    if (nd[v].ancestor == 0)
        return v;
    uint32_t below = 0, x = v;
    while (nd[nd[x].ancestor].ancestor != 0) {
        uint32_t up = nd[x].ancestor;
        nd[x].ancestor = below;
        below = x;
        x = up;
    }
    /* x's ancestor is its tree's root: x needs nothing; below is the next one down. */
    while (below) {
        uint32_t y = below, a = x;
        below = nd[y].ancestor;
        if (nd[nd[a].label].semi < nd[nd[y].label].semi)
            nd[y].label = nd[a].label;
        nd[y].ancestor = nd[a].ancestor;
        x = y;
    }
    return nd[v].label;
}

/* The semidominators, from the last number down (every predecessor's EVAL,
 * then LINK to the DFS parent), with Lengauer–Tarjan's buckets when asked
 * (bucket, next and dom: then each immediate dominator goes to label). */
static void lt_semi(lt *s, uint32_t *bucket, uint32_t *next, uint32_t *dom)
{
    lt_node *nd = s->nd;
    size_t k = s->npreds; /* the lists are read from the last number's down */
    for (uint32_t i = 1; i <= s->count; i++)
        nd[i] = (lt_node){ i, i, 0 };
    for (uint32_t i = s->count; i >= 2; i--) {
        uint32_t p = s->parent[i];
        nd[i].semi = p; /* the tree edge's offer, left out of the predecessors */
        if (k >= LT_AHEAD) /* the numbers below are read next, their predecessors' state soon */
            CC_PREFETCH(&nd[s->preds[k - LT_AHEAD] & ~LT_FIRST]);
        bool first = !((s->has_preds[i / 64] >> (i % 64)) & 1);
        while (!first) {
            uint32_t v = s->preds[--k];
            first = v & LT_FIRST;
            uint32_t u = lt_eval(nd, v & ~LT_FIRST);
            if (nd[u].semi < nd[i].semi)
                nd[i].semi = nd[u].semi;
        }
        nd[i].ancestor = p; /* LINK */
        if (!bucket)
            continue;
        next[i] = bucket[nd[i].semi];
        bucket[nd[i].semi] = i;
        for (uint32_t v = bucket[p]; v; v = next[v]) {
            uint32_t u = lt_eval(nd, v);
            dom[v] = nd[u].semi < nd[v].semi ? u : p;
        }
        bucket[p] = 0;
    }
    if (!bucket)
        return;
    for (uint32_t i = 2; i <= s->count; i++)
        if (dom[i] != nd[i].semi)
            dom[i] = dom[dom[i]];
    for (uint32_t i = 2; i <= s->count; i++)
        nd[i].label = dom[i];
}

/* semi-NCA's second half: in preorder, a node's immediate dominator is the
 * nearest of its DFS parent's dominators (its parent included) numbered no
 * higher than its semidominator.  False when the climbs pass max_climbs. */
static bool lt_climb(lt *s, uint64_t max_climbs)
{
    lt_node *nd = s->nd;
    uint64_t climbs = 0;
    for (uint32_t i = 2; i <= s->count; i++) {
        uint32_t d = s->parent[i], semi = nd[i].semi;
        while (d > semi) {
            d = nd[d].label;
            if (++climbs > max_climbs)
                return false;
        }
        nd[i].label = d;
    }
    return true;
}

/* Lengauer–Tarjan's buckets over the same search, when the climbs were too many. */
static bool lt_buckets(lt *s)
{
    size_t slots = lt_slots(s);
    uint32_t *bucket = cm_mem_alloc(s->mem, slots * sizeof *bucket);
    uint32_t *next = cm_mem_alloc(s->mem, slots * sizeof *next);
    uint32_t *dom = cm_mem_alloc(s->mem, slots * sizeof *dom);
    bool ok = bucket && next && dom;
    if (ok) {
        memset(bucket, 0, slots * sizeof *bucket);
        memset(dom, 0, slots * sizeof *dom);
        lt_semi(s, bucket, next, dom);
    }
    cm_mem_free(s->mem, bucket, slots * sizeof *bucket);
    cm_mem_free(s->mem, next, slots * sizeof *next);
    cm_mem_free(s->mem, dom, slots * sizeof *dom);
    return ok;
}

/* idom and retained from the numbered result (parent now holds each
 * number's immediate dominator): a node's dominator has a smaller number,
 * so one pass from the last number down sums retained sizes. */
static bool lt_results(nt_heap *h, lt *s)
{
    size_t n = h->n;
    h->idom = cm_mem_alloc(&h->mem, (n ? n : 1) * sizeof *h->idom);
    h->retained = cm_mem_alloc(&h->mem, (n ? n : 1) * sizeof *h->retained);
    if (!h->idom || !h->retained)
        return false;
    for (uint32_t i = 0; i < h->n; i++)
        h->retained[i] = hp_size(h, i);
    for (uint32_t i = s->count; i >= 2; i--) {
        uint32_t v = s->vertex[i], d = s->vertex[s->parent[i]];
        h->idom[v] = d == h->n ? NT_HEAP_NONE : d;
        if (d != h->n)
            h->retained[d] += h->retained[v];
    }
    return true;
}

/* Number, reverse, take the semidominators, climb (or, past max_climbs,
 * bucket), then keep each number's dominator in parent and free the rest
 * of the search before the results are made, so the two never add up in
 * the peak. */
static bool lt_run(nt_heap *h, lt *s, uint64_t max_climbs)
{
    if (!lt_alloc_search(s))
        return false;
    lt_search(h, s);
    if (!lt_preds(h, s))
        return false;
    size_t slots = lt_slots(s);
    cm_mem_free(s->mem, s->num, slots * sizeof(uint32_t));
    cm_mem_free(s->mem, s->from_root, slots);
    cm_mem_free(s->mem, s->tree, s->tree_words * sizeof *s->tree);
    cm_mem_free(s->mem, s->cursor, slots * sizeof(uint32_t));
    s->num = NULL;
    s->from_root = NULL;
    s->tree = NULL;
    s->cursor = NULL;
    s->nd = cm_mem_alloc(s->mem, slots * sizeof *s->nd);
    if (!s->nd)
        return false;
    lt_semi(s, NULL, NULL, NULL);
    if (!lt_climb(s, max_climbs) && !lt_buckets(s))
        return false;
    for (uint32_t i = 2; i <= s->count; i++)
        s->parent[i] = s->nd[i].label;
    cm_mem_free(s->mem, s->nd, slots * sizeof *s->nd);
    cm_mem_free(s->mem, s->preds, (s->npreds ? s->npreds : 1) * sizeof(uint32_t));
    cm_mem_free(s->mem, s->has_preds, (slots / 64 + 1) * sizeof *s->has_preds);
    s->nd = NULL;
    s->preds = NULL;
    s->has_preds = NULL;
    return lt_results(h, s);
}

nt_status hp_dominators_bounded(nt_heap *h, uint64_t max_climbs)
{
    if (!h)
        return NT_ERR_INVALID_ARG;
    if (h->idom)
        return NT_OK;
    lt s = { 0 };
    s.mem = &h->mem;
    s.n = h->n;
    s.tree_words = lt_tree_words(h);
    bool ok = lt_run(h, &s, max_climbs);
    lt_free(&s);
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

nt_status nt_heap_dominators(nt_heap *h)
{
    /* Real heaps climb about once a node; a bound of 8 per node and
     * reference leaves semi-NCA every graph that is not built against it. */
    uint64_t bound = h ? 8 * ((uint64_t)h->n + h->stats.edges + h->nroots) + 1024 : 0;
    return hp_dominators_bounded(h, bound);
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
