/* Handing a decoded event to the callbacks, shared by the V4/V5 and V6 event
 * block decoders and inline because it runs once per event: the event
 * callback, then the sample fast path or the typed payload
 * decoders (clr_events.c). */
#ifndef NT_PARSE_DELIVER_H
#define NT_PARSE_DELIVER_H

#include "parse/context.h"

/* Typed payload decoders (clr_events.c) for every kind but
 * NT_KIND_THREAD_SAMPLE and NT_KIND_OTHER; ev->desc is non-NULL. */
nt_status nt_dispatch_typed(nt_parser *p, const nt_event *ev);

/* SampleProfiler ThreadSample.  The payload is a u32 sample type; an empty
 * payload (early runtimes) carries no type and is reported as
 * NT_SAMPLE_ERROR. */
static inline nt_status nt_decode_sample(nt_parser *p, const nt_event *ev, nt_sample *s)
{
    p->stats.samples++;
    if (!p->cb.sample)
        return NT_OK;
    s->type = ev->payload_size >= 4 ? nt_le32(ev->payload) : NT_SAMPLE_ERROR;
    s->timestamp = ev->timestamp;
    s->time_ns = nt_parser_ticks_to_ns(p, ev->timestamp);
    s->thread_id = ev->thread_id;
    s->stack_id = ev->stack_id;
    s->stack = ev->stack;
    return NT_CALL(p, sample, s);
}

/* The kind nt_event_deliver dispatches on: a loop that keeps it beside
 * ev->desc reads it from a register instead of through desc after the
 * event callback. */
static inline nt_event_kind nt_desc_kind(const nt_event_desc *d) { return d ? d->kind : NT_KIND_OTHER; }

/* What an event refers to that its interval does not hold, counted per
 * event in the stats: the loops keep the mask beside ev.desc and ev.stack
 * and update it only when the header changes an id. */
#define NT_UNKNOWN_METADATA 0x1u
#define NT_UNKNOWN_STACK 0x2u

/* The stack of ev->stack_id into ev->stack; NT_UNKNOWN_STACK when the id is
 * set but the interval does not hold it.  Stack blocks come between event
 * blocks, so an event block's lookups hold for the whole block. */
static inline unsigned nt_event_find_stack(nt_parser *p, nt_event *ev)
{
    if (!ev->stack_id) {
        ev->stack = NULL;
        return 0;
    }
    ev->stack = nt_stacks_find(&p->stacks, ev->stack_id);
    return ev->stack ? 0 : NT_UNKNOWN_STACK;
}

/* ev->desc and ev->stack are set; kind is nt_desc_kind(ev->desc), unknown
 * the NT_UNKNOWN_* of the two.  sample->event is ev (set once per block:
 * the loop keeps the struct beside ev). */
__attribute__((always_inline)) static inline nt_status nt_event_deliver(nt_parser *p, nt_event *ev, nt_event_kind kind,
                                                                        unsigned unknown, nt_sample *sample)
{
    if (__builtin_expect(unknown != 0, 0)) {
        p->stats.unknown_metadata_refs += (unknown & NT_UNKNOWN_METADATA) != 0;
        p->stats.unknown_stack_refs += (unknown & NT_UNKNOWN_STACK) != 0;
    }
    p->stats.events++;
    nt_status s = NT_CALL(p, event, ev);
    if (s)
        return s;
    if (kind != NT_KIND_OTHER)
        return kind == NT_KIND_THREAD_SAMPLE ? nt_decode_sample(p, ev, sample) : nt_dispatch_typed(p, ev);
    return NT_OK;
}

#endif
