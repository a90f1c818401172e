/* Event stacks named as `nettrace samples` names frames: each event's stack
 * goes to the trace builder as a sample (the one resolver, by address and
 * time), and after the end of the stream -- rundown names come last -- the
 * k-th such sample in time order is the k-th event with a stack. */
#ifndef CLI_EVENT_STACKS_H
#define CLI_EVENT_STACKS_H

#include "cli/stack_texts.h"
#include "nettrace_trace.h"

typedef struct ev_stacks {
    nt_trace_builder *b;
    nt_callbacks bcb;   /* the builder's callbacks, for the caller to chain */
    nt_trace *t;
    cli_stack_texts texts; /* per stack index of t, made when first needed */
} ev_stacks;

bool ev_stacks_init(ev_stacks *s);
/* Hand ev's stack to the builder; false when memory is short. */
bool ev_stacks_add(ev_stacks *s, const nt_event *ev, int64_t time_ns);
/* Resolve; returns the builder's status. */
nt_status ev_stacks_finish(ev_stacks *s, const nt_parser *p, nt_status stream_status);
/* The k-th added stack in time order, root first joined by ';' ("-" when
 * empty), valid until the next call; NULL when there is none.  ctx is the ev_stacks. */
const char *ev_stacks_line(void *ctx, size_t k);
void ev_stacks_free(ev_stacks *s);

#endif
