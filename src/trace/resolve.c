/* Resolution: every sample's frames named by the method record whose code
 * covered the address at the sample's time.  Once per interned stack when no
 * frame of it can resolve differently over time (the common case), else per
 * sample, sharing one frame id array among the samples that resolve alike.
 *
 * The trace's frame table starts as one frame per address id, resolved to
 * the address's first (mostly: only) method record, so a stack that cannot
 * change with time resolves to its interned array of address ids as it
 * stands: no copy.  A variant that resolves an address to another record
 * gets a frame for that pair and its own array. */
#include "trace/build_internal.h"

#include <stdio.h>
#include <string.h>

/* Per interned stack while resolving. */
typedef struct tr_resolve {
    uint32_t first;    /* newest resolved stack made from it, UINT32_MAX none */
    uint32_t variants; /* resolved stacks made from it (at most max_variants) */
    uint32_t vfirst, vn; /* its frames whose pick may change: vpos[vfirst .. vfirst + vn) */
    uint8_t state;     /* 0 unknown, 1 timeless, 2 depends on time */
} tr_resolve;

/* Per resolved stack while resolving: the next older variant of the same
 * interned stack, and the hash of its picks. */
typedef struct tr_variant {
    uint32_t next;
    uint64_t hash;
} tr_variant;

/* Resolved stack v's picks equal the changing ones vp at positions pos. */
static bool same_picks(const nt_trace *t, uint32_t v, const uint32_t *pos, const uint32_t *vp, uint32_t vn)
{
    const uint32_t *ids = tr_stack_ids(t, v);
    for (uint32_t j = 0; j < vn; j++)
        if (t->frames[ids[pos[j]]].method_index != vp[j])
            return false;
    return true;
}

static uint64_t hash_picks(const uint32_t *pick, uint32_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    for (uint32_t k = 0; k < n; k++)
        h = (h ^ pick[k]) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 29);
}

/* Per-address pick markers for resolve(); method indices stay below
 * TR_COLD, far under these. */
#define TR_VARIES (UINT32_MAX - 2)          /* the pick depends on time */
#define TR_VARIES_TIMELESS (UINT32_MAX - 1) /* ... yet tr_symbols_timeless holds */
#define TR_PICK_UNSET (UINT32_MAX - 3)      /* a frame's record until its address is first resolved */

/* The frame id of address id a resolved to record pick: a itself for its
 * first pick, else a frame added for the pair (more: (a, pick) -> id).
 * UINT32_MAX when memory is short. */
static uint32_t frame_of(nt_trace *t, cm_map *more, uint32_t a, uint32_t pick)
{
    if (t->frames[a].method_index == TR_PICK_UNSET)
        t->frames[a].method_index = pick;
    if (t->frames[a].method_index == pick)
        return a;
    bool added;
    uint64_t *slot = cm_map_put(&t->mem, more, (uint64_t)a << 32 | pick, &added);
    if (!slot)
        return UINT32_MAX;
    if (added) {
        if (t->nframes >= UINT32_MAX - 1 || !GROW_SLOW(&t->mem, t->frames, t->nframes, t->frames_cap))
            return UINT32_MAX;
        t->frames[t->nframes] = (nt_frame){ t->frames[a].ip, NULL, pick };
        *slot = t->nframes++;
    }
    return (uint32_t)*slot;
}

static uint32_t add_rstack(nt_trace *t, uint32_t off, uint32_t n)
{
    if (t->nstacks >= UINT32_MAX - 1 || !GROW(&t->mem, t->stacks, t->nstacks, t->stacks_cap))
        return UINT32_MAX;
    uint32_t resolved = 0;
    for (uint32_t k = 0; k < n; k++)
        resolved += t->frames[t->ids[off + k]].method_index != NT_TRACE_NO_METHOD;
    t->stacks[t->nstacks] = (tr_rstack){ off, n, resolved };
    return (uint32_t)t->nstacks++;
}

/* The address table, once the frame table holds what resolution needs of it. */
void tr_addrs_release(nt_trace_builder *b)
{
    cm_mem *m = &b->t->mem;
    cm_map_free(m, &b->addr_ids);
    cm_map_free(m, &b->leaf_ids);
    cm_mem_free(m, b->uaddr, b->uaddr_cap * sizeof *b->uaddr);
    cm_mem_free(m, b->leaf, b->leaf_cap * sizeof *b->leaf);
    b->uaddr = NULL;
    b->leaf = NULL;
    b->uaddr_cap = b->leaf_cap = b->nuaddr = 0;
}

/* The address resolution looks address id id up at: an innermost ip as is,
 * a return address minus one. */
static uint64_t lookup_addr(const nt_trace_builder *b, size_t id)
{
    return b->uaddr[id] - (b->leaf[id / 64] >> (id % 64) & 1 ? 0 : 1);
}

bool tr_builder_lookup_addrs(const nt_trace_builder *b, cm_mem *m, uint64_t **out, size_t *n, size_t *alloc)
{
    *alloc = b->nuaddr ? b->nuaddr : 1;
    *n = b->nuaddr;
    *out = cm_mem_alloc(m, *alloc * sizeof **out);
    if (!*out)
        return false;
    for (size_t id = 0; id < b->nuaddr; id++)
        (*out)[id] = lookup_addr(b, id);
    return tr_addrs_prepare(m, out, n, alloc);
}

/* The frame table, one frame per address id with its ip as recorded, and
 * the looked-up addresses (innermost as is, return addresses minus one)
 * sorted and deduplicated in q with each id's rank among them; the address
 * table is then released.  False when memory is short. */
static bool addrs_to_frames(nt_trace_builder *b, uint64_t **q, size_t *nu, size_t *nq, uint32_t **rank)
{
    nt_trace *t = b->t;
    cm_mem *m = &t->mem;
    size_t u = b->nuaddr;
    *nq = u ? u : 1;
    *nu = u;
    *q = cm_mem_alloc(m, *nq * sizeof **q);
    *rank = cm_mem_alloc(m, *nq * sizeof **rank);
    t->frames = cm_mem_alloc(m, *nq * sizeof *t->frames);
    t->frames_cap = t->frames ? *nq : 0;
    bool ok = *q && *rank && t->frames;
    for (size_t id = 0; ok && id < u; id++) {
        (*q)[id] = lookup_addr(b, id);
        t->frames[id] = (nt_frame){ b->uaddr[id], NULL, TR_PICK_UNSET };
    }
    t->nframes = ok ? u : 0;
    ok = ok && tr_addrs_prepare(m, q, nu, nq);
    for (size_t id = 0; ok && id < u; id++)
        (*rank)[id] = (uint32_t)tr_addrs_lower_bound(*q, *nu, lookup_addr(b, id));
    tr_addrs_release(b);
    return ok;
}

/* What resolution holds while it walks the samples. */
typedef struct tr_resolving {
    nt_trace_builder *b;
    nt_trace *t;
    cm_mem *m;
    tr_symbols sy;
    size_t naddrs;    /* address ids (the builder's table is released by then) */
    uint32_t *rank;   /* per address id: its rank among the looked-up addresses */
    /* Each distinct address's pick when time cannot change it (no record,
     * or one never unloaded: tr_symbols_pick then always returns it), else
     * whether it is timeless: one lookup per address instead of one per
     * frame of every time-dependent sample. */
    uint32_t *fixed;
    tr_resolve *rs;   /* per interned stack */
    uint32_t maxd;    /* the deepest interned stack */
    /* A stack's changing frames' picks at one time (vp), and their frame ids (vf). */
    uint32_t *vp, *vf;
    tr_variant *var;  /* per resolved stack */
    size_t var_cap;
    cm_map vindex;    /* (interned stack, picks' hash) -> resolved stack + 1 */
    cm_map more;      /* (address id, pick) -> frame id, for an address's later picks */
    uint32_t *vpos;   /* per interned stack, the positions of its frames whose pick may change */
    size_t nvpos, vpos_cap;
} tr_resolving;

/* How a sample's resolution went: a resolved stack, or why none. */
enum { TR_RESOLVED, TR_RESOLVE_NOMEM, TR_RESOLVE_LIMIT };

/* Each address's fixed pick (or the mark that time may change it); the
 * frames of fixed addresses take their record now. */
static void fixed_picks(tr_resolving *w)
{
    nt_trace *t = w->t;
    for (size_t id = 0; id < w->naddrs; id++) {
        uint32_t nc;
        const uint32_t *c = tr_symbols_candidates_at(&w->sy, w->rank[id], &nc);
        if (nc == 0)
            w->fixed[id] = NT_TRACE_NO_METHOD;
        else if (nc == 1 && t->methods[c[0]].valid_until == INT64_MAX)
            w->fixed[id] = c[0];
        else
            w->fixed[id] = tr_symbols_timeless(t->methods, c, nc) ? TR_VARIES_TIMELESS : TR_VARIES;
        if (w->fixed[id] < TR_VARIES || w->fixed[id] == NT_TRACE_NO_METHOD)
            t->frames[id].method_index = w->fixed[id];
    }
}

/* Once per interned stack: the frames whose pick may change with time, and
 * whether any may.  False when memory is short. */
static bool changing_frames(tr_resolving *w, tr_resolve *r, const tr_istack *is, const uint32_t *ids)
{
    bool timeless = true;
    r->vfirst = (uint32_t)w->nvpos;
    for (uint32_t k = 0; k < is->count; k++) {
        uint32_t fx = w->fixed[ids[k]];
        /* No record (NT_TRACE_NO_METHOD) is as fixed as one record. */
        if (fx < TR_VARIES || fx == NT_TRACE_NO_METHOD)
            continue;
        if (!cm_mem_reserve(w->m, (void **)&w->vpos, &w->vpos_cap, w->nvpos + 1, sizeof *w->vpos))
            return false;
        w->vpos[w->nvpos++] = k;
        timeless = timeless && fx == TR_VARIES_TIMELESS;
    }
    r->vn = (uint32_t)w->nvpos - r->vfirst;
    r->state = timeless ? 1 : 2;
    return true;
}

/* A lookup for each frame that may change: the picks at the time of sample
 * i (ticks) into w->vp. */
static void picks_at(tr_resolving *w, const tr_resolve *r, const uint32_t *ids, const uint32_t *pos, size_t i,
                     int64_t ticks)
{
    nt_trace *t = w->t;
    for (uint32_t j = 0; j < r->vn; j++) {
        uint32_t nc;
        const uint32_t *c = tr_symbols_candidates_at(&w->sy, w->rank[ids[pos[j]]], &nc);
        w->vp[j] = tr_symbols_pick(t->methods, c, nc, ticks);
        t->symbol_lookups++;
        /* Counted samples resolve at their first one's time: right only when no
         * record's time falls among theirs. */
        if (t->agg && !tr_symbols_steady(t->methods, c, nc, ticks, t->agg[i].last_ticks))
            t->inexact = true;
    }
}

/* An equal variant of r's stack: the newest first (runs of samples resolve
 * alike), else through the index by hash; only when two variants' hashes
 * collide are the others compared one by one.  The variants of one stack
 * differ only where picks may change, so those are all that is hashed and
 * compared: a sample costs its changing frames' lookups, never a scan of
 * every variant a hostile stream made.  UINT32_MAX when there is none. */
static uint32_t find_variant(const tr_resolving *w, const tr_resolve *r, const uint32_t *pos, uint64_t h,
                             uint64_t vkey)
{
    const nt_trace *t = w->t;
    uint32_t v = r->first;
    if (v == UINT32_MAX)
        return UINT32_MAX;
    if (w->var[v].hash == h && same_picks(t, v, pos, w->vp, r->vn))
        return v;
    const uint64_t *iv = cm_map_get(&w->vindex, vkey);
    v = iv ? (uint32_t)(*iv - 1) : UINT32_MAX;
    if (v == UINT32_MAX)
        return UINT32_MAX;
    if (w->var[v].hash == h && same_picks(t, v, pos, w->vp, r->vn))
        return v;
    for (v = r->first; v != UINT32_MAX; v = w->var[v].next)
        if (w->var[v].hash == h && same_picks(t, v, pos, w->vp, r->vn))
            return v;
    return UINT32_MAX;
}

/* A new resolved stack for interned stack is with the picks in w->vp
 * (sample i's), into *rid: TR_RESOLVED, or TR_RESOLVE_LIMIT with the
 * trace's message saying which limit, or TR_RESOLVE_NOMEM. */
static int add_variant(tr_resolving *w, tr_resolve *r, const tr_istack *is, const uint32_t *ids,
                       const uint32_t *pos, uint64_t h, uint64_t vkey, size_t i, uint32_t *rid)
{
    nt_trace *t = w->t;
    const nt_trace_limits *lim = &w->b->lim;
    if (r->variants >= lim->max_variants) {
        snprintf(t->message, sizeof t->message,
                 "resolution stopped at sample %zu: one stack resolved %u ways (nt_trace_limits.max_variants)", i,
                 r->variants);
        return TR_RESOLVE_LIMIT;
    }
    /* The interned array serves when every changing frame takes its
     * address's first pick; else the variant gets its own. */
    bool own = false;
    for (uint32_t j = 0; j < r->vn; j++) {
        uint32_t had = t->frames[ids[pos[j]]].method_index;
        own = own || (had != TR_PICK_UNSET && had != w->vp[j]);
    }
    if (own && t->nids + is->count > lim->max_frames) {
        snprintf(t->message, sizeof t->message,
                 "resolution stopped at sample %zu: more than %llu resolved frames (nt_trace_limits.max_frames)", i,
                 (unsigned long long)lim->max_frames);
        return TR_RESOLVE_LIMIT;
    }
    for (uint32_t j = 0; j < r->vn; j++)
        if ((w->vf[j] = frame_of(t, &w->more, ids[pos[j]], w->vp[j])) == UINT32_MAX)
            return TR_RESOLVE_NOMEM;
    uint32_t off = is->off;
    if (own) {
        if (t->nids + is->count > UINT32_MAX ||
            !reserve_slow(w->m, (void **)&t->ids, &t->ids_cap, t->nids + is->count, sizeof *t->ids))
            return TR_RESOLVE_NOMEM;
        off = (uint32_t)t->nids;
        memcpy(t->ids + off, t->ids + is->off, is->count * sizeof *t->ids);
        for (uint32_t j = 0; j < r->vn; j++)
            t->ids[off + pos[j]] = w->vf[j];
        t->nids += is->count;
    }
    *rid = add_rstack(t, off, is->count);
    if (*rid == UINT32_MAX || !cm_mem_reserve(w->m, (void **)&w->var, &w->var_cap, (size_t)*rid + 1, sizeof *w->var))
        return TR_RESOLVE_NOMEM;
    w->var[*rid] = (tr_variant){ r->first, h };
    r->first = *rid;
    r->variants++;
    /* A timeless stack resolves once: only the others look variants up. */
    uint64_t *slot = r->state == 2 ? cm_map_put(w->m, &w->vindex, vkey, NULL) : NULL;
    if (r->state == 2 && !slot)
        return TR_RESOLVE_NOMEM;
    if (slot && (*slot == 0 || w->var[*slot - 1].hash != h))
        *slot = (uint64_t)*rid + 1;
    return TR_RESOLVED;
}

/* Sample i (s: its entry) resolved: its resolved stack into *rid. */
static int resolve_sample(tr_resolving *w, const tr_sample *s, size_t i, uint32_t *rid)
{
    tr_resolve *r = &w->rs[s->stack];
    if (r->state == 1 && r->first != UINT32_MAX) {
        *rid = r->first; /* the common case: a timeless stack already resolved */
        return TR_RESOLVED;
    }
    const tr_istack *is = &w->b->istacks[s->stack];
    const uint32_t *ids = tr_ids(w->t, is->off, is->count);
    if (r->state == 0 && !changing_frames(w, r, is, ids))
        return TR_RESOLVE_NOMEM;
    const uint32_t *pos = r->vn ? w->vpos + r->vfirst : NULL; /* vpos is NULL until a stack has such a frame */
    picks_at(w, r, ids, pos, i, s->ticks);
    uint64_t h = hash_picks(w->vp, r->vn);
    uint64_t vkey = h ^ ((uint64_t)s->stack + 1) * 0x9E3779B97F4A7C15ull;
    *rid = find_variant(w, r, pos, h, vkey);
    return *rid != UINT32_MAX ? TR_RESOLVED : add_variant(w, r, is, ids, pos, h, vkey, i, rid);
}

/* What was resolved is delivered: the samples before the cut. */
static void cut_samples(nt_trace *t, size_t cut)
{
    t->nsamples = cut;
    if (t->agg) {
        t->total_samples = 0;
        for (size_t i = 0; i < cut; i++)
            t->total_samples += t->agg[i].count;
    }
    t->status = NT_ERR_LIMIT;
}

/* Frames point into t->methods, final by now (shrunk before resolve()), or
 * to the trace's empty record: never NULL, so a consumer can read
 * f->method->name without a check.  A frame no resolved stack reached (its
 * stacks came after a limit's cut) is left unresolved. */
static void point_frames(nt_trace *t)
{
    memset(&t->unresolved, 0, sizeof t->unresolved);
    t->unresolved.name = t->unresolved.declaring_type = t->unresolved.signature = t->unresolved.assembly = "";
    for (size_t f = 0; f < t->nframes; f++) {
        nt_frame *fr = &t->frames[f];
        if (fr->method_index == TR_PICK_UNSET)
            fr->method_index = NT_TRACE_NO_METHOD;
        fr->method = fr->method_index == NT_TRACE_NO_METHOD ? &t->unresolved : &t->methods[fr->method_index];
    }
}

/* Every sample, then every extra stack (tr_builder_resolve_also), resolved
 * in stream order; the frame counts summed over the samples. */
static nt_status resolve_samples(tr_resolving *w)
{
    nt_trace *t = w->t;
    nt_trace_builder *b = w->b;
    uint64_t total = 0, resolved = 0;
    size_t cut = SIZE_MAX; /* the first sample a limit kept from resolving */
    tr_sample *s_next = NULL; /* walks a chunk */
    for (size_t i = 0; i < t->nsamples + b->nextra; i++) {
        tr_sample *s = i >= t->nsamples ? &b->extra[i - t->nsamples] : (i & (TR_SCHUNK - 1)) ? s_next : TR_SAMPLE(t, i);
        s_next = s + 1;
        uint32_t rid;
        int how = resolve_sample(w, s, i, &rid);
        if (how == TR_RESOLVE_NOMEM)
            return NT_ERR_NOMEM;
        if (how == TR_RESOLVE_LIMIT) {
            cut = i;
            break;
        }
        s->stack = rid;
        if (i >= t->nsamples)
            continue; /* another event's stack (tr_builder_resolve_also): not a sample */
        total += t->stacks[rid].count * tr_count(t, i);
        resolved += t->stacks[rid].resolved * tr_count(t, i);
    }
    t->total_frames += total;
    t->resolved_frames += resolved;
    if (cut != SIZE_MAX)
        cut_samples(t, cut);
    point_frames(t);
    return NT_OK;
}

/* The per-stack, per-address and per-pick tables of a resolution; false
 * when memory is short (resolving_free releases what was made). */
static bool resolving_init(tr_resolving *w)
{
    size_t u = w->naddrs, ni = w->b->nistacks;
    w->rs = cm_mem_alloc(w->m, (ni ? ni : 1) * sizeof *w->rs);
    w->maxd = 1;
    for (size_t i = 0; i < ni; i++)
        if (w->b->istacks[i].count > w->maxd)
            w->maxd = w->b->istacks[i].count;
    w->vp = cm_mem_alloc(w->m, 2 * (size_t)w->maxd * sizeof *w->vp);
    w->vf = w->vp ? w->vp + w->maxd : NULL;
    w->fixed = cm_mem_alloc(w->m, (u ? u : 1) * sizeof *w->fixed);
    if (!w->rs || !w->vp || !w->fixed)
        return false;
    for (size_t i = 0; i < ni; i++)
        w->rs[i] = (tr_resolve){ UINT32_MAX, 0, 0, 0, 0 };
    return true;
}

static void resolving_free(tr_resolving *w)
{
    cm_mem *m = w->m;
    size_t u = w->naddrs, ni = w->b->nistacks;
    cm_mem_free(m, w->rank, (u ? u : 1) * sizeof *w->rank);
    cm_mem_free(m, w->fixed, (u ? u : 1) * sizeof *w->fixed);
    cm_mem_free(m, w->var, w->var_cap * sizeof *w->var);
    cm_map_free(m, &w->vindex);
    cm_map_free(m, &w->more);
    cm_mem_free(m, w->vpos, w->vpos_cap * sizeof *w->vpos);
    cm_mem_free(m, w->vp, 2 * (size_t)w->maxd * sizeof *w->vp);
    cm_mem_free(m, w->rs, (ni ? ni : 1) * sizeof *w->rs);
    tr_symbols_free(m, &w->sy);
}

nt_status tr_resolve_frames(nt_trace_builder *b)
{
    nt_trace *t = b->t;
    cm_mem *m = &t->mem;
    size_t u = b->nuaddr, nq, nu, n_seen = t->nmethods + b->ncold + b->dropped;
    uint64_t *q;
    tr_resolving w = { .b = b, .t = t, .m = m, .naddrs = u };
    if (!addrs_to_frames(b, &q, &nu, &nq, &w.rank) || !tr_keep_cold(b, q, nu)) {
        cm_mem_free(m, q, nq * sizeof *q);
        cm_mem_free(m, w.rank, (u ? u : 1) * sizeof *w.rank);
        return NT_ERR_NOMEM;
    }
    tr_strings_seal(&t->mem, &t->strings);
    tr_link_assemblies(t);
    nt_status st = NT_ERR_NOMEM;
    if (tr_symbols_build(m, &w.sy, t->methods, t->nmethods, n_seen, q, nu, nq) && resolving_init(&w)) {
        fixed_picks(&w);
        st = resolve_samples(&w);
    }
    resolving_free(&w);
    return st;
}
