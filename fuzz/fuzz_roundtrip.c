/* V6 (and V4) writer round trip.
 *
 * The input is a stream.  Its typed content (samples with their stacks and
 * activity ids, method, module and assembly records) is re-written with
 * nt_writer as V6 (or V4, by the input hash), and the written stream parsed
 * again: it must parse cleanly and give the same typed callbacks (a digest of
 * every field the typed structs carry).  In V6 many samples get a label list
 * of their own (their activity ids plus labels the reader skips), and the
 * writer is flushed at points the input hash picks, so label-list blocks fill
 * and flush in every order against the other blocks.  A record the writer
 * refuses (e.g. a payload version it does not write) must be a clean status;
 * the comparison is then skipped. */
#include "fuzz.h"
#include "nettrace_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fold {
    uint64_t h, n;
} fold;

static void mix(fold *f, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        f->h ^= b[i];
        f->h *= 0x100000001b3ull;
    }
}
#define MIXV(f, v) do { __typeof__(v) v_ = (v); mix((f), &v_, sizeof v_); } while (0)
static void mix_str(fold *f, const char *s) { mix(f, s ? s : "\xff", s ? strlen(s) + 1 : 1); }

typedef struct rt {
    fold f;
    nt_writer *w;      /* NULL while reading back */
    nt_status wst;     /* first writer failure */
    uint32_t format;   /* of the copy */
    uint64_t choice;   /* xorshift state from the input hash (non-zero): label lists and flushes */
    uint64_t label_lists, flushes; /* how many the copy made (NT_FUZZ_VERBOSE) */
} rt;

static void wrote(rt *r, nt_status s)
{
    if (s != NT_OK && r->wst == NT_OK)
        r->wst = s;
}

/* A hash-picked choice, 1 in n. */
static bool one_in(rt *r, uint32_t n) { return fz_next(&r->choice) % n == 0; }

/* Flush every pending block at a point the input picks (1 record in 8). */
static void maybe_flush(rt *r)
{
    if (r->w && r->wst == NT_OK && one_in(r, 8)) {
        wrote(r, nt_writer_flush(r->w));
        r->flushes++;
    }
}

/* V6: a label list of the sample's activity ids and a few labels the reader
 * passes over (trace and span ids, a string and an integer). */
static void label_list(rt *r, nt_writer_event *hdr, const uint8_t *act, const uint8_t *rel)
{
    static const uint8_t zero[16];
    nt_label l[6];
    memset(l, 0, sizeof l);
    size_t n = 0;
    uint64_t x = fz_next(&r->choice);
    if (memcmp(act, zero, 16)) {
        l[n].kind = NT_LABEL_ACTIVITY_ID;
        memcpy(l[n++].guid, act, 16);
    }
    if (memcmp(rel, zero, 16)) {
        l[n].kind = NT_LABEL_RELATED_ACTIVITY_ID;
        memcpy(l[n++].guid, rel, 16);
    }
    if (x & 1) {
        l[n].kind = NT_LABEL_TRACE_ID;
        memcpy(l[n++].guid, &x, sizeof x);
    }
    if (x & 2) {
        l[n].kind = NT_LABEL_SPAN_ID;
        l[n++].value = x >> 8;
    }
    if (x & 4) {
        l[n].kind = NT_LABEL_STRING;
        l[n].key = "fuzz";
        l[n++].text = x & 8 ? "a label value" : "";
    }
    if ((x & 16) || n == 0) {
        l[n].kind = NT_LABEL_INT;
        l[n].key = "n";
        l[n++].value = x >> 3;
    }
    wrote(r, nt_writer_label_list(r->w, l, n, &hdr->label_list_id));
    r->label_lists++;
}

static int on_sample(void *u, const nt_sample *s)
{
    rt *r = u;
    r->f.n++;
    MIXV(&r->f, s->timestamp);
    MIXV(&r->f, s->thread_id);
    MIXV(&r->f, s->type);
    uint32_t count = s->stack ? s->stack->count : UINT32_MAX;
    MIXV(&r->f, count);
    if (s->stack)
        mix(&r->f, s->stack->ips, s->stack->count * sizeof *s->stack->ips);
    mix(&r->f, s->event->activity_id, 16);
    mix(&r->f, s->event->related_activity_id, 16);
    if (r->w && r->wst == NT_OK) {
        nt_writer_event hdr = { 0 };
        hdr.thread_id = s->thread_id;
        hdr.timestamp = s->timestamp;
        if (r->format == 6 && one_in(r, 2)) {
            label_list(r, &hdr, s->event->activity_id, s->event->related_activity_id);
        } else {
            memcpy(hdr.activity_id, s->event->activity_id, 16);
            memcpy(hdr.related_activity_id, s->event->related_activity_id, 16);
        }
        maybe_flush(r);
        if (s->stack)
            wrote(r, nt_writer_stack(r->w, s->stack->ips, s->stack->count, &hdr.stack_id));
        if (r->wst == NT_OK && !s->stack && s->stack_id)
            r->wst = NT_ERR_STATE; /* an undefined stack id cannot be written: skip the comparison */
        if (r->wst == NT_OK)
            wrote(r, nt_writer_sample(r->w, &hdr, s->type));
    }
    return 0;
}

static int on_method(void *u, const nt_method *m)
{
    rt *r = u;
    r->f.n++;
    MIXV(&r->f, (uint32_t)m->which);
    MIXV(&r->f, m->method_id);
    MIXV(&r->f, m->module_id);
    MIXV(&r->f, m->start_address);
    MIXV(&r->f, m->size);
    MIXV(&r->f, m->token);
    MIXV(&r->f, m->flags);
    mix_str(&r->f, m->declaring_type);
    mix_str(&r->f, m->name);
    mix_str(&r->f, m->signature);
    MIXV(&r->f, m->timestamp);
    if (r->w && r->wst == NT_OK)
        wrote(r, nt_writer_method(r->w, NULL, m));
    maybe_flush(r);
    return 0;
}

static int on_module(void *u, const nt_module *m)
{
    rt *r = u;
    r->f.n++;
    MIXV(&r->f, (uint32_t)m->which);
    MIXV(&r->f, (uint8_t)m->domain);
    MIXV(&r->f, m->module_id);
    MIXV(&r->f, m->assembly_id);
    MIXV(&r->f, m->domain ? m->app_domain_id : 0);
    MIXV(&r->f, m->flags);
    mix_str(&r->f, m->il_path);
    mix_str(&r->f, m->native_path);
    MIXV(&r->f, m->timestamp);
    if (r->w && r->wst == NT_OK)
        wrote(r, nt_writer_module(r->w, NULL, m));
    maybe_flush(r);
    return 0;
}

static int on_assembly(void *u, const nt_assembly *a)
{
    rt *r = u;
    r->f.n++;
    MIXV(&r->f, (uint32_t)a->which);
    MIXV(&r->f, a->assembly_id);
    MIXV(&r->f, a->app_domain_id);
    MIXV(&r->f, a->flags);
    mix_str(&r->f, a->name);
    MIXV(&r->f, a->timestamp);
    if (r->w && r->wst == NT_OK)
        wrote(r, nt_writer_assembly(r->w, NULL, a));
    maybe_flush(r);
    return 0;
}

static int on_sp(void *u, const nt_sequence_point *sp)
{
    rt *r = u;
    (void)sp;
    /* Stack ids restart at a sequence point: the copy needs one too. */
    if (r->w && r->wst == NT_OK)
        wrote(r, nt_writer_sequence_point(r->w, sp->timestamp, 0));
    return 0;
}

static int on_trace(void *u, const nt_trace_info *t)
{
    rt *r = u;
    (void)t;
    (void)r;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nt_limits lim = { 0 };
    fz_harness_limits(&lim);
    nt_callbacks cb = { 0 };
    cb.trace = on_trace;
    cb.sample = on_sample;
    cb.method = on_method;
    cb.module = on_module;
    cb.assembly = on_assembly;
    cb.sequence_point = on_sp;

    /* First pass: only to learn the header (the writer needs it up front). */
    nt_parser *p = nt_parser_new(NULL, NULL, &lim, NULL);
    if (!p)
        fz_fail("nt_parser_new failed");
    nt_status s0 = nt_parser_feed(p, data, size);
    if (s0 == NT_OK)
        s0 = nt_parser_finish(p);
    const nt_trace_info *ti = nt_parser_trace_info(p);
    if (s0 != NT_OK || !ti) {
        nt_parser_free(p);
        return 0;
    }
    uint64_t h = fz_hash(data, size);
    nt_writer_options opt = { 0 };
    nt_writer_options_default(&opt);
    opt.format = h & 1 ? 4 : 6;
    opt.pointer_size = ti->pointer_size;
    opt.qpc_frequency = ti->qpc_frequency > 0 ? ti->qpc_frequency : 1000000000;
    opt.sync_qpc = ti->sync_qpc;
    opt.sync_time_utc = ti->sync_time_utc;
    opt.block_bytes = 64 + (uint32_t)((h >> 8) % 4096);
    nt_parser_free(p);

    nt_membuf out = { 0 };
    rt a = { { 0xcbf29ce484222325ull, 0 }, NULL, NT_OK, opt.format, h | 1, 0, 0 };
    a.w = nt_writer_new(&opt, nt_membuf_write, &out, NULL);
    if (!a.w) {
        nt_membuf_free(&out);
        return 0; /* options the writer does not take (e.g. a frequency it refuses) */
    }
    p = nt_parser_new(&cb, &a, &lim, NULL);
    if (!p)
        fz_fail("nt_parser_new failed");
    nt_status s1 = nt_parser_feed(p, data, size);
    if (s1 == NT_OK)
        s1 = nt_parser_finish(p);
    nt_parser_free(p);
    if (s1 != NT_OK)
        fz_fail("second parse of the same input ended %s", nt_status_name(s1));
    if (a.wst == NT_OK)
        wrote(&a, nt_writer_finish(a.w));
    if (a.wst != NT_OK && a.wst != NT_ERR_INVALID_ARG && a.wst != NT_ERR_STATE && a.wst != NT_ERR_LIMIT)
        fz_fail("the writer failed with %s: %s", nt_status_name(a.wst), nt_writer_message(a.w));
    if (getenv("NT_FUZZ_VERBOSE"))
        fprintf(stderr, "roundtrip: V%u, %llu typed records, %llu label lists, %llu flushes, writer %s: %s\n",
                opt.format, (unsigned long long)a.f.n, (unsigned long long)a.label_lists,
                (unsigned long long)a.flushes, nt_status_name(a.wst), nt_writer_message(a.w));
    nt_writer_free(a.w);
    if (a.wst == NT_OK) {
        rt b = { { 0xcbf29ce484222325ull, 0 }, NULL, NT_OK, 0, 1, 0, 0 };
        nt_status s2 = nt_parse_buffer(out.data, out.len, &cb, &b, &lim, NULL, 0);
        if (s2 != NT_OK && !(s2 == NT_ERR_NO_EVENTS && a.f.n == 0))
            fz_fail("the V%u copy does not parse: %s", opt.format, nt_status_name(s2));
        if (a.f.h != b.f.h || a.f.n != b.f.n)
            fz_fail("the V%u copy's typed callbacks differ (%llu vs %llu records)", opt.format,
                    (unsigned long long)a.f.n, (unsigned long long)b.f.n);
    }
    nt_membuf_free(&out);
    return 0;
}
