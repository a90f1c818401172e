/* nettrace index [--json] [--blocks] FILE: the block index of a trace, read
 * from block headers only (nt_index): blocks by kind, the time span the
 * event blocks state, and an estimate of the events and samples before any
 * event is decoded. */
#include "cli/cli.h"
#include "common/json.h"
#include "nettrace_index.h"

#include <getopt.h>
#include <inttypes.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace index [--json] [--blocks] FILE\n"
          "\n"
          "Read a trace's block headers only and print what they say: blocks and bytes\n"
          "by kind, the time span the event blocks state, and the events and samples\n"
          "the file holds, counted in a spread of event blocks and scaled by bytes\n"
          "(exact when every event block was counted).  FILE must be a regular file.\n"
          "\n"
          "  --json     one JSON object instead of text\n"
          "  --blocks   also list every block: offset, kind, size, interval, time range\n"
          "  -h, --help this help\n",
          f);
}

static double ticks_s(int64_t ticks, int64_t freq)
{
    return freq > 0 ? (double)ticks / (double)freq : 0.0;
}

static void print_text(FILE *o, const nt_index *ix, const nt_index_summary *s, bool blocks)
{
    fprintf(o, "format: %s\n", s->format_major == 6 ? "NetTrace V6" : "NetTrace V4/V5");
    fprintf(o, "bytes indexed: %" PRIu64 "%s\n", s->stream_bytes, s->complete ? "" : " (the stream did not end cleanly)");
    fprintf(o, "bytes read to index them: %" PRIu64 " (%.1f %%)\n", s->bytes_read,
            s->stream_bytes ? 100.0 * (double)s->bytes_read / (double)s->stream_bytes : 0.0);
    fprintf(o, "%-16s %10s %14s\n", "block kind", "blocks", "bytes");
    for (int k = 0; k < NT_INDEX_KIND_COUNT; k++)
        if (s->blocks[k])
            fprintf(o, "%-16s %10" PRIu64 " %14" PRIu64 "\n", nt_index_kind_name((nt_index_kind)k), s->blocks[k], s->bytes[k]);
    if (s->blocks[NT_INDEX_EVENT])
        fprintf(o, "event time span: %.6f s (as the event block headers state)\n",
                ticks_s(s->max_ticks - s->min_ticks, s->qpc_frequency));
    else
        fputs("event time span: none (no event block)\n", o);
    fprintf(o, "events: %s%" PRIu64 " (counted in %" PRIu64 " of %" PRIu64 " event blocks)\n",
            s->estimate_exact ? "" : "about ", s->events_estimate, s->sampled_event_blocks, s->blocks[NT_INDEX_EVENT]);
    fprintf(o, "thread samples: %s%" PRIu64 "\n", s->estimate_exact ? "" : "about ", s->samples_estimate);
    if (!blocks)
        return;
    fprintf(o, "\n%12s %-15s %10s %8s %20s %20s\n", "offset", "kind", "bytes", "interval", "min_ticks", "max_ticks");
    for (size_t i = 0; i < nt_index_block_count(ix); i++) {
        const nt_index_block *b = nt_index_block_at(ix, i);
        fprintf(o, "%12" PRIu64 " %-15s %10u %8u %20" PRId64 " %20" PRId64 "\n", b->offset,
                nt_index_kind_name((nt_index_kind)b->kind), b->body_size, b->interval, b->min_ticks, b->max_ticks);
    }
}

static void print_json(FILE *o, const nt_index *ix, const nt_index_summary *s, bool blocks, nt_status st,
                       const char *msg)
{
    fprintf(o, "{\"format_major\":%u,\"stream_bytes\":%" PRIu64 ",\"bytes_read\":%" PRIu64 ",\"complete\":%s,\"status\":",
            s->format_major, s->stream_bytes, s->bytes_read, s->complete ? "true" : "false");
    cm_json_fputs(o, nt_status_name(st));
    if (st) {
        fputs(",\"message\":", o);
        cm_json_fputs(o, msg);
    }
    fputs(",\"kinds\":{", o);
    bool first = true;
    for (int k = 0; k < NT_INDEX_KIND_COUNT; k++) {
        if (!s->blocks[k])
            continue;
        fprintf(o, "%s\"%s\":{\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", first ? "" : ",",
                nt_index_kind_name((nt_index_kind)k), s->blocks[k], s->bytes[k]);
        first = false;
    }
    fprintf(o, "},\"qpc_frequency\":%" PRId64 ",\"min_ticks\":%" PRId64 ",\"max_ticks\":%" PRId64
               ",\"sampled_event_blocks\":%" PRIu64 ",\"events_estimate\":%" PRIu64 ",\"samples_estimate\":%" PRIu64
               ",\"estimate_exact\":%s",
            s->qpc_frequency, s->min_ticks, s->max_ticks, s->sampled_event_blocks, s->events_estimate,
            s->samples_estimate, s->estimate_exact ? "true" : "false");
    if (blocks) {
        fputs(",\"blocks\":[", o);
        for (size_t i = 0; i < nt_index_block_count(ix); i++) {
            const nt_index_block *b = nt_index_block_at(ix, i);
            fprintf(o, "%s{\"offset\":%" PRIu64 ",\"kind\":\"%s\",\"bytes\":%u,\"interval\":%u,\"min_ticks\":%" PRId64
                       ",\"max_ticks\":%" PRId64 "}",
                    i ? "," : "", b->offset, nt_index_kind_name((nt_index_kind)b->kind), b->body_size, b->interval,
                    b->min_ticks, b->max_ticks);
        }
        fputc(']', o);
    }
    fputs("}\n", o);
}

int cmd_index(int argc, char **argv)
{
    static const struct option LONG[] = {
        { "json", no_argument, NULL, 'j' }, { "blocks", no_argument, NULL, 'b' }, { "help", no_argument, NULL, 'h' }, { 0 }
    };
    bool json = false, blocks = false;
    int c;
    while ((c = getopt_long(argc, argv, "h", LONG, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'b': blocks = true; break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default: usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    char msg[256];
    nt_index *ix = NULL;
    nt_status st = nt_index_from_file(argv[optind], NULL, &ix, msg, sizeof msg);
    if (!ix) {
        fprintf(stderr, "nettrace index: %s\n", msg[0] ? msg : nt_status_describe(st));
        return st == NT_ERR_IO || st == NT_ERR_INVALID_ARG ? CLI_EXIT_ERROR : cli_exit_code(st);
    }
    nt_index_summary s = { 0 };
    nt_index_summarize(ix, &s);
    if (json)
        print_json(stdout, ix, &s, blocks, st, msg);
    else
        print_text(stdout, ix, &s, blocks);
    if (st)
        fprintf(stderr, "nettrace index: %s (the blocks before it are listed)\n", msg);
    nt_index_free(ix);
    return st ? cli_exit_code(st) : CLI_EXIT_OK;
}
