/* The builder's state while a stream is read, shared by its units:
 * build.c (samples, stacks, threads, finish), records.c (method, module and
 * assembly records) and resolve.c (frames resolved by address and time). */
#ifndef TR_BUILD_INTERNAL_H
#define TR_BUILD_INTERNAL_H

#include "common/compiler.h"
#include "trace/trace_internal.h"
#include "trace/code_epoch.h"
#include "common/hash.h"
#include "common/line_filter.h"

#include <stdarg.h>
#include <stdio.h>

/* An interned stack: its address ids are t->ids[off .. off + count) (the
 * raw ip of an id is uaddr[id]), which is also its resolved form when no
 * frame of it can resolve differently over time. */
typedef struct tr_istack {
    uint32_t off, count;
} tr_istack;

/* Parser stack (interval, id) -> interned stack: ids restart after each
 * sequence point, and the parser numbers the intervals (nt_stack.interval).
 * Direct-mapped: a miss only costs a hash. */
#define TR_IDCACHE 256u
typedef struct tr_idcache {
    uint32_t interval, id, istack, count;
    uint64_t first, last;   /* cheap guard against a redefined id */
} tr_idcache;

/* A rundown or unload record not (yet) known to cover a sampled address. */
typedef struct tr_cold {
    uint64_t start, method_id, module_id, rejit_id;
    int64_t timestamp, until;
    const char *str;        /* "name\0signature\0" in the cold arena; wide: two spans (cold_span) */
    const char *type;       /* in the cold arena, shared by runs of one type */
    uint32_t size, flags, token;
    uint32_t hot_before;    /* records kept directly that came before it: its place in stream order */
    uint8_t source;
    bool wide;              /* the parser gave lazy names: the strings are kept as UTF-16, unconverted */
} tr_cold;

#define TR_COLD_CHUNK 256u                  /* records a chunk */
#define TR_COLD 0x80000000u                 /* live-map value flag: a cold record's index */
#define TR_CSTR_CHUNK (256u * 1024u)
#define TR_LINE_HASH_BITS 16                /* the lines filter (common/line_filter.h) */
#define TR_LINE_BITS (1u << TR_LINE_HASH_BITS)

/* Thread id -> index, direct-mapped in front of the map. */
#define TR_TCACHE_BITS 6u                   /* the top bits of a product index it */
#define TR_TCACHE (1u << TR_TCACHE_BITS)
typedef struct tr_thread_slot {
    uint64_t id;
    uint32_t index;         /* UINT32_MAX = empty */
} tr_thread_slot;

/* With aggregate: the samples of one (interned stack, thread, type) since
 * the last load or unload of code at a sampled address, counted together. */
typedef struct tr_entry {
    int64_t first_ticks, last_ticks;
    uint64_t first_seq;     /* the first one's place in the stream */
    uint64_t count;
    int64_t wall_ns;
    uint32_t istack, thread_type;
    uint32_t epoch;
} tr_entry;

/* With aggregate: a thread's latest sample, whose weight by time waits for the next one. */
typedef struct tr_pending {
    uint32_t entry;         /* its entry + 1, 0 = none yet */
    int64_t ticks, ns;
} tr_pending;

/* Return address -> index in uaddr, direct-mapped in front of addr_ids. */
#define TR_ACACHE_BITS 13u
#define TR_ACACHE (1u << TR_ACACHE_BITS)
typedef struct tr_addr_slot {
    uint64_t addr;
    uint32_t id;            /* UINT32_MAX = empty */
} tr_addr_slot;

struct nt_trace_builder {
    nt_trace *t;
    bool failed;            /* out of memory or a table limit: the parse was stopped */
    nt_status fail_status;
    char fail_msg[160];     /* which limit, when fail_status is NT_ERR_LIMIT */
    nt_trace_limits lim;    /* defaults filled in */
    bool sorted;
    int64_t last_ticks;

    tr_istack *istacks;
    size_t nistacks, istacks_cap;
    cm_map stack_index;     /* keyed hash of a stack's ips (hash_ips) -> istack (cm_map_find) */

    tr_idcache idcache[TR_IDCACHE];
    cm_map thread_index;    /* thread id -> index */
    tr_thread_slot tcache[TR_TCACHE];
    tr_sample *sfill, *send; /* the free part of the last sample chunk */
    cm_map live;            /* (method id, start) -> record loaded and not yet unloaded (TR_COLD: cold) */

    /* Rundown and unload records wait here, strings copied without interning,
     * until finish() knows every sampled address: only those whose code a
     * sampled frame lies in are kept (a rundown lists every method ever
     * compiled, a few of which ran while sampled).  Chunked: never moved. */
    tr_cold **cold;
    size_t ncold, cold_chunks, cold_chunks_cap;
    char *cstr;             /* current chunk of the cold string arena */
    size_t cstr_used, cstr_size;
    char **cstr_chunks;
    size_t ncstr_chunks, cstr_chunks_cap;
    const char *cold_last_type;
    bool cold_last_wide;
    /* Lazy names converted for a record being kept: one buffer per string of a record. */
    char *conv[3];
    size_t conv_cap[3];
    /* A bit for each hash of the 256-byte lines of the addresses looked up
     * so far (frame 0 as is, return addresses minus one): a DCEnd record
     * whose lines' bits are all clear lies near no sample and is dropped at
     * once.  A set bit only sends a record to the cold list, where finish()
     * decides exactly. */
    uint64_t lines[TR_LINE_BITS / 64];
    uint64_t dropped;       /* DCEnd records dropped so */

    /* Stack references of other events (the profiles' records, profile.c),
     * resolved like samples at their own time; not counted as samples. */
    tr_sample *extra;
    size_t nextra;

    /* The distinct addresses of the interned stacks, each an address id: its
     * ip as recorded, and whether it was innermost (looked up as is) or a
     * return address (looked up at ip - 1; bit clear in leaf).  An id is also
     * the frame id of the address resolved to its first (for most addresses
     * its only) method record.  finish() sorts the looked-up addresses once,
     * and a frame then finds its candidates without a search. */
    uint64_t *uaddr;
    size_t nuaddr, uaddr_cap;
    uint64_t *leaf;         /* a bit per address id: innermost */
    size_t leaf_cap;        /* words */
    cm_map addr_ids;        /* return address ip -> address id */
    cm_map leaf_ids;        /* innermost ip -> address id */
    tr_addr_slot acache[TR_ACACHE];
    cm_hash_key stack_key;  /* the interned stacks' table is keyed (hash_ips) */

    /* aggregate: entries instead of samples; a load or unload of code at a
     * sampled address starts new entries (an epoch), so the samples of one
     * entry resolve alike unless the stream delivers them out of time order
     * around such a record, which resolve() detects (t->inexact). */
    bool aggregate;
    tr_entry *entries;
    size_t nentries, entries_cap;
    cm_map entry_index;     /* istack << 32 | thread_type -> entry, this epoch */
    uint64_t seq;
    tr_pending *pend;       /* by thread index: its latest sample */
    tr_code_epoch code;     /* changes of code at looked-up addresses so far (code_epoch.h) */
    size_t pend_cap;

    /* Labels (labels.c): kept per sample when asked (not when counting). */
    bool keep_labels;
    cm_map label_index;     /* keyed hash of a set (labels_hash) -> its number (cm_map_find) */
    const nt_event_labels *given_labels; /* the next sample's, when it comes without an event (a window's cut) */
};

/* Method record m as the stream delivers it: the epoch moves when m changes
 * code where a stack may have looked an address up (code_epoch.h), and
 * counted entries start anew. */
void tr_builder_code_changed(nt_trace_builder *b, const nt_method *m);
/* The stream unloaded code before this builder's first record (a live window's later builders). */
void tr_builder_code_unloaded_before(nt_trace_builder *b);

#define GROW(m, arr, n, cap) cm_mem_reserve((m), (void **)&(arr), &(cap), (n) + 1, sizeof *(arr))

/* The kept method records and the stacks' address ids grow by an eighth,
 * not by doubling, so the trace's peak memory stays close to what it keeps
 * (samples are chunked).  Room for need entries. */
static inline bool reserve_slow(cm_mem *m, void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t ncap = *cap;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return false;
        ncap = ncap < 4096 ? (ncap ? ncap * 2 : 256) : ncap + ncap / 8;
    }
    if (ncap > SIZE_MAX / elem || !cm_mem_resize(m, arr, *cap * elem, ncap * elem))
        return false;
    *cap = ncap;
    return true;
}
#define GROW_SLOW(m, arr, n, cap) reserve_slow((m), (void **)&(arr), &(cap), (size_t)(n) + 1, sizeof *(arr))

/* Out of memory or a table limit: the parse is stopped. */
static inline int tr_fail(nt_trace_builder *b, nt_status s)
{
    b->failed = true;
    b->fail_status = s;
    return 1;
}

/* A limit of nt_trace_limits reached: what (printf-style) goes to the message.
 * Inline beside tr_fail so that every unit of the builder can report a limit
 * without calling up into build.c. */
static inline int tr_fail_limit(nt_trace_builder *b, const char *fmt, ...)
#if defined(__GNUC__)
    CC_PRINTF(2, 3)
#endif
    ;
static inline int tr_fail_limit(nt_trace_builder *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->fail_msg, sizeof b->fail_msg, fmt, ap);
    va_end(ap);
    return tr_fail(b, NT_ERR_LIMIT);
}

/* A sample's intake in three steps (on_sample, and the merge of a part's
 * builder, build_part.c): its interned stack (UINT32_MAX: the build failed),
 * its thread's index (UINT32_MAX: failed), then the sample kept or counted
 * (nonzero: the build failed). */
uint32_t tr_builder_sample_stack(nt_trace_builder *b, const nt_sample *s);
uint32_t tr_builder_thread(nt_trace_builder *b, uint64_t thread_id);
int tr_builder_store(nt_trace_builder *b, const nt_sample *s, uint32_t st, uint32_t th);
/* The stack ips[0..n) that a part's builder interned as its address ids part_ids, interned into b
 * (amap: the part's address ids -> b's, UINT32_MAX until looked up); UINT32_MAX when the build failed. */
uint32_t tr_builder_intern_part(nt_trace_builder *b, const uint64_t *ips, uint32_t n, const uint32_t *part_ids,
                                uint32_t *amap);

/* labels.c: sample number sample's labels l noted (interned); false when memory is short. */
bool tr_note_labels(nt_trace_builder *b, size_t sample, const nt_event_labels *l);
/* A sample with labels given (a cut from a window's log: its sample has no event). */
int tr_builder_sample_labeled(nt_trace_builder *b, const nt_sample *s, const nt_event_labels *l);

/* records.c */
int tr_on_method(void *user, const nt_method *m);
int tr_on_module(void *user, const nt_module *mo);
int tr_on_assembly(void *user, const nt_assembly *a);
/* Moves the cold records whose code holds one of the sorted addrs into the
 * kept ones (stream order), and frees the rest. */
bool tr_keep_cold(nt_trace_builder *b, const uint64_t *addrs, size_t naddrs);
void tr_cold_release(nt_trace_builder *b);
/* Every kept record's assembly name, through its module. */
void tr_link_assemblies(nt_trace *t);

/* resolve.c: every sample's frames, by address and time: the frame table
 * (t->frames) and the resolved stacks (t->stacks, their ids in t->ids). */
nt_status tr_resolve_frames(nt_trace_builder *b);
/* Frees the address table (done by resolution once it has what it needs). */
void tr_addrs_release(nt_trace_builder *b);
/* Before finish: the distinct addresses of the builder's stacks as resolution
 * will look them up (innermost as is, return addresses minus one), sorted and
 * deduplicated into *out (allocated through m; *n of them, *alloc entries,
 * free with *alloc).  False when memory is short.  A live window asks its
 * record store for exactly the records these addresses can resolve to. */
bool tr_builder_lookup_addrs(const nt_trace_builder *b, cm_mem *m, uint64_t **out, size_t *n, size_t *alloc);

#endif
