#include "touch_callbacks.h"

#include <string.h>

volatile uint64_t bench_sink;
uint64_t bench_events;

static int cb_trace(void *u, const nt_trace_info *t) { (void)u; bench_sink += (uint64_t)t->qpc_frequency; return 0; }
static int cb_meta(void *u, const nt_event_desc *d) { (void)u; bench_sink += d->event_id + strlen(d->provider); return 0; }
static int cb_event(void *u, const nt_event *e)
{
    (void)u;
    bench_events++;
    bench_sink += (uint64_t)e->timestamp + e->payload_size + e->thread_id;
    return 0;
}
static int cb_stack(void *u, const nt_stack *s) { (void)u; bench_sink += s->count ? s->ips[0] : 0; return 0; }
static int cb_sample(void *u, const nt_sample *s) { (void)u; bench_sink += s->thread_id + (uint64_t)s->time_ns; return 0; }
/* With lazy names the name is a span: its length is what a consumer reads first. */
static int cb_method(void *u, const nt_method *m)
{
    (void)u;
    bench_sink += m->start_address + (m->name ? strlen(m->name) : m->name16.count);
    return 0;
}
static int cb_module(void *u, const nt_module *m) { (void)u; bench_sink += m->module_id; return 0; }
static int cb_assembly(void *u, const nt_assembly *a) { (void)u; bench_sink += a->assembly_id; return 0; }
static int cb_sp(void *u, const nt_sequence_point *sp) { (void)u; bench_sink += sp->thread_count; return 0; }

const nt_callbacks bench_touch_all = { .trace = cb_trace, .metadata = cb_meta, .event = cb_event, .stack = cb_stack,
                                       .sample = cb_sample, .method = cb_method, .module = cb_module,
                                       .assembly = cb_assembly, .sequence_point = cb_sp };
