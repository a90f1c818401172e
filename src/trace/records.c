/* Method, module and assembly records.  Module and assembly records and
 * JIT loads are kept as they come.  Rundown and unload records wait aside
 * with plain string copies (DCEnd records far from every sample are dropped
 * at once) until finish() knows every sampled address and keeps those whose
 * code holds one. */
#include "trace/build_internal.h"

#include <string.h>

static tr_cold *cold_at(const nt_trace_builder *b, size_t i)
{
    return &b->cold[i / TR_COLD_CHUNK][i % TR_COLD_CHUNK];
}

/* The record a live-map value names is still the code m describes. */
static bool same_code(const nt_trace_builder *b, uint32_t live, const nt_method *m)
{
    if (live & TR_COLD) {
        const tr_cold *c = cold_at(b, live & ~TR_COLD);
        return c->method_id == m->method_id && c->start == m->start_address && c->until == INT64_MAX;
    }
    const nt_trace_method *r = &b->t->methods[live];
    return r->method_id == m->method_id && r->start_address == m->start_address && r->valid_until == INT64_MAX;
}

/* False when no address looked up so far lies in [start, start + size). */
static bool maybe_sampled(const nt_trace_builder *b, uint64_t start, uint64_t size)
{
    return cm_line_filter_maybe(b->lines, TR_LINE_HASH_BITS, start, size);
}

void tr_builder_code_changed(nt_trace_builder *b, const nt_method *m)
{
    /* Stacks from here on may resolve against this record too: merge them apart (code_epoch.h). */
    if (tr_code_epoch_may_move(&b->code, m) && maybe_sampled(b, m->start_address, m->size)) {
        cm_map_free(&b->t->mem, &b->entry_index);
        b->code.epoch++;
    }
}

uint32_t tr_builder_code_epoch(const nt_trace_builder *b) { return b->code.epoch; }

void tr_builder_code_unloaded_before(nt_trace_builder *b) { b->code.unloaded = true; }

/* n bytes in the cold string arena (chunks start with their size, as in tr_strings). */
static char *cold_bytes(nt_trace_builder *b, size_t n)
{
    cm_mem *m = &b->t->mem;
    if (!b->cstr || b->cstr_used + n > b->cstr_size) {
        if (!cm_mem_reserve(m, (void **)&b->cstr_chunks, &b->cstr_chunks_cap, b->ncstr_chunks + 1,
                            sizeof *b->cstr_chunks))
            return NULL;
        /* Chunks double from 16 KiB to TR_CSTR_CHUNK: small traces stay small. */
        size_t want = b->ncstr_chunks >= 4 ? TR_CSTR_CHUNK : (16u * 1024u) << (2 * b->ncstr_chunks);
        want = want > TR_CSTR_CHUNK ? TR_CSTR_CHUNK : want;
        size_t size = sizeof(size_t) + n > want ? sizeof(size_t) + n : want;
        char *c = cm_mem_alloc(m, size);
        if (!c)
            return NULL;
        memcpy(c, &size, sizeof size);
        b->cstr_chunks[b->ncstr_chunks++] = c;
        b->cstr = c;
        b->cstr_size = size;
        b->cstr_used = sizeof(size_t);
    }
    char *d = b->cstr + b->cstr_used;
    b->cstr_used += n;
    return d;
}

size_t tr_utf8_append(cm_mem *m, char **buf, size_t *cap, size_t at, nt_str16 w)
{
    /* A UTF-16 unit becomes at most 3 bytes of UTF-8 (a surrogate pair, 2 units, becomes 4). */
    if (!cm_mem_reserve(m, (void **)buf, cap, at + (size_t)w.count * 3 + 1, 1))
        return SIZE_MAX;
    return nt_str16_utf8(w, *buf + at, *cap - at);
}

/* A record's string as UTF-8: the parser's conversion, or with lazy names
 * its UTF-16 span converted into the builder's buffer k (valid until the
 * next use of k).  NULL when memory is short. */
static const char *utf8_of(nt_trace_builder *b, const char *s, nt_str16 w, int k)
{
    if (s)
        return s;
    if (!w.units || !w.count)
        return "";
    if (tr_utf8_append(&b->t->mem, &b->conv[k], &b->conv_cap[k], 0, w) == SIZE_MAX)
        return NULL;
    return b->conv[k];
}

/* A UTF-16 span in the cold arena: its unit count, then its bytes. */
static size_t span_bytes(nt_str16 w) { return sizeof(uint32_t) + (size_t)w.count * 2; }

static char *put_span(char *d, nt_str16 w)
{
    memcpy(d, &w.count, sizeof w.count);
    if (w.count)
        memcpy(d + sizeof w.count, w.units, (size_t)w.count * 2);
    return d + span_bytes(w);
}

static const char *cold_span(const char *p, nt_str16 *w)
{
    memcpy(&w->count, p, sizeof w->count);
    w->units = (const uint8_t *)p + sizeof w->count;
    return p + span_bytes(*w);
}

/* Keep a rundown or unload record aside: plain copies of its strings, no
 * interning, and with lazy names no conversion either (most are dropped in
 * finish()). */
static int add_cold(nt_trace_builder *b, const nt_method *m, uint64_t key, int64_t until)
{
    nt_trace *t = b->t;
    if (b->ncold == b->cold_chunks * TR_COLD_CHUNK) {
        if (!GROW(&t->mem, b->cold, b->cold_chunks, b->cold_chunks_cap))
            return tr_fail(b, NT_ERR_NOMEM);
        tr_cold *c = cm_mem_alloc(&t->mem, TR_COLD_CHUNK * sizeof *c);
        if (!c)
            return tr_fail(b, NT_ERR_NOMEM);
        b->cold[b->cold_chunks++] = c;
    }
    bool wide = !m->name && !m->signature && !m->declaring_type;
    char *d;
    if (wide) {
        nt_str16 tw = m->declaring_type16;
        size_t ln = span_bytes(m->name16), ls = span_bytes(m->signature16);
        /* Records come grouped by type: share the previous record's copy. */
        bool same = b->cold_last_type && b->cold_last_wide && memcmp(b->cold_last_type, &tw.count, sizeof tw.count) == 0 &&
                    (!tw.count || memcmp(b->cold_last_type + sizeof tw.count, tw.units, (size_t)tw.count * 2) == 0);
        size_t lt = same ? 0 : span_bytes(tw);
        if (!(d = cold_bytes(b, ln + ls + lt)))
            return tr_fail(b, NT_ERR_NOMEM);
        char *e = put_span(put_span(d, m->name16), m->signature16);
        if (!same) {
            put_span(e, tw);
            b->cold_last_type = e;
        }
    } else {
        const char *name = m->name ? m->name : "", *sig = m->signature ? m->signature : "";
        const char *type = m->declaring_type ? m->declaring_type : "";
        size_t ln = strlen(name) + 1, ls = strlen(sig) + 1;
        bool same = b->cold_last_type && !b->cold_last_wide && strcmp(b->cold_last_type, type) == 0;
        size_t lt = same ? 0 : strlen(type) + 1;
        if (!(d = cold_bytes(b, ln + ls + lt)))
            return tr_fail(b, NT_ERR_NOMEM);
        memcpy(d, name, ln);
        memcpy(d + ln, sig, ls);
        if (!same) {
            memcpy(d + ln + ls, type, lt);
            b->cold_last_type = d + ln + ls;
        }
    }
    b->cold_last_wide = wide;
    tr_cold *c = cold_at(b, b->ncold);
    c->start = m->start_address;
    c->method_id = m->method_id;
    c->module_id = m->module_id;
    c->rejit_id = m->rejit_id;
    c->timestamp = m->timestamp;
    c->until = until;
    c->str = d;
    c->type = b->cold_last_type;
    c->size = m->size;
    c->flags = m->flags;
    c->token = m->token;
    c->hot_before = (uint32_t)t->nmethods;
    c->source = (uint8_t)m->which;
    c->wide = wide;
    if (tr_code_arrives(m) && !cm_map_set(&t->mem, &b->live, key, (uint32_t)b->ncold | TR_COLD))
        return tr_fail(b, NT_ERR_NOMEM);
    b->ncold++;
    return 0;
}

int tr_on_method(void *user, const nt_method *m)
{
    nt_trace_builder *b = user;
    nt_trace *t = b->t;
    if (b->failed)
        return 1;
    uint64_t key = tr_live_key(m->method_id, m->start_address);
    /* Only JIT loads and DCStart rundown enter the live map (a DCEnd at the
     * end of the stream has nothing after it to merge with). */
    uint32_t live = b->live.count ? cm_map_index(&b->live, key) : UINT32_MAX;
    if (live != UINT32_MAX && !same_code(b, live, m))
        live = UINT32_MAX;
    if (t->nmethods + b->ncold >= TR_COLD - 2)
        return tr_fail_limit(b, "more than %u method records held", TR_COLD - 2);
    tr_builder_code_changed(b, m);
    switch (m->which) {
    case NT_RECORD_LOAD:
        t->jit_records++;
        break;
    case NT_RECORD_DC_START:
    case NT_RECORD_DC_END:
        t->rundown_records++;
        if (live != UINT32_MAX)
            return 0; /* the same code again: rundown confirms a load already recorded */
        /* The runtime writes DCEnd rundown after the last sample: code no
         * sampled address lies in now never will be (see the header). */
        if (m->which == NT_RECORD_DC_END && !maybe_sampled(b, m->start_address, m->size)) {
            b->dropped++;
            return 0;
        }
        return add_cold(b, m, key, INT64_MAX);
    case NT_RECORD_UNLOAD:
        t->unload_records++;
        if (live != UINT32_MAX) {
            if (live & TR_COLD)
                cold_at(b, live & ~TR_COLD)->until = m->timestamp;
            else
                t->methods[live].valid_until = m->timestamp;
            if (!cm_map_set(&t->mem, &b->live, key, UINT32_MAX))
                return tr_fail(b, NT_ERR_NOMEM);
            return 0;
        }
        return add_cold(b, m, key, m->timestamp); /* code loaded before the trace, gone now */
    default:
        return 0;
    }
    /* A JIT load: samples in its code come after it, so it is kept as it comes. */
    if (!GROW_SLOW(&t->mem, t->methods, t->nmethods, t->methods_cap))
        return tr_fail(b, NT_ERR_NOMEM);
    nt_trace_method r = { 0 };
    r.start_address = m->start_address;
    r.size = m->size;
    r.method_id = m->method_id;
    r.module_id = m->module_id;
    r.rejit_id = m->rejit_id;
    const char *name = utf8_of(b, m->name, m->name16, 0), *type = utf8_of(b, m->declaring_type, m->declaring_type16, 1);
    const char *sig = utf8_of(b, m->signature, m->signature16, 2);
    if (!name || !type || !sig)
        return tr_fail(b, NT_ERR_NOMEM);
    r.name = tr_store(&t->mem, &t->strings, name);
    /* Records come grouped by type: the previous record's type is often this one. */
    if (t->nmethods && strcmp(t->methods[t->nmethods - 1].declaring_type, type) == 0)
        r.declaring_type = t->methods[t->nmethods - 1].declaring_type;
    else
        r.declaring_type = tr_store(&t->mem, &t->strings, type);
    r.signature = tr_store(&t->mem, &t->strings, sig);
    r.assembly = "";
    r.timestamp = m->timestamp;
    r.valid_from = m->timestamp;
    r.valid_until = INT64_MAX;
    r.flags = m->flags;
    r.token = m->token;
    r.source = m->which;
    if (!r.name || !r.declaring_type || !r.signature)
        return tr_fail(b, NT_ERR_NOMEM);
    uint32_t idx = (uint32_t)t->nmethods;
    t->methods[t->nmethods++] = r;
    if (!cm_map_set(&t->mem, &b->live, key, idx))
        return tr_fail(b, NT_ERR_NOMEM);
    return 0;
}

int tr_on_module(void *user, const nt_module *mo)
{
    nt_trace_builder *b = user;
    nt_trace *t = b->t;
    if (b->failed)
        return 1;
    uint32_t i = cm_map_index(&t->module_index, mo->module_id);
    const char *path = utf8_of(b, mo->il_path, mo->il_path16, 0);
    const char *il = path ? tr_intern(&t->mem, &t->strings, path) : NULL;
    if (!il)
        return tr_fail(b, NT_ERR_NOMEM);
    if (i != UINT32_MAX) {
        t->modules[i].assembly_id = mo->assembly_id;
        if (*il)
            t->modules[i].il_path = il;
        return 0;
    }
    if (!GROW(&t->mem, t->modules, t->nmodules, t->modules_cap) ||
        !cm_map_set(&t->mem, &t->module_index, mo->module_id, (uint32_t)t->nmodules))
        return tr_fail(b, NT_ERR_NOMEM);
    t->modules[t->nmodules++] = (nt_trace_module){ mo->module_id, mo->assembly_id, il };
    return 0;
}

int tr_on_assembly(void *user, const nt_assembly *a)
{
    nt_trace_builder *b = user;
    nt_trace *t = b->t;
    if (b->failed)
        return 1;
    const char *full = utf8_of(b, a->name, a->name16, 0);
    const char *name = full ? tr_intern(&t->mem, &t->strings, full) : NULL;
    if (!name)
        return tr_fail(b, NT_ERR_NOMEM);
    uint32_t i = cm_map_index(&t->assembly_index, a->assembly_id);
    if (i != UINT32_MAX) {
        if (*name)
            t->assemblies[i].name = name;
        return 0;
    }
    if (!GROW(&t->mem, t->assemblies, t->nassemblies, t->assemblies_cap) ||
        !cm_map_set(&t->mem, &t->assembly_index, a->assembly_id, (uint32_t)t->nassemblies))
        return tr_fail(b, NT_ERR_NOMEM);
    t->assemblies[t->nassemblies++] = (nt_trace_assembly){ a->assembly_id, name };
    return 0;
}
void tr_link_assemblies(nt_trace *t)
{
    /* Records come in runs of one module: remember the last answer. */
    uint64_t last_module = 0;
    const char *last_name = NULL;
    for (size_t i = 0; i < t->nmethods; i++) {
        nt_trace_method *r = &t->methods[i];
        if (last_name && r->module_id == last_module) {
            r->assembly = last_name;
            continue;
        }
        uint32_t mi = cm_map_index(&t->module_index, r->module_id);
        uint32_t ai = mi == UINT32_MAX ? UINT32_MAX : cm_map_index(&t->assembly_index, t->modules[mi].assembly_id);
        r->assembly = ai == UINT32_MAX ? "" : t->assemblies[ai].name;
        last_module = r->module_id;
        last_name = r->assembly;
    }
}

void tr_cold_release(nt_trace_builder *b)
{
    cm_mem *m = &b->t->mem;
    for (size_t i = 0; i < b->cold_chunks; i++)
        cm_mem_free(m, b->cold[i], TR_COLD_CHUNK * sizeof *b->cold[i]);
    cm_mem_free(m, b->cold, b->cold_chunks_cap * sizeof *b->cold);
    for (size_t i = 0; i < b->ncstr_chunks; i++) {
        size_t size;
        memcpy(&size, b->cstr_chunks[i], sizeof size);
        cm_mem_free(m, b->cstr_chunks[i], size);
    }
    cm_mem_free(m, b->cstr_chunks, b->cstr_chunks_cap * sizeof *b->cstr_chunks);
    b->cold = NULL;
    b->cstr_chunks = NULL;
    b->cstr = NULL;
    b->ncold = b->cold_chunks = b->cold_chunks_cap = b->ncstr_chunks = b->cstr_chunks_cap = 0;
}

/* The cold records whose code holds a sampled address join the kept ones in
 * stream order; the others (no frame can resolve to them) are dropped. */
bool tr_keep_cold(nt_trace_builder *b, const uint64_t *addrs, size_t naddrs)
{
    nt_trace *t = b->t;
    cm_mem *m = &t->mem;
    size_t keep = 0;
    for (size_t i = 0; i < b->ncold; i++) {
        tr_cold *c = cold_at(b, i);
        bool hit = tr_addrs_cover(addrs, naddrs, c->start, c->size);
        c->source |= hit ? 0x80 : 0;
        keep += hit;
    }
    if (keep) {
        size_t n = t->nmethods + keep;
        nt_trace_method *all = cm_mem_alloc(m, n * sizeof *all);
        if (!all)
            return false;
        size_t h = 0, k = 0;
        for (size_t i = 0; i < b->ncold; i++) {
            tr_cold *c = cold_at(b, i);
            if (!(c->source & 0x80))
                continue;
            while (h < c->hot_before)
                all[k++] = t->methods[h++];
            nt_trace_method r = { 0 };
            r.start_address = c->start;
            r.size = c->size;
            r.method_id = c->method_id;
            r.module_id = c->module_id;
            r.rejit_id = c->rejit_id;
            const char *name = c->str, *sig = NULL, *type = c->type;
            if (!c->wide) {
                sig = c->str + strlen(c->str) + 1;
            } else {
                nt_str16 wn, ws, wt;
                cold_span(cold_span(c->str, &wn), &ws);
                cold_span(c->type, &wt);
                name = utf8_of(b, NULL, wn, 0);
                sig = utf8_of(b, NULL, ws, 1);
                type = utf8_of(b, NULL, wt, 2);
            }
            if (name)
                r.name = tr_store(m, &t->strings, name);
            if (sig)
                r.signature = tr_store(m, &t->strings, sig);
            if (type && k && strcmp(all[k - 1].declaring_type, type) == 0)
                r.declaring_type = all[k - 1].declaring_type;
            else if (type)
                r.declaring_type = tr_store(m, &t->strings, type);
            r.assembly = "";
            r.timestamp = c->timestamp;
            r.valid_from = INT64_MIN;
            r.valid_until = c->until;
            r.flags = c->flags;
            r.token = c->token;
            r.source = (nt_record_event)(c->source & 0x7f);
            if (!r.name || !r.declaring_type || !r.signature) {
                cm_mem_free(m, all, n * sizeof *all);
                return false;
            }
            all[k++] = r;
        }
        while (h < t->nmethods)
            all[k++] = t->methods[h++];
        cm_mem_free(m, t->methods, t->methods_cap * sizeof *t->methods);
        t->methods = all;
        t->nmethods = t->methods_cap = n;
    }
    tr_cold_release(b);
    return true;
}
