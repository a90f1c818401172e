/* Handing a decoded event to the callbacks, shared by the V4/V5 and V6 event
 * block decoders and inline because it runs once per event: the event
 * callback, then the sample fast path or the typed payload
 * decoders (clr_events.c). */
#ifndef PS_DELIVER_H
#define PS_DELIVER_H

#include "common/compiler.h"
#include "common/cursor.h"
#include "parse/context.h"

#include <string.h>

/* Typed payload decoders (clr_events.c) for every kind but
 * NT_KIND_THREAD_SAMPLE and NT_KIND_OTHER; ev->desc is non-NULL. */
nt_status ps_dispatch_typed(nt_parser *p, const nt_event *ev);

/* MethodLoadVerbose and kin begin with a fixed part: u64 method id, module
 * id, start address; u32 size, token, flags (then three strings). */
#define PS_METHOD_FIXED 36u

/* A method record's code [*start, *start + *size) from its fixed part;
 * false when the payload is shorter (its decoder refuses it). */
static inline bool ps_method_extent(const nt_event *ev, uint64_t *start, uint32_t *size)
{
    if (ev->payload_size < PS_METHOD_FIXED)
        return false;
    *start = cm_le64(ev->payload + 16);
    *size = cm_le32(ev->payload + 24);
    return true;
}

/* SampleProfiler ThreadSample.  The payload is a u32 sample type; an empty
 * payload (early runtimes) carries no type and is reported as
 * NT_SAMPLE_ERROR. */
static inline nt_status ps_decode_sample(nt_parser *p, const nt_event *ev, nt_sample *s)
{
    p->stats.samples++;
    if (!p->cb.sample)
        return NT_OK;
    s->type = ev->payload_size >= 4 ? cm_le32(ev->payload) : NT_SAMPLE_ERROR;
    s->timestamp = ev->timestamp;
    s->time_ns = ps_parser_ticks_to_ns(p, ev->timestamp);
    s->thread_id = ev->thread_id;
    s->stack_id = ev->stack_id;
    s->stack = ev->stack;
    return PS_CALL(p, sample, s);
}

/* An event block's event before its first header: every field 0 (what
 * compressed headers count from), the field decoding context set once. */
static inline void ps_block_event_init(nt_parser *p, nt_event *ev)
{
    memset(ev, 0, sizeof *ev);
    ev->field_ctx = &p->fctx;
}

/* What ps_event_deliver does after the event callback, in one word the
 * loops keep beside ev.desc and ev.stack (updated only when the header
 * changes an id): the event's kind, and above every kind a bit for each id
 * its interval does not hold (counted per event in the stats). */
#define PS_UNKNOWN_METADATA 0x100u
#define PS_UNKNOWN_STACK 0x200u
#define PS_KIND_MASK 0xffu
_Static_assert(NT_KIND_COUNT_ <= PS_KIND_MASK, "event kinds fit below the unknown bits");

/* The kind of a descriptor, or PS_UNKNOWN_METADATA for an undefined one. */
static inline unsigned ps_desc_what(const nt_event_desc *d) { return d ? (unsigned)d->kind : PS_UNKNOWN_METADATA; }

/* The stack of ev->stack_id into ev->stack; PS_UNKNOWN_STACK when the id is
 * set but the interval does not hold it.  Stack blocks come between event
 * blocks, so an event block's lookups hold for the whole block. */
static inline unsigned ps_event_find_stack(nt_parser *p, nt_event *ev)
{
    if (!ev->stack_id) {
        ev->stack = NULL;
        return 0;
    }
    ev->stack = ps_stacks_find(&p->stacks, ev->stack_id);
    return ev->stack ? 0 : PS_UNKNOWN_STACK;
}

/* The uncommon ends of ps_event_deliver: unknown ids counted, a stop
 * passed on. */
static CC_NOINLINE CC_UNUSED nt_status ps_deliver_rest(nt_parser *p, const nt_event *ev, unsigned what,
                                                                   nt_status s, nt_sample *sample)
{
    p->stats.unknown_metadata_refs += (what & PS_UNKNOWN_METADATA) != 0;
    p->stats.unknown_stack_refs += (what & PS_UNKNOWN_STACK) != 0;
    unsigned kind = what & PS_KIND_MASK;
    if (s || kind == NT_KIND_OTHER)
        return s;
    return kind == NT_KIND_THREAD_SAMPLE ? ps_decode_sample(p, ev, sample) : ps_dispatch_typed(p, ev);
}

/* ev->desc and ev->stack are set, what is their word (above);
 * sample->event is ev (set once per block: the loop keeps the struct
 * beside ev).  The unknown ids are counted once the event callback has
 * returned, so that an ordinary event tests one word after it. */
CC_ALWAYS_INLINE static inline nt_status ps_event_deliver(nt_parser *p, nt_event *ev, unsigned what,
                                                                        nt_sample *sample)
{
    p->stats.events++;
    nt_status s = PS_CALL(p, event, ev);
    if (__builtin_expect(s == NT_OK, 1)) {
        if (what == NT_KIND_OTHER)
            return NT_OK;
        if (what == NT_KIND_THREAD_SAMPLE)
            return ps_decode_sample(p, ev, sample);
        if (what <= PS_KIND_MASK)
            return ps_dispatch_typed(p, ev);
    }
    return ps_deliver_rest(p, ev, what, s, sample);
}

#endif
