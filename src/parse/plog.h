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
#ifndef NT_PARSE_PLOG_H
#define NT_PARSE_PLOG_H

#include "parse/context.h"

typedef struct nt_plog_chunk nt_plog_chunk;

typedef struct nt_plog {
    nt_mem *mem;              /* the log's own allocations */
    nt_parser *p;             /* the parser recording (its metadata table, header, scratch) */
    nt_plog_chunk *head, *tail;
    uint64_t entries;
    nt_event *last_event;     /* the copy of the event being delivered: its sample and record point to it */
    /* The current interval's stacks as copied: by id - base. */
    const nt_stack **stacks;
    size_t stacks_cap;
    uint32_t stack_base, stack_interval;
    bool have_stacks;
    bool inexact;             /* a metadata flush inside the part */
    bool failed;              /* out of memory: the part cannot be replayed */
} nt_plog;

/* The recorder's callbacks, with user = the log.  lazy_names is the
 * caller's choice, set on the recording parser: with it records carry only
 * their nt_str16 spans, which point into the payload. */
void nt_plog_init(nt_plog *l, nt_mem *mem, nt_parser *p);
void nt_plog_callbacks(nt_callbacks *cb);
void nt_plog_free(nt_plog *l);

/* Hand the log to cb in stream order.  fctx is the delivery thread's field
 * context (events point to it, with their V6 labels set per event).  A
 * callback that stops is recorded on `to` (NT_ERR_STOPPED with the offset
 * and message the sequential parse gives) and returned. */
nt_status nt_plog_replay(nt_plog *l, const nt_callbacks *cb, void *user, struct nt_field_ctx *fctx, nt_parser *to);

#endif
