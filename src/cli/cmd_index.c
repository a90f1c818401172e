/* nettrace index [--json] [--blocks] [--no-sidecar] FILE: the block index of
 * a trace (nt_index): blocks by kind, the time span the event blocks state,
 * and the events and samples, saved beside the trace as FILE.ntidx for the
 * windowed reads of later commands (--from/--to).  --no-sidecar reads block
 * headers only and estimates the counts from a spread of event blocks. */
#include "cli/cli.h"
#include "common/json.h"
#include "nettrace_index.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace index [--json] [--blocks] [--no-sidecar] FILE\n"
          "\n"
          "Index a trace and print what its blocks say: blocks and bytes by kind, the\n"
          "time span the event blocks state, and the events and samples the file holds.\n"
          "Every event header is walked once (the counts are exact) to learn which\n"
          "blocks hold method, module and assembly events, and the index is saved\n"
          "beside the trace as FILE.ntidx (replaced only when it is such a sidecar).\n"
          "Later --from/--to reads of top, stacks, samples, events and the profiles\n"
          "use it to read only the blocks their window needs, while it matches the\n"
          "trace (size, modification time, head and tail, a spread of block headers).\n"
          "FILE must be a regular file.\n"
          "\n"
          "  --json        one JSON object instead of text\n"
          "  --blocks      also list every block: offset, kind, size, interval, time range\n"
          "  --no-sidecar  write nothing: read block headers only and estimate the\n"
          "                counts from a spread of event blocks, scaled by bytes\n"
          "  -h, --help    this help\n",
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
    if (s->estimate_exact)
        fprintf(o, "method, module and assembly events kept for windowed reads: %" PRIu64 " (%" PRIu64 " bytes)\n",
                s->kept_records, s->kept_record_bytes);
    if (!blocks)
        return;
    fprintf(o, "\n%12s %-15s %10s %8s %20s %20s\n", "offset", "kind", "bytes", "interval", "min_ticks", "max_ticks");
    for (size_t i = 0; i < nt_index_block_count(ix); i++) {
        const nt_index_block *b = nt_index_block_at(ix, i);
        fprintf(o, "%12" PRIu64 " %-15s %10u %8u %20" PRId64 " %20" PRId64 "%s\n", b->offset,
                nt_index_kind_name((nt_index_kind)b->kind), b->body_size, b->interval, b->min_ticks, b->max_ticks,
                b->flags & NT_INDEX_BLOCK_RECORDS_KEPT ? " records (kept)"
                : b->flags & NT_INDEX_BLOCK_RECORDS  ? " records"
                                                     : "");
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
               ",\"estimate_exact\":%s,\"kept_records\":%" PRIu64 ",\"kept_record_bytes\":%" PRIu64,
            s->qpc_frequency, s->min_ticks, s->max_ticks, s->sampled_event_blocks, s->events_estimate,
            s->samples_estimate, s->estimate_exact ? "true" : "false", s->kept_records, s->kept_record_bytes);
    if (blocks) {
        fputs(",\"blocks\":[", o);
        for (size_t i = 0; i < nt_index_block_count(ix); i++) {
            const nt_index_block *b = nt_index_block_at(ix, i);
            fprintf(o, "%s{\"offset\":%" PRIu64 ",\"kind\":\"%s\",\"bytes\":%u,\"interval\":%u,\"min_ticks\":%" PRId64
                       ",\"max_ticks\":%" PRId64 ",\"records\":%s,\"records_kept\":%s}",
                    i ? "," : "", b->offset, nt_index_kind_name((nt_index_kind)b->kind), b->body_size, b->interval,
                    b->min_ticks, b->max_ticks, b->flags & NT_INDEX_BLOCK_RECORDS ? "true" : "false",
                    b->flags & NT_INDEX_BLOCK_RECORDS_KEPT ? "true" : "false");
        }
        fputc(']', o);
    }
    fputs("}\n", o);
}

static int write_sidecar(void *user, const void *data, size_t len)
{
    cli_out_file *o = user;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(o->fd, (const char *)data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

/* FILE.ntidx, written beside the trace through a temporary file renamed over
 * it; an existing file of that name is replaced only when it is a sidecar. */
static bool save_sidecar(const char *path, const nt_index *ix)
{
    size_t n = strlen(path);
    char *name = malloc(n + sizeof NT_INDEX_SIDECAR_SUFFIX);
    if (!name) {
        fputs("nettrace index: out of memory\n", stderr);
        return false;
    }
    memcpy(name, path, n);
    memcpy(name + n, NT_INDEX_SIDECAR_SUFFIX, sizeof NT_INDEX_SIDECAR_SUFFIX);
    bool ok = false;
    int fd = open(name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0 || errno != ENOENT) {
        char magic[8] = { 0 };
        bool ours = fd >= 0 && pread(fd, magic, sizeof magic, 0) == (ssize_t)sizeof magic &&
                    memcmp(magic, "ntindex", 8) == 0;
        if (fd >= 0)
            close(fd);
        if (!ours) {
            fprintf(stderr, "nettrace index: %s exists and is not an index sidecar: not replaced "
                            "(move it, or use --no-sidecar)\n", name);
            free(name);
            return false;
        }
    }
    const char *inputs[] = { path };
    cli_out_rules rules = { .cmd = "index", .inputs = inputs, .input_count = 1 };
    cli_out_file o;
    if (cli_out_file_open(&o, name, &rules)) {
        nt_status s = nt_index_save(ix, write_sidecar, &o);
        if (s != NT_OK)
            fprintf(stderr, "nettrace index: writing %s failed: %s\n", name, nt_status_describe(s));
        ok = cli_out_file_close(&o, "index", s == NT_OK) && s == NT_OK;
    }
    free(name);
    return ok;
}

int cmd_index(int argc, char **argv)
{
    static const struct option LONG[] = {
        { "json", no_argument, NULL, 'j' }, { "blocks", no_argument, NULL, 'b' },
        { "no-sidecar", no_argument, NULL, 'n' }, { "help", no_argument, NULL, 'h' }, { 0 }
    };
    bool json = false, blocks = false, sidecar = true;
    int c;
    while ((c = getopt_long(argc, argv, "h", LONG, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'b': blocks = true; break;
        case 'n': sidecar = false; break;
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
    const char *path = argv[optind];
    nt_index_options opt = { .struct_size = sizeof opt, .sample_blocks = sidecar ? NT_INDEX_WALK_ALL : 0 };
    nt_status st = nt_index_from_file(path, &opt, &ix, msg, sizeof msg);
    if (!ix) {
        fprintf(stderr, "nettrace index: %s\n", msg[0] ? msg : nt_status_describe(st));
        return st == NT_ERR_IO || st == NT_ERR_INVALID_ARG ? CLI_EXIT_ERROR : cli_exit_code(st);
    }
    nt_index_summary s = { .struct_size = sizeof s }; /* the fields after the first layout too (kept records) */
    nt_index_summarize(ix, &s);
    if (json)
        print_json(stdout, ix, &s, blocks, st, msg);
    else
        print_text(stdout, ix, &s, blocks);
    if (st)
        fprintf(stderr, "nettrace index: %s (the blocks before it are listed; no sidecar is written)\n", msg);
    int rc = st ? cli_exit_code(st) : CLI_EXIT_OK;
    if (sidecar && !st) {
        if (!save_sidecar(path, ix))
            rc = CLI_EXIT_ERROR;
        else if (!json)
            printf("sidecar: %s%s (later --from/--to reads use it)\n", path, NT_INDEX_SIDECAR_SUFFIX);
    }
    nt_index_free(ix);
    return rc;
}
