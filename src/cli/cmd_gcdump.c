/* nettrace gcdump -p PID | -n NAME [-o FILE]: take a heap snapshot of a
 * running .NET process as dotnet-gcdump does (a short session first, whose
 * end makes the runtime forget which types it has named, so that the
 * snapshot names them all again; then Microsoft-Windows-DotNETRuntime at
 * Verbose with keywords 0x1980001, which induces a blocking gen-2 GC that
 * walks the heap), stop once that GC has ended, and write the events as a
 * .nettrace that 'nettrace heap' reads.  The stream is read while it is
 * written (the heap builder on the same bytes), so the end of the GC is seen
 * and the counts are reported, with lost events and an incomplete graph
 * said as such. */
#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/session_opts.h"
#include "cli/session_pump.h"
#include "nettrace_heap.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace gcdump -p PID | -n NAME [OPTIONS]\n"
          "\n"
          "Take a heap snapshot of a running .NET process: the runtime walks its heap\n"
          "during an induced, blocking gen-2 GC and sends every object, reference and\n"
          "root (Microsoft-Windows-DotNETRuntime, keywords 0x1980001, Verbose).  The\n"
          "events are written as a .nettrace; read it with 'nettrace heap FILE'.\n"
          "\n"
          "  -p, --pid PID        the process\n"
          "  -n, --name NAME      the process whose command name, program file name or\n"
          "                         entry assembly is NAME\n"
          "  -o, --output FILE    where to write (default gcdump-PID.nettrace); an\n"
          "                         existing file is never overwritten\n"
          "      --timeout T      how long the dump may take (default 60 s)\n"
          "      --buffer-mb N    the runtime's session buffer, 1..65535 MB (default 1024,\n"
          "                         as dotnet-gcdump; a large heap's burst of events\n"
          "                         overruns a small one and the graph loses references)\n"
          "  -q, --quiet          no progress messages\n"
          "  -h, --help           this help\n"
          "\n"
          "The session asks for non-lossy buffers (CollectTracing6: the runtime waits\n"
          "for this reader instead of dropping events; .NET 11 and later).  An older\n"
          "runtime's buffer is lossy (events are dropped when it is full): the summary\n"
          "says which buffering the runtime gave, how many events were lost and\n"
          "whether the graph is whole.\n",
          f);
}

/* The stream goes to the file and, as it comes, through the heap builder. */
typedef struct dump_sink {
    int fd;
    nt_parser *parser;
    nt_heap_builder *builder;
    bool parse_failed;
} dump_sink;

static int dump_write(void *user, const void *data, size_t len)
{
    dump_sink *k = user;
    if (nt_sink_fd(&k->fd, data, len) != 0)
        return -1;
    if (!k->parse_failed && nt_parser_feed(k->parser, data, len) != NT_OK)
        k->parse_failed = true; /* the file keeps every byte; the summary says the read failed */
    return 0;
}

static int discard(void *user, const void *data, size_t len)
{
    (void)data;
    *(size_t *)user += len;
    return 0;
}

static bool got_bytes(void *user) { return *(size_t *)user > 0; }
static bool dump_done(void *user) { return nt_heap_builder_done(((dump_sink *)user)->builder); }

/* The first session: stopping it makes the runtime name every type again in the next. */
static void flush_type_table(int32_t pid, bool quiet)
{
    size_t bytes = 0;
    nt_provider prov = { .name = "Microsoft-DotNETCore-SampleProfiler", .keywords = 0, .level = 4 };
    nt_session_config cfg = { 0 };
    cfg.providers = &prov;
    cfg.provider_count = 1;
    cfg.no_rundown = true;
    cfg.sink = discard;
    cfg.sink_user = &bytes;
    nt_session *s;
    char why[512];
    if (cli_session_begin(pid, &cfg, &s, why, sizeof why) != NT_OK) {
        if (!quiet)
            fprintf(stderr, "nettrace gcdump: the type-table flush session did not start (%s): types named in "
                            "an earlier session may show as UNKNOWN\n", why);
        return;
    }
    bool ended;
    nt_status final;
    cli_pump_until(s, got_bytes, &bytes, nt_deadline_after_ms(2000), 0, &ended, &final);
    nt_session_stop(s, nt_deadline_after_ms(10000));
    cli_session_end(s);
}

/* The buffering the runtime gave the dump's session, as the tool says it. */
static const char *buffering_said(nt_buffering got)
{
    return got == NT_BUFFERING_BLOCK ? "non-lossy (blocking buffers)"
                                     : "lossy: the runtime does not support CollectTracing6 (.NET 11+); the graph "
                                       "may be incomplete on large heaps";
}

static void report(const nt_heap *h, const char *path, uint64_t bytes, nt_status stream, nt_buffering got)
{
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    printf("nettrace gcdump: wrote %s (%" PRIu64 " bytes): %" PRIu64 " objects, %" PRIu64 " bytes of objects, %" PRIu64
           " references, %" PRIu64 " roots; %" PRIu64 " events lost (buffering: %s)\n",
           path, bytes, st.objects, st.total_bytes, st.edges, st.roots, st.events_dropped, buffering_said(got));
    if (stream != NT_OK)
        printf("nettrace gcdump: the stream did not read cleanly: %s\n", nt_status_describe(stream));
    if (!st.gc_found)
        printf("nettrace gcdump: INCOMPLETE: no heap dump GC was seen\n");
    else if (!st.complete)
        printf("nettrace gcdump: INCOMPLETE: %s\n", nt_heap_message(h));
}

typedef struct gcdump_args {
    int32_t pid;
    const char *name, *output;
    int64_t timeout_ns;
    uint64_t buffer_mb;
    bool quiet;
} gcdump_args;

static int parse(int argc, char **argv, gcdump_args *a)
{
    static const struct option opts[] = { { "pid", required_argument, NULL, 'p' },
                                           { "name", required_argument, NULL, 'n' },
                                           { "output", required_argument, NULL, 'o' },
                                           { "timeout", required_argument, NULL, 't' },
                                           { "buffer-mb", required_argument, NULL, 'b' },
                                           { "quiet", no_argument, NULL, 'q' },
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqp:n:o:", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (!cli_pid_option("gcdump", optarg, &a->pid))
                return CLI_EXIT_USAGE;
            break;
        case 'n': a->name = optarg; break;
        case 'o': a->output = optarg; break;
        case 't':
            if (!cli_duration_option("gcdump", "--timeout", optarg, 1000000000, INT64_MAX / 2, &a->timeout_ns))
                return CLI_EXIT_USAGE;
            break;
        case 'b':
            if (!cli_u64_option("gcdump", "--buffer-mb", optarg, 1, 65535, &a->buffer_mb))
                return CLI_EXIT_USAGE;
            break;
        case 'q': a->quiet = true; break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default: usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if ((a->pid != 0) == (a->name != NULL) || optind != argc) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    return -1;
}

/* The dump session on an open output: pump until the GC ended, stop, finish the heap. */
static int dump(const gcdump_args *a, dump_sink *k, const char *path)
{
    nt_provider prov = { .name = NT_PROVIDER_RUNTIME, .keywords = NT_HEAP_KEYWORDS, .level = 5 };
    nt_session_config cfg = NT_STRUCT_INIT(nt_session_config);
    cfg.providers = &prov;
    cfg.provider_count = 1;
    cfg.buffer_mb = (uint32_t)a->buffer_mb;
    cfg.no_stackwalk = true;
    cfg.max_stream_bytes = UINT64_MAX / 2;
    cfg.sink = dump_write;
    cfg.sink_user = k;
    cfg.buffering = NT_BUFFERING_BLOCK; /* non-lossy where the runtime can (.NET 11+), else what it has */
    int64_t deadline = nt_now_ns() + a->timeout_ns;
    nt_session *s;
    char why[512];
    nt_status st = cli_session_begin(a->pid, &cfg, &s, why, sizeof why);
    if (st != NT_OK) {
        fprintf(stderr, "nettrace gcdump: cannot start the session with pid %d: %s\n", (int)a->pid, why);
        return cli_exit_code(st);
    }
    nt_buffering got = nt_session_buffering(s);
    if (!a->quiet)
        fprintf(stderr, "nettrace gcdump: pid %d -> %s (%s): waiting for the heap dump's GC...\n", (int)a->pid, path,
                buffering_said(got));
    bool ended = false;
    nt_status final = NT_OK;
    nt_status w = cli_pump_until(s, dump_done, k, deadline, 0, &ended, &final);
    if (w == NT_ERR_TIMEOUT)
        fprintf(stderr, "nettrace gcdump: the heap dump did not end within the timeout: stopping with what came\n");
    if (!ended) {
        if (!a->quiet)
            fprintf(stderr, "nettrace gcdump: the GC ended; stopping (rundown names the modules)...\n");
        cli_session_drain(s, &ended, &final); /* a second Ctrl-C abandons the stop */
    }
    uint64_t bytes = nt_session_bytes(s);
    cli_session_end(s);
    nt_status ps = k->parse_failed ? nt_parser_status(k->parser) : nt_parser_finish(k->parser);
    nt_heap *h = NULL;
    nt_status fs = nt_heap_builder_finish(k->builder, k->parser, ps, &h);
    k->builder = NULL;
    if (fs != NT_OK) {
        fprintf(stderr, "nettrace gcdump: out of memory reading the snapshot back\n");
        return CLI_EXIT_ERROR;
    }
    report(h, path, bytes, ps, got);
    nt_heap_stats hs = { 0 };
    nt_heap_stats_get(h, &hs);
    nt_heap_free(h);
    if (w == NT_ERR_CANCELLED || !hs.gc_found)
        return CLI_EXIT_ERROR;
    return hs.complete ? CLI_EXIT_OK : CLI_EXIT_INCOMPLETE;
}

int cmd_gcdump(int argc, char **argv)
{
    gcdump_args a = { .timeout_ns = 60 * 1000000000ll, .buffer_mb = 1024 };
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (a.name && (rc = cli_pid_by_name("gcdump", a.name, &a.pid, 0)) != CLI_EXIT_OK)
        return rc;
    char defname[64];
    snprintf(defname, sizeof defname, "gcdump-%d.nettrace", (int)a.pid);
    const char *path = a.output ? a.output : defname;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "nettrace gcdump: %s: %s%s\n", path, strerror(errno),
                errno == EEXIST ? " (not overwritten: remove it or choose another name with -o)" : "");
        return CLI_EXIT_ERROR;
    }
    cli_interrupts_install();
    flush_type_table(a.pid, a.quiet);
    dump_sink k = { fd, NULL, NULL, false };
    nt_callbacks cb;
    nt_heap_builder_callbacks(&cb);
    k.builder = nt_heap_builder_new(NULL, NULL);
    k.parser = k.builder ? nt_parser_new(&cb, k.builder, NULL, NULL) : NULL;
    if (!k.parser) {
        fprintf(stderr, "nettrace gcdump: out of memory\n");
        nt_heap_builder_free(k.builder);
        close(fd);
        return CLI_EXIT_ERROR;
    }
    rc = dump(&a, &k, path);
    nt_heap_builder_free(k.builder);
    nt_parser_free(k.parser);
    struct stat sb;
    bool empty = fstat(fd, &sb) == 0 && sb.st_size == 0;
    if (close(fd) != 0 && rc == CLI_EXIT_OK) {
        fprintf(stderr, "nettrace gcdump: %s: %s\n", path, strerror(errno));
        rc = CLI_EXIT_ERROR;
    }
    if (empty)
        unlink(path); /* the file this command made holds nothing: no empty snapshot is left behind */
    return rc;
}
