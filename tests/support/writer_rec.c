#include "writer_rec.h"

#include <stdlib.h>
#include <string.h>

static char *dup_str(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    memcpy(d, s, n);
    return d;
}

static void *dup_mem(const void *p, size_t n)
{
    void *d = malloc(n ? n : 1);
    if (n)
        memcpy(d, p, n);
    return d;
}

/* Grow at powers of two (realloc under ASan always copies). */
#define PUSH(arr, n) ((((n) & ((n) - 1)) == 0 ? (arr = realloc(arr, ((n) ? 2 * (n) : 1) * sizeof *arr)) : arr), &arr[n++])

static int on_trace(void *u, const nt_trace_info *t)
{
    rec *r = u;
    r->info = *t;
    r->traces++;
    return 0;
}

static int on_meta(void *u, const nt_event_desc *d)
{
    rec *r = u;
    rec_meta *m = PUSH(r->meta, r->nmeta);
    m->d = *d;
    m->d.provider = dup_str(d->provider);
    m->d.event_name = dup_str(d->event_name);
    nt_field *f = d->field_count ? malloc(d->field_count * sizeof *f) : NULL;
    for (uint32_t i = 0; i < d->field_count; i++) {
        f[i] = d->fields[i];
        f[i].name = dup_str(d->fields[i].name);
    }
    m->d.fields = f;
    return 0;
}

static int on_event(void *u, const nt_event *e)
{
    rec *r = u;
    rec_event *x = PUSH(r->ev, r->nev);
    memset(x, 0, sizeof *x);
    x->ev = *e;
    x->ev.desc = NULL;
    x->ev.stack = NULL;
    x->ev.payload = NULL;
    if (e->desc) {
        x->desc_version = e->desc->version;
        x->desc_opcode = e->desc->opcode;
        x->desc_level = e->desc->level;
        x->desc_keywords = e->desc->keywords;
        x->desc_kind = e->desc->kind;
    }
    x->payload = dup_mem(e->payload, e->payload_size);
    if (e->stack) {
        x->stack_count = e->stack->count;
        x->stack_ips = dup_mem(e->stack->ips, e->stack->count * sizeof(uint64_t));
    } else {
        x->stack_count = UINT32_MAX;
    }
    return 0;
}

static int on_stack(void *u, const nt_stack *s)
{
    (void)s;
    ((rec *)u)->nstacks++;
    return 0;
}

static int on_sample(void *u, const nt_sample *s)
{
    rec *r = u;
    nt_sample *x = PUSH(r->samples, r->nsamples);
    *x = *s;
    x->stack = NULL;
    x->event = NULL;
    return 0;
}

static int on_method(void *u, const nt_method *m)
{
    rec *r = u;
    nt_method *x = PUSH(r->methods, r->nmethods);
    *x = *m;
    x->declaring_type = dup_str(m->declaring_type);
    x->name = dup_str(m->name);
    x->signature = dup_str(m->signature);
    x->event = NULL;
    return 0;
}

static int on_module(void *u, const nt_module *m)
{
    rec *r = u;
    nt_module *x = PUSH(r->modules, r->nmodules);
    *x = *m;
    x->il_path = dup_str(m->il_path);
    x->native_path = dup_str(m->native_path);
    x->event = NULL;
    return 0;
}

static int on_assembly(void *u, const nt_assembly *a)
{
    rec *r = u;
    nt_assembly *x = PUSH(r->assemblies, r->nassemblies);
    *x = *a;
    x->name = dup_str(a->name);
    x->event = NULL;
    return 0;
}

static int on_sp(void *u, const nt_sequence_point *sp)
{
    rec *r = u;
    rec_sp *x = PUSH(r->sps, r->nsps);
    x->sp = *sp;
    x->threads = dup_mem(sp->threads, sp->thread_count * sizeof *sp->threads);
    x->sp.threads = x->threads;
    return 0;
}

nt_status rec_parse(rec *r, const uint8_t *data, size_t len, size_t chunk)
{
    memset(r, 0, sizeof *r);
    nt_callbacks cb = { .trace = on_trace, .metadata = on_meta, .event = on_event, .stack = on_stack,
                        .sample = on_sample, .method = on_method, .module = on_module, .assembly = on_assembly,
                        .sequence_point = on_sp };
    nt_parser *p = nt_parser_new(&cb, r, NULL, NULL);
    nt_status s = NT_OK;
    size_t off = 0;
    while (off < len && s == NT_OK) {
        size_t n = chunk ? chunk : len;
        if (n > len - off)
            n = len - off;
        s = nt_parser_feed(p, data + off, n);
        off += n;
    }
    if (s == NT_OK)
        s = nt_parser_finish(p);
    nt_parser_stats_get(p, &r->stats);
    strncpy(r->msg, nt_parser_message(p), sizeof r->msg - 1);
    nt_parser_free(p);
    r->status = s;
    return s;
}

void rec_free(rec *r)
{
    for (size_t i = 0; i < r->nmeta; i++) {
        free((char *)r->meta[i].d.provider);
        free((char *)r->meta[i].d.event_name);
        for (uint32_t k = 0; k < r->meta[i].d.field_count; k++)
            free((char *)r->meta[i].d.fields[k].name);
        free((void *)r->meta[i].d.fields);
    }
    free(r->meta);
    for (size_t i = 0; i < r->nev; i++) {
        free(r->ev[i].payload);
        free(r->ev[i].stack_ips);
    }
    free(r->ev);
    free(r->samples);
    for (size_t i = 0; i < r->nmethods; i++) {
        free((char *)r->methods[i].declaring_type);
        free((char *)r->methods[i].name);
        free((char *)r->methods[i].signature);
    }
    free(r->methods);
    for (size_t i = 0; i < r->nmodules; i++) {
        free((char *)r->modules[i].il_path);
        free((char *)r->modules[i].native_path);
    }
    free(r->modules);
    for (size_t i = 0; i < r->nassemblies; i++)
        free((char *)r->assemblies[i].name);
    free(r->assemblies);
    for (size_t i = 0; i < r->nsps; i++)
        free(r->sps[i].threads);
    free(r->sps);
    memset(r, 0, sizeof *r);
}

nt_writer *rec_writer(nt_membuf *out, const nt_writer_options *opt)
{
    memset(out, 0, sizeof *out);
    return nt_writer_new(opt, nt_membuf_write, out, NULL);
}

/* ---- typed round trip --------------------------------------------------- */

#include <criterion/criterion.h>

static void expect_str(const char *got, const char *want)
{
    cr_assert(got != NULL);
    cr_expect_str_eq(got, want ? want : "");
}

void rec_check_typed_roundtrip(const nt_writer_options *o)
{
    nt_membuf out;
    nt_writer *w = rec_writer(&out, o);
    cr_assert(w);
    const uint32_t ptr = o ? o->pointer_size : 8;
    uint64_t ips[3] = { 0x7f001000, 0x7f002000, ptr == 8 ? 0x123456789abcull : 0xfffffff0ull };
    uint32_t sid = 0;
    cr_assert_eq(nt_writer_stack(w, ips, 3, &sid), NT_OK);

    /* samples: every type, many threads, one sampler thread */
    nt_writer_event hdr = { 0 };
    enum { NS = 12 };
    for (uint32_t i = 0; i < NS; i++) {
        hdr.thread_id = 1000 + i % 5;
        hdr.capture_thread_id = 7;
        hdr.timestamp = 5000 + 10 * i;
        hdr.stack_id = i % 2 ? sid : 0;
        hdr.processor_number = i % 3;
        cr_assert_eq(nt_writer_sample(w, &hdr, i % 4), NT_OK, "%s", nt_writer_message(w));
    }
    /* methods: every which x version */
    nt_method m[12];
    size_t nm = 0;
    for (uint32_t which = 0; which < 4; which++)
        for (uint32_t v = 0; v < 3; v++) {
            nt_method *x = &m[nm++];
            memset(x, 0, sizeof *x);
            x->which = (nt_record_event)which;
            x->version = v;
            x->method_id = 0x10000 + nm;
            x->module_id = 0x20000 + which;
            x->start_address = 0x7f0000000000ull + 0x100 * nm;
            x->size = 64 + (uint32_t)nm;
            x->token = 0x06000000u + (uint32_t)nm;
            x->flags = NT_METHOD_FLAG_JITTED | (3u << 7);
            x->declaring_type = nm % 2 ? "System.Collections.Generic.List`1[System.__Canon]" : "Ns.Typ\xc3\xa9\xf0\x9f\x98\x80";
            x->name = "Add";
            x->signature = "void  (!0)";
            x->clr_instance_id = v >= 1 ? 9 : 0;
            x->rejit_id = v >= 2 ? 77 : 0;
            x->timestamp = 9000 + (int64_t)nm;
            cr_assert_eq(nt_writer_method(w, NULL, x), NT_OK, "%s", nt_writer_message(w));
        }
    /* modules: every which x domain x version (no DomainModuleUnload) */
    nt_module md[24];
    size_t nmd = 0;
    for (uint32_t which = 0; which < 4; which++)
        for (int dom = 0; dom < 2; dom++)
            for (uint32_t v = 0; v < 3; v++) {
                if (which == NT_RECORD_UNLOAD && dom)
                    continue;
                nt_module *x = &md[nmd++];
                memset(x, 0, sizeof *x);
                x->which = (nt_record_event)which;
                x->domain = dom;
                x->version = v;
                x->module_id = 0x3000 + nmd;
                x->assembly_id = 0x4000 + nmd;
                x->app_domain_id = dom ? 0x5000 + nmd : 0;
                x->flags = 8;
                x->il_path = "/usr/share/dotnet/System.Private.CoreLib.dll";
                x->native_path = nmd % 2 ? "" : "/tmp/native.so";
                x->clr_instance_id = v >= 1 ? 3 : 0;
                x->timestamp = 11000 + (int64_t)nmd;
                hdr = (nt_writer_event){ .thread_id = 42, .timestamp = x->timestamp };
                cr_assert_eq(nt_writer_module(w, &hdr, x), NT_OK, "%s", nt_writer_message(w));
            }
    nt_module bad = { .which = NT_RECORD_UNLOAD, .domain = true };
    /* assemblies */
    nt_assembly as[8];
    size_t na = 0;
    for (uint32_t which = 0; which < 4; which++)
        for (uint32_t v = 0; v < 2; v++) {
            nt_assembly *x = &as[na++];
            memset(x, 0, sizeof *x);
            x->which = (nt_record_event)which;
            x->version = v;
            x->assembly_id = 0x6000 + na;
            x->app_domain_id = 0x7000;
            x->binding_id = v ? 0x8000 + na : 0;
            x->flags = 2;
            x->name = "System.Runtime, Version=8.0.0.0, Culture=neutral, PublicKeyToken=b03f5f7f11d50a3a";
            x->clr_instance_id = v ? 5 : 0;
            x->timestamp = 12000 + (int64_t)na;
            cr_assert_eq(nt_writer_assembly(w, NULL, x), NT_OK, "%s", nt_writer_message(w));
        }
    cr_assert_eq(nt_writer_sequence_point(w, 20000, 0), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
    cr_expect_eq(nt_writer_module(w, NULL, &bad), NT_ERR_STATE);
    nt_writer_free(w);

    const size_t chunks[] = { 0, 1, 3, 7, 64, 4093 };
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        rec r;
        cr_assert_eq(rec_parse(&r, out.data, out.len, chunks[c]), NT_OK, "chunk %zu: %s", chunks[c], r.msg);
        cr_expect_eq(r.info.pointer_size, ptr);
        cr_assert_eq(r.nsamples, NS);
        for (uint32_t i = 0; i < NS; i++) {
            const nt_sample *s = &r.samples[i];
            cr_expect_eq(s->thread_id, 1000 + i % 5);
            cr_expect_eq(s->timestamp, 5000 + 10 * (int64_t)i);
            cr_expect_eq(s->type, i % 4);
            cr_expect_eq(s->stack_id, i % 2 ? sid : 0);
        }
        /* sample events keep their header fields */
        size_t k = 0;
        for (size_t e = 0; e < r.nev && k < NS; e++) {
            if (r.ev[e].desc_kind != NT_KIND_THREAD_SAMPLE)
                continue;
            cr_expect_eq(r.ev[e].ev.capture_thread_id, 7);
            cr_expect_eq(r.ev[e].ev.processor_number, k % 3);
            cr_expect_eq(r.ev[e].ev.sequence_number, k + 1);
            if (k % 2) {
                cr_assert_eq(r.ev[e].stack_count, 3);
                cr_expect_arr_eq(r.ev[e].stack_ips, ips, sizeof ips);
            }
            k++;
        }
        cr_assert_eq(r.nmethods, nm);
        for (size_t i = 0; i < nm; i++) {
            const nt_method *g = &r.methods[i], *x = &m[i];
            cr_expect_eq(g->which, x->which);
            cr_expect_eq(g->version, x->version);
            cr_expect_eq(g->method_id, x->method_id);
            cr_expect_eq(g->module_id, x->module_id);
            cr_expect_eq(g->start_address, x->start_address);
            cr_expect_eq(g->size, x->size);
            cr_expect_eq(g->token, x->token);
            cr_expect_eq(g->flags, x->flags);
            expect_str(g->declaring_type, x->declaring_type);
            expect_str(g->name, x->name);
            expect_str(g->signature, x->signature);
            cr_expect_eq(g->clr_instance_id, x->clr_instance_id);
            cr_expect_eq(g->rejit_id, x->rejit_id);
            cr_expect_eq(g->timestamp, x->timestamp);
        }
        cr_assert_eq(r.nmodules, nmd);
        for (size_t i = 0; i < nmd; i++) {
            const nt_module *g = &r.modules[i], *x = &md[i];
            cr_expect_eq(g->which, x->which);
            cr_expect_eq(g->domain, x->domain);
            cr_expect_eq(g->version, x->version);
            cr_expect_eq(g->module_id, x->module_id);
            cr_expect_eq(g->assembly_id, x->assembly_id);
            cr_expect_eq(g->app_domain_id, x->app_domain_id);
            cr_expect_eq(g->flags, x->flags);
            expect_str(g->il_path, x->il_path);
            expect_str(g->native_path, x->native_path);
            cr_expect_eq(g->clr_instance_id, x->clr_instance_id);
            cr_expect_eq(g->timestamp, x->timestamp);
        }
        cr_assert_eq(r.nassemblies, na);
        for (size_t i = 0; i < na; i++) {
            const nt_assembly *g = &r.assemblies[i], *x = &as[i];
            cr_expect_eq(g->which, x->which);
            cr_expect_eq(g->version, x->version);
            cr_expect_eq(g->assembly_id, x->assembly_id);
            cr_expect_eq(g->app_domain_id, x->app_domain_id);
            cr_expect_eq(g->binding_id, x->binding_id);
            cr_expect_eq(g->flags, x->flags);
            expect_str(g->name, x->name);
            cr_expect_eq(g->clr_instance_id, x->clr_instance_id);
            cr_expect_eq(g->timestamp, x->timestamp);
        }
        cr_assert_eq(r.nsps, 1);
        cr_expect_eq(r.sps[0].sp.timestamp, 20000);
        cr_expect_eq(r.stats.events_dropped, 0);
        rec_free(&r);
    }
    nt_membuf_free(&out);
}

/* ---- comparison ------------------------------------------------------------ */

static bool str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

#define DIFF(cond, name)                                                                                         \
    do {                                                                                                       \
        if (!(cond)) {                                                                                         \
            if (!n && what)                                                                                    \
                *what = name;                                                                                  \
            n++;                                                                                               \
        }                                                                                                      \
    } while (0)

size_t rec_compare(const rec *a, const rec *b, const char **what)
{
    size_t n = 0;
    DIFF(a->status == b->status, "status");
    DIFF(a->traces == b->traces, "traces");
    DIFF(a->info.pointer_size == b->info.pointer_size && a->info.process_id == b->info.process_id &&
             a->info.processor_count == b->info.processor_count && a->info.qpc_frequency == b->info.qpc_frequency &&
             a->info.sync_qpc == b->info.sync_qpc && a->info.sampling_interval_ns == b->info.sampling_interval_ns &&
             memcmp(&a->info.sync_time_utc, &b->info.sync_time_utc, sizeof a->info.sync_time_utc) == 0,
         "trace info");
    DIFF(a->nmeta == b->nmeta, "metadata count");
    for (size_t i = 0; i < a->nmeta && i < b->nmeta; i++) {
        const nt_event_desc *x = &a->meta[i].d, *y = &b->meta[i].d;
        DIFF(x->metadata_id == y->metadata_id && str_eq(x->provider, y->provider) && x->event_id == y->event_id &&
                 str_eq(x->event_name, y->event_name) && x->keywords == y->keywords && x->version == y->version &&
                 x->level == y->level && x->opcode == y->opcode && x->kind == y->kind &&
                 x->field_count == y->field_count,
             "metadata");
        for (uint32_t k = 0; k < x->field_count && k < y->field_count; k++)
            DIFF(str_eq(x->fields[k].name, y->fields[k].name) && x->fields[k].type == y->fields[k].type &&
                     x->fields[k].element_type == y->fields[k].element_type &&
                     x->fields[k].depth == y->fields[k].depth,
                 "metadata field");
    }
    DIFF(a->nev == b->nev, "event count");
    for (size_t i = 0; i < a->nev && i < b->nev; i++) {
        const rec_event *x = &a->ev[i], *y = &b->ev[i];
        DIFF(x->ev.metadata_id == y->ev.metadata_id && x->ev.sequence_number == y->ev.sequence_number &&
                 x->ev.thread_id == y->ev.thread_id && x->ev.capture_thread_id == y->ev.capture_thread_id &&
                 x->ev.processor_number == y->ev.processor_number && x->ev.stack_id == y->ev.stack_id &&
                 x->ev.timestamp == y->ev.timestamp && x->ev.is_sorted == y->ev.is_sorted &&
                 memcmp(x->ev.activity_id, y->ev.activity_id, 16) == 0 &&
                 memcmp(x->ev.related_activity_id, y->ev.related_activity_id, 16) == 0 &&
                 x->ev.payload_size == y->ev.payload_size &&
                 memcmp(x->payload, y->payload, x->ev.payload_size) == 0,
             "event header or payload");
        DIFF(x->desc_version == y->desc_version && x->desc_kind == y->desc_kind && x->desc_opcode == y->desc_opcode &&
                 x->desc_level == y->desc_level && x->desc_keywords == y->desc_keywords,
             "event description");
        DIFF(x->stack_count == y->stack_count &&
                 (x->stack_count == UINT32_MAX || memcmp(x->stack_ips, y->stack_ips, x->stack_count * 8) == 0),
             "event stack");
    }
    DIFF(a->nsamples == b->nsamples, "sample count");
    for (size_t i = 0; i < a->nsamples && i < b->nsamples; i++)
        DIFF(a->samples[i].timestamp == b->samples[i].timestamp && a->samples[i].time_ns == b->samples[i].time_ns &&
                 a->samples[i].thread_id == b->samples[i].thread_id && a->samples[i].type == b->samples[i].type &&
                 a->samples[i].stack_id == b->samples[i].stack_id,
             "sample");
    DIFF(a->nmethods == b->nmethods, "method count");
    for (size_t i = 0; i < a->nmethods && i < b->nmethods; i++) {
        const nt_method *x = &a->methods[i], *y = &b->methods[i];
        DIFF(x->which == y->which && x->version == y->version && x->method_id == y->method_id &&
                 x->module_id == y->module_id && x->start_address == y->start_address && x->size == y->size &&
                 x->token == y->token && x->flags == y->flags && str_eq(x->declaring_type, y->declaring_type) &&
                 str_eq(x->name, y->name) && str_eq(x->signature, y->signature) &&
                 x->clr_instance_id == y->clr_instance_id && x->rejit_id == y->rejit_id && x->timestamp == y->timestamp,
             "method");
    }
    DIFF(a->nmodules == b->nmodules, "module count");
    for (size_t i = 0; i < a->nmodules && i < b->nmodules; i++) {
        const nt_module *x = &a->modules[i], *y = &b->modules[i];
        DIFF(x->which == y->which && x->domain == y->domain && x->version == y->version &&
                 x->module_id == y->module_id && x->assembly_id == y->assembly_id &&
                 x->app_domain_id == y->app_domain_id && x->flags == y->flags && str_eq(x->il_path, y->il_path) &&
                 str_eq(x->native_path, y->native_path) && x->clr_instance_id == y->clr_instance_id &&
                 x->timestamp == y->timestamp,
             "module");
    }
    DIFF(a->nassemblies == b->nassemblies, "assembly count");
    for (size_t i = 0; i < a->nassemblies && i < b->nassemblies; i++) {
        const nt_assembly *x = &a->assemblies[i], *y = &b->assemblies[i];
        DIFF(x->which == y->which && x->version == y->version && x->assembly_id == y->assembly_id &&
                 x->app_domain_id == y->app_domain_id && x->binding_id == y->binding_id && x->flags == y->flags &&
                 str_eq(x->name, y->name) && x->clr_instance_id == y->clr_instance_id && x->timestamp == y->timestamp,
             "assembly");
    }
    DIFF(a->nsps == b->nsps, "sequence point count");
    for (size_t i = 0; i < a->nsps && i < b->nsps; i++) {
        DIFF(a->sps[i].sp.timestamp == b->sps[i].sp.timestamp &&
                 a->sps[i].sp.thread_count == b->sps[i].sp.thread_count,
             "sequence point");
        for (uint32_t k = 0; k < a->sps[i].sp.thread_count && k < b->sps[i].sp.thread_count; k++)
            DIFF(memcmp(&a->sps[i].threads[k], &b->sps[i].threads[k], sizeof(nt_sp_thread)) == 0,
                 "sequence point thread");
    }
    DIFF(a->nstacks == b->nstacks, "stack count");
    DIFF(a->stats.events_dropped == b->stats.events_dropped, "events dropped");
    return n;
}
