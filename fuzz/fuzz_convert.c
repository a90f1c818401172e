/* nt_convert_bytes over arbitrary input: whole conversions to V4 and V6 and
 * slices (a window from the input hash, absolute or relative, open at either
 * end).
 *
 * Beyond "no crash, no sanitizer report, no leak": the returned status is the
 * one in the stats, a failure has a message and an input failure an offset
 * within the input, the sink got exactly output_bytes; an output that was
 * ended (no output failure, a header read) is a complete stream that parses
 * cleanly with exactly events_written events; a whole conversion of an input
 * that parses cleanly leaves out only events without metadata (every event
 * is written or counted); a slice's events are the window's (counted as
 * written or outside it) and its output, converted again whole, keeps them. */
#include "fuzz.h"
#include "nettrace_convert.h"


typedef struct count {
    uint64_t events;
} count;

static int on_event(void *user, const nt_event *ev)
{
    (void)ev;
    ((count *)user)->events++;
    return 0;
}

/* Events of a stream that must parse cleanly (else the harness fails). */
static uint64_t events_of(const nt_membuf *b, const char *what)
{
    nt_callbacks cb = { .event = on_event };
    count n = { 0 };
    char msg[256];
    nt_status s = nt_parse_buffer(b->data, b->len, &cb, &n, NULL, msg, sizeof msg);
    if (s != NT_OK && s != NT_ERR_NO_EVENTS)
        fz_fail("%s does not parse cleanly: %s", what, msg);
    return n.events;
}

/* A window from the hash: absolute ends near the trace clock's small values (where generated traces live), or
 * relative ones; either end may be open. */
static void window(uint64_t *h, nt_convert_options *o)
{
    uint64_t x = fz_next(h);
    bool absolute = x & 4;
    int64_t a = (int64_t)(fz_next(h) % 20000000), span = (int64_t)(fz_next(h) % 20000000);
    if (x & 1)
        o->from = (nt_time_bound){ .set = true, .absolute = absolute, .ns = a };
    if (x & 2 || !(x & 1))
        o->to = (nt_time_bound){ .set = true, .absolute = absolute, .ns = a + span };
}

static void check(size_t size, const nt_membuf *out, const nt_convert_stats *st, nt_status s)
{
    if (s != st->status)
        fz_fail("returned %s, stats say %s", nt_status_name(s), nt_status_name(st->status));
    if (s != NT_OK && !st->message[0])
        fz_fail("%s without a message", nt_status_name(s));
    if (s == NT_OK && st->message[0])
        fz_fail("a message on success: %s", st->message);
    if (!st->output_failed && st->error_offset > size)
        fz_fail("error offset %llu past the input's %zu bytes", (unsigned long long)st->error_offset, size);
    if (st->output_bytes != out->len)
        fz_fail("output_bytes %llu, the sink got %zu", (unsigned long long)st->output_bytes, out->len);
    if (st->input_bytes > size)
        fz_fail("read %llu bytes of %zu", (unsigned long long)st->input_bytes, size);
    if (st->output_failed || !out->len)
        return;
    uint64_t n = events_of(out, "the output");
    if (n != st->events_written)
        fz_fail("the output holds %llu events, events_written says %llu", (unsigned long long)n,
                (unsigned long long)st->events_written);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t h = fz_hash(data, size) | 1;
    nt_limits lim = { 0 };
    fz_harness_limits(&lim);
    nt_convert_options o = { .struct_size = sizeof o, .limits = &lim };
    o.format = (h >> 8) % 3 == 0 ? 0 : (h >> 8) % 3 == 1 ? 4 : 6;
    o.uncompressed = (h >> 16) & 1;
    bool slice = (h >> 17) & 1;
    if (slice)
        window(&h, &o);
    nt_membuf out = { 0 };
    nt_convert_stats st = { .struct_size = sizeof st };
    nt_status s = nt_convert_bytes(data, size, &o, nt_membuf_write, &out, &st);
    check(size, &out, &st, s);

    /* An input that parses cleanly: every event is written or counted as left out. */
    char msg[256];
    nt_callbacks cb = { .event = on_event };
    count in = { 0 };
    nt_status ps = nt_parse_buffer(data, size, &cb, &in, &lim, msg, sizeof msg);
    if (ps == NT_OK && s == NT_OK) {
        uint64_t accounted =
            st.events_written + st.events_without_metadata + st.events_outside_window + st.method_records_left_out;
        if (accounted != in.events)
            fz_fail("the input's %llu events: %llu written, %llu without metadata, %llu outside the window "
                    "(%llu records kept from outside)",
                    (unsigned long long)in.events, (unsigned long long)st.events_written,
                    (unsigned long long)st.events_without_metadata, (unsigned long long)st.events_outside_window,
                    (unsigned long long)st.records_outside_window);
        if (!slice && st.events_outside_window)
            fz_fail("a whole conversion left %llu events outside a window", (unsigned long long)st.events_outside_window);
    }
    /* The output converted again whole keeps every event it holds. */
    if (!st.output_failed && out.len && st.events_written) {
        nt_membuf again = { 0 };
        nt_convert_stats st2 = { .struct_size = sizeof st2 };
        nt_status s2 = nt_convert_bytes(out.data, out.len, &(nt_convert_options){ .limits = &lim }, nt_membuf_write,
                                        &again, &st2);
        check(out.len, &again, &st2, s2);
        if (s2 == NT_OK && st2.events_written != st.events_written)
            fz_fail("converted again: %llu events of %llu", (unsigned long long)st2.events_written,
                    (unsigned long long)st.events_written);
        nt_membuf_free(&again);
    }
    nt_membuf_free(&out);
    return 0;
}
