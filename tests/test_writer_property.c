/* The writer's property: every stream it accepts re-reads with the same
 * events.  Random writer programs (metadata, stacks, V6 label lists, events
 * with activity ids, sequence points with and without V6 flags, removed
 * threads, explicit flushes, tiny blocks) are written as V4 and V6, compressed
 * and not; each event the writer accepted is recorded as the parser should
 * deliver it, and the stream parsed back must give exactly those events.
 * Plus the label-list flush that once wrote a list in 0 bytes. */
#include "ltest.h"
#include "nettrace_writer.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- what an event must look like when it is read back --------------- */

typedef struct expect {
    uint64_t *h;          /* one digest per event, in stream order */
    size_t n, cap;
} expect;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
#define FNV(h, v) ((h) = fnv((h), &(v), sizeof(v)))

/* The parts of an event the writer takes and the parser gives back. */
typedef struct seen {
    const char *provider;
    uint32_t event_id, version, opcode, level;
    uint64_t keywords;
    uint64_t thread, capture;
    uint32_t processor, seq;
    int64_t timestamp;
    bool sorted;
    uint8_t act[16], rel[16];
    const uint64_t *ips;
    uint32_t depth;       /* UINT32_MAX: no stack */
    const void *payload;
    uint32_t payload_size;
} seen;

static uint64_t digest(const seen *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = fnv(h, s->provider, strlen(s->provider) + 1);
    FNV(h, s->event_id);
    FNV(h, s->version);
    FNV(h, s->opcode);
    FNV(h, s->level);
    FNV(h, s->keywords);
    FNV(h, s->thread);
    FNV(h, s->capture);
    FNV(h, s->processor);
    FNV(h, s->seq);
    FNV(h, s->timestamp);
    uint8_t sorted = s->sorted;
    FNV(h, sorted);
    h = fnv(h, s->act, 16);
    h = fnv(h, s->rel, 16);
    FNV(h, s->depth);
    if (s->depth != UINT32_MAX)
        h = fnv(h, s->ips, s->depth * sizeof *s->ips);
    FNV(h, s->payload_size);
    return fnv(h, s->payload, s->payload_size);
}

static void expect_add(expect *e, uint64_t h)
{
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 256;
        e->h = realloc(e->h, e->cap * sizeof *e->h);
        cr_assert(e->h);
    }
    e->h[e->n++] = h;
}

typedef struct reread {
    const expect *want;
    size_t n;
    size_t first_bad; /* SIZE_MAX: none */
} reread;

static int on_event(void *user, const nt_event *ev)
{
    reread *r = user;
    seen s;
    memset(&s, 0, sizeof s);
    cr_assert(ev->desc, "event %zu has no metadata", r->n);
    s.provider = ev->desc->provider;
    s.event_id = ev->desc->event_id;
    s.version = ev->desc->version;
    s.opcode = ev->desc->opcode;
    s.level = ev->desc->level;
    s.keywords = ev->desc->keywords;
    s.thread = ev->thread_id;
    s.capture = ev->capture_thread_id;
    s.processor = ev->processor_number;
    s.seq = ev->sequence_number;
    s.timestamp = ev->timestamp;
    s.sorted = ev->is_sorted;
    memcpy(s.act, ev->activity_id, 16);
    memcpy(s.rel, ev->related_activity_id, 16);
    s.depth = ev->stack ? ev->stack->count : UINT32_MAX;
    s.ips = ev->stack ? ev->stack->ips : NULL;
    s.payload = ev->payload;
    s.payload_size = ev->payload_size;
    if (r->first_bad == SIZE_MAX && (r->n >= r->want->n || r->want->h[r->n] != digest(&s)))
        r->first_bad = r->n;
    r->n++;
    return 0;
}

static void assert_rereads(const nt_membuf *out, const expect *want, const char *what)
{
    reread r = { want, 0, SIZE_MAX };
    nt_callbacks cb = { 0 };
    cb.event = on_event;
    char msg[256] = "";
    nt_status s = nt_parse_buffer(out->data, out->len, &cb, &r, NULL, msg, sizeof msg);
    nt_status ok = want->n ? NT_OK : NT_ERR_NO_EVENTS;
    cr_assert_eq(s, ok, "%s: the stream the writer accepted reads as %s: %s", what, nt_status_name(s), msg);
    cr_assert_eq(r.n, want->n, "%s: %zu events written, %zu read back", what, want->n, r.n);
    cr_assert_eq(r.first_bad, SIZE_MAX, "%s: event %zu reads back different", what, r.first_bad);
}

/* ---- random writer programs --------------------------------------------- */

static uint64_t rnd(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}
#define PICK(st, n) ((uint32_t)(rnd(st) % (n)))

typedef struct meta {
    uint32_t id;
    const char *provider;
    uint32_t event_id, version, opcode, level;
    uint64_t keywords;
} meta;

typedef struct label_list {
    uint32_t id;
    bool has[4];          /* overrides: version, opcode, level, keywords */
    uint32_t version, opcode, level;
    uint64_t keywords;
    uint8_t act[16], rel[16];
} label_list;

typedef struct prog {
    uint64_t rng;
    nt_writer *w;
    uint32_t format;
    meta metas[8];
    uint32_t nmetas;
    uint64_t stacks[6][16];
    uint32_t depths[6], stack_ids[6], nstacks;
    label_list labels[64];
    uint32_t nlabels;
    uint64_t last_seq[8];  /* per capture thread 1..8 */
    bool removed[8];       /* V6: removed threads must not write again in the interval */
    bool indexed[8];       /* V6: the thread has an index in the current thread table */
    int64_t now;
    uint8_t payload[300];
} prog;

/* Not the runtime providers: their typed events would be decoded (and random payloads refused). */
static const char *const providers[] = { "My-Source", "Other/Provider", "Third-Provider" };

#define W_OK(p, call) cr_assert_eq((call), NT_OK, "%s", nt_writer_message((p)->w))

static void op_define(prog *p)
{
    if (p->nmetas == 8)
        return;
    meta *m = &p->metas[p->nmetas];
    nt_event_desc d;
    memset(&d, 0, sizeof d);
    d.provider = providers[PICK(&p->rng, 3)];
    d.event_id = PICK(&p->rng, 300);
    d.event_name = PICK(&p->rng, 2) ? "" : "Name";
    d.version = PICK(&p->rng, 4);
    d.level = PICK(&p->rng, 6);
    d.opcode = PICK(&p->rng, 3);
    d.keywords = PICK(&p->rng, 2) ? 0 : rnd(&p->rng);
    nt_field f[2] = { { .name = "A", .type = NT_TYPE_INT32 }, { .name = "B", .type = NT_TYPE_STRING } };
    d.fields = f;
    d.field_count = PICK(&p->rng, 3);
    W_OK(p, nt_writer_define(p->w, &d, &m->id));
    *m = (meta){ m->id, d.provider, d.event_id, d.version, d.opcode, d.level, d.keywords };
    p->nmetas++;
}

static void op_stack(prog *p)
{
    if (p->nstacks == 6)
        return;
    uint32_t k = p->nstacks;
    p->depths[k] = PICK(&p->rng, 17);
    for (uint32_t i = 0; i < p->depths[k]; i++)
        p->stacks[k][i] = 0x10000 + PICK(&p->rng, 1u << 20) * 16;
    W_OK(p, nt_writer_stack(p->w, p->stacks[k], p->depths[k], &p->stack_ids[k]));
    p->nstacks++;
}

static void op_label_list(prog *p)
{
    if (p->format != 6 || p->nlabels == 64)
        return;
    label_list *l = &p->labels[p->nlabels];
    memset(l, 0, sizeof *l);
    nt_label lab[8];
    memset(lab, 0, sizeof lab);
    size_t n = 0;
    if (PICK(&p->rng, 2)) {
        lab[n].kind = NT_LABEL_ACTIVITY_ID;
        for (int i = 0; i < 16; i++)
            lab[n].guid[i] = l->act[i] = (uint8_t)rnd(&p->rng);
        n++;
    }
    if (PICK(&p->rng, 3) == 0) {
        lab[n].kind = NT_LABEL_RELATED_ACTIVITY_ID;
        for (int i = 0; i < 16; i++)
            lab[n].guid[i] = l->rel[i] = (uint8_t)rnd(&p->rng);
        n++;
    }
    if (PICK(&p->rng, 3) == 0) {
        lab[n].kind = NT_LABEL_STRING;
        lab[n].key = "k";
        lab[n++].text = "some text";
    }
    if (PICK(&p->rng, 4) == 0) {
        lab[n].kind = NT_LABEL_VERSION;
        lab[n++].value = l->version = PICK(&p->rng, 5);
        l->has[0] = true;
    }
    if (PICK(&p->rng, 4) == 0) {
        lab[n].kind = NT_LABEL_OPCODE;
        lab[n++].value = l->opcode = PICK(&p->rng, 10);
        l->has[1] = true;
    }
    if (PICK(&p->rng, 4) == 0) {
        lab[n].kind = NT_LABEL_LEVEL;
        lab[n++].value = l->level = PICK(&p->rng, 6);
        l->has[2] = true;
    }
    if (PICK(&p->rng, 4) == 0) {
        lab[n].kind = NT_LABEL_KEYWORDS;
        lab[n++].value = l->keywords = rnd(&p->rng);
        l->has[3] = true;
    }
    if (n == 0) {
        lab[n].kind = NT_LABEL_SPAN_ID;
        lab[n++].value = 7;
    }
    W_OK(p, nt_writer_label_list(p->w, lab, n, &l->id));
    p->nlabels++;
}

static void op_event(prog *p, expect *e)
{
    if (!p->nmetas)
        return;
    const meta *m = &p->metas[PICK(&p->rng, p->nmetas)];
    nt_writer_event ev;
    memset(&ev, 0, sizeof ev);
    uint32_t cap = PICK(&p->rng, 8);
    if (p->removed[cap])
        return;
    ev.metadata_id = m->id;
    ev.thread_id = 1000 + PICK(&p->rng, 8);
    ev.capture_thread_id = PICK(&p->rng, 3) ? 1000 + cap : 0;
    if (!ev.capture_thread_id) {
        cap = (uint32_t)(ev.thread_id - 1000);
        if (p->removed[cap])
            return;
    }
    ev.processor_number = PICK(&p->rng, 4);
    ev.sequence_number = PICK(&p->rng, 8) == 0 ? (uint32_t)p->last_seq[cap] + 1 + PICK(&p->rng, 3) : 0;
    p->now += PICK(&p->rng, 1000);
    ev.timestamp = p->now;
    ev.is_sorted = PICK(&p->rng, 2);
    uint32_t sk = p->nstacks ? PICK(&p->rng, p->nstacks + 1) : 0;
    ev.stack_id = sk ? p->stack_ids[sk - 1] : 0;
    const label_list *l = NULL;
    if (p->format == 6 && p->nlabels && PICK(&p->rng, 2)) {
        l = &p->labels[PICK(&p->rng, p->nlabels)];
        ev.label_list_id = l->id;
    } else if (PICK(&p->rng, 3) == 0) {
        for (int i = 0; i < 16; i++)
            ev.activity_id[i] = (uint8_t)(PICK(&p->rng, 4) ? 0 : rnd(&p->rng));
        if (PICK(&p->rng, 2))
            ev.related_activity_id[3] = (uint8_t)(1 + PICK(&p->rng, 3));
    }
    ev.payload_size = PICK(&p->rng, 4) ? PICK(&p->rng, 40) : PICK(&p->rng, sizeof p->payload);
    for (uint32_t i = 0; i < ev.payload_size; i++)
        p->payload[i] = (uint8_t)rnd(&p->rng);
    ev.payload = p->payload;
    W_OK(p, nt_writer_write_event(p->w, &ev));
    p->indexed[ev.thread_id - 1000] = true;

    uint64_t c = ev.capture_thread_id ? ev.capture_thread_id : ev.thread_id;
    seen s;
    memset(&s, 0, sizeof s);
    s.provider = m->provider;
    s.event_id = m->event_id;
    s.version = l && l->has[0] ? l->version : m->version;
    s.opcode = l && l->has[1] ? l->opcode : m->opcode;
    s.level = l && l->has[2] ? l->level : m->level;
    s.keywords = l && l->has[3] ? l->keywords : m->keywords;
    s.thread = ev.thread_id;
    s.capture = c;
    s.processor = ev.processor_number;
    s.seq = ev.sequence_number ? ev.sequence_number : (uint32_t)p->last_seq[c - 1000] + 1;
    p->last_seq[c - 1000] = s.seq;
    p->indexed[c - 1000] = true;
    s.timestamp = ev.timestamp;
    s.sorted = ev.is_sorted;
    memcpy(s.act, l ? l->act : ev.activity_id, 16);
    memcpy(s.rel, l ? l->rel : ev.related_activity_id, 16);
    s.depth = sk ? p->depths[sk - 1] : UINT32_MAX;
    s.ips = sk ? p->stacks[sk - 1] : NULL;
    s.payload = ev.payload;
    s.payload_size = ev.payload_size;
    expect_add(e, digest(&s));
}

static void op_sequence_point(prog *p)
{
    uint32_t flags = p->format == 6 ? PICK(&p->rng, 4) : 0;
    p->now += 10;
    W_OK(p, nt_writer_sequence_point(p->w, p->now, flags));
    p->nstacks = 0;
    p->nlabels = 0;
    memset(p->removed, 0, sizeof p->removed);
    if (flags & NT_SP_FLUSH_METADATA)
        p->nmetas = 0;
    if (flags & NT_SP_FLUSH_THREADS)
        memset(p->indexed, 0, sizeof p->indexed);
}

static void op_remove_thread(prog *p)
{
    uint32_t t = PICK(&p->rng, 8);
    if (p->format != 6 || p->removed[t] || !p->indexed[t])
        return;
    W_OK(p, nt_writer_remove_thread(p->w, 1000 + t));
    p->removed[t] = true;
    p->indexed[t] = false;
}

static void run_program(uint64_t seed, uint32_t format, bool uncompressed)
{
    prog p;
    memset(&p, 0, sizeof p);
    p.rng = seed * 0x9E3779B97F4A7C15ull + 1;
    p.format = format;
    nt_writer_options o = { 0 };
    nt_writer_options_default(&o);
    o.format = format;
    o.uncompressed = uncompressed;
    o.block_bytes = 64 + PICK(&p.rng, 2048);
    nt_membuf out = { 0 };
    p.w = nt_writer_new(&o, nt_membuf_write, &out, NULL);
    cr_assert(p.w);
    expect e = { 0 };
    /* Cumulative weights of define, stack, label list, event, sequence point,
     * remove thread (flush takes the rest): event-heavy programs, and
     * label-heavy ones whose label-list block fills before anything else. */
    static const uint32_t mixes[3][6] = { { 6, 14, 30, 90, 94, 96 }, { 4, 8, 70, 96, 97, 98 }, { 10, 30, 45, 85, 95, 97 } };
    const uint32_t *mix = mixes[PICK(&p.rng, 3)];
    uint32_t ops = 50 + PICK(&p.rng, 400);
    for (uint32_t i = 0; i < ops && nt_writer_status(p.w) == NT_OK; i++) {
        uint32_t k = PICK(&p.rng, 100);
        if (k < mix[0])
            op_define(&p);
        else if (k < mix[1])
            op_stack(&p);
        else if (k < mix[2])
            op_label_list(&p);
        else if (k < mix[3])
            op_event(&p, &e);
        else if (k < mix[4])
            op_sequence_point(&p);
        else if (k < mix[5])
            op_remove_thread(&p);
        else
            W_OK(&p, nt_writer_flush(p.w));
    }
    if (nt_writer_status(p.w) == NT_OK) {
        W_OK(&p, nt_writer_finish(p.w));
        char what[96];
        snprintf(what, sizeof what, "program %llu (V%u%s)", (unsigned long long)seed, format,
                 uncompressed ? ", uncompressed" : "");
        assert_rereads(&out, &e, what);
    }
    nt_writer_free(p.w);
    nt_membuf_free(&out);
    free(e.h);
}

LTest(writer_property, random_programs_reread_with_the_same_events_v4)
{
    for (uint64_t seed = 1; seed <= 150; seed++) {
        run_program(seed, 4, false);
        run_program(seed, 4, true);
    }
}

LTest(writer_property, random_programs_reread_with_the_same_events_v6)
{
    for (uint64_t seed = 1; seed <= 150; seed++) {
        run_program(seed, 6, false);
        run_program(seed, 6, true);
    }
}

/* ---- the label-list flush ------------------------------------------------ */

/* A V6 writer (every other option zero: the defaults) with d defined as *id. */
static nt_writer *v6_writer(nt_membuf *out, const nt_event_desc *d, uint32_t *id)
{
    const nt_writer_options o = { .format = 6 };
    memset(out, 0, sizeof *out);
    nt_writer *w = nt_writer_new(&o, nt_membuf_write, out, NULL);
    cr_assert(w);
    cr_assert_eq(nt_writer_define(w, d, id), NT_OK, "%s", nt_writer_message(w));
    return w;
}

/* Activity ids that change at every event make one V6 label list each; the
 * label-list block fills (and is flushed) before anything else was: the flush
 * that wrote the stream header first once reused the buffer holding the new
 * list, and the block declared a list of 0 bytes. */
LTest(writer_property, activity_ids_changing_20000_times_before_a_flush)
{
    nt_membuf out;
    uint32_t id;
    const nt_event_desc d = { .provider = "P", .event_id = 1, .event_name = "" };
    nt_writer *w = v6_writer(&out, &d, &id);
    expect e = { 0 };
    for (uint32_t i = 0; i < 20000; i++) {
        nt_writer_event ev = { .metadata_id = id, .thread_id = 5, .timestamp = i };
        memcpy(ev.activity_id, &i, sizeof i);
        ev.activity_id[15] = 1;
        cr_assert_eq(nt_writer_write_event(w, &ev), NT_OK, "%s", nt_writer_message(w));
        seen s = { .provider = "P", .event_id = 1, .thread = 5, .capture = 5, .seq = i + 1, .timestamp = i,
                   .depth = UINT32_MAX };
        memcpy(s.act, ev.activity_id, 16);
        expect_add(&e, digest(&s));
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
    assert_rereads(&out, &e, "20,000 activity ids");
    nt_writer_free(w);
    nt_membuf_free(&out);
    free(e.h);
}

/* The same through nt_writer_label_list directly: 12,000 lists in one
 * interval, each used by one event. */
LTest(writer_property, label_lists_12000_in_one_interval)
{
    nt_membuf out;
    uint32_t id;
    const nt_event_desc d = { .provider = "P", .event_id = 2, .event_name = "", .version = 1 };
    nt_writer *w = v6_writer(&out, &d, &id);
    enum { N = 12000 };
    uint32_t *ids = malloc(N * sizeof *ids);
    cr_assert(ids);
    for (uint32_t i = 0; i < N; i++) {
        nt_label l = { .kind = NT_LABEL_KEYWORDS, .value = 0x1000000ull + i };
        cr_assert_eq(nt_writer_label_list(w, &l, 1, &ids[i]), NT_OK, "%s", nt_writer_message(w));
    }
    expect e = { 0 };
    for (uint32_t i = 0; i < N; i++) {
        nt_writer_event ev = { .metadata_id = id, .thread_id = 9, .timestamp = i, .label_list_id = ids[i] };
        cr_assert_eq(nt_writer_write_event(w, &ev), NT_OK, "%s", nt_writer_message(w));
        seen s = { .provider = "P", .event_id = 2, .version = 1, .keywords = 0x1000000ull + i, .thread = 9,
                   .capture = 9, .seq = i + 1, .timestamp = i, .depth = UINT32_MAX };
        expect_add(&e, digest(&s));
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
    assert_rereads(&out, &e, "12,000 label lists");
    nt_writer_free(w);
    nt_membuf_free(&out);
    free(e.h);
    free(ids);
}
