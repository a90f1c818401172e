/* A part's callbacks kept in stream order (plog.c): a worker thread parses a
 * part of the stream with the recorder's callbacks, and the delivery thread
 * later replays them, in the order the parser made them, to the caller's
 * callbacks, with the arguments the sequential parse would have handed
 * over.  What a callback's arguments point to is kept so that it outlives
 * the parser's scratch: events and records are copied, with their strings
 * and the stacks they use; payloads stay where they are (in the caller's
 * buffer, which the parallel parse reads in place); descriptions are kept as
 * their index in the part's metadata table, which only grows while the part
 * is parsed (a metadata flush inside a part makes it inexact: replayed by a
 * sequential parse instead).  Memory is chunked: what was recorded never moves. */
#ifndef PS_PARSE_PLOG_H
#define PS_PARSE_PLOG_H

#include "parse/context.h"

#include <pthread.h>

typedef struct ps_plog_chunk ps_plog_chunk;

/* Chunks of delivered parts, kept for the next parts (their pages are
 * already mapped); shared by the threads that decode. */
typedef struct ps_plog_pool {
    pthread_mutex_t mu;
    ps_plog_chunk *free;
    cm_mem mem;               /* every chunk's allocation (under mu) */
} ps_plog_pool;

void ps_plog_pool_init(ps_plog_pool *pool, const nt_allocator *alloc);
void ps_plog_pool_free(ps_plog_pool *pool);

typedef struct ps_plog {
    ps_plog_pool *pool;
    cm_mem *mem;              /* the log's other allocations (one thread at a time) */
    nt_parser *p;             /* the parser recording (its metadata table, header, scratch) */
    const nt_callbacks *want; /* what delivery calls: only those callbacks (and what they point to) are kept */
    ps_plog_chunk *head, *tail;
    uint64_t entries;
    const nt_event *src_event; /* the event being delivered, as the parser holds it */
    nt_event *last_event;     /* its copy in the log, once something needs it (NULL before) */
    /* The current interval's stacks as copied: by id - base. */
    const nt_stack **stacks;
    size_t stacks_cap;
    uint32_t stack_base, stack_interval;
    bool have_stacks;
    bool inexact;             /* a metadata flush inside the part, or a description not in the table */
    bool failed;              /* out of memory: the part cannot be replayed */
} ps_plog;

/* The recorder's callbacks, with user = the log.  lazy_names is the
 * caller's choice, set on the recording parser: with it records carry only
 * their nt_str16 spans, which point into the payload. */
void ps_plog_init(ps_plog *l, ps_plog_pool *pool, cm_mem *mem, nt_parser *p, const nt_callbacks *want);
void ps_plog_callbacks(nt_callbacks *cb);
void ps_plog_free(ps_plog *l);

/* Hand the log to cb in stream order.  fctx is the delivery thread's field
 * context (events point to it, with their V6 labels set per event).  A
 * callback that stops is recorded on `to` (NT_ERR_STOPPED with the offset
 * and message the sequential parse gives) and returned. */
nt_status ps_plog_replay(ps_plog *l, const nt_callbacks *cb, void *user, struct nt_field_ctx *fctx, nt_parser *to);

#endif
