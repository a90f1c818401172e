/* How structs grow (doc/abi.md): a struct_size shorter than the library's
 * layout (a caller built against an older header) is read up to its size
 * only, the members beyond taking their defaults; a longer one (a newer
 * header) is accepted while the members this library does not know are zero
 * and refused otherwise, at every entry point that takes a sized struct; 0
 * is the first layout and a size below it is refused; a struct the library
 * fills gets no more bytes than its struct_size allows; an array of
 * providers is stepped through by its first element's size. */
#include "common/abi.h"
#include "nettrace_convert.h"
#include "nettrace_profile.h"
#include "nettrace_session.h"
#include "nettrace_trace.h"
#include "nettrace_writer.h"
#include "session/session_internal.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLES 10

/* A trace of SAMPLES samples on two threads in turn, 1 ms apart from t = 1 ms, each on a one-frame stack. */
static nt_membuf small_trace(void)
{
    nt_membuf out = { 0 };
    nt_writer *w = nt_writer_new(NULL, nt_membuf_write, &out, NULL);
    cr_assert_not_null(w);
    uint64_t ip = 0x1000;
    uint32_t stack = 0;
    cr_assert_eq(nt_writer_stack(w, &ip, 1, &stack), NT_OK);
    for (int i = 0; i < SAMPLES; i++) {
        nt_writer_event hdr = { .thread_id = 7 + (uint64_t)(i % 2), .timestamp = 1000000 * (int64_t)(i + 1), .stack_id = stack };
        cr_assert_eq(nt_writer_sample(w, &hdr, NT_SAMPLE_MANAGED), NT_OK);
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    return out;
}

static nt_trace *load(const nt_membuf *b, const nt_trace_options *opt, nt_status want)
{
    nt_trace *t = NULL;
    nt_status s = nt_trace_from_buffer(b->data, b->len, opt, &t, NULL, 0);
    cr_assert_eq(s, want, "status %s, want %s", nt_status_name(s), nt_status_name(want));
    return t;
}

/* A struct of `type` in a buffer `extra` bytes longer than the library's layout, every byte `fill`. */
#define BIG(type, name, extra, fill)                                                                        \
    unsigned char name##_bytes[sizeof(type) + (extra)] __attribute__((aligned(16)));                        \
    memset(name##_bytes, (fill), sizeof name##_bytes);                                                      \
    type *name = (type *)(void *)name##_bytes

/* The samples nt_top_build counts over t with opt. */
static uint64_t top_samples(const nt_trace *t, const nt_top_options *opt, nt_status want)
{
    nt_top *top = NULL;
    nt_status s = nt_top_build(t, opt, &top);
    cr_assert_eq(s, want, "status %s, want %s", nt_status_name(s), nt_status_name(want));
    if (s != NT_OK)
        return 0;
    cr_assert_eq(top->table_count, 1);
    uint64_t n = top->tables[0].samples;
    nt_top_free(top);
    return n;
}

/* A struct as two releases lay it out: the caller was built with v1, the library knows v2. */
typedef struct v1 {
    uint32_t struct_size;
    uint32_t a;
    uint64_t b;
} v1;
typedef struct v2 {
    uint32_t struct_size;
    uint32_t a;
    uint64_t b;
    uint64_t added; /* a member of the later release: 0 selects its default */
} v2;

/* An older caller's struct, allocated to its exact size so that a read past it is an ASan error. */
Test(abi, older_callers_struct_is_read_to_its_size)
{
    v1 *old = malloc(sizeof *old);
    cr_assert_not_null(old);
    *old = (v1){ .struct_size = sizeof(v1), .a = 5, .b = 6 };
    v2 lib;
    memset(&lib, 0xAB, sizeof lib);
    cr_assert(abi_struct_in(&lib, sizeof lib, ABI_UPTO(v1, b), old));
    cr_assert_eq(lib.a, 5);
    cr_assert_eq(lib.b, 6);
    cr_assert_eq(lib.added, 0, "a member the caller does not know must read as 0 (its default)");
    cr_assert_eq(lib.struct_size, sizeof(v2));
    old->struct_size = 0; /* the first layout */
    cr_assert(abi_struct_in(&lib, sizeof lib, ABI_UPTO(v1, b), old));
    cr_assert_eq(lib.b, 6);
    cr_assert_eq(lib.added, 0);
    old->struct_size = 8; /* shorter than any layout there ever was */
    cr_assert_not(abi_struct_in(&lib, sizeof lib, ABI_UPTO(v1, b), old));

    /* The library fills an older caller's struct: never past it. */
    v2 full = { .a = 1, .b = 2, .added = 3 };
    old->struct_size = sizeof(v1);
    abi_struct_out(old, &full, sizeof full, ABI_UPTO(v1, b));
    cr_assert_eq(old->a, 1);
    cr_assert_eq(old->b, 2);
    cr_assert_eq(old->struct_size, sizeof(v1));
    free(old);
}

Test(abi, longer_struct_with_zero_tail_is_accepted)
{
    nt_membuf b = small_trace();
    BIG(nt_trace_options, opt, 24, 0);
    opt->struct_size = (uint32_t)(sizeof(nt_trace_options) + 24);
    nt_trace *t = load(&b, opt, NT_OK);
    cr_assert_eq(nt_trace_sample_count(t), SAMPLES);
    nt_trace_free(t);

    BIG(nt_export_options, eo, 8, 0);
    eo->struct_size = (uint32_t)(sizeof(nt_export_options) + 8);
    t = load(&b, NULL, NT_OK);
    nt_membuf folded = { 0 };
    cr_assert_eq(nt_export_folded(t, eo, nt_membuf_write, &folded), NT_OK);
    cr_assert(folded.len > 0);
    nt_membuf_free(&folded);
    nt_trace_free(t);
    nt_membuf_free(&b);
}

Test(abi, longer_struct_setting_an_unknown_member_is_refused)
{
    nt_membuf b = small_trace();
    BIG(nt_trace_options, opt, 8, 0);
    opt->struct_size = (uint32_t)(sizeof(nt_trace_options) + 8);
    opt_bytes[sizeof(nt_trace_options) + 3] = 1; /* a member a newer header added, set */
    nt_trace *t = load(&b, opt, NT_ERR_INVALID_ARG);
    cr_assert_null(t);

    BIG(nt_top_options, to, 4, 0);
    to->struct_size = (uint32_t)(sizeof(nt_top_options) + 4);
    to_bytes[sizeof(nt_top_options)] = 0x80;
    t = load(&b, NULL, NT_OK);
    top_samples(t, to, NT_ERR_INVALID_ARG);
    nt_trace_free(t);

    BIG(nt_writer_options, wo, 4, 0);
    wo->struct_size = (uint32_t)(sizeof(nt_writer_options) + 4);
    wo_bytes[sizeof(nt_writer_options) + 1] = 1;
    nt_membuf out = { 0 };
    cr_assert_null(nt_writer_new(wo, nt_membuf_write, &out, NULL));
    BIG(nt_limits, lim, 4, 0);
    lim->struct_size = (uint32_t)(sizeof(nt_limits) + 4);
    lim_bytes[sizeof(nt_limits) + 2] = 9;
    cr_assert_null(nt_parser_new(NULL, NULL, lim, NULL));
    nt_membuf_free(&b);
}

Test(abi, size_below_the_first_layout_is_refused)
{
    nt_trace_window_config cfg = { .struct_size = 2 };
    cr_assert_null(nt_trace_window_new(&cfg, NULL));
    cfg.struct_size = 0;
    nt_trace_window *w = nt_trace_window_new(&cfg, NULL);
    cr_assert_not_null(w);
    nt_trace_window_free(w);
    nt_feed_options fo = { .struct_size = 1 };
    nt_parser *p = nt_parser_new(NULL, NULL, NULL, NULL);
    cr_assert_eq(nt_parser_feed_fd(p, 0, &fo, NULL), NT_ERR_INVALID_ARG);
    nt_parser_free(p);
}

/* Stats into a caller's struct: never past its struct_size, which then says how much was filled. */
Test(abi, filled_structs_stop_at_the_callers_size)
{
    nt_membuf b = small_trace();
    nt_trace *t = load(&b, NULL, NT_OK);
    BIG(nt_trace_stats, st, 32, 0xAB);
    st->struct_size = (uint32_t)(sizeof(nt_trace_stats) + 32); /* a newer caller: the library fills what it has */
    nt_trace_stats_get(t, st);
    cr_assert_eq(st->struct_size, sizeof(nt_trace_stats));
    cr_assert_eq(st->samples, SAMPLES);
    for (size_t i = sizeof(nt_trace_stats); i < sizeof st_bytes; i++)
        cr_assert_eq(st_bytes[i], 0xAB, "byte %zu past the library's layout was written", i);
    nt_trace_stats zeroed = { 0 };
    nt_trace_stats_get(t, &zeroed);
    cr_assert_eq(zeroed.struct_size, ABI3_nt_trace_stats, "0 is the first layout");
    cr_assert_eq(zeroed.samples, SAMPLES);

    nt_limits lim = { 0 };
    nt_limits_default(&lim);
    cr_assert_eq(lim.max_stacks, NT_DEFAULT_MAX_STACKS);
    cr_assert_eq(lim.struct_size, ABI3_nt_limits);
    nt_callbacks cb = { 0 };
    nt_trace_builder_callbacks(&cb);
    cr_assert_not_null(cb.sample);
    nt_trace_free(t);
    nt_membuf_free(&b);
}

/* A newer caller's providers, each 16 bytes longer than this library's nt_provider. */
Test(abi, provider_array_stepped_by_its_struct_size)
{
    enum { EXTRA = 16, N = 3 };
    const size_t stride = sizeof(nt_provider) + EXTRA;
    unsigned char *arr = calloc(N, stride);
    cr_assert_not_null(arr);
    const char *names[N] = { "A", "B", "C" };
    for (size_t i = 0; i < N; i++) {
        nt_provider *p = (nt_provider *)(void *)(arr + i * stride);
        p->struct_size = (uint32_t)stride;
        p->name = names[i];
        p->keywords = i + 1;
        p->level = (uint32_t)i + 1;
    }
    nt_session_config cfg = { .providers = (const nt_provider *)(void *)arr, .provider_count = N,
                              .sink = nt_sink_fd };
    nt_session *s = nt_session_new(&cfg, NULL);
    cr_assert_not_null(s);
    cr_assert_eq(s->cfg.provider_count, N);
    for (size_t i = 0; i < N; i++) {
        cr_assert_str_eq(s->cfg.providers[i].name, names[i]);
        cr_assert_eq(s->cfg.providers[i].keywords, i + 1);
        cr_assert_eq(s->cfg.providers[i].level, i + 1);
    }
    nt_session_free(s);
    arr[sizeof(nt_provider) + 2] = 1; /* the first provider sets a member this library does not know */
    cr_assert_null(nt_session_new(&cfg, NULL));
    free(arr);
}

Test(abi, version_number)
{
    cr_assert_eq(nt_version_number(), NT_VERSION_NUMBER);
    cr_assert_eq(NT_VERSION_NUMBER, NT_VERSION_MAJOR * 10000 + NT_VERSION_MINOR * 100 + NT_VERSION_PATCH);
    char s[32];
    snprintf(s, sizeof s, "%u.%u.%u", nt_version_number() / 10000, nt_version_number() / 100 % 100,
             nt_version_number() % 100);
    cr_assert_str_eq(s, nt_version());
}

/* The convention of nettrace.h: every free function takes NULL and does nothing; every query of a
 * handle takes NULL and answers as for an empty object (0, false, NULL, a zeroed struct, "" for a
 * message, NT_ERR_INVALID_ARG for a status). */
Test(abi, null_handles)
{
    nt_parser_free(NULL);
    nt_trace_free(NULL);
    nt_trace_builder_free(NULL);
    nt_trace_window_free(NULL);
    nt_profile_free(NULL);
    nt_profile_builder_free(NULL);
    nt_top_free(NULL);
    nt_writer_free(NULL);
    nt_session_free(NULL);
    nt_port_close(NULL);
    nt_session_cancel(NULL);
    nt_port_cancel(NULL);
    nt_process_list_free(NULL, NULL);
    nt_membuf_free(NULL);

    cr_assert_eq(nt_parser_status(NULL), NT_ERR_INVALID_ARG);
    cr_assert_eq(nt_parser_offset(NULL), 0);
    cr_assert_eq(nt_parser_error_offset(NULL), 0);
    cr_assert_str_eq(nt_parser_message(NULL), "");
    cr_assert_null(nt_parser_trace_info(NULL));
    cr_assert_eq(nt_parser_format_version(NULL), 0);
    cr_assert_eq(nt_parser_time_ns(NULL, 5), 0);
    nt_parser_stats ps = { 0 };
    ps.events = 9;
    nt_parser_stats_get(NULL, &ps);
    cr_assert_eq(ps.events, 0);

    cr_assert_null(nt_trace_header(NULL));
    cr_assert_eq(nt_trace_frequency(NULL), 0);
    cr_assert_eq(nt_trace_pointer_size(NULL), 0);
    cr_assert_eq(nt_trace_sample_count(NULL), 0);
    cr_assert_eq(nt_trace_sample_at(NULL, 0).frame_count, 0);
    cr_assert_eq(nt_trace_stack_count(NULL), 0);
    cr_assert_null(nt_trace_stack_at(NULL, 0).frame_ids);
    cr_assert_eq(nt_trace_frame_count(NULL), 0);
    cr_assert_null(nt_trace_frame_at(NULL, 0));
    cr_assert_eq(nt_trace_method_count(NULL), 0);
    cr_assert_null(nt_trace_method_at(NULL, 0));
    cr_assert_eq(nt_trace_module_count(NULL), 0);
    cr_assert_null(nt_trace_module_at(NULL, 0));
    cr_assert_eq(nt_trace_assembly_count(NULL), 0);
    cr_assert_null(nt_trace_assembly_at(NULL, 0));
    cr_assert_null(nt_trace_assembly_name(NULL, 1));
    uint64_t asm_id = 7;
    cr_assert_not(nt_trace_module_assembly(NULL, 1, &asm_id));
    cr_assert_eq(asm_id, 7);
    cr_assert_eq(nt_trace_thread_count(NULL), 0);
    cr_assert_eq(nt_trace_thread_id(NULL, 0), 0);
    cr_assert_str_eq(nt_trace_message(NULL), "");
    cr_assert(nt_trace_counts_exact(NULL));
    nt_trace_stats ts = { .samples = 3 };
    nt_trace_stats_get(NULL, &ts);
    cr_assert_eq(ts.samples, 0);

    cr_assert_null(nt_profile_trace(NULL));
    int64_t first = 1, last = 1;
    nt_profile_span(NULL, &first, &last);
    cr_assert_eq(first, 0);
    cr_assert_eq(last, 0);
    cr_assert_eq(nt_profile_record_count(NULL), 0);
    cr_assert_eq(nt_profile_record_at(NULL, 0).count, 0);
    cr_assert_eq(nt_profile_memory_peak(NULL), 0);
    cr_assert_eq(nt_profile_gc_count(NULL), 0);
    cr_assert_null(nt_profile_gc_at(NULL, 0));
    nt_profile_totals pt = { .events = 4 };
    nt_profile_totals_get(NULL, NT_PROFILE_ALLOC, &pt);
    cr_assert_eq(pt.events, 0);

    cr_assert_eq(nt_writer_status(NULL), NT_ERR_INVALID_ARG);
    cr_assert_str_eq(nt_writer_message(NULL), "");
    cr_assert_eq(nt_writer_offset(NULL), 0);

    cr_assert_eq(nt_session_fd(NULL), -1);
    cr_assert_eq(nt_session_hresult(NULL), 0);
    cr_assert_eq(nt_session_id(NULL), 0);
    cr_assert_eq(nt_session_bytes(NULL), 0);
    cr_assert_str_eq(nt_session_message(NULL), "");
    cr_assert_str_eq(nt_port_path(NULL), "");
    cr_assert_str_eq(nt_event_name(NULL), "");
}

/* "" is the message of an object that has not failed, for every object that has one. */
Test(abi, no_failure_message_is_empty)
{
    nt_parser *p = nt_parser_new(NULL, NULL, NULL, NULL);
    cr_assert_str_eq(nt_parser_message(p), "");
    nt_parser_free(p);
    nt_membuf out = { 0 };
    nt_writer *w = nt_writer_new(NULL, nt_membuf_write, &out, NULL);
    cr_assert_str_eq(nt_writer_message(w), "");
    nt_writer_free(w);
    nt_membuf b = small_trace();
    char msg[64] = "untouched";
    cr_assert_eq(nt_parse_buffer(b.data, b.len, NULL, NULL, NULL, msg, sizeof msg), NT_OK);
    cr_assert_str_eq(msg, "");
    nt_trace *t = load(&b, NULL, NT_OK);
    cr_assert_str_eq(nt_trace_message(t), "");
    nt_trace_free(t);
    nt_membuf_free(&b);
}

/* nt_convert's options by their size (a longer struct with a zero tail, one that sets an unknown member, a size
 * below the first layout) and its stats into a longer struct (a canary past the library's layout). */
Test(abi, convert_structs_by_their_size)
{
    nt_membuf b = small_trace();
    nt_membuf out = { 0 };
    BIG(nt_convert_options, opt, 16, 0);
    opt->struct_size = (uint32_t)(sizeof(nt_convert_options) + 16);
    opt->format = 6;
    BIG(nt_convert_stats, st, 32, 0xAB);
    st->struct_size = (uint32_t)(sizeof(nt_convert_stats) + 32);
    cr_assert_eq(nt_convert_bytes(b.data, b.len, opt, nt_membuf_write, &out, st), NT_OK, "%s", st->message);
    cr_assert_eq(st->struct_size, sizeof(nt_convert_stats));
    cr_assert_eq(st->events_written, SAMPLES);
    cr_assert_str_eq(st->message, "");
    for (size_t i = sizeof(nt_convert_stats); i < sizeof st_bytes; i++)
        cr_assert_eq(st_bytes[i], 0xAB, "byte %zu past the library's layout was written", i);
    nt_trace *t = load(&out, NULL, NT_OK);
    cr_assert_eq(nt_trace_header(t)->format_major, 6);
    cr_assert_eq(nt_trace_sample_count(t), SAMPLES);
    nt_trace_free(t);

    opt_bytes[sizeof(nt_convert_options) + 5] = 1; /* a member a newer header added, set */
    out.len = 0;
    cr_assert_eq(nt_convert_bytes(b.data, b.len, opt, nt_membuf_write, &out, NULL), NT_ERR_INVALID_ARG);
    cr_assert_eq(out.len, 0, "a refused call writes nothing");
    nt_convert_options small = { .struct_size = 4 };
    cr_assert_eq(nt_convert_bytes(b.data, b.len, &small, nt_membuf_write, &out, NULL), NT_ERR_INVALID_ARG);
    nt_convert_stats zeroed = { 0 };
    cr_assert_eq(nt_convert_bytes(b.data, b.len, NULL, nt_membuf_write, &out, &zeroed), NT_OK);
    cr_assert_eq(zeroed.struct_size, ABI3_nt_convert_stats, "0 is the first layout");
    nt_membuf_free(&out);
    nt_membuf_free(&b);
}

/* nt_session_config.buffering (after the first layout's tail, reserved_): a caller of the first layout,
 * its struct allocated to that size exactly, gets the default buffering; a caller of this layout gets
 * what it asked for. */
Test(abi, session_buffering_past_the_first_layout)
{
    size_t first = ABI3_nt_session_config;
    cr_assert(offsetof(nt_session_config, buffering) >= first, "buffering overlaps the first layout's bytes");
    nt_session_config head = { .struct_size = (uint32_t)first, .sink = nt_sink_fd };
    unsigned char *old = malloc(first);
    cr_assert_not_null(old);
    memcpy(old, &head, first); /* the first layout's bytes only */
    nt_session *s = nt_session_new((const nt_session_config *)(void *)old, NULL); /* an over-read is an ASan error */
    cr_assert_not_null(s);
    cr_assert_eq(s->cfg.buffering, NT_BUFFERING_DEFAULT);
    nt_session_free(s);
    free(old);
    nt_session_config cfg = NT_STRUCT_INIT(nt_session_config);
    cfg.sink = nt_sink_fd;
    cfg.buffering = NT_BUFFERING_BLOCK;
    s = nt_session_new(&cfg, NULL);
    cr_assert_not_null(s);
    cr_assert_eq(s->cfg.buffering, NT_BUFFERING_BLOCK);
    nt_session_free(s);
    cfg.struct_size = 0; /* 0 is the first layout: buffering is not read */
    s = nt_session_new(&cfg, NULL);
    cr_assert_not_null(s);
    cr_assert_eq(s->cfg.buffering, NT_BUFFERING_DEFAULT);
    nt_session_free(s);
}
