#include "cli/event_stacks.h"
#include "cli/trace_load.h"

#include <stdlib.h>
#include <string.h>

bool ev_stacks_init(ev_stacks *s)
{
    memset(s, 0, sizeof *s);
    s->b = nt_trace_builder_new(NULL);
    nt_trace_builder_callbacks(&s->bcb);
    return s->b != NULL;
}

bool ev_stacks_add(ev_stacks *s, const nt_event *ev, int64_t time_ns)
{
    nt_sample smp = { .timestamp = ev->timestamp, .time_ns = time_ns, .thread_id = ev->thread_id,
                      .type = NT_SAMPLE_ERROR, .stack_id = ev->stack_id, .stack = ev->stack, .event = ev };
    return s->bcb.sample(s->b, &smp) == 0;
}

nt_status ev_stacks_finish(ev_stacks *s, const nt_parser *p, nt_status stream_status)
{
    nt_status st = nt_trace_builder_finish(s->b, p, stream_status, &s->t);
    s->b = NULL; /* finish frees it whatever it returns */
    if (s->t && !cli_stack_texts_init(&s->texts, s->t, 0, 0))
        return NT_ERR_NOMEM;
    return st;
}

const char *ev_stacks_line(void *ctx, size_t k)
{
    ev_stacks *s = ctx;
    if (!s->t || k >= nt_trace_sample_count(s->t))
        return NULL;
    nt_trace_sample smp = nt_trace_sample_at(s->t, k);
    return cli_stack_text(&s->texts, smp.stack_index);
}

void ev_stacks_free(ev_stacks *s)
{
    cli_stack_texts_free(&s->texts);
    nt_trace_free(s->t);
    nt_trace_builder_free(s->b);
    memset(s, 0, sizeof *s);
}
