/* The header clock readers take (issue 21, item 11): TraceEvent turns the
 * sync time into a DateTime (years 1 to 9999) and places every event on it,
 * so the writer's default sync time is a valid date (1970-01-01, not
 * 0000-00-00), an invalid one is refused, an event off that calendar is
 * refused, and nettrace convert of a header readers cannot take fails with
 * the writer's reason instead of passing it through with exit 0. */
#include <criterion/criterion.h>

#include "cli_run.h"
#include "support.h"
#include "nettrace_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int on_trace(void *user, const nt_trace_info *info)
{
    *(nt_trace_info *)user = *info;
    return 0;
}

static nt_writer *writer(const nt_writer_options *o, nt_membuf *out)
{
    nt_writer *w = nt_writer_new(o, nt_membuf_write, out, NULL);
    cr_assert(w);
    return w;
}

static nt_status sample_at(nt_writer *w, int64_t ts)
{
    nt_writer_event hdr = { .thread_id = 1, .timestamp = ts };
    return nt_writer_sample(w, &hdr, NT_SAMPLE_MANAGED);
}

Test(writer_clock, the_default_sync_time_is_a_date)
{
    nt_membuf out = { 0 };
    nt_writer *w = writer(NULL, &out);
    cr_assert_eq(sample_at(w, 5), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    nt_trace_info info;
    nt_callbacks cb = { .trace = on_trace };
    nt_parser *p = nt_parser_new(&cb, &info, NULL, NULL);
    cr_assert_eq(nt_parser_feed(p, out.data, out.len), NT_OK);
    cr_assert_eq(nt_parser_finish(p), NT_OK);
    nt_parser_free(p);
    cr_expect_eq(info.sync_time_utc.year, 1970);
    cr_expect_eq(info.sync_time_utc.month, 1);
    cr_expect_eq(info.sync_time_utc.day, 1);
    nt_membuf_free(&out);
}

Test(writer_clock, a_sync_time_readers_refuse_is_refused)
{
    nt_writer_options o;
    nt_writer_options_default(&o);
    const nt_systemtime bad[] = { { 65535, 12, 0, 31, 23, 59, 59, 999 }, { 2026, 2, 0, 29, 0, 0, 0, 0 },
                                  { 2026, 13, 0, 1, 0, 0, 0, 0 }, { 1600, 12, 0, 31, 0, 0, 0, 0 } };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nt_membuf out = { 0 };
        o.sync_time_utc = bad[i];
        nt_writer *w = writer(&o, &out);
        cr_expect_eq(sample_at(w, 5), NT_ERR_INVALID_ARG, "year %u month %u day %u", bad[i].year, bad[i].month,
                     bad[i].day);
        cr_expect(strstr(nt_writer_message(w), "sync_time_utc"), "%s", nt_writer_message(w));
        nt_writer_free(w);
        nt_membuf_free(&out);
    }
}

Test(writer_clock, events_off_the_readers_calendar_are_refused)
{
    nt_writer_options o;
    nt_writer_options_default(&o);
    o.sync_qpc = INT64_MIN; /* timestamp - sync_qpc overflows for any timestamp >= 0 */
    nt_membuf out = { 0 };
    nt_writer *w = writer(&o, &out);
    cr_expect_eq(sample_at(w, INT64_MIN + 5), NT_OK, "5 ns after the sync");
    cr_expect_eq(sample_at(w, 0), NT_ERR_INVALID_ARG);
    cr_expect(strstr(nt_writer_message(w), "calendar"), "%s", nt_writer_message(w));
    nt_writer_free(w);
    nt_membuf_free(&out);
    o.sync_qpc = 0;
    o.qpc_frequency = 1; /* ticks are seconds from 1970 */
    out = (nt_membuf){ 0 };
    w = writer(&o, &out);
    cr_expect_eq(sample_at(w, 1000000000), NT_OK, "2001");
    cr_expect_eq(sample_at(w, -60000000000), NT_OK, "in year 68");
    cr_expect_eq(sample_at(w, 300000000000), NT_ERR_INVALID_ARG, "year 11476");
    nt_writer_free(w);
    nt_membuf_free(&out);
}

Test(writer_clock, convert_refuses_a_clock_readers_cannot_take)
{
    /* A trace written with sync_qpc 0x5EC05EC0, patched to INT64_MIN: every event is then ~2^63 ticks off */
    nt_writer_options o;
    nt_writer_options_default(&o);
    o.sync_qpc = 0x5EC05EC0;
    nt_membuf out = { 0 };
    nt_writer *w = writer(&o, &out);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(sample_at(w, 0x5EC05EC0 + i), NT_OK);
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    const uint8_t marker[8] = { 0xc0, 0x5e, 0xc0, 0x5e, 0, 0, 0, 0 }, min[8] = { 0, 0, 0, 0, 0, 0, 0, 0x80 };
    uint8_t *at = memmem(out.data, out.len, marker, 8);
    cr_assert(at);
    memcpy(at, min, 8);
    char in[64], conv[64];
    snprintf(in, sizeof in, "/tmp/nt-clock-in-%d.nettrace", (int)getpid());
    snprintf(conv, sizeof conv, "/tmp/nt-clock-out-%d.nettrace", (int)getpid());
    cr_assert(ts_write_file(in, out.data, out.len), "%s", in);
    nt_membuf_free(&out);
    for (int v = 4; v <= 6; v += 2) {
        const char *args[] = { "convert", in, "--to", v == 4 ? "v4" : "v6", "-o", conv, NULL };
        cli_run r = cli_run_nettrace(args, false);
        cr_expect_neq(r.status, 0, "convert --to v%d passed the clock through", v);
        cr_expect(strstr(r.err, "calendar"), "v%d: %s", v, r.err);
        cli_run_free(&r);
        unlink(conv);
    }
    unlink(in);
}
