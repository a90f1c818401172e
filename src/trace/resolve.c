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

nt_status tr_resolve_frames(nt_trace_builder *b)
{
    nt_trace *t = b->t;
    cm_mem *m = &t->mem;
    size_t u = b->nuaddr, nq, nu, n_seen = t->nmethods + b->ncold + b->dropped;
    uint64_t *q;
    uint32_t *rank;
    if (!addrs_to_frames(b, &q, &nu, &nq, &rank) || !tr_keep_cold(b, q, nu)) {
        cm_mem_free(m, q, nq * sizeof *q);
        cm_mem_free(m, rank, (u ? u : 1) * sizeof *rank);
        return NT_ERR_NOMEM;
    }
    tr_symbols sy;
    nt_status st = NT_OK;
    size_t ni = b->nistacks;
    tr_strings_seal(&t->mem, &t->strings);
    tr_link_assemblies(t);
    if (!tr_symbols_build(m, &sy, t->methods, t->nmethods, n_seen, q, nu, nq)) {
        tr_symbols_free(m, &sy);
        cm_mem_free(m, rank, (u ? u : 1) * sizeof *rank);
        return NT_ERR_NOMEM;
    }
    tr_resolve *rs = cm_mem_alloc(m, (ni ? ni : 1) * sizeof *rs);
    uint32_t maxd = 1;
    for (size_t i = 0; i < ni; i++)
        if (b->istacks[i].count > maxd)
            maxd = b->istacks[i].count;
    /* A stack's changing frames' picks at one time (vp), and their frame ids (vf). */
    uint32_t *vp = cm_mem_alloc(m, 2 * (size_t)maxd * sizeof *vp), *vf = vp ? vp + maxd : NULL;
    /* Each distinct address's pick when time cannot change it (no record,
     * or one never unloaded: tr_symbols_pick then always returns it), else
     * whether it is timeless: one lookup per address instead of one per
     * frame of every time-dependent sample. */
    uint32_t *fixed = cm_mem_alloc(m, (u ? u : 1) * sizeof *fixed);
    tr_variant *var = NULL; /* per resolved stack */
    size_t var_cap = 0;
    cm_map vindex = { 0 };  /* (interned stack, picks' hash) -> resolved stack + 1 */
    cm_map more = { 0 };    /* (address id, pick) -> frame id, for an address's later picks */
    uint32_t *vpos = NULL;  /* per interned stack, the positions of its frames whose pick may change */
    size_t nvpos = 0, vpos_cap = 0;
    size_t cut = SIZE_MAX;  /* the first sample a limit kept from resolving */
    if (!rs || !vp || !fixed) {
        st = NT_ERR_NOMEM;
        goto out;
    }
    for (size_t id = 0; id < u; id++) {
        uint32_t nc;
        const uint32_t *c = tr_symbols_candidates_at(&sy, rank[id], &nc);
        if (nc == 0)
            fixed[id] = NT_TRACE_NO_METHOD;
        else if (nc == 1 && t->methods[c[0]].valid_until == INT64_MAX)
            fixed[id] = c[0];
        else
            fixed[id] = tr_symbols_timeless(t->methods, c, nc) ? TR_VARIES_TIMELESS : TR_VARIES;
        if (fixed[id] < TR_VARIES || fixed[id] == NT_TRACE_NO_METHOD)
            t->frames[id].method_index = fixed[id];
    }
    for (size_t i = 0; i < ni; i++)
        rs[i] = (tr_resolve){ UINT32_MAX, 0, 0, 0, 0 };
    uint64_t total = 0, resolved = 0;
    tr_sample *s_next = NULL; /* walks a chunk */
    for (size_t i = 0; i < t->nsamples + b->nextra; i++) {
        tr_sample *s = i >= t->nsamples ? &b->extra[i - t->nsamples] : (i & (TR_SCHUNK - 1)) ? s_next : TR_SAMPLE(t, i);
        s_next = s + 1;
        tr_resolve *r = &rs[s->stack];
        uint32_t rid = UINT32_MAX;
        if (r->state == 1 && r->first != UINT32_MAX) {
            rid = r->first; /* the common case: a timeless stack already resolved */
        } else {
            const tr_istack *is = &b->istacks[s->stack];
            const uint32_t *ids = tr_ids(t, is->off, is->count);
            if (r->state == 0) {
                /* Once per interned stack: the frames whose pick may change
                 * with time, and whether any may. */
                bool timeless = true;
                r->vfirst = (uint32_t)nvpos;
                for (uint32_t k = 0; k < is->count; k++) {
                    uint32_t fx = fixed[ids[k]];
                    /* No record (NT_TRACE_NO_METHOD) is as fixed as one record. */
                    if (fx < TR_VARIES || fx == NT_TRACE_NO_METHOD)
                        continue;
                    if (!cm_mem_reserve(m, (void **)&vpos, &vpos_cap, nvpos + 1, sizeof *vpos)) {
                        st = NT_ERR_NOMEM;
                        goto out;
                    }
                    vpos[nvpos++] = k;
                    timeless = timeless && fx == TR_VARIES_TIMELESS;
                }
                r->vn = (uint32_t)nvpos - r->vfirst;
                r->state = timeless ? 1 : 2;
            }
            /* A lookup for each frame that may change: the picks at this time. */
            const uint32_t *pos = r->vn ? vpos + r->vfirst : NULL; /* vpos is NULL until a stack has such a frame */
            for (uint32_t j = 0; j < r->vn; j++) {
                uint32_t nc;
                const uint32_t *c = tr_symbols_candidates_at(&sy, rank[ids[pos[j]]], &nc);
                vp[j] = tr_symbols_pick(t->methods, c, nc, s->ticks);
                t->symbol_lookups++;
                /* Counted samples resolve at their first one's time: right only when no
                 * record's time falls among theirs. */
                if (t->agg && !tr_symbols_steady(t->methods, c, nc, s->ticks, t->agg[i].last_ticks))
                    t->inexact = true;
            }
            /* An equal variant: the newest first (runs of samples resolve
             * alike), else through the index by hash; only when two
             * variants' hashes collide are the others compared one by one.
             * The variants of one stack differ only where picks may change,
             * so those are all that is hashed and compared: a sample costs
             * its changing frames' lookups, never a scan of every variant a
             * hostile stream made. */
            uint64_t h = hash_picks(vp, r->vn);
            uint64_t vkey = h ^ ((uint64_t)s->stack + 1) * 0x9E3779B97F4A7C15ull;
            uint32_t v = r->first;
            if (v != UINT32_MAX && var[v].hash == h && same_picks(t, v, pos, vp, r->vn)) {
                rid = v;
            } else if (r->first != UINT32_MAX) {
                const uint64_t *iv = cm_map_get(&vindex, vkey);
                v = iv ? (uint32_t)(*iv - 1) : UINT32_MAX;
                if (v != UINT32_MAX && var[v].hash == h && same_picks(t, v, pos, vp, r->vn))
                    rid = v;
                for (v = v != UINT32_MAX && rid == UINT32_MAX ? r->first : UINT32_MAX; v != UINT32_MAX; v = var[v].next)
                    if (var[v].hash == h && same_picks(t, v, pos, vp, r->vn)) {
                        rid = v;
                        break;
                    }
            }
            if (rid == UINT32_MAX) {
                if (r->variants >= b->lim.max_variants) {
                    snprintf(t->message, sizeof t->message,
                             "resolution stopped at sample %zu: one stack resolved %u ways (nt_trace_limits.max_variants)",
                             i, r->variants);
                    cut = i;
                    break;
                }
                /* The interned array serves when every changing frame takes
                 * its address's first pick; else the variant gets its own. */
                bool own = false;
                for (uint32_t j = 0; j < r->vn; j++) {
                    uint32_t had = t->frames[ids[pos[j]]].method_index;
                    own = own || (had != TR_PICK_UNSET && had != vp[j]);
                }
                if (own && t->nids + is->count > b->lim.max_frames) {
                    snprintf(t->message, sizeof t->message,
                             "resolution stopped at sample %zu: more than %llu resolved frames (nt_trace_limits.max_frames)",
                             i, (unsigned long long)b->lim.max_frames);
                    cut = i;
                    break;
                }
                for (uint32_t j = 0; j < r->vn; j++)
                    if ((vf[j] = frame_of(t, &more, ids[pos[j]], vp[j])) == UINT32_MAX) {
                        st = NT_ERR_NOMEM;
                        goto out;
                    }
                uint32_t off = is->off;
                if (own) {
                    if (t->nids + is->count > UINT32_MAX ||
                        !reserve_slow(m, (void **)&t->ids, &t->ids_cap, t->nids + is->count, sizeof *t->ids)) {
                        st = NT_ERR_NOMEM;
                        goto out;
                    }
                    off = (uint32_t)t->nids;
                    memcpy(t->ids + off, t->ids + is->off, is->count * sizeof *t->ids);
                    for (uint32_t j = 0; j < r->vn; j++)
                        t->ids[off + pos[j]] = vf[j];
                    t->nids += is->count;
                }
                rid = add_rstack(t, off, is->count);
                if (rid == UINT32_MAX ||
                    !cm_mem_reserve(m, (void **)&var, &var_cap, (size_t)rid + 1, sizeof *var)) {
                    st = NT_ERR_NOMEM;
                    goto out;
                }
                var[rid] = (tr_variant){ r->first, h };
                r->first = rid;
                r->variants++;
                /* A timeless stack resolves once: only the others look variants up. */
                uint64_t *slot = r->state == 2 ? cm_map_put(m, &vindex, vkey, NULL) : NULL;
                if (r->state == 2 && !slot) {
                    st = NT_ERR_NOMEM;
                    goto out;
                }
                if (slot && (*slot == 0 || var[*slot - 1].hash != h))
                    *slot = (uint64_t)rid + 1;
            }
        }
        s->stack = rid;
        if (i >= t->nsamples)
            continue; /* another event's stack (tr_builder_resolve_also): not a sample */
        total += t->stacks[rid].count * tr_count(t, i);
        resolved += t->stacks[rid].resolved * tr_count(t, i);
    }
    t->total_frames += total;
    t->resolved_frames += resolved;
    if (cut != SIZE_MAX) {
        /* What was resolved is delivered: the samples before the cut. */
        t->nsamples = cut;
        if (t->agg) {
            t->total_samples = 0;
            for (size_t i = 0; i < cut; i++)
                t->total_samples += t->agg[i].count;
        }
        t->status = NT_ERR_LIMIT;
    }
    /* Frames point into t->methods, final by now (shrunk before resolve()),
     * or to the trace's empty record: never NULL, so a consumer can read
     * f->method->name without a check.  A frame no resolved stack reached
     * (its stacks came after a limit's cut) is left unresolved. */
    memset(&t->unresolved, 0, sizeof t->unresolved);
    t->unresolved.name = t->unresolved.declaring_type = t->unresolved.signature = t->unresolved.assembly = "";
    for (size_t f = 0; f < t->nframes; f++) {
        nt_frame *fr = &t->frames[f];
        if (fr->method_index == TR_PICK_UNSET)
            fr->method_index = NT_TRACE_NO_METHOD;
        fr->method = fr->method_index == NT_TRACE_NO_METHOD ? &t->unresolved : &t->methods[fr->method_index];
    }
out:
    cm_mem_free(m, rank, (u ? u : 1) * sizeof *rank);
    cm_mem_free(m, fixed, (u ? u : 1) * sizeof *fixed);
    cm_mem_free(m, var, var_cap * sizeof *var);
    cm_map_free(m, &vindex);
    cm_map_free(m, &more);
    cm_mem_free(m, vpos, vpos_cap * sizeof *vpos);
    cm_mem_free(m, vp, 2 * (size_t)maxd * sizeof *vp);
    cm_mem_free(m, rs, (ni ? ni : 1) * sizeof *rs);
    tr_symbols_free(m, &sy);
    return st;
}
