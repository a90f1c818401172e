/* Resolution: every sample's frames named by the method record whose code
 * covered the address at the sample's time.  Once per interned stack when no
 * frame of it can resolve differently over time (the common case), else per
 * sample, sharing one frames array among the samples that resolve alike. */
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

/* A variant's picks (frame_picks) equal the changing ones vp at positions pos. */
static bool same_picks(const uint32_t *frame_picks, const uint32_t *pos, const uint32_t *vp, uint32_t vn)
{
    for (uint32_t j = 0; j < vn; j++)
        if (frame_picks[pos[j]] != vp[j])
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

/* Resolved stacks while resolving: their method picks (frames[off + k]'s
 * method_index, 4 bytes a frame) and the interned stack each came from.  The
 * frames themselves are written once all are known, at their exact size. */
typedef struct tr_picks {
    uint32_t *pick;
    size_t n, cap;
    uint32_t *src;         /* resolved stack -> interned stack */
    size_t src_cap;
} tr_picks;

static uint32_t add_rstack(nt_trace *t, tr_picks *p, uint32_t istack, uint32_t n, const uint32_t *pick)
{
    nt_mem *m = &t->mem;
    if (t->nstacks >= UINT32_MAX - 1 || p->n + n > UINT32_MAX)
        return UINT32_MAX;
    if (!nt_mem_reserve(m, (void **)&p->pick, &p->cap, p->n + n, sizeof *p->pick) ||
        !nt_mem_reserve(m, (void **)&p->src, &p->src_cap, t->nstacks + 1, sizeof *p->src) ||
        !GROW(m, t->stacks, t->nstacks, t->stacks_cap))
        return UINT32_MAX;
    uint32_t resolved = 0;
    for (uint32_t k = 0; k < n; k++) {
        p->pick[p->n + k] = pick[k];
        resolved += pick[k] != NT_TRACE_NO_METHOD;
    }
    p->src[t->nstacks] = istack;
    t->stacks[t->nstacks] = (tr_rstack){ (uint32_t)p->n, n, resolved };
    p->n += n;
    return (uint32_t)t->nstacks++;
}

/* The distinct frames and every resolved stack's frame ids.  A frame's ip
 * comes back from its address id (the raw ips were freed once interning was
 * over): the looked-up address is the ip, minus one after the first frame. */
static bool write_frames(nt_trace_builder *b, const tr_picks *p, const uint32_t *rank, const uint64_t *addrs)
{
    nt_trace *t = b->t;
    nt_mem *m = &t->mem;
    /* Frames point into t->methods, final by now (shrunk before resolve()),
     * or to the trace's empty record: never NULL, so a consumer can read
     * f->method->name without a check, as it could read "" before. */
    memset(&t->unresolved, 0, sizeof t->unresolved);
    t->unresolved.name = t->unresolved.declaring_type = t->unresolved.signature = t->unresolved.assembly = "";
    if (!p->n)
        return true;
    t->ids = nt_mem_alloc(m, p->n * sizeof *t->ids);
    if (!t->ids)
        return false;
    t->ids_cap = t->nids = p->n;
    nt_map fid = { 0 }; /* (address id, innermost or not, pick) -> frame id */
    bool ok = true;
    for (size_t r = 0; ok && r < t->nstacks; r++) {
        const tr_rstack *rs = &t->stacks[r];
        const uint32_t *ids = rs->count ? b->ipu + b->istacks[p->src[r]].off : NULL; /* NULL when every stack is empty */
        for (uint32_t k = 0; k < rs->count; k++) {
            uint32_t pk = p->pick[rs->off + k];
            uint64_t key = (uint64_t)ids[k] << 32 | (k ? 1u << 31 : 0) | (pk & 0x7FFFFFFFu);
            bool added;
            uint64_t *slot = nt_map_put(m, &fid, key, &added);
            if (!slot || (added && !GROW(m, t->frames, t->nframes, t->frames_cap))) {
                ok = false;
                break;
            }
            if (added) {
                *slot = t->nframes;
                t->frames[t->nframes++] = (nt_frame){ addrs[rank[ids[k]]] + (k ? 1 : 0),
                                                      pk == NT_TRACE_NO_METHOD ? &t->unresolved : &t->methods[pk], pk };
            }
            t->ids[rs->off + k] = (uint32_t)*slot;
        }
    }
    nt_map_free(m, &fid);
    return ok;
}

nt_status tr_resolve_frames(nt_trace_builder *b)
{
    nt_trace *t = b->t;
    nt_mem *m = &t->mem;
    /* The distinct addresses looked up (frame 0 as is, return addresses
     * minus one), sorted, and each one's rank in that order. */
    size_t u = b->nuaddr, nq = u ? u : 1, nu = u, n_seen = t->nmethods + b->ncold + b->dropped;
    uint64_t *q = nt_mem_alloc(m, nq * sizeof *q);
    uint32_t *rank = nt_mem_alloc(m, nq * sizeof *rank);
    bool ok = q && rank;
    if (ok && u)
        memcpy(q, b->uaddr, u * sizeof *q);
    ok = ok && tr_addrs_prepare(m, &q, &nu, &nq);
    for (size_t k = 0; ok && k < nu; k++)
        ok = nt_map_set(m, &b->addr_ids, q[k], (uint32_t)k);
    for (size_t id = 0; ok && id < u; id++)
        rank[id] = tr_index(&b->addr_ids, b->uaddr[id]);
    /* Only the ranks are needed from here on (write_frames gets the ips
     * back from them). */
    nt_mem_free(m, b->ips, b->ips_cap * sizeof *b->ips);
    b->ips = NULL;
    b->ips_cap = 0;
    nt_map_free(m, &b->addr_ids);
    nt_mem_free(m, b->uaddr, b->uaddr_cap * sizeof *b->uaddr);
    b->uaddr = NULL;
    b->uaddr_cap = 0;
    if (!ok || !tr_keep_cold(b, q, nu)) {
        nt_mem_free(m, q, nq * sizeof *q);
        nt_mem_free(m, rank, (u ? u : 1) * sizeof *rank);
        return NT_ERR_NOMEM;
    }
    tr_symbols sy;
    nt_status st = NT_OK;
    size_t ni = b->nistacks;
    tr_strings_seal(&t->mem, &t->strings);
    tr_link_assemblies(t);
    if (!tr_symbols_build(m, &sy, t->methods, t->nmethods, n_seen, q, nu, nq)) {
        tr_symbols_free(m, &sy);
        nt_mem_free(m, rank, (u ? u : 1) * sizeof *rank);
        return NT_ERR_NOMEM;
    }
    tr_resolve *rs = nt_mem_alloc(m, (ni ? ni : 1) * sizeof *rs);
    uint32_t maxd = 1;
    for (size_t i = 0; i < ni; i++)
        if (b->istacks[i].count > maxd)
            maxd = b->istacks[i].count;
    /* A stack's picks, and its changing frames' picks at one time (vp). */
    uint32_t *pick = nt_mem_alloc(m, 2 * (size_t)maxd * sizeof *pick), *vp = pick ? pick + maxd : NULL;
    /* Each distinct address's pick when time cannot change it (no record,
     * or one never unloaded: tr_symbols_pick then always returns it), else
     * whether it is timeless: one lookup per address instead of one per
     * frame of every time-dependent sample. */
    uint32_t *fixed = nt_mem_alloc(m, (u ? u : 1) * sizeof *fixed);
    tr_picks pk = { 0 };
    tr_variant *var = NULL; /* per resolved stack */
    size_t var_cap = 0;
    nt_map vindex = { 0 };  /* (interned stack, picks' hash) -> resolved stack + 1 */
    uint32_t *vpos = NULL;  /* per interned stack, the positions of its frames whose pick may change */
    size_t nvpos = 0, vpos_cap = 0;
    size_t cut = SIZE_MAX;  /* the first sample a limit kept from resolving */
    if (!rs || !pick || !fixed) {
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
            const uint32_t *ids = is->count ? b->ipu + is->off : NULL; /* NULL when every stack is empty */
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
                    if (!nt_mem_reserve(m, (void **)&vpos, &vpos_cap, nvpos + 1, sizeof *vpos)) {
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
            if (v != UINT32_MAX && var[v].hash == h && same_picks(pk.pick + t->stacks[v].off, pos, vp, r->vn)) {
                rid = v;
            } else if (r->first != UINT32_MAX) {
                const uint64_t *iv = nt_map_get(&vindex, vkey);
                v = iv ? (uint32_t)(*iv - 1) : UINT32_MAX;
                if (v != UINT32_MAX && var[v].hash == h && same_picks(pk.pick + t->stacks[v].off, pos, vp, r->vn))
                    rid = v;
                for (v = v != UINT32_MAX && rid == UINT32_MAX ? r->first : UINT32_MAX; v != UINT32_MAX; v = var[v].next)
                    if (var[v].hash == h && same_picks(pk.pick + t->stacks[v].off, pos, vp, r->vn)) {
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
                if (pk.n + is->count > b->lim.max_frames) {
                    snprintf(t->message, sizeof t->message,
                             "resolution stopped at sample %zu: more than %llu resolved frames (nt_trace_limits.max_frames)",
                             i, (unsigned long long)b->lim.max_frames);
                    cut = i;
                    break;
                }
                for (uint32_t k = 0; k < is->count; k++)
                    pick[k] = fixed[ids[k]];
                for (uint32_t j = 0; j < r->vn; j++)
                    pick[pos[j]] = vp[j];
                rid = add_rstack(t, &pk, s->stack, is->count, pick);
                if (rid == UINT32_MAX ||
                    !nt_mem_reserve(m, (void **)&var, &var_cap, (size_t)rid + 1, sizeof *var)) {
                    st = NT_ERR_NOMEM;
                    goto out;
                }
                var[rid] = (tr_variant){ r->first, h };
                r->first = rid;
                r->variants++;
                uint64_t *slot = nt_map_put(m, &vindex, vkey, NULL);
                if (!slot) {
                    st = NT_ERR_NOMEM;
                    goto out;
                }
                if (*slot == 0 || var[*slot - 1].hash != h)
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
    /* The frames are the largest allocation: give back the scratch first. */
    nt_mem_free(m, rs, (ni ? ni : 1) * sizeof *rs);
    nt_mem_free(m, var, var_cap * sizeof *var);
    nt_map_free(m, &vindex);
    nt_mem_free(m, vpos, vpos_cap * sizeof *vpos);
    nt_mem_free(m, fixed, (u ? u : 1) * sizeof *fixed);
    nt_mem_free(m, pick, 2 * (size_t)maxd * sizeof *pick);
    rs = NULL;
    var = NULL;
    vpos = NULL;
    vpos_cap = 0;
    fixed = pick = NULL;
    if (!write_frames(b, &pk, rank, sy.addrs))
        st = NT_ERR_NOMEM;
out:
    nt_mem_free(m, pk.pick, pk.cap * sizeof *pk.pick);
    nt_mem_free(m, pk.src, pk.src_cap * sizeof *pk.src);
    nt_mem_free(m, rank, (u ? u : 1) * sizeof *rank);
    nt_mem_free(m, fixed, (u ? u : 1) * sizeof *fixed);
    nt_mem_free(m, var, var_cap * sizeof *var);
    nt_map_free(m, &vindex);
    nt_mem_free(m, vpos, vpos_cap * sizeof *vpos);
    nt_mem_free(m, pick, 2 * (size_t)maxd * sizeof *pick);
    nt_mem_free(m, rs, (ni ? ni : 1) * sizeof *rs);
    tr_symbols_free(m, &sy);
    return st;
}
