/* The method, module and assembly records of a live stream, kept once for
 * all its windows (record_store.c).
 *
 * A window asks for the records that cover its sampled addresses and gets
 * them as the stream delivered them (the creating event, then the unload),
 * in stream order, so its builder resolves them exactly as a file's
 * builder resolves the whole stream: a record no sampled address lies in
 * cannot name a frame.  The cost of a window is its own addresses' page
 * chains and the records they hit, not the stream's age.
 *
 * What is kept is bounded three ways:
 *  - retirement: a record whose code the stream says is gone (MethodUnload,
 *    or its module's ModuleUnload) is dropped once no held sample can be
 *    older than the unload (rs_retire, with the horizon its owner computes);
 *    a module or assembly record is dropped on its unload the same way;
 *  - a byte budget: past it, records no sample hit although a window was
 *    taken since they came go first, oldest first; then sampled ones, least
 *    recently sampled first; then the current window's (counted);
 *  - per address page at most RS_PAGE_MAX records (older ones evicted), and
 *    at most RS_MAX_WIDE records wider than RS_WIDE_PAGES pages.
 * Entries carry a generation that changes when their slot is reused; no
 * index into the store leaves this unit. */
#ifndef TR_RECORD_STORE_H
#define TR_RECORD_STORE_H

#include "nettrace_trace.h"
#include "common/alloc.h"
#include "common/map.h"

#define RS_PAGE_SHIFT 12                /* the address index's page: 4 KiB */
#define RS_PAGE_MAX 256u                /* records indexed in one page */
#define RS_WIDE_PAGES 64u               /* records over this many pages are "wide": scanned, not indexed */
#define RS_MAX_WIDE 64u
#define RS_DEFAULT_BUDGET (64u * 1024u * 1024u)

typedef struct rs_entry rs_entry;
typedef struct rs_module rs_module;
typedef struct rs_assembly rs_assembly;

/* A node of a page's chain in the address index.  next runs from the head
 * (the newest record) to the tail (NONE ends it); prev runs back, and the
 * head's prev is the tail, so the page's oldest record and any node are
 * reached in O(1); enext is the next page's node of the same entry.  (A
 * removal that walked the chain cost a fifth of a live stream's feed under
 * code churn: the churn's dynamic methods share pages.) */
typedef struct rs_node {
    uint32_t entry, next, prev, enext;
} rs_node;

/* A doubly linked list through entries (indices; UINT32_MAX ends it). */
typedef struct rs_list {
    uint32_t head, tail;
    size_t count;
} rs_list;

typedef struct rs_store {
    cm_mem *mem;               /* the owner's */
    uint64_t budget;           /* bytes the records, modules and assemblies may hold */
    uint32_t max_entries;      /* records held at most */
    rs_entry *entries;
    size_t nentries, entries_cap, count; /* slots, allocated, in use */
    uint32_t free_entry;       /* free slots, through next */
    rs_list cold, warm, gone;  /* never sampled (arrival order), sampled (least recent first), unloaded */
    cm_map live;               /* (method id, start) -> entry, while its code is loaded */
    cm_map pages;              /* page -> (head node + 1) << 32 | records in it */
    rs_node *nodes;
    size_t nnodes, nodes_cap, nodes_used;
    uint32_t free_node;
    uint32_t wide[RS_MAX_WIDE];
    uint32_t nwide;
    rs_module *modules;
    size_t nmodules, modules_cap;
    cm_map module_index;       /* module id -> index */
    uint32_t free_module, free_assembly;
    rs_assembly *assemblies;
    size_t nassemblies, assemblies_cap;
    cm_map assembly_index;     /* assembly id -> index */
    uint64_t seq;              /* records received: each one's place in the stream */
    uint64_t queries;          /* rs_feed calls: an entry's hit mark */
    /* What is held (budget bytes), by table. */
    uint64_t record_bytes, string_bytes, index_bytes, module_bytes;
    /* The stream's counts, as a builder fed every record would count them. */
    uint64_t jit, rundown, unload;
    uint64_t retired, evicted, evicted_sampled, modules_retired;
    uint64_t work;             /* index steps and records fed by the last rs_feed: its cost, machine-independent */
    /* Scratch of rs_feed, kept between calls. */
    uint32_t *hits;
    size_t hits_cap;
    struct rs_feed_event *events;
    size_t events_cap;
    bool nomem;                /* a record could not be kept: memory ran short */
} rs_store;

void rs_init(rs_store *s, cm_mem *mem, uint64_t budget);
void rs_free(rs_store *s);

/* Records as the parser delivers them (NT_ERR_NOMEM noted in s->nomem, never a stop). */
void rs_add_method(rs_store *s, const nt_method *m);
void rs_add_module(rs_store *s, const nt_module *mo);
void rs_add_assembly(rs_store *s, const nt_assembly *a);

/* The callbacks rs_feed hands records to (a builder's). */
typedef struct rs_sink {
    int (*method)(void *user, const nt_method *m);
    int (*module)(void *user, const nt_module *mo);
    int (*assembly)(void *user, const nt_assembly *a);
    void *user;
} rs_sink;

/* Every record covering one of the n sorted, distinct lookup addresses, in
 * stream order (with its unload), then their modules and assemblies.  A
 * non-zero return of a callback stops the feed and is returned. */
int rs_feed(rs_store *s, const uint64_t *addrs, size_t n, const rs_sink *to);

/* Drop the unloaded records, modules and assemblies unloaded at or before
 * horizon (ticks): no sample a window still holds or will take is older
 * (the owner decides where that is). */
void rs_retire(rs_store *s, int64_t horizon);

/* The store's tables in the public form. */
void rs_stats(const rs_store *s, nt_trace_window_stats *out);

#endif
