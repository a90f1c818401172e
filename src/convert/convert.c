/* The parser's callbacks that drive the writer: the header opens the
 * writer with the input's clock and process, each event is re-written with
 * its output metadata id and its stack interned again, sequence points carry
 * over.  A slice keeps the window's events and sequence points, and the
 * module and assembly records of the whole input and the method records
 * whose code holds a frame of the window (convert_frames.c), which name the
 * window's frames as they name the original's. */
#include "convert/convert_internal.h"

#include <stdio.h>
#include <string.h>

static int on_trace(void *user, const nt_trace_info *t)
{
    cv_conv *c = user;
    nt_writer_options o = { 0 };
    nt_writer_options_default(&o);
    if (!c->format)
        c->format = t->format_major == 6 ? 6 : 4;
    o.format = c->format;
    o.uncompressed = c->uncompressed;
    o.pointer_size = t->pointer_size;
    o.sync_time_utc = t->sync_time_utc;
    o.sync_qpc = t->sync_qpc;
    o.qpc_frequency = t->qpc_frequency;
    o.process_id = t->process_id;
    o.processor_count = t->processor_count;
    o.sampling_interval_ns = t->sampling_interval_ns;
    if (c->window) {
        c->from_ns = c->from.set ? nt_time_bound_resolve(&c->from, t) : INT64_MIN;
        c->to_ns = c->to.set ? nt_time_bound_resolve(&c->to, t) : INT64_MAX;
        if (c->to_ns < c->from_ns) {
            c->fail = NT_ERR_INVALID_ARG;
            snprintf(c->err, sizeof c->err, "the window ends (%lld ns) before it starts (%lld ns)",
                     (long long)c->to_ns, (long long)c->from_ns);
            return 1;
        }
    }
    c->w = nt_writer_new(&o, c->out, c->out_user, c->alloc);
    if (!c->w) {
        c->fail = NT_ERR_NOMEM;
        snprintf(c->err, sizeof c->err, "cannot create the writer");
        return 1;
    }
    return 0;
}

static int on_metadata(void *user, const nt_event_desc *d)
{
    uint32_t dst;
    return cv_define_base(user, d, &dst);
}

static bool in_window(const cv_conv *c, int64_t timestamp)
{
    int64_t ns = nt_parser_time_ns(c->parser, timestamp);
    return ns >= c->from_ns && ns < c->to_ns;
}

static bool is_record(const nt_event_desc *d)
{
    return d && d->kind >= NT_KIND_METHOD_LOAD_VERBOSE && d->kind <= NT_KIND_ASSEMBLY_DC_END;
}

/* Whether a slice keeps ev (counted either way). */
static bool slice_keeps(cv_conv *c, const nt_event *ev)
{
    if (in_window(c, ev->timestamp))
        return true;
    if (!is_record(ev->desc)) {
        c->st.events_outside_window++;
        return false;
    }
    c->st.records_outside_window++;
    return true;
}

/* ev re-written: its output metadata id, its stack interned again. */
static int write_event(cv_conv *c, const nt_event *ev)
{
    c->last_timestamp = ev->timestamp;
    nt_writer_event e;
    memset(&e, 0, sizeof e);
    if (cv_out_id(c, ev, &e.metadata_id))
        return 1;
    e.thread_id = ev->thread_id;
    e.capture_thread_id = ev->capture_thread_id;
    e.processor_number = ev->processor_number;
    /* A slice's events left out are not lost: the writer numbers them again. */
    e.sequence_number = c->window ? 0 : ev->sequence_number;
    e.timestamp = ev->timestamp;
    e.is_sorted = ev->is_sorted;
    e.payload = ev->payload;
    e.payload_size = ev->payload_size;
    /* The capture thread id 0 means "the event's own thread" to the writer. */
    if (e.capture_thread_id == 0)
        e.capture_thread_id = e.thread_id;
    /* A slice leaves out the first events of some capture threads' runs, where the runtime marked the sorted
     * ones; TraceEvent credits sequence numbers to the capture thread of the last sorted event, so a run that
     * starts unmarked would count as lost events there (nettrace_writer.h). */
    if (c->window && e.capture_thread_id != c->last_capture_thread)
        e.is_sorted = true;
    c->last_capture_thread = e.capture_thread_id;
    if (ev->stack && nt_writer_stack(c->w, ev->stack->ips, ev->stack->count, &e.stack_id) != NT_OK)
        return cv_fail_writer(c);
    memcpy(e.activity_id, ev->activity_id, 16);
    memcpy(e.related_activity_id, ev->related_activity_id, 16);
    if (nt_writer_write_event(c->w, &e) != NT_OK)
        return cv_fail_writer(c);
    c->st.events_written++;
    return 0;
}

static int on_event(void *user, const nt_event *ev)
{
    cv_conv *c = user;
    if (c->window && !slice_keeps(c, ev))
        return 0;
    if (!ev->desc) {
        c->st.events_without_metadata++;
        return 0;
    }
    /* A record is written by its typed callback, which the parser calls right after this one once it has
     * checked the payload: a record the parser finds damaged ends the input without reaching the output. */
    if (is_record(ev->desc))
        return 0;
    return write_event(c, ev);
}

static int on_method(void *user, const nt_method *m)
{
    cv_conv *c = user;
    /* A slice keeps a method record from outside the window only when its code holds a frame of the window. */
    if (c->window && !in_window(c, m->event->timestamp) && !cv_frames_need(c, m->start_address, m->size)) {
        c->st.records_outside_window--; /* counted as kept by on_event, which could not tell */
        c->st.method_records_left_out++;
        return 0;
    }
    return write_event(c, m->event);
}
static int on_module(void *user, const nt_module *m) { return write_event(user, m->event); }
static int on_assembly(void *user, const nt_assembly *a) { return write_event(user, a->event); }

static int on_sp(void *user, const nt_sequence_point *sp)
{
    cv_conv *c = user;
    uint32_t flags = c->format == 6 ? sp->flags & (NT_SP_FLUSH_THREADS | NT_SP_FLUSH_METADATA) : 0;
    nt_status s;
    if (!c->window)
        s = nt_writer_sequence_point_threads(c->w, sp->timestamp, flags, sp->threads, sp->thread_count);
    else if (in_window(c, sp->timestamp)) /* with the slice's own sequence numbers */
        s = nt_writer_sequence_point(c->w, sp->timestamp, flags);
    else
        return 0;
    if (s != NT_OK)
        return cv_fail_writer(c);
    if (flags & NT_SP_FLUSH_METADATA) /* the output forgets its metadata too */
        cv_forget_metadata(c);
    return 0;
}

void cv_callbacks(nt_callbacks *cb)
{
    memset(cb, 0, sizeof *cb);
    cb->struct_size = sizeof *cb;
    cb->trace = on_trace;
    cb->metadata = on_metadata;
    cb->event = on_event;
    cb->method = on_method;
    cb->module = on_module;
    cb->assembly = on_assembly;
    cb->sequence_point = on_sp;
}
