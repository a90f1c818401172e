/* nettrace info [--json] FILE: header fields and counts, for checking the
 * parser from a shell.  Counts cover what was read, also when the stream is
 * truncated or damaged. */
#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/time_opt.h"
#include "common/json.h"
#include "common/text_escape.h"
#include "cli/event_types.h"
#include "cli/human.h"
#include "common/map.h"
#include "common/sat.h"

#include <inttypes.h>
#include <string.h>

typedef struct info_state {
    cli_event_types types;
    cm_mem mem;            /* sampled_threads' allocations */
    cm_map sampled_threads;
    bool any_event;
    int64_t last_ticks;    /* the latest event's timestamp */
    bool oom;
} info_state;

static int on_metadata(void *user, const nt_event_desc *d)
{
    info_state *st = user;
    if (!cli_event_types_define(&st->types, d->metadata_id, d->provider, d->name, d->event_id, d->version))
        return st->oom = true;
    return 0;
}

static int on_event(void *user, const nt_event *ev)
{
    info_state *st = user;
    if (!st->any_event || ev->timestamp > st->last_ticks)
        st->last_ticks = ev->timestamp;
    st->any_event = true;
    if (!cli_event_types_count(&st->types, ev->metadata_id))
        return st->oom = true;
    return 0;
}

static int on_sample(void *user, const nt_sample *s)
{
    info_state *st = user;
    if (!cm_map_put(&st->mem, &st->sampled_threads, s->thread_id, NULL))
        return st->oom = true;
    return 0;
}

static void usage(FILE *f)
{
    fputs("usage: nettrace info [--json] FILE\n"
          "\n"
          "Print a trace's header fields and what it holds: events, metadata, stacks,\n"
          "sequence points, samples, method records and the event types with counts.\n"
          "FILE may be - for standard input.  Counts are printed for damaged and\n"
          "truncated streams too; the exit status says how the read ended.\n"
          "\n"
          "  --json     one JSON object instead of text\n"
          "  -h, --help this help\n",
          f);
}

/* The trace's span: from its start (sync time) to its latest event. */
typedef struct span {
    int64_t start_ns, end_ns;
    bool has_end;
} span;

static span trace_span(const nt_trace_info *ti, const info_state *st)
{
    span sp = { cli_trace_start_ns(ti), 0, st->any_event && ti };
    if (sp.has_end)
        sp.end_ns = nt_ticks_to_ns(st->last_ticks, ti->qpc_frequency);
    return sp;
}

static void print_json(FILE *o, nt_status s, const nt_trace_info *ti, const nt_parser_stats *ps, info_state *st,
                       const nt_parser *p, const char *message)
{
    fputs("{\n  \"status\": ", o);
    cm_json_fputs(o, nt_status_name(s));
    fputs(",\n  \"message\": ", o);
    cm_json_fputs(o, s == NT_OK ? NULL : message);
    if (ti) {
        fprintf(o,
                ",\n  \"format_version\": %u,\n  \"pointer_size\": %u,\n  \"process_id\": %u,\n"
                "  \"processor_count\": %u,\n  \"qpc_frequency\": %" PRId64 ",\n  \"sync_qpc\": %" PRId64 ",\n"
                "  \"sync_time_utc\": \"%04u-%02u-%02uT%02u:%02u:%02u.%03uZ\",\n"
                "  \"sampling_interval_ns\": %u",
                ti->format_major, ti->pointer_size, ti->process_id, ti->processor_count, ti->qpc_frequency,
                ti->sync_qpc, ti->sync_time_utc.year, ti->sync_time_utc.month, ti->sync_time_utc.day,
                ti->sync_time_utc.hour, ti->sync_time_utc.minute, ti->sync_time_utc.second,
                ti->sync_time_utc.milliseconds, ti->sampling_interval_ns);
        span sp = trace_span(ti, st);
        fprintf(o, ",\n  \"start_ns\": %" PRId64, sp.start_ns);
        if (sp.has_end)
            fprintf(o, ",\n  \"end_ns\": %" PRId64 ",\n  \"duration_ns\": %" PRId64, sp.end_ns,
                    cm_sat_sub(sp.end_ns, sp.start_ns));
        else
            fputs(",\n  \"end_ns\": null,\n  \"duration_ns\": null", o);
    } else {
        uint32_t refused = nt_parser_format_version(p); /* a version the parser did not read (NetPerf) */
        if (refused)
            fprintf(o, ",\n  \"format_version\": %u", refused);
        else
            fputs(",\n  \"format_version\": null", o);
        fputs(",\n  \"pointer_size\": null,\n  \"process_id\": null,\n"
              "  \"processor_count\": null,\n  \"qpc_frequency\": null,\n  \"sync_qpc\": null,\n"
              "  \"sync_time_utc\": null,\n  \"sampling_interval_ns\": null,\n  \"start_ns\": null,\n"
              "  \"end_ns\": null,\n  \"duration_ns\": null",
              o);
    }
    fprintf(o,
            ",\n  \"bytes\": %" PRIu64 ",\n  \"blocks\": %" PRIu64 ",\n  \"events\": %" PRIu64
            ",\n  \"metadata\": %" PRIu64 ",\n  \"stacks\": %" PRIu64 ",\n  \"sequence_points\": %" PRIu64
            ",\n  \"samples\": %" PRIu64 ",\n  \"methods\": %" PRIu64 ",\n  \"modules\": %" PRIu64
            ",\n  \"assemblies\": %" PRIu64 ",\n  \"sampled_threads\": %zu,\n  \"events_dropped\": %" PRIu64
            ",\n  \"unknown_blocks\": %" PRIu64,
            ps->bytes, ps->blocks, ps->events, ps->metadata, ps->stacks, ps->sequence_points, ps->samples,
            ps->methods, ps->modules, ps->assemblies, st->sampled_threads.count, ps->events_dropped,
            ps->unknown_blocks);
    fputs(",\n  \"event_types\": [", o);
    for (size_t i = 0; i < st->types.n; i++) {
        fputs(i ? ",\n    {\"provider\": " : "\n    {\"provider\": ", o);
        cm_json_fputs(o, st->types.types[i].provider);
        fprintf(o, ", \"event_id\": %u, \"version\": %u, \"name\": ", st->types.types[i].event_id,
                st->types.types[i].version);
        cm_json_fputs(o, st->types.types[i].name);
        fprintf(o, ", \"count\": %" PRIu64 "}", st->types.types[i].count);
    }
    fputs(st->types.n ? "\n  ]" : "]", o);
    if (s == NT_ERR_TRUNCATED)
        fprintf(o, ",\n  \"truncated_at\": %" PRIu64 "\n}\n", nt_parser_error_offset(p));
    else
        fputs(",\n  \"truncated_at\": null\n}\n", o);
}

static void print_text(FILE *o, const char *path, nt_status s, const nt_parser *p, const nt_parser_stats *ps,
                       info_state *st, const char *message)
{
    const nt_trace_info *ti = nt_parser_trace_info(p);
    fprintf(o, "file:              %s\n", path);
    fprintf(o, "status:            %s\n", s == NT_OK ? "ok" : message);
    if (ti) {
        if (ti->format_major >= 6)
            fprintf(o, "format:            NetTrace V%u.%u\n", ti->format_major, ti->format_minor);
        else
            fprintf(o, "format:            NetTrace V%u (Trace object version %u, min reader %u)\n", ti->format_major,
                    ti->object_version, ti->min_reader_version);
        fprintf(o, "pointer size:      %u\n", ti->pointer_size);
        fprintf(o, "process id:        %u\n", ti->process_id);
        fprintf(o, "processors:        %u\n", ti->processor_count);
        fprintf(o, "clock:             %" PRId64 " Hz, sync at %" PRId64 " = %04u-%02u-%02u %02u:%02u:%02u.%03u UTC\n",
                ti->qpc_frequency, ti->sync_qpc, ti->sync_time_utc.year, ti->sync_time_utc.month,
                ti->sync_time_utc.day, ti->sync_time_utc.hour, ti->sync_time_utc.minute, ti->sync_time_utc.second,
                ti->sync_time_utc.milliseconds);
        span sp = trace_span(ti, st);
        char utc[40], d[32];
        cli_format_duration(d, sizeof d, ti->sampling_interval_ns);
        fprintf(o, "sampling interval: %s\n", d);
        cli_format_utc(utc, sizeof utc, &ti->sync_time_utc);
        fprintf(o, "start:             %s (trace clock %" PRId64 " ns)\n", utc, sp.start_ns);
        if (sp.has_end) {
            cli_format_duration(d, sizeof d, cm_sat_sub(sp.end_ns, sp.start_ns));
            fprintf(o, "end:               +%s, the last event (trace clock %" PRId64 " ns)\n", d, sp.end_ns);
            fprintf(o, "duration:          %s\n", d);
        }
    } else if (nt_parser_format_version(p)) {
        fprintf(o, "format:            version %u, not read\n", nt_parser_format_version(p));
    }
    fprintf(o, "bytes:             %s (%s) in %s blocks\n", cli_count(ps->bytes).s, cli_bytes(ps->bytes).s,
            cli_count(ps->blocks).s);
    fprintf(o, "events:            %s (%s dropped)\n", cli_count(ps->events).s, cli_count(ps->events_dropped).s);
    fprintf(o, "metadata:          %s\n", cli_count(ps->metadata).s);
    fprintf(o, "stacks:            %s\n", cli_count(ps->stacks).s);
    fprintf(o, "sequence points:   %s\n", cli_count(ps->sequence_points).s);
    fprintf(o, "samples:           %s on %s thread%s\n", cli_count(ps->samples).s,
            cli_count(st->sampled_threads.count).s, st->sampled_threads.count == 1 ? "" : "s");
    fprintf(o, "method records:    %s\n", cli_count(ps->methods).s);
    fprintf(o, "module records:    %s\n", cli_count(ps->modules).s);
    fprintf(o, "assembly records:  %s\n", cli_count(ps->assemblies).s);
    if (st->types.n) {
        fprintf(o, "event types:\n  %10s  %5s  %3s  %-40s %s\n", "count", "id", "ver", "provider", "name");
        for (size_t i = 0; i < st->types.n; i++) {
            char prov[512], name[512];
            cm_text_escape(prov, sizeof prov, st->types.types[i].provider, "");
            cm_text_escape(name, sizeof name, st->types.types[i].name, "");
            fprintf(o, "  %10s  %5u  %3u  %-40s %s\n", cli_count(st->types.types[i].count).s,
                    st->types.types[i].event_id, st->types.types[i].version, prov, name);
        }
    }
}

int cmd_info(int argc, char **argv)
{
    bool json;
    const char *path;
    int rc = cli_json_file_args(argc, argv, usage, &json, &path);
    if (rc >= 0)
        return rc;
    info_state st = { 0 };
    cm_mem_init(&st.mem, NULL);
    cli_event_types_init(&st.types);
    nt_callbacks cb = { 0 };
    cb.metadata = on_metadata;
    cb.event = on_event;
    cb.sample = on_sample;
    nt_parser *p = nt_parser_new(&cb, &st, NULL, NULL);
    if (!p) {
        fprintf(stderr, "nettrace: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    char err[512];
    nt_status s = cli_feed_path(p, path, err, sizeof err);
    if (s == NT_ERR_IO || st.oom) {
        fprintf(stderr, "nettrace info: %s\n", st.oom ? "out of memory" : err);
        rc = CLI_EXIT_ERROR;
    } else {
        nt_parser_stats ps = { 0 };
        nt_parser_stats_get(p, &ps);
        cli_event_types_finish(&st.types);
        if (json)
            print_json(stdout, s, nt_parser_trace_info(p), &ps, &st, p, err);
        else
            print_text(stdout, path, s, p, &ps, &st, err);
        if (s != NT_OK && !json)
            fprintf(stderr, "nettrace: %s: %s\n", path, err);
        rc = cli_exit_code(s);
    }
    cli_event_types_free(&st.types);
    cm_map_free(&st.mem, &st.sampled_threads);
    nt_parser_free(p);
    return rc;
}
