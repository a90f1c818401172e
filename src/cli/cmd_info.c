/* nettrace info [--json] FILE: header fields and counts, for checking the
 * parser from a shell.  Counts cover what was read, also when the stream is
 * truncated or damaged. */
#include "cli/cli.h"
#include "cli/json.h"
#include "common/map.h"

#include <stdlib.h>

#include <getopt.h>
#include <inttypes.h>
#include <string.h>

typedef struct event_type {
    char *provider;
    char *name;            /* the first description's name for this (provider, id, version) */
    uint32_t event_id, version;
    uint64_t count;
} event_type;

typedef struct info_state {
    event_type *types;
    size_t ntypes, cap;
    nt_mem mem;            /* the maps' allocations */
    nt_map type_of_meta;   /* metadata id -> index + 1 in types */
    nt_map sampled_threads;
    bool oom;
} info_state;

static int on_metadata(void *user, const nt_event_desc *d)
{
    info_state *st = user;
    size_t idx = st->ntypes;
    for (size_t i = 0; i < st->ntypes; i++) {
        if (st->types[i].event_id == d->event_id && st->types[i].version == d->version &&
            strcmp(st->types[i].provider, d->provider) == 0) {
            idx = i;
            break;
        }
    }
    if (idx == st->ntypes) {
        if (st->ntypes == st->cap) {
            size_t ncap = st->cap ? st->cap * 2 : 64;
            event_type *n = realloc(st->types, ncap * sizeof *n);
            if (!n)
                return st->oom = true;
            st->types = n;
            st->cap = ncap;
        }
        char *prov = strdup(d->provider);
        char *name = strdup(d->name ? d->name : "");
        if (!prov || !name) {
            free(prov);
            free(name);
            return st->oom = true;
        }
        st->types[st->ntypes++] = (event_type){ prov, name, d->event_id, d->version, 0 };
    }
    uint64_t *v = nt_map_put(&st->mem, &st->type_of_meta, d->metadata_id, NULL);
    if (!v)
        return st->oom = true;
    *v = idx + 1;
    return 0;
}

static int on_event(void *user, const nt_event *ev)
{
    info_state *st = user;
    uint64_t *v = nt_map_put(&st->mem, &st->type_of_meta, ev->metadata_id, NULL);
    if (!v)
        return st->oom = true;
    if (*v)
        st->types[*v - 1].count++;
    return 0;
}

static int on_sample(void *user, const nt_sample *s)
{
    info_state *st = user;
    if (!nt_map_put(&st->mem, &st->sampled_threads, s->thread_id, NULL))
        return st->oom = true;
    return 0;
}

static int cmp_type(const void *a, const void *b)
{
    const event_type *x = a, *y = b;
    int c = strcmp(x->provider, y->provider);
    if (c)
        return c;
    if (x->event_id != y->event_id)
        return x->event_id < y->event_id ? -1 : 1;
    if (x->version != y->version)
        return x->version < y->version ? -1 : 1;
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

static void print_json(FILE *o, nt_status s, const nt_trace_info *ti, const nt_parser_stats *ps, info_state *st,
                       const nt_parser *p)
{
    fputs("{\n  \"status\": ", o);
    json_string(o, nt_status_name(s));
    fputs(",\n  \"message\": ", o);
    json_string(o, s == NT_OK ? NULL : nt_parser_message(p));
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
    } else {
        fputs(",\n  \"format_version\": null,\n  \"pointer_size\": null,\n  \"process_id\": null,\n"
              "  \"processor_count\": null,\n  \"qpc_frequency\": null,\n  \"sync_qpc\": null,\n"
              "  \"sync_time_utc\": null,\n  \"sampling_interval_ns\": null",
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
    for (size_t i = 0; i < st->ntypes; i++) {
        fputs(i ? ",\n    {\"provider\": " : "\n    {\"provider\": ", o);
        json_string(o, st->types[i].provider);
        fprintf(o, ", \"event_id\": %u, \"version\": %u, \"name\": ", st->types[i].event_id, st->types[i].version);
        json_string(o, st->types[i].name);
        fprintf(o, ", \"count\": %" PRIu64 "}", st->types[i].count);
    }
    fputs(st->ntypes ? "\n  ]" : "]", o);
    if (s == NT_ERR_TRUNCATED)
        fprintf(o, ",\n  \"truncated_at\": %" PRIu64 "\n}\n", nt_parser_error_offset(p));
    else
        fputs(",\n  \"truncated_at\": null\n}\n", o);
}

static void print_text(FILE *o, const char *path, nt_status s, const nt_trace_info *ti, const nt_parser_stats *ps,
                       info_state *st, const nt_parser *p)
{
    fprintf(o, "file:              %s\n", path);
    fprintf(o, "status:            %s\n", s == NT_OK ? "ok" : nt_parser_message(p));
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
        fprintf(o, "sampling interval: %u ns\n", ti->sampling_interval_ns);
    }
    fprintf(o, "bytes:             %" PRIu64 " in %" PRIu64 " blocks\n", ps->bytes, ps->blocks);
    fprintf(o, "events:            %" PRIu64 " (%" PRIu64 " dropped)\n", ps->events, ps->events_dropped);
    fprintf(o, "metadata:          %" PRIu64 "\n", ps->metadata);
    fprintf(o, "stacks:            %" PRIu64 "\n", ps->stacks);
    fprintf(o, "sequence points:   %" PRIu64 "\n", ps->sequence_points);
    fprintf(o, "samples:           %" PRIu64 " on %zu threads\n", ps->samples, st->sampled_threads.count);
    fprintf(o, "method records:    %" PRIu64 "\n", ps->methods);
    fprintf(o, "module records:    %" PRIu64 "\n", ps->modules);
    fprintf(o, "assembly records:  %" PRIu64 "\n", ps->assemblies);
    if (st->ntypes) {
        fprintf(o, "event types:\n  %10s  %5s  %3s  %-40s %s\n", "count", "id", "ver", "provider", "name");
        for (size_t i = 0; i < st->ntypes; i++)
            fprintf(o, "  %10" PRIu64 "  %5u  %3u  %-40s %s\n", st->types[i].count, st->types[i].event_id,
                    st->types[i].version, st->types[i].provider, st->types[i].name);
    }
}

int cmd_info(int argc, char **argv)
{
    static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    bool json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default: usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *path = argv[optind];

    info_state st = { 0 };
    nt_mem_init(&st.mem, NULL);
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
    int rc;
    if (s == NT_ERR_IO) {
        fprintf(stderr, "nettrace: %s\n", err);
        rc = CLI_EXIT_ERROR;
    } else {
        nt_parser_stats ps;
        nt_parser_stats_get(p, &ps);
        if (st.ntypes) /* qsort with a NULL base is undefined even for 0 elements */
            qsort(st.types, st.ntypes, sizeof *st.types, cmp_type);
        if (json)
            print_json(stdout, s, nt_parser_trace_info(p), &ps, &st, p);
        else
            print_text(stdout, path, s, nt_parser_trace_info(p), &ps, &st, p);
        if (s != NT_OK && !json)
            fprintf(stderr, "nettrace: %s: %s\n", path, nt_parser_message(p));
        rc = cli_exit_code(s);
    }
    for (size_t i = 0; i < st.ntypes; i++) {
        free(st.types[i].provider);
        free(st.types[i].name);
    }
    free(st.types);
    nt_map_free(&st.mem, &st.type_of_meta);
    nt_map_free(&st.mem, &st.sampled_threads);
    nt_parser_free(p);
    return rc;
}
