#include "support.h"
#include "nettrace_parallel.h"
#include "nettrace_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *ts_shared_corpus(void)
{
    static char buf[4096];
    const char *env = getenv("NETTRACE_SHARED_CORPUS");
    if (env && *env)
        return is_dir(env) ? env : NULL;
    const char *top = getenv("top_srcdir");
    snprintf(buf, sizeof buf, "%s/../shared/corpus", top && *top ? top : ".");
    return is_dir(buf) ? buf : NULL;
}

const char *ts_own_corpus(void)
{
    static char buf[4096];
    const char *top = getenv("top_srcdir");
    snprintf(buf, sizeof buf, "%s/corpus", top && *top ? top : ".");
    return buf;
}

const char *ts_path(const char *dir, const char *name)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

bool ts_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

bool ts_read_file(const char *path, uint8_t **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return false;
    }
    long n = ftell(f);
    rewind(f);
    if (n < 0) {
        fclose(f);
        return false;
    }
    uint8_t *buf = malloc(n ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return false;
    }
    fclose(f);
    *data = buf;
    *len = (size_t)n;
    return true;
}

/* ---- digest ---------------------------------------------------------------- */

static void mix(ts_digest *d, const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = d->h;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    d->h = h;
}
#define MIXV(d, v) do { __typeof__(v) v_ = (v); mix((d), &v_, sizeof v_); } while (0)
static void mix_str(ts_digest *d, const char *s)
{
    if (!s) {
        mix(d, "\xff", 1);
        return;
    }
    mix(d, s, strlen(s) + 1);
}

static int tick(ts_digest *d, uint8_t tag)
{
    mix(d, &tag, 1);
    d->calls++;
    return d->stop_after && d->calls >= d->stop_after;
}

static void mix_stack(ts_digest *d, const nt_stack *s)
{
    if (!s) {
        MIXV(d, (uint32_t)0xFFFFFFFFu);
        return;
    }
    MIXV(d, s->id);
    MIXV(d, s->count);
    mix(d, s->ips, s->count * sizeof *s->ips);
}

static int on_trace(void *u, const nt_trace_info *t)
{
    ts_digest *d = u;
    d->traces++;
    MIXV(d, t->format_major);
    MIXV(d, t->sync_qpc);
    MIXV(d, t->qpc_frequency);
    MIXV(d, t->pointer_size);
    MIXV(d, t->process_id);
    MIXV(d, t->processor_count);
    MIXV(d, t->sampling_interval_ns);
    mix(d, &t->sync_time_utc, sizeof t->sync_time_utc);
    return tick(d, 1);
}

static int on_metadata(void *u, const nt_event_desc *m)
{
    ts_digest *d = u;
    d->metadata++;
    MIXV(d, m->metadata_id);
    mix_str(d, m->provider);
    MIXV(d, m->event_id);
    mix_str(d, m->event_name);
    MIXV(d, m->keywords);
    MIXV(d, m->version);
    MIXV(d, m->level);
    MIXV(d, m->opcode);
    MIXV(d, m->field_count);
    for (uint32_t i = 0; i < m->field_count; i++) {
        mix_str(d, m->fields[i].name);
        MIXV(d, m->fields[i].type);
        MIXV(d, m->fields[i].element_type);
        MIXV(d, m->fields[i].depth);
    }
    MIXV(d, (uint32_t)m->kind);
    return tick(d, 2);
}

/* The decoded payload fields, so every digest (and every harness built on
 * it) also runs the field decoder and compares what it yields. */
static void mix_fields(ts_digest *d, const nt_event *e)
{
    nt_field_iter it;
    nt_field_value v;
    nt_event_fields_begin(e, &it);
    while (nt_field_next(&it, &v)) {
        MIXV(d, (uint32_t)v.kind);
        MIXV(d, v.offset);
        if (v.kind == NT_VALUE_STRING)
            mix_str(d, v.v.str.ptr);
        else if (v.kind == NT_VALUE_BINARY)
            mix(d, v.v.bin.ptr, v.v.bin.len);
        else if (v.kind == NT_VALUE_GUID)
            mix(d, v.v.guid, 16);
        else
            MIXV(d, v.v.u);
    }
    /* Out of memory for field strings is the consumer's to see, not the
     * stream's: counted apart, so a digest still describes the stream. */
    if (it.status == NT_ERR_NOMEM) {
        d->field_nomem++;
        return;
    }
    MIXV(d, (uint32_t)it.status);
    MIXV(d, it.error_offset);
    MIXV(d, it.leftover);
}

static int on_event(void *u, const nt_event *e)
{
    ts_digest *d = u;
    d->events++;
    MIXV(d, e->metadata_id);
    MIXV(d, (uint32_t)(e->desc != NULL));
    MIXV(d, e->sequence_number);
    MIXV(d, e->thread_id);
    MIXV(d, e->capture_thread_id);
    MIXV(d, e->processor_number);
    MIXV(d, e->stack_id);
    mix_stack(d, e->stack);
    MIXV(d, e->timestamp);
    mix(d, e->activity_id, 16);
    mix(d, e->related_activity_id, 16);
    MIXV(d, (uint8_t)e->is_sorted);
    MIXV(d, e->payload_size);
    mix(d, e->payload, e->payload_size);
    MIXV(d, e->offset);
    mix_fields(d, e);
    return tick(d, 3);
}

static int on_stack(void *u, const nt_stack *s)
{
    ts_digest *d = u;
    d->stacks++;
    mix_stack(d, s);
    return tick(d, 4);
}

static int on_sample(void *u, const nt_sample *s)
{
    ts_digest *d = u;
    d->samples++;
    MIXV(d, s->timestamp);
    MIXV(d, s->time_ns);
    MIXV(d, s->thread_id);
    MIXV(d, s->type);
    MIXV(d, s->stack_id);
    mix_stack(d, s->stack);
    return tick(d, 5);
}

static int on_method(void *u, const nt_method *m)
{
    ts_digest *d = u;
    d->methods++;
    MIXV(d, (uint32_t)m->which);
    MIXV(d, m->version);
    MIXV(d, m->method_id);
    MIXV(d, m->module_id);
    MIXV(d, m->start_address);
    MIXV(d, m->size);
    MIXV(d, m->token);
    MIXV(d, m->flags);
    mix_str(d, m->declaring_type);
    mix_str(d, m->name);
    mix_str(d, m->signature);
    MIXV(d, m->clr_instance_id);
    MIXV(d, m->rejit_id);
    MIXV(d, m->timestamp);
    return tick(d, 6);
}

static int on_module(void *u, const nt_module *m)
{
    ts_digest *d = u;
    d->modules++;
    MIXV(d, (uint32_t)m->which);
    MIXV(d, (uint8_t)m->domain);
    MIXV(d, m->module_id);
    MIXV(d, m->assembly_id);
    MIXV(d, m->app_domain_id);
    MIXV(d, m->flags);
    mix_str(d, m->il_path);
    mix_str(d, m->native_path);
    MIXV(d, m->timestamp);
    return tick(d, 7);
}

static int on_assembly(void *u, const nt_assembly *a)
{
    ts_digest *d = u;
    d->assemblies++;
    MIXV(d, (uint32_t)a->which);
    MIXV(d, a->assembly_id);
    MIXV(d, a->app_domain_id);
    MIXV(d, a->binding_id);
    MIXV(d, a->flags);
    mix_str(d, a->name);
    MIXV(d, a->timestamp);
    return tick(d, 8);
}

static int on_sp(void *u, const nt_sequence_point *sp)
{
    ts_digest *d = u;
    d->sequence_points++;
    MIXV(d, sp->timestamp);
    MIXV(d, sp->flags);
    MIXV(d, sp->thread_count);
    for (uint32_t i = 0; i < sp->thread_count; i++) {
        MIXV(d, sp->threads[i].capture_thread_id);
        MIXV(d, sp->threads[i].sequence_number);
        MIXV(d, sp->threads[i].dropped);
    }
    return tick(d, 9);
}

void ts_digest_init(ts_digest *d)
{
    memset(d, 0, sizeof *d);
    d->h = 0xcbf29ce484222325ull;
}

void ts_digest_callbacks(nt_callbacks *cb)
{
    cb->trace = on_trace;
    cb->metadata = on_metadata;
    cb->event = on_event;
    cb->stack = on_stack;
    cb->sample = on_sample;
    cb->method = on_method;
    cb->module = on_module;
    cb->assembly = on_assembly;
    cb->sequence_point = on_sp;
}

static nt_status finish_digest(nt_parser *p, nt_status s, ts_digest *d, uint64_t *err_offset)
{
    if (s == NT_OK)
        s = nt_parser_finish(p);
    /* The final status and its position are part of what must not depend on chunking. */
    MIXV(d, (uint32_t)s);
    MIXV(d, nt_parser_error_offset(p));
    if (err_offset)
        *err_offset = nt_parser_error_offset(p);
    nt_parser_free(p);
    return s;
}

nt_status ts_digest_feed(const uint8_t *data, size_t len, const size_t *sizes, size_t nsizes,
                         const nt_limits *lim, ts_digest *d, uint64_t *err_offset)
{
    nt_callbacks cb = { 0 };
    ts_digest_callbacks(&cb);
    nt_parser *p = nt_parser_new(&cb, d, lim, NULL);
    if (!p)
        return NT_ERR_NOMEM;
    nt_status s = NT_OK;
    size_t off = 0, i = 0;
    while (off < len && s == NT_OK) {
        size_t n = nsizes ? sizes[i++ % nsizes] : len;
        if (n > len - off)
            n = len - off;
        s = nt_parser_feed(p, data + off, n);
        off += n;
    }
    return finish_digest(p, s, d, err_offset);
}

nt_status ts_digest_feed_random(const uint8_t *data, size_t len, uint64_t seed, size_t max_chunk,
                                const nt_limits *lim, ts_digest *d, uint64_t *err_offset)
{
    nt_callbacks cb = { 0 };
    ts_digest_callbacks(&cb);
    nt_parser *p = nt_parser_new(&cb, d, lim, NULL);
    if (!p)
        return NT_ERR_NOMEM;
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    nt_status s = NT_OK;
    size_t off = 0;
    while (off < len && s == NT_OK) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t n = (size_t)(x % (max_chunk ? max_chunk : 1)) + (x & 1 ? 0 : 1);
        if (n > len - off)
            n = len - off;
        s = nt_parser_feed(p, data + off, n); /* zero-length feeds included on purpose */
        off += n;
    }
    return finish_digest(p, s, d, err_offset);
}

nt_trace *ts_build_trace(const uint8_t *data, size_t len, uint32_t jobs, bool count, bool lazy, const nt_limits *lim,
                         const nt_trace_limits *tl, nt_status *st, nt_status *fs, nt_parallel_stats *pst)
{
    *st = *fs = NT_ERR_NOMEM;
    nt_trace_builder *b = nt_trace_builder_new(NULL);
    if (!b)
        return NULL;
    if (count)
        nt_trace_builder_count_samples(b);
    nt_trace_builder_set_limits(b, tl);
    nt_callbacks cb = { 0 };
    nt_trace_builder_callbacks(&cb);
    nt_parallel_consumer parts;
    nt_trace_builder_parallel(b, &parts);
    nt_parser *seq = NULL;
    nt_parallel *pp = NULL;
    const nt_parser *p;
    if (!jobs) {
        p = seq = nt_parser_new(&cb, b, lim, NULL);
        if (seq) {
            nt_parser_set_lazy_names(seq, lazy);
            *st = nt_parser_feed(seq, data, len);
            if (*st == NT_OK)
                *st = nt_parser_finish(seq);
        }
    } else {
        nt_parallel_options opt = { .struct_size = sizeof opt, .jobs = jobs, .part_bytes = 1, .limits = lim,
                                    .lazy_names = lazy, .consumer = &parts };
        *st = nt_parse_parallel(data, len, NULL, &cb, b, &opt, &pp, NULL, 0);
        if (pst) {
            pst->struct_size = sizeof *pst;
            nt_parallel_stats_get(pp, pst);
        }
        p = nt_parallel_parser(pp);
    }
    nt_trace *t = NULL;
    *fs = nt_trace_builder_finish(b, p, *st, &t);
    nt_parser_free(seq);
    nt_parallel_free(pp);
    return t;
}
