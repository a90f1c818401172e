/* The records of a live stream kept once for all its windows (see
 * record_store.h): entries in a slab with a free list, a page index from
 * code addresses to the entries covering them, the (method id, start) map of
 * loaded code that merges a load with its unload as a builder's live map
 * does, and the lists the budget and the retirement walk. */
#include "trace/record_store.h"
#include "trace/trace_internal.h"
#include "trace/code_epoch.h"
#include "common/sort.h"

#include <string.h>

#define NONE UINT32_MAX
#define RS_MAX_MODULES (1u << 16)
#define RS_MAX_ASSEMBLIES (1u << 16)
/* What a map slot costs at half load, for the budget. */
#define RS_MAP_SLOT_BYTES (2u * sizeof(cm_map_slot))

enum { RS_FREE, RS_COLD, RS_WARM };

struct rs_entry {
    uint64_t method_id, module_id, start, rejit_id;
    int64_t timestamp;
    int64_t until;            /* ticks of the unload (its own or its module's); INT64_MAX while loaded */
    uint64_t seq, unload_seq; /* places in the stream of the creating event and of the unload */
    uint64_t hit;             /* the last rs_feed whose addresses lay in it; 0: never sampled */
    uint64_t born;            /* rs_feed calls before it came */
    char *text;               /* "declaring type\0name\0signature\0" */
    uint32_t text_size, size, token, flags, version;
    uint32_t prev, next;      /* its budget list (cold or warm); the free list through next */
    uint32_t gprev, gnext;    /* the unloaded list */
    uint32_t mprev, mnext;    /* its module's records */
    uint32_t module;          /* its module's slot */
    uint32_t node;            /* its node in its first page's chain (then through enext); NONE when wide or unindexed */
    uint16_t clr_instance_id;
    uint8_t which, list;
    bool live;                /* in the live map (a load or DCStart not yet unloaded) */
    bool unloaded;            /* until is set: on the unloaded list */
    bool unload_event;        /* a builder is fed an unload after the creating event */
};

struct rs_module {
    uint64_t module_id, assembly_id;
    char *il_path;            /* the last non-empty one */
    size_t il_size;
    int64_t until;
    uint64_t fed;             /* the last rs_feed that fed it */
    uint32_t head;            /* its records */
    uint32_t next_free;
    bool used, known, unloaded; /* known: a module record came (not only methods naming it) */
};

struct rs_assembly {
    uint64_t assembly_id;
    char *name;
    size_t name_size;
    int64_t until;
    uint64_t fed;
    uint32_t next_free;
    bool used, unloaded;
};

typedef struct rs_feed_event {
    uint64_t seq;
    uint32_t entry;
    bool unload;
} rs_feed_event;

void rs_init(rs_store *s, cm_mem *mem, uint64_t budget)
{
    memset(s, 0, sizeof *s);
    s->mem = mem;
    s->budget = budget ? budget : RS_DEFAULT_BUDGET;
    s->max_entries = 1u << 20;
    s->free_entry = NONE;
    s->free_node = NONE;
    s->free_module = s->free_assembly = NONE;
    s->cold = s->warm = s->gone = (rs_list){ NONE, NONE, 0 };
}

static uint64_t held(const rs_store *s)
{
    return s->record_bytes + s->string_bytes + s->index_bytes + s->module_bytes;
}

/* ---- lists ---- */

static void list_push(rs_store *s, rs_list *l, uint32_t i, bool gone)
{
    rs_entry *e = &s->entries[i];
    uint32_t *prev = gone ? &e->gprev : &e->prev, *next = gone ? &e->gnext : &e->next;
    *prev = l->tail;
    *next = NONE;
    if (l->tail != NONE) {
        rs_entry *t = &s->entries[l->tail];
        *(gone ? &t->gnext : &t->next) = i;
    } else {
        l->head = i;
    }
    l->tail = i;
    l->count++;
}

static void list_unlink(rs_store *s, rs_list *l, uint32_t i, bool gone)
{
    rs_entry *e = &s->entries[i];
    uint32_t prev = gone ? e->gprev : e->prev, next = gone ? e->gnext : e->next;
    if (prev != NONE)
        *(gone ? &s->entries[prev].gnext : &s->entries[prev].next) = next;
    else
        l->head = next;
    if (next != NONE)
        *(gone ? &s->entries[next].gprev : &s->entries[next].prev) = prev;
    else
        l->tail = prev;
    l->count--;
}

static rs_list *budget_list(rs_store *s, const rs_entry *e) { return e->list == RS_WARM ? &s->warm : &s->cold; }

/* ---- the page index ---- */

static void page_span(uint64_t start, uint32_t size, uint64_t *p0, uint64_t *p1)
{
    uint64_t last = start > UINT64_MAX - (size - 1) ? UINT64_MAX : start + (size - 1);
    *p0 = start >> RS_PAGE_SHIFT;
    *p1 = last >> RS_PAGE_SHIFT;
}

static bool is_wide(uint64_t p0, uint64_t p1) { return p1 - p0 >= RS_WIDE_PAGES; }

static void count_index(rs_store *s)
{
    s->index_bytes = (uint64_t)s->nodes_used * sizeof(rs_node) + (uint64_t)s->pages.count * RS_MAP_SLOT_BYTES +
                     (uint64_t)s->nwide * sizeof(uint32_t);
}

/* Take node n (its entry's node for page p) out of p's chain. */
static void page_remove(rs_store *s, uint64_t p, uint32_t n)
{
    uint64_t *v = cm_map_get(&s->pages, p);
    if (!v)
        return;
    uint32_t head = (uint32_t)(*v >> 32) - 1, count = (uint32_t)*v;
    rs_node *x = &s->nodes[n];
    if (n == head) {
        head = x->next;
        if (head != NONE)
            s->nodes[head].prev = x->prev; /* the tail, as before */
    } else {
        s->nodes[x->prev].next = x->next;
        if (x->next != NONE)
            s->nodes[x->next].prev = x->prev;
        else
            s->nodes[head].prev = x->prev; /* n was the tail */
    }
    x->next = s->free_node;
    s->free_node = n;
    s->nodes_used--;
    count--;
    if (!count)
        cm_map_del(&s->pages, p);
    else
        *v = (uint64_t)(head + 1) << 32 | count;
}

static void unindex(rs_store *s, uint32_t i)
{
    rs_entry *e = &s->entries[i];
    uint64_t p0, p1;
    page_span(e->start, e->size, &p0, &p1);
    if (is_wide(p0, p1)) {
        for (uint32_t k = 0; k < s->nwide; k++)
            if (s->wide[k] == i) {
                memmove(s->wide + k, s->wide + k + 1, (s->nwide - k - 1) * sizeof *s->wide);
                s->nwide--;
                break;
            }
    } else {
        /* Its nodes are p0's, p0 + 1's, ... in order (fewer when indexing ran out of memory). */
        uint64_t p = p0;
        for (uint32_t n = e->node; n != NONE; p++) {
            uint32_t next = s->nodes[n].enext;
            page_remove(s, p, n);
            n = next;
        }
        e->node = NONE;
    }
    count_index(s);
}

/* ---- entries ---- */

static void module_release_if_unused(rs_store *s, uint32_t k);

/* Entry i no longer stands for loaded code (the map may name a newer load of the same key). */
static void live_drop(rs_store *s, uint32_t i)
{
    rs_entry *e = &s->entries[i];
    if (!e->live)
        return;
    uint64_t key = tr_live_key(e->method_id, e->start);
    const uint64_t *v = cm_map_get(&s->live, key);
    if (v && *v == i)
        cm_map_del(&s->live, key);
    e->live = false;
    s->record_bytes -= RS_MAP_SLOT_BYTES;
}

/* Entry i leaves the store: unloaded (retired) or evicted. */
static void remove_entry(rs_store *s, uint32_t i)
{
    rs_entry *e = &s->entries[i];
    list_unlink(s, budget_list(s, e), i, false);
    if (e->unloaded)
        list_unlink(s, &s->gone, i, true);
    live_drop(s, i);
    rs_module *mo = &s->modules[e->module];
    if (e->mprev != NONE)
        s->entries[e->mprev].mnext = e->mnext;
    else
        mo->head = e->mnext;
    if (e->mnext != NONE)
        s->entries[e->mnext].mprev = e->mprev;
    unindex(s, i);
    cm_mem_free(s->mem, e->text, e->text_size);
    s->string_bytes -= e->text_size;
    s->record_bytes -= sizeof *e;
    uint32_t module = e->module;
    memset(e, 0, sizeof *e);
    e->list = RS_FREE;
    e->next = s->free_entry;
    s->free_entry = i;
    s->count--;
    module_release_if_unused(s, module);
}

/* The budget's rule: records no sample hit although a window was taken
 * since they came, oldest first; then sampled ones, least recently sampled
 * first; then the records of the window being built, oldest first (code is
 * JIT-compiled because it runs: its samples are usually on their way). */
static bool evict_one(rs_store *s)
{
    uint32_t c = s->cold.head;
    uint32_t i = c != NONE && s->entries[c].born < s->queries ? c : s->warm.head != NONE ? s->warm.head : c;
    if (i == NONE)
        return false;
    s->evicted++;
    s->evicted_sampled += s->entries[i].hit != 0;
    remove_entry(s, i);
    return true;
}

static void keep_within_budget(rs_store *s)
{
    while ((held(s) > s->budget || s->count > s->max_entries) && evict_one(s))
        ;
}

/* Index entry i under its pages (or as a wide record). */
static bool index_entry(rs_store *s, uint32_t i)
{
    uint64_t p0, p1;
    page_span(s->entries[i].start, s->entries[i].size, &p0, &p1);
    if (is_wide(p0, p1)) {
        if (s->nwide == RS_MAX_WIDE) {
            s->evicted++;
            s->evicted_sampled += s->entries[s->wide[0]].hit != 0;
            remove_entry(s, s->wide[0]);
        }
        s->wide[s->nwide++] = i;
        count_index(s);
        return true;
    }
    uint32_t last = NONE; /* i's node in the page before */
    for (uint64_t p = p0;; p++) {
        uint64_t *v = cm_map_get(&s->pages, p);
        if (v && (uint32_t)*v >= RS_PAGE_MAX) {
            /* The page's oldest record goes: its chain's tail, the head's prev. */
            uint32_t n = s->nodes[(uint32_t)(*v >> 32) - 1].prev;
            s->evicted++;
            s->evicted_sampled += s->entries[s->nodes[n].entry].hit != 0;
            remove_entry(s, s->nodes[n].entry);
        }
        uint32_t node = s->free_node;
        if (node != NONE) {
            s->free_node = s->nodes[node].next;
        } else {
            if (s->nnodes >= NONE - 1 ||
                !cm_mem_reserve(s->mem, (void **)&s->nodes, &s->nodes_cap, s->nnodes + 1, sizeof *s->nodes))
                return false;
            node = (uint32_t)s->nnodes++;
        }
        bool added;
        v = cm_map_put(s->mem, &s->pages, p, &added);
        if (!v) {
            s->nodes[node].next = s->free_node;
            s->free_node = node;
            return false;
        }
        uint32_t head = added ? NONE : (uint32_t)(*v >> 32) - 1, count = added ? 0 : (uint32_t)*v;
        uint32_t tail = head == NONE ? node : s->nodes[head].prev;
        s->nodes[node] = (rs_node){ .entry = i, .next = head, .prev = tail, .enext = NONE };
        if (head != NONE)
            s->nodes[head].prev = node;
        *v = (uint64_t)(node + 1) << 32 | (count + 1);
        s->nodes_used++;
        if (last == NONE)
            s->entries[i].node = node;
        else
            s->nodes[last].enext = node;
        last = node;
        if (p == p1)
            break;
    }
    count_index(s);
    return true;
}

/* What s (or, with lazy names, s16) takes with its NUL: exact for UTF-8, at
 * most 3 bytes a unit for UTF-16. */
static size_t text_bound(const char *s, nt_str16 s16) { return s ? strlen(s) + 1 : (size_t)s16.count * 3 + 1; }

/* s (or s16) written with its NUL at buf + *len, within the bound reserved. */
static void put_text(char *buf, size_t *len, size_t bound, const char *s, nt_str16 s16)
{
    if (s) {
        memcpy(buf + *len, s, bound);
        *len += bound;
    } else {
        *len += nt_str16_utf8(s16, buf + *len, bound) + 1;
    }
}

/* "declaring type\0name\0signature\0" in one allocation of its own size (a
 * record's strings are copied for every load the stream delivers: one
 * allocation, not a buffer grown three times and shrunk). */
static char *entry_text(rs_store *s, const nt_method *m, size_t *len)
{
    size_t b0 = text_bound(m->declaring_type, m->declaring_type16), b1 = text_bound(m->name, m->name16),
           b2 = text_bound(m->signature, m->signature16), bound = b0 + b1 + b2;
    char *text = cm_mem_alloc(s->mem, bound);
    if (!text)
        return NULL;
    *len = 0;
    put_text(text, len, b0, m->declaring_type, m->declaring_type16);
    put_text(text, len, b1, m->name, m->name16);
    put_text(text, len, b2, m->signature, m->signature16);
    if (*len < bound && !cm_mem_resize(s->mem, (void **)&text, bound, *len)) {
        cm_mem_free(s->mem, text, bound);
        return NULL;
    }
    return text;
}

/* The slot of module id (a placeholder when no module record came yet); NONE when the table is full or memory short. */
static uint32_t module_slot(rs_store *s, uint64_t module_id)
{
    uint32_t k = cm_map_index(&s->module_index, module_id);
    if (k != NONE)
        return k;
    if (s->free_module != NONE) {
        k = s->free_module;
        s->free_module = s->modules[k].next_free;
    } else {
        if (s->nmodules >= RS_MAX_MODULES ||
            !cm_mem_reserve(s->mem, (void **)&s->modules, &s->modules_cap, s->nmodules + 1, sizeof *s->modules))
            return NONE;
        k = (uint32_t)s->nmodules++;
    }
    if (!cm_map_set(s->mem, &s->module_index, module_id, k)) {
        s->modules[k].next_free = s->free_module;
        s->free_module = k;
        return NONE;
    }
    s->modules[k] = (rs_module){ .module_id = module_id, .head = NONE, .until = INT64_MAX, .used = true };
    s->module_bytes += sizeof(rs_module) + RS_MAP_SLOT_BYTES;
    return k;
}

static void module_release_if_unused(rs_store *s, uint32_t k)
{
    rs_module *mo = &s->modules[k];
    if (!mo->used || mo->head != NONE || (mo->known && !mo->unloaded))
        return;
    cm_map_del(&s->module_index, mo->module_id);
    cm_mem_free(s->mem, mo->il_path, mo->il_size);
    s->module_bytes -= sizeof(rs_module) + RS_MAP_SLOT_BYTES + mo->il_size;
    *mo = (rs_module){ .next_free = s->free_module };
    s->free_module = k;
}

/* A new entry from m (its strings copied), indexed and listed; NONE when memory is short. */
static uint32_t add_entry(rs_store *s, const nt_method *m, int64_t until)
{
    size_t len;
    char *text = entry_text(s, m, &len);
    if (!text)
        return NONE;
    uint32_t mk = module_slot(s, m->module_id);
    uint32_t i = s->free_entry;
    if (mk == NONE || (i == NONE && (s->nentries >= NONE - 1 || !cm_mem_reserve(s->mem, (void **)&s->entries,
                                                                              &s->entries_cap, s->nentries + 1,
                                                                              sizeof *s->entries)))) {
        cm_mem_free(s->mem, text, len);
        if (mk != NONE)
            module_release_if_unused(s, mk);
        return NONE;
    }
    if (i == NONE)
        i = (uint32_t)s->nentries++;
    else
        s->free_entry = s->entries[i].next;
    rs_entry *e = &s->entries[i];
    *e = (rs_entry){ .method_id = m->method_id, .module_id = m->module_id, .start = m->start_address,
                     .rejit_id = m->rejit_id, .timestamp = m->timestamp, .until = until, .seq = s->seq,
                     .born = s->queries, .text = text, .text_size = (uint32_t)len, .size = m->size, .token = m->token,
                     .flags = m->flags, .version = m->version, .module = mk, .clr_instance_id = m->clr_instance_id,
                     .which = (uint8_t)m->which, .list = RS_COLD, .mprev = NONE, .node = NONE };
    rs_module *mo = &s->modules[mk];
    e->mnext = mo->head;
    if (mo->head != NONE)
        s->entries[mo->head].mprev = i;
    mo->head = i;
    s->count++;
    s->record_bytes += sizeof *e;
    s->string_bytes += len;
    list_push(s, &s->cold, i, false);
    if (until != INT64_MAX) {
        e->unloaded = true;
        e->unload_seq = s->seq;
        list_push(s, &s->gone, i, true);
    }
    if (!index_entry(s, i)) {
        remove_entry(s, i);
        return NONE;
    }
    return i;
}

/* Entry i's code is gone at ticks: it leaves the live map and waits for retirement. */
static void mark_unloaded(rs_store *s, uint32_t i, int64_t ticks, bool event)
{
    rs_entry *e = &s->entries[i];
    if (e->unloaded)
        return;
    live_drop(s, i);
    e->unloaded = true;
    e->unload_event = event;
    e->until = ticks;
    e->unload_seq = s->seq;
    list_push(s, &s->gone, i, true);
}

void rs_add_method(rs_store *s, const nt_method *m)
{
    s->seq++;
    uint64_t key = tr_live_key(m->method_id, m->start_address);
    uint32_t live = cm_map_index(&s->live, key);
    if (live != NONE && (s->entries[live].method_id != m->method_id || s->entries[live].start != m->start_address))
        live = NONE; /* another code's key */
    switch (m->which) {
    case NT_RECORD_LOAD:
        s->jit++;
        break;
    case NT_RECORD_DC_START:
    case NT_RECORD_DC_END:
        s->rundown++;
        if (live != NONE)
            return; /* rundown confirms code already kept */
        break;
    case NT_RECORD_UNLOAD:
        s->unload++;
        if (live != NONE) {
            mark_unloaded(s, live, m->timestamp, true);
            return;
        }
        break; /* code loaded before the stream, gone now: a record of its own */
    default:
        return;
    }
    if (!m->size)
        return; /* an empty extent covers no address */
    uint32_t i = add_entry(s, m, m->which == NT_RECORD_UNLOAD ? m->timestamp : INT64_MAX);
    if (i == NONE) {
        s->nomem = true;
        return;
    }
    /* Loads and DCStart rundown stand for loaded code (a builder's live map: DCEnd closes the stream). */
    if (tr_code_arrives(m)) {
        if (!cm_map_set(s->mem, &s->live, key, i)) {
            remove_entry(s, i);
            s->nomem = true;
            return;
        }
        s->entries[i].live = true;
        s->record_bytes += RS_MAP_SLOT_BYTES;
    }
    keep_within_budget(s);
}

/* *dst = a copy of the string when it has one (an empty one keeps the old). */
static bool keep_text(rs_store *s, char **dst, size_t *size, const char *str, nt_str16 s16)
{
    size_t bound = text_bound(str, s16), len = 0;
    char *buf = cm_mem_alloc(s->mem, bound);
    if (!buf)
        return false;
    put_text(buf, &len, bound, str, s16);
    if (len <= 1) {
        cm_mem_free(s->mem, buf, bound);
        return true;
    }
    if (len < bound && !cm_mem_resize(s->mem, (void **)&buf, bound, len)) {
        cm_mem_free(s->mem, buf, bound);
        return false;
    }
    cm_mem_free(s->mem, *dst, *size);
    s->module_bytes += len;
    s->module_bytes -= *size;
    *dst = buf;
    *size = len;
    return true;
}

void rs_add_module(rs_store *s, const nt_module *mo)
{
    s->seq++;
    uint32_t k = module_slot(s, mo->module_id);
    if (k == NONE) {
        s->nomem = true;
        return;
    }
    rs_module *r = &s->modules[k];
    r->known = true;
    r->assembly_id = mo->assembly_id;
    if (!keep_text(s, &r->il_path, &r->il_size, mo->il_path, mo->il_path16))
        s->nomem = true;
    if (mo->which != NT_RECORD_UNLOAD || r->unloaded)
        return;
    /* Its code goes with it: the records a builder matches get an unload, the others only retire. */
    r->unloaded = true;
    r->until = mo->timestamp;
    for (uint32_t i = r->head; i != NONE; i = s->entries[i].mnext)
        mark_unloaded(s, i, mo->timestamp, s->entries[i].live);
}

void rs_add_assembly(rs_store *s, const nt_assembly *a)
{
    s->seq++;
    uint32_t k = cm_map_index(&s->assembly_index, a->assembly_id);
    if (k == NONE) {
        if (s->free_assembly != NONE) {
            k = s->free_assembly;
            s->free_assembly = s->assemblies[k].next_free;
        } else if (s->nassemblies < RS_MAX_ASSEMBLIES &&
                   cm_mem_reserve(s->mem, (void **)&s->assemblies, &s->assemblies_cap, s->nassemblies + 1,
                                  sizeof *s->assemblies)) {
            k = (uint32_t)s->nassemblies++;
        } else {
            s->nomem = true;
            return;
        }
        if (!cm_map_set(s->mem, &s->assembly_index, a->assembly_id, k)) {
            s->assemblies[k].next_free = s->free_assembly;
            s->free_assembly = k;
            s->nomem = true;
            return;
        }
        s->assemblies[k] = (rs_assembly){ .assembly_id = a->assembly_id, .until = INT64_MAX, .used = true };
        s->module_bytes += sizeof(rs_assembly) + RS_MAP_SLOT_BYTES;
    }
    rs_assembly *r = &s->assemblies[k];
    if (!keep_text(s, &r->name, &r->name_size, a->name, a->name16))
        s->nomem = true;
    if (a->which == NT_RECORD_UNLOAD && !r->unloaded) {
        r->unloaded = true;
        r->until = a->timestamp;
    }
}

/* ---- queries ---- */

static bool covers(const rs_entry *e, uint64_t addr)
{
    return addr >= e->start && addr - e->start < e->size;
}

/* Entry i was hit by this query: noted once, and it becomes the most recently sampled. */
static bool note_hit(rs_store *s, uint32_t i, size_t *nhits)
{
    rs_entry *e = &s->entries[i];
    if (e->hit == s->queries)
        return true;
    if (!cm_mem_reserve(s->mem, (void **)&s->hits, &s->hits_cap, *nhits + 1, sizeof *s->hits))
        return false;
    s->hits[(*nhits)++] = i;
    list_unlink(s, budget_list(s, e), i, false);
    e->hit = s->queries;
    e->list = RS_WARM;
    list_push(s, &s->warm, i, false);
    return true;
}

static int cmp_seq(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    uint64_t x = ((const rs_feed_event *)a)->seq, y = ((const rs_feed_event *)b)->seq;
    return (x > y) - (x < y);
}

static nt_method method_of(const rs_entry *e, bool unload)
{
    const char *type = e->text, *name = type + strlen(type) + 1, *sig = name + strlen(name) + 1;
    return (nt_method){ .which = unload ? NT_RECORD_UNLOAD : (nt_record_event)e->which, .version = e->version,
                        .method_id = e->method_id, .module_id = e->module_id, .start_address = e->start,
                        .size = e->size, .token = e->token, .flags = e->flags, .declaring_type = type,
                        .name = name, .signature = sig, .clr_instance_id = e->clr_instance_id,
                        .rejit_id = e->rejit_id, .timestamp = unload ? e->until : e->timestamp };
}

/* The modules and assemblies of the records fed, once each. */
static int feed_modules(rs_store *s, size_t nhits, const rs_sink *to)
{
    for (size_t h = 0; h < nhits; h++) {
        rs_module *mo = &s->modules[s->entries[s->hits[h]].module];
        if (!mo->known || mo->fed == s->queries)
            continue;
        mo->fed = s->queries;
        nt_module r = { .which = NT_RECORD_LOAD, .module_id = mo->module_id, .assembly_id = mo->assembly_id,
                        .il_path = mo->il_path ? mo->il_path : "", .native_path = "" };
        int rc = to->module(to->user, &r);
        uint32_t k = cm_map_index(&s->assembly_index, mo->assembly_id);
        if (!rc && k != NONE && s->assemblies[k].fed != s->queries) {
            rs_assembly *as = &s->assemblies[k];
            as->fed = s->queries;
            nt_assembly a = { .which = NT_RECORD_LOAD, .assembly_id = as->assembly_id,
                              .name = as->name ? as->name : "" };
            rc = to->assembly(to->user, &a);
        }
        s->work += 2;
        if (rc)
            return rc;
    }
    return 0;
}

int rs_feed(rs_store *s, const uint64_t *addrs, size_t n, const rs_sink *to)
{
    s->queries++;
    s->work = 0;
    size_t nhits = 0;
    for (size_t k = 0; k < n; k++) {
        const uint64_t *v = cm_map_get(&s->pages, addrs[k] >> RS_PAGE_SHIFT);
        for (uint32_t node = v ? (uint32_t)(*v >> 32) - 1 : NONE; node != NONE; node = s->nodes[node].next) {
            s->work++;
            uint32_t i = s->nodes[node].entry;
            if (covers(&s->entries[i], addrs[k]) && !note_hit(s, i, &nhits))
                return s->nomem = true, 0;
        }
    }
    for (uint32_t w = 0; w < s->nwide; w++) {
        s->work++;
        const rs_entry *e = &s->entries[s->wide[w]];
        if (tr_addrs_cover(addrs, n, e->start, e->size) && !note_hit(s, s->wide[w], &nhits))
            return s->nomem = true, 0;
    }
    /* The hit records' events, in stream order: a load, then its unload. */
    size_t nev = 0;
    if (!cm_mem_reserve(s->mem, (void **)&s->events, &s->events_cap, 4 * nhits + 1, sizeof *s->events))
        return s->nomem = true, 0;
    for (size_t h = 0; h < nhits; h++) {
        const rs_entry *e = &s->entries[s->hits[h]];
        s->events[nev++] = (rs_feed_event){ e->seq, s->hits[h], false };
        if (e->unload_event)
            s->events[nev++] = (rs_feed_event){ e->unload_seq, s->hits[h], true };
    }
    cm_merge_sort(s->events, s->events + nev, nev, sizeof *s->events, cmp_seq, NULL);
    for (size_t k = 0; k < nev; k++) {
        nt_method m = method_of(&s->entries[s->events[k].entry], s->events[k].unload);
        s->work++;
        int rc = to->method(to->user, &m);
        if (rc)
            return rc;
    }
    return feed_modules(s, nhits, to);
}

void rs_retire(rs_store *s, int64_t horizon)
{
    while (s->gone.head != NONE && s->entries[s->gone.head].until <= horizon) {
        remove_entry(s, s->gone.head);
        s->retired++;
    }
    for (uint32_t k = 0; k < s->nmodules; k++)
        if (s->modules[k].used && s->modules[k].unloaded && s->modules[k].until <= horizon) {
            s->modules_retired += s->modules[k].head == NONE;
            module_release_if_unused(s, k);
        }
    for (uint32_t k = 0; k < s->nassemblies; k++) {
        rs_assembly *a = &s->assemblies[k];
        if (!a->used || !a->unloaded || a->until > horizon)
            continue;
        cm_map_del(&s->assembly_index, a->assembly_id);
        cm_mem_free(s->mem, a->name, a->name_size);
        s->module_bytes -= sizeof(rs_assembly) + RS_MAP_SLOT_BYTES + a->name_size;
        *a = (rs_assembly){ .next_free = s->free_assembly };
        s->free_assembly = k;
    }
}

void rs_free(rs_store *s)
{
    for (size_t i = 0; i < s->nentries; i++)
        if (s->entries[i].list != RS_FREE)
            cm_mem_free(s->mem, s->entries[i].text, s->entries[i].text_size);
    for (size_t k = 0; k < s->nmodules; k++)
        cm_mem_free(s->mem, s->modules[k].il_path, s->modules[k].il_size);
    for (size_t k = 0; k < s->nassemblies; k++)
        cm_mem_free(s->mem, s->assemblies[k].name, s->assemblies[k].name_size);
    cm_mem_free(s->mem, s->entries, s->entries_cap * sizeof *s->entries);
    cm_mem_free(s->mem, s->nodes, s->nodes_cap * sizeof *s->nodes);
    cm_mem_free(s->mem, s->modules, s->modules_cap * sizeof *s->modules);
    cm_mem_free(s->mem, s->assemblies, s->assemblies_cap * sizeof *s->assemblies);
    cm_mem_free(s->mem, s->hits, s->hits_cap * sizeof *s->hits);
    cm_mem_free(s->mem, s->events, s->events_cap * sizeof *s->events);
    cm_map_free(s->mem, &s->live);
    cm_map_free(s->mem, &s->pages);
    cm_map_free(s->mem, &s->module_index);
    cm_map_free(s->mem, &s->assembly_index);
    memset(s, 0, sizeof *s);
}

void rs_stats(const rs_store *s, nt_trace_window_stats *out)
{
    out->records = (nt_window_table){ s->count, s->record_bytes };
    out->strings = (nt_window_table){ s->count, s->string_bytes };
    out->address_index = (nt_window_table){ s->nodes_used + s->nwide, s->index_bytes };
    uint64_t modules = s->module_index.count + s->assembly_index.count;
    out->modules = (nt_window_table){ modules, s->module_bytes };
    out->record_budget = s->budget;
    out->records_seen = s->jit + s->rundown + s->unload;
    out->records_retired = s->retired;
    out->records_evicted = s->evicted;
    out->records_evicted_sampled = s->evicted_sampled;
}
