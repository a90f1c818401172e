/* Internals of the aggregator shared by trace.c (building), symbols.c
 * (address x time -> method) and the rest of src/trace/; the layers above
 * read a trace through the public accessors and trace_view.h. */
#ifndef TR_INTERNAL_H
#define TR_INTERNAL_H

#include "nettrace_trace.h"
#include "common/alloc.h"
#include "common/map.h"
#include "common/sat.h"

/* Interned NUL-terminated strings in chunked storage (pointers never move). */
typedef struct tr_strings {
    char **chunks;
    size_t nchunks, chunk_cap;
    size_t used_in_last, last_size;
    struct tr_str_slot { const char *s; uint64_t hash; } *table; /* open addressing, s NULL = empty */
    size_t cap, count;
    struct tr_str_slot *recent; /* tr_store's direct-mapped cache of recent strings */
    size_t recent_cap, stored;
} tr_strings;

/* Returns the interned copy of s, or NULL when memory is short. */
const char *tr_intern(cm_mem *m, tr_strings *st, const char *s);
/* A stored copy of s, shared with an equal recent string when the cache has it. */
const char *tr_store(cm_mem *m, tr_strings *st, const char *s);
void tr_strings_free(cm_mem *m, tr_strings *st);
/* A copy of len bytes (any bytes, a NUL after them) in the storage, not interned; NULL when memory is short. */
char *tr_strings_bytes(cm_mem *m, tr_strings *st, const void *bytes, size_t len);
/* Drop the lookup table once nothing more will be interned (the strings stay). */
void tr_strings_seal(cm_mem *m, tr_strings *st);

/* A sample while building: ticks, interned (later: resolved) stack, thread
 * index in the low 24 bits and the sample type in the high 8. */
typedef struct tr_sample {
    int64_t ticks;
    uint32_t stack;
    uint32_t thread_type;
} tr_sample;

/* Samples live in fixed chunks: growing never copies them (realloc of one
 * large block copied it again and again once the allocator stopped mapping
 * it), and the last chunk is cut to size in finish(). */
#define TR_SCHUNK_SHIFT 10
#define TR_SCHUNK (1u << TR_SCHUNK_SHIFT)
#define TR_SAMPLE(t, i) (&(t)->schunks[(i) >> TR_SCHUNK_SHIFT][(i) & (TR_SCHUNK - 1)])

#define TR_MAX_THREADS (1u << 24)
#define TR_THREAD(s) ((s)->thread_type & 0xFFFFFFu)
#define TR_TYPE(s) ((s)->thread_type >> 24)

/* What an aggregated sample stands for. */
typedef struct tr_agg {
    uint64_t count;
    int64_t wall_ns;     /* the samples' weights by time (to each one's next sample of the thread) */
    int64_t last_ticks;  /* the last one's ticks */
} tr_agg;

/* A distinct resolved stack: its frame ids are ids[off .. off+count). */
typedef struct tr_rstack {
    uint32_t off, count;
    uint32_t resolved;   /* frames a method record names */
} tr_rstack;

/* For each distinct queried address, the method records covering it. */
typedef struct tr_symbols {
    uint64_t *addrs;       /* sorted distinct addresses */
    size_t naddrs, alloc_addrs;
    uint32_t *first;       /* address k's candidates: cand[first[k] .. first[k+1]) */
    uint32_t *cand;
    size_t ncand;
    uint64_t dropped_overlaps; /* records left out because overlaps exceeded the bound */
} tr_symbols;

struct nt_trace {
    cm_mem mem;
    nt_trace_info info;
    bool have_info;
    nt_status status;
    char message[256];
    uint64_t stream_bytes, events_dropped;

    tr_strings strings;

    tr_sample **schunks;     /* sample i: TR_SAMPLE(t, i) */
    size_t nschunks, schunks_cap;
    size_t nsamples, last_chunk;   /* entries allocated in the last chunk */

    uint64_t *threads;   /* index -> thread id */
    size_t nthreads, threads_cap;

    nt_trace_method *methods;
    size_t nmethods, methods_cap;

    nt_trace_module *modules;
    size_t nmodules, modules_cap;
    cm_map module_index;     /* module id -> index */
    nt_trace_assembly *assemblies;
    size_t nassemblies, assemblies_cap;
    cm_map assembly_index;   /* assembly id -> index */

    nt_frame *frames;        /* the distinct frames: frame id -> (ip, method) */
    size_t nframes, frames_cap;
    uint32_t *ids;           /* the resolved stacks' frame ids (tr_rstack) */
    size_t nids, ids_cap;
    nt_trace_method unresolved; /* what unresolved frames point to: every name "" */
    tr_rstack *stacks;
    size_t nstacks, stacks_cap;

    uint64_t samples_unknown_stack, jit_records, rundown_records, unload_records;
    uint64_t total_frames, resolved_frames;
    uint64_t symbol_lookups;   /* address x time lookups resolution made (tests bound them) */
    uint64_t stack_probes;     /* the interned stacks' index's cm_map probes at finish (tests bound them) */

    /* Built with aggregate: sample i stands for agg[i].count samples of
     * one stack, thread and type (its ticks are the first one's). */
    tr_agg *agg;
    size_t agg_cap;
    uint64_t total_samples;    /* the samples counted */
    /* With labels kept (nt_trace_builder_keep_labels): the distinct label
     * sets, and per sample its set's number (0: none; NULL until a sample
     * has one; in sample order once finished). */
    nt_event_labels *label_sets;
    size_t nlabel_sets, label_sets_cap;
    uint32_t *sample_labels;
    size_t sample_labels_cap;
    bool inexact;              /* the counts could not follow time exactly: build it again sample by sample */
};

/* trace.c, for other analyses built beside the trace (profile.c): intern an
 * event's stack like a sample's (UINT32_MAX, and the builder failed, when
 * memory is short), and have finish() resolve extra[0 .. n) like samples --
 * each entry's stack, an interned index, becomes a resolved stack index
 * valid at its ticks.  extra must live until finish() returns. */
uint32_t tr_builder_intern(nt_trace_builder *b, const nt_stack *stack);
/* Changes of code at looked-up addresses so far (code_epoch.h): part of what
 * an event profile merges its records by. */
uint32_t tr_builder_code_epoch(const nt_trace_builder *b);
/* The builder's limits (defaults filled in), for what an event profile holds beside it. */
const nt_trace_limits *tr_builder_limits(const nt_trace_builder *b);
/* Stop the build at a limit of such a table: msg, naming it, becomes the trace's message. */
void tr_builder_fail_limit(nt_trace_builder *b, const char *msg);
void tr_builder_resolve_also(nt_trace_builder *b, tr_sample *extra, size_t n);

/* The count ids at off into t->ids (an interned or resolved stack's).  An
 * empty stack's are NULL: the id storage does not exist until a stack holds
 * one, and NULL + 0 is undefined. */
static inline uint32_t *tr_ids(const nt_trace *t, size_t off, uint32_t count) { return count ? t->ids + off : NULL; }

/* The frame ids of resolved stack k, innermost first (NULL when it is empty). */
static inline const uint32_t *tr_stack_ids(const nt_trace *t, uint32_t k)
{
    return tr_ids(t, t->stacks[k].off, t->stacks[k].count);
}

/* The number of samples sample i stands for. */
static inline uint64_t tr_count(const nt_trace *t, size_t i) { return t->agg ? t->agg[i].count : 1; }

/* Sum of non-negative weights, saturating: hostile clocks make single weights near INT64_MAX. */
static inline int64_t tr_add_weight(int64_t a, int64_t b) { return cm_sat_add(a, b); }
/* The weight of one sample by time when the thread's next sample is none (the sampling interval). */
static inline int64_t tr_default_ns(const nt_trace_info *info)
{
    return info->sampling_interval_ns ? (int64_t)info->sampling_interval_ns : 1000000;
}
/* The time from a sample to the next one: the difference of their printed times, saturating. */
static inline int64_t tr_gap_ns(int64_t freq, int64_t a, int64_t b)
{
    int64_t x = nt_ticks_to_ns(a, freq), y = nt_ticks_to_ns(b, freq);
    uint64_t d = y > x ? (uint64_t)y - (uint64_t)x : 0;
    return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}


/* symbols.c */
/* Sort the addresses that will be looked up and drop duplicates (*alloc
 * entries allocated through m; the allocation may shrink). */
bool tr_addrs_prepare(cm_mem *m, uint64_t **addrs, size_t *naddrs, size_t *alloc);
/* The first index of the n sorted addrs whose address is >= addr. */
size_t tr_addrs_lower_bound(const uint64_t *addrs, size_t n, uint64_t addr);
/* True when [start, start + size) holds one of the prepared addresses. */
bool tr_addrs_cover(const uint64_t *addrs, size_t n, uint64_t start, uint64_t size);
/* Takes prepared addrs (addrs_alloc entries allocated through m, naddrs
 * used).  n_seen: records the stream had (kept or not), which bounds the
 * overlaps allowed.  On failure call tr_symbols_free too. */
bool tr_symbols_build(cm_mem *m, tr_symbols *sy, const nt_trace_method *methods, size_t n, size_t n_seen,
                      uint64_t *addrs, size_t naddrs, size_t addrs_alloc);
/* Candidates of the k-th prepared address. */
const uint32_t *tr_symbols_candidates_at(const tr_symbols *sy, size_t k, uint32_t *count);
/* The record valid at ticks among the candidates, or NT_TRACE_NO_METHOD. */
uint32_t tr_symbols_pick(const nt_trace_method *methods, const uint32_t *cand, uint32_t n, int64_t ticks);
/* True when the pick among these candidates is the same at every time in [lo, hi]. */
bool tr_symbols_steady(const nt_trace_method *methods, const uint32_t *cand, uint32_t n, int64_t lo, int64_t hi);
/* True when the pick among these candidates cannot depend on time. */
bool tr_symbols_timeless(const nt_trace_method *methods, const uint32_t *cand, uint32_t n);
void tr_symbols_free(cm_mem *m, tr_symbols *sy);

/* records.c: the UTF-8 of a lazy name w written at byte at of *buf (grown
 * through m to hold it), NUL-terminated: its length without the NUL, or
 * SIZE_MAX when memory is short. */
size_t tr_utf8_append(cm_mem *m, char **buf, size_t *cap, size_t at, nt_str16 w);

/* trace_io.c: what the one-call entry points of traces and profiles
 * (profile_io.c) share.  msg may be NULL. */
void tr_set_msg(char *msg, size_t size, const char *text);
/* What an entry point reads: a buffer (fd < 0) or a file descriptor. */
typedef struct tr_input {
    const void *data;
    size_t len;
    int fd;
} tr_input;
/* What tr_build_input needs of a builder (a trace's or a profile's): its
 * callbacks, free, and finish, which hands over what was built through out
 * (nt_trace ** or nt_profile **) and the trace inside it through built. */
typedef struct tr_build_kind {
    void (*callbacks)(nt_callbacks *cb);
    void (*free)(void *b);
    nt_status (*finish)(void *b, nt_parser *p, nt_status s, void *out, const nt_trace **built);
} tr_build_kind;
/* The one-call read: in through a lazy-names parser into b (NULL: creation
 * failed, reported as out of memory), then finished; whatever was built is
 * handed over once the header was read, and msg says why it is incomplete. */
nt_status tr_build_input(const tr_build_kind *k, void *b, const tr_input *in, const nt_trace_options *opt,
                         void *out, char *msg, size_t msg_size);
/* The trace builder's kind (the profile builder's: pr_profile_kind). */
extern const tr_build_kind tr_trace_kind;

#endif
