/* The V4 event loop reads what the compressed header's flags say changed
 * and nothing else: stacks and metadata are looked up only when their id
 * changes, a capture thread's drops are checked at the first event of each
 * run, and events whose flags byte is 0x0c take a copy of the loop of
 * their own.  These streams are written byte by byte with the flags a
 * runtime writes (the test builder always sets the id bits), and long
 * enough that the first events take the unchecked loop and the last ones
 * the checked tail; every event's arguments, the drops and the unknown
 * references are checked per event. */
#include "nettrace.h"
#include "streams.h"

#include "ltest.h"

#include <criterion/criterion.h>

#define F_META 0x01
#define F_CAPTURE 0x02
#define F_THREAD 0x04
#define F_STACK 0x08
#define F_PAYLOAD 0x80

#define MAX_SEEN 64

typedef struct seen {
    uint32_t n;
    uint64_t thread[MAX_SEEN], capture[MAX_SEEN];
    uint32_t seq[MAX_SEEN], stack_id[MAX_SEEN];
    bool has_stack[MAX_SEEN], has_desc[MAX_SEEN];
    uint32_t samples;
    uint64_t sample_thread[MAX_SEEN];
    bool sample_has_stack[MAX_SEEN];
    uint32_t sp_dropped[2];
} seen;

static int on_event(void *u, const nt_event *e)
{
    seen *s = u;
    cr_assert_lt(s->n, MAX_SEEN);
    s->thread[s->n] = e->thread_id;
    s->capture[s->n] = e->capture_thread_id;
    s->seq[s->n] = e->sequence_number;
    s->stack_id[s->n] = e->stack_id;
    s->has_stack[s->n] = e->stack != NULL;
    s->has_desc[s->n] = e->desc != NULL;
    s->n++;
    return 0;
}

static int on_sample(void *u, const nt_sample *x)
{
    seen *s = u;
    cr_assert_lt(s->samples, MAX_SEEN);
    s->sample_thread[s->samples] = x->thread_id;
    s->sample_has_stack[s->samples] = x->stack != NULL;
    s->samples++;
    return 0;
}

static int on_sp(void *u, const nt_sequence_point *sp)
{
    seen *s = u;
    for (uint32_t i = 0; i < sp->thread_count && i < 2; i++)
        s->sp_dropped[i] = sp->threads[i].dropped;
    return 0;
}

/* One compressed event: the flags byte, then the fields it announces
 * (metadata id; sequence delta, capture thread, processor; thread; stack
 * id), the timestamp delta, the payload size when announced, and a 4-byte
 * sample payload. */
static void ev(tb *b, uint8_t flags, uint32_t meta, uint32_t seq_delta, uint64_t capture, uint64_t thread,
               uint32_t stack)
{
    static const uint8_t managed[4] = { 2, 0, 0, 0 };
    tb_u8(b, flags);
    if (flags & F_META)
        tb_varu(b, meta);
    if (flags & F_CAPTURE) {
        tb_varu(b, seq_delta);
        tb_varu(b, capture);
        tb_varu(b, 0); /* processor */
    }
    if (flags & F_THREAD)
        tb_varu(b, thread);
    if (flags & F_STACK)
        tb_varu(b, stack);
    tb_varu(b, 10); /* timestamp delta */
    if (flags & F_PAYLOAD)
        tb_varu(b, 4);
    tb_bytes(b, managed, 4);
}

#define TRAILING 30 /* events after the checked ones: the first ones take the unchecked loop */

LTest(event_runs, lookups_and_drops_follow_the_flags)
{
    tb b = { 0 };
    tb_header(&b, 8, 1000);
    tb_metadata_block(&b, 1, NT_PROVIDER_SAMPLE_PROFILER, 0, 0); /* ThreadSample */
    static const uint64_t ip[1] = { 0x1000 };
    const uint64_t *ips[1] = { ip };
    const uint32_t depth[1] = { 1 };
    tb_stack_block(&b, 1, 1, ips, depth, 8); /* stack 1 defined, stack 2 not */
    size_t pos = tb_block_begin(&b, "EventBlock");
    tb_event_header(&b, 1);
    /* event: flags, meta, seq delta, capture, thread, stack   capture 7 / 8 seq */
    ev(&b, F_META | F_CAPTURE | F_THREAD | F_STACK | F_PAYLOAD, 1, 0, 7, 7, 1); /* 0: 7 seq 1 */
    ev(&b, F_THREAD | F_STACK, 0, 0, 0, 8, 2);                                 /* 1: 7 seq 2, stack unknown */
    ev(&b, F_THREAD | F_STACK, 0, 0, 0, 9, 2);                                 /* 2: 7 seq 3 */
    ev(&b, 0, 0, 0, 0, 0, 0);                                                  /* 3: 7 seq 4, stack 2 still */
    ev(&b, F_CAPTURE | F_STACK, 0, 2, 7, 0, 1);                                /* 4: 7 seq 7: 2 lost */
    ev(&b, F_CAPTURE, 0, 0, 8, 0, 0);                                          /* 5: 8 seq 8, a new thread */
    ev(&b, 0, 0, 0, 0, 0, 0);                                                  /* 6: 8 seq 9 */
    ev(&b, F_CAPTURE, 0, (uint32_t)-2, 7, 0, 0);                               /* 7: 7 seq 8, none lost */
    ev(&b, 0, 0, 0, 0, 0, 0);                                                  /* 8: 7 seq 9 */
    ev(&b, F_META, 5, 0, 0, 0, 0);                                             /* 9: 7 seq 10, metadata 5 undefined */
    for (int i = 0; i < TRAILING; i++)
        ev(&b, 0, 0, 0, 0, 0, 0); /* 10..: 7 seq 11.., metadata 5 still */
    tb_block_end(&b, pos);
    const uint64_t tids[2] = { 7, 8 };
    const uint32_t seqs[2] = { 10 + TRAILING, 9 }; /* each thread's last: nothing lost after */
    tb_sp_block(&b, 1000, 2, tids, seqs);
    tb_end(&b);

    seen s = { 0 };
    nt_callbacks cb = { 0 };
    cb.event = on_event;
    cb.sample = on_sample;
    cb.sequence_point = on_sp;
    nt_parser *p = nt_parser_new(&cb, &s, NULL, NULL);
    cr_assert_not_null(p);
    cr_assert_eq(nt_parser_feed(p, b.d, b.n), NT_OK, "%s", nt_parser_message(p));
    cr_assert_eq(nt_parser_finish(p), NT_OK, "%s", nt_parser_message(p));

    cr_assert_eq(s.n, 10 + TRAILING);
    static const uint64_t thread[10] = { 7, 8, 9, 9, 9, 9, 9, 9, 9, 9 };
    static const uint64_t capture[10] = { 7, 7, 7, 7, 7, 8, 8, 7, 7, 7 };
    static const uint32_t seq[10] = { 1, 2, 3, 4, 7, 8, 9, 8, 9, 10 };
    static const uint32_t stack_id[10] = { 1, 2, 2, 2, 1, 1, 1, 1, 1, 1 };
    for (uint32_t i = 0; i < s.n; i++) {
        uint32_t k = i < 10 ? i : 9;
        cr_expect_eq(s.thread[i], thread[k], "event %u: thread %llu", i, (unsigned long long)s.thread[i]);
        cr_expect_eq(s.capture[i], capture[k], "event %u: capture thread %llu", i, (unsigned long long)s.capture[i]);
        cr_expect_eq(s.seq[i], i < 10 ? seq[i] : 10 + (i - 9), "event %u: sequence %u", i, s.seq[i]);
        cr_expect_eq(s.stack_id[i], stack_id[k], "event %u: stack id %u", i, s.stack_id[i]);
        cr_expect_eq(s.has_stack[i], stack_id[k] == 1, "event %u: stack found or not", i);
        cr_expect_eq(s.has_desc[i], i < 9, "event %u: metadata found or not", i);
    }
    /* Events 0-8 are samples, with the stack they name (2 is unknown). */
    cr_assert_eq(s.samples, 9);
    for (uint32_t i = 0; i < 9; i++) {
        cr_expect_eq(s.sample_thread[i], thread[i], "sample %u", i);
        cr_expect_eq(s.sample_has_stack[i], stack_id[i] == 1, "sample %u: stack", i);
    }
    nt_parser_stats st = { 0 };
    nt_parser_stats_get(p, &st);
    cr_expect_eq(st.events_dropped, 2);
    cr_expect_eq(s.sp_dropped[0], 2, "capture thread 7 lost 2");
    cr_expect_eq(s.sp_dropped[1], 0, "capture thread 8 lost none");
    cr_expect_eq(st.unknown_stack_refs, 3);
    cr_expect_eq(st.unknown_metadata_refs, 1 + TRAILING);
    nt_parser_free(p);
    tb_free(&b);
}
