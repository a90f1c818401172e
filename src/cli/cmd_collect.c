/* nettrace collect: write a .NET process's EventPipe stream to a .nettrace
 * file -- a running process (-p PID, -n NAME) or a program started here
 * (-- PROGRAM ARGS) with its runtime suspended until the session runs, so
 * the trace covers its startup.  Ctrl-C (or --duration) stops the session
 * cleanly, rundown included, so the file's frames resolve; a second Ctrl-C
 * abandons it, leaving a truncated file whose complete blocks read. */
#include "cli/cli.h"
#include "cli/collect.h"
#include "cli/keywords.h"
#include "cli/opts.h"
#include "cli/profile_presets.h"
#include "cli/session_opts.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_S 1000000000ll
#define MAX_SECONDS (10000000ll * NS_PER_S)

static void collect_usage(FILE *f)
{
    fputs("usage: nettrace collect -p PID | -n NAME [OPTIONS]\n"
          "       nettrace collect [OPTIONS] -- PROGRAM [ARGS...]\n"
          "\n"
          "Write a .NET process's EventPipe stream to a .nettrace file.  With -- PROGRAM,\n"
          "the program is started with its runtime suspended on a diagnostic port until\n"
          "the session runs, so the trace covers its startup; collection ends when its\n"
          "runtime exits (the program's exit status is then nettrace's), at --duration\n"
          "or on Ctrl-C (the program's process group is then ended: SIGTERM, SIGKILL\n"
          "5 s later).  .NET processes the program starts are resumed, not traced.\n"
          "Ctrl-C stops cleanly, with rundown; a second Ctrl-C abandons the session\n"
          "(the file is then truncated).\n"
          "On a terminal a live counter shows the bytes and events written.\n"
          "\n"
          "  -p, --pid PID          the process to attach to\n"
          "  -n, --name NAME        the process whose command name, program file name or\n"
          "                           entry assembly is NAME (refused when several match)\n"
          "  -o, --output FILE      where to write ('-': standard output, for a pipe into\n"
          "                           'nettrace top -'; default NAME_YYYYMMDD_HHMMSS.nettrace\n"
          "                           in the current directory, NAME the process's or\n"
          "                           PROGRAM's name, local time; the file gets its name\n"
          "                           when the collection ends)\n"
          "      --force            replace FILE even when it holds a trace\n"
          "  -d, --duration T       stop after T (seconds, or with a unit: 500ms, 2m;\n"
          "                           default: until Ctrl-C or the end of the stream)\n"
          "      --providers LIST   Name[:keywords[:level[:args]]],... (default: the sample\n"
          "                           profiler and the runtime's loader+JIT keywords,\n"
          "                           verbose)\n"
          "      --profile NAME[,NAME]  turn on what each named profile needs (the table\n"
          "                           below)\n"
          "      --buffer-mb N      the runtime's session buffer, 1..65535 MB (default 256)\n"
          "      --buffering block|drop  when that buffer is full: drop events (default) or\n"
          "                         make the process wait for this reader (non-lossy,\n"
          "                         .NET 11+; an older runtime gets drop, and a line says so)\n"
          "      --no-rundown       no rundown at the stop (code compiled before the\n"
          "                           session stays unnamed)\n"
          "      --max-bytes N      stop after N bytes of stream (default 1 GiB)\n"
          "      --connect-timeout T  how long starting the session may take (default 10 s)\n"
          "      --stop-timeout T   how long the stop and rundown may take (default 60 s)\n"
          "      --wait T           keep looking for the process (-n) and its endpoint for T\n"
          "                           (a runtime that is still starting has none yet;\n"
          "                           default 0)\n"
          "  -q, --quiet            no progress messages and no counter\n"
          "  -h, --help             this help\n",
          f);
    fputs("  --profile turns on what each named profile needs (added to --providers; one\n"
          "  provider named twice gets both keyword sets and the higher level):\n", f);
    cli_profile_table_print(f);
}

/* The process's command name (from its /proc comm), or "" when unknown. */
static void process_name(int32_t pid, char *name, size_t size)
{
    name[0] = '\0';
    nt_process_entry *list;
    size_t n;
    if (nt_process_list(&list, &n, NULL) != NT_OK)
        return;
    for (size_t i = 0; i < n; i++)
        if (list[i].pid == pid)
            snprintf(name, size, "%s", list[i].command);
    nt_process_list_free(list, NULL);
}

/* NAME_YYYYMMDD_HHMMSS.nettrace as dotnet-trace names its traces (NAME the
 * program's or process's name, characters a file name would trip on as
 * '_'), with -2, -3... when a file of that name exists already. */
static void default_output(char *buf, size_t size, char **program, int32_t pid)
{
    char name[64];
    if (program) {
        /* "dotnet app.dll": the app's name, as its process would show it */
        const char *file = program[0];
        const char *base = strrchr(file, '/');
        size_t len;
        if (strcmp(base ? base + 1 : file, "dotnet") == 0 && program[1] && (len = strlen(program[1])) > 4 &&
            strcmp(program[1] + len - 4, ".dll") == 0)
            file = program[1];
        base = strrchr(file, '/');
        base = base ? base + 1 : file;
        len = strlen(base);
        if (len > 4 && strcmp(base + len - 4, ".dll") == 0)
            len -= 4;
        snprintf(name, sizeof name, "%.*s", (int)len, base);
    } else {
        process_name(pid, name, sizeof name);
    }
    if (!name[0])
        snprintf(name, sizeof name, "pid%" PRId32, pid);
    for (char *c = name; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '.' && *c != '-' && *c != '_')
            *c = '_';
    if (name[0] == '.')
        name[0] = '_';
    time_t now = time(NULL);
    struct tm tm;
    char stamp[32] = "00000000_000000";
    if (localtime_r(&now, &tm))
        strftime(stamp, sizeof stamp, "%Y%m%d_%H%M%S", &tm);
    snprintf(buf, size, "%s_%s.nettrace", name, stamp);
    for (int k = 2; access(buf, F_OK) == 0 && k < 1000; k++)
        snprintf(buf, size, "%s_%s-%d.nettrace", name, stamp, k);
}

/* The providers the session enabled, as a table on stderr (the defaults
 * are the thread-time profile's, which the session layer uses when none is
 * given). */
static void print_providers(const cli_providers *given)
{
    static const char *const levels[] = { "LogAlways", "Critical", "Error", "Warning", "Informational", "Verbose" };
    cli_providers defaults = { .count = 0 };
    char err[256];
    const cli_providers *p = given;
    if (!given->count && cli_profile_providers("thread-time", &defaults, err, sizeof err))
        p = &defaults;
    fprintf(stderr, "nettrace collect: enabled providers%s:\n  %-40s %-20s %-16s %s\n",
            given->count ? "" : " (the default: --profile thread-time)", "provider", "keywords", "level", "names");
    for (size_t i = 0; i < p->count; i++) {
        const nt_provider *q = &p->list[i];
        uint32_t lv = q->level ? q->level : 5; /* 0 means Verbose (nt_provider) */
        char kw[24], names[512];
        snprintf(kw, sizeof kw, "0x%llx", (unsigned long long)q->keywords);
        cli_keywords_names(q->name, q->keywords, names, sizeof names);
        fprintf(stderr, "  %-40s %-20s %u (%s)%*s %s\n", q->name, kw, (unsigned)lv, lv <= 5 ? levels[lv] : "?",
                lv <= 5 ? (int)(13 - strlen(levels[lv])) : 12, "", names);
    }
    cli_providers_free(&defaults);
}

/* -p PID: find the endpoint (waiting for a starting runtime) and start the session. */
static int attach(collect_job *j, int32_t pid, const nt_session_config *cfg, int64_t wait_ns, int64_t connect_ns)
{
    nt_endpoint ep;
    nt_status st = nt_endpoint_find(pid, &ep);
    int64_t wait_until = nt_now_ns() + wait_ns;
    while (st == NT_ERR_NO_ENDPOINT && ep.reason != NT_ENDPOINT_NO_PROCESS && nt_now_ns() < wait_until &&
           cli_interrupt_count() == 0) {
        usleep(50 * 1000);
        st = nt_endpoint_find(pid, &ep);
    }
    if (st != NT_OK) {
        fprintf(stderr, "nettrace collect: process %" PRId32 " has no diagnostics endpoint (%s)\n", pid,
                cli_endpoint_reason(ep.reason));
        return cli_exit_code(st);
    }
    j->runtime = pid; /* the process whose end collect_run reports */
    j->session = nt_session_new(cfg, NULL);
    if (!j->session) {
        fprintf(stderr, "nettrace collect: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    cli_start_guard_begin(j->session);
    st = nt_session_start_endpoint(j->session, &ep, nt_now_ns() + connect_ns);
    cli_start_guard_end();
    if (st != NT_OK) {
        fprintf(stderr, "nettrace collect: %s\n", nt_session_message(j->session));
        cli_interrupts_session(NULL);
        nt_session_free(j->session);
        j->session = NULL;
        return cli_exit_code(st);
    }
    return CLI_EXIT_OK;
}

/* The command line beyond what the job (collect_job) and the session
 * (nt_session_config) hold. */
typedef struct collect_args {
    int32_t pid;
    bool force;
    const char *name, *profile;
    int64_t connect_ns, wait_ns;
    char **program;        /* -- PROGRAM [ARGS], NULL without */
} collect_args;

/* The options into a, j, cfg and providers: -1 when the command goes on,
 * else its exit code (what was made is the caller's to free). */
static int parse_args(int argc, char **argv, collect_args *a, collect_job *j, nt_session_config *cfg,
                      cli_providers *providers)
{
    static const struct option opts[] = {
        { "pid", required_argument, NULL, 'p' },
        { "name", required_argument, NULL, 'n' },
        { "output", required_argument, NULL, 'o' },
        { "duration", required_argument, NULL, 'd' },
        { "providers", required_argument, NULL, 'P' },
        { "profile", required_argument, NULL, 'F' },
        { "buffer-mb", required_argument, NULL, 'b' },
        { "buffering", required_argument, NULL, 'B' },
        { "no-rundown", no_argument, NULL, 'R' },
        { "max-bytes", required_argument, NULL, 'm' },
        { "connect-timeout", required_argument, NULL, 'c' },
        { "stop-timeout", required_argument, NULL, 's' },
        { "wait", required_argument, NULL, 'w' },
        { "quiet", no_argument, NULL, 'q' },
        CLI_FORCE_LONGOPT,
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    *a = (collect_args){ .connect_ns = 10 * NS_PER_S };
    char err[256];
    uint64_t v;
    int c;
    optind = 1;
    /* '+': options end at the program's name, its own options are its own */
    while ((c = getopt_long(argc, argv, "+p:n:o:d:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (!cli_pid_option("collect", optarg, &a->pid))
                return CLI_EXIT_USAGE;
            break;
        case 'n': a->name = optarg; break;
        case 'o': j->output = optarg; break;
        case 'd':
            if (!cli_duration_option("collect", "--duration", optarg, NS_PER_S, MAX_SECONDS, &j->duration_ns))
                return CLI_EXIT_USAGE;
            break;
        case 'c':
            if (!cli_duration_option("collect", "--connect-timeout", optarg, NS_PER_S, MAX_SECONDS, &a->connect_ns))
                return CLI_EXIT_USAGE;
            break;
        case 's':
            if (!cli_duration_option("collect", "--stop-timeout", optarg, NS_PER_S, MAX_SECONDS, &j->stop_timeout_ns))
                return CLI_EXIT_USAGE;
            break;
        case 'w':
            if (!cli_duration_option("collect", "--wait", optarg, NS_PER_S, MAX_SECONDS, &a->wait_ns))
                return CLI_EXIT_USAGE;
            break;
        case 'P':
            cli_providers_free(providers);
            if (!cli_parse_providers(optarg, providers, err, sizeof err)) {
                fprintf(stderr, "nettrace collect: --providers: %s\n", err);
                return CLI_EXIT_USAGE;
            }
            break;
        case 'F': a->profile = optarg; break;
        case 'b':
            if (!cli_u64_option("collect", "--buffer-mb", optarg, 1, 65535, &v))
                return CLI_EXIT_USAGE;
            cfg->buffer_mb = (uint32_t)v;
            break;
        case 'B':
            if (strcmp(optarg, "block") != 0 && strcmp(optarg, "drop") != 0) {
                fprintf(stderr, "nettrace collect: --buffering wants block or drop, not '%s'\n", optarg);
                return CLI_EXIT_USAGE;
            }
            cfg->buffering = optarg[0] == 'b' ? NT_BUFFERING_BLOCK : NT_BUFFERING_DROP;
            break;
        case 'R': cfg->no_rundown = true; break;
        case 'm':
            if (!cli_u64_option("collect", "--max-bytes", optarg, 1, UINT64_MAX, &cfg->max_stream_bytes))
                return CLI_EXIT_USAGE;
            break;
        case 'q': j->quiet = true; break;
        case CLI_OPT_FORCE: a->force = true; break;
        case 'h': collect_usage(stdout); return CLI_EXIT_OK;
        default: cli_usage_hint(argv[0]); return CLI_EXIT_USAGE;
        }
    }
    a->program = optind < argc ? argv + optind : NULL;
    if ((a->pid != 0) + (a->name != NULL) + (a->program != NULL) != 1) {
        fprintf(stderr, "nettrace collect: give one of -p PID, -n NAME or -- PROGRAM [ARGS]; 'nettrace collect "
                        "--help' lists the options\n");
        return CLI_EXIT_USAGE;
    }
    if (a->profile && !cli_profile_providers(a->profile, providers, err, sizeof err)) {
        fprintf(stderr, "nettrace collect: --profile: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    if (providers->count) {
        cfg->providers = providers->list;
        cfg->provider_count = providers->count;
    }
    return -1;
}

int cmd_collect(int argc, char **argv)
{
    cli_out_file out = { .fd = -1 };
    cli_providers providers = { .count = 0 };
    nt_session_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg; /* sized: buffering is past the first layout */
    collect_job j;
    memset(&j, 0, sizeof j);
    j.sink.fd = -1;
    j.stop_timeout_ns = 60 * NS_PER_S;
    char defname[300];
    collect_args a;
    int rc = parse_args(argc, argv, &a, &j, &cfg, &providers);
    if (rc >= 0)
        goto out;
    int32_t pid = a.pid;
    char **program = a.program;
    cli_interrupts_install();
    if (a.name && (rc = cli_pid_by_name("collect", a.name, &pid, nt_now_ns() + a.wait_ns)) != CLI_EXIT_OK)
        goto out;
    if (!j.output) {
        default_output(defname, sizeof defname, program, pid);
        j.output = defname;
    }
    cli_out_rules rules = { .cmd = "collect", .force = a.force };
    if (!cli_out_file_open(&out, j.output, &rules)) {
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    j.output = out.path;
    j.sink.fd = out.fd;
    nt_callbacks none = { 0 };
    memset(&none, 0, sizeof none);
    j.sink.counter = nt_parser_new(&none, NULL, NULL, NULL);
    j.sink.counting = j.sink.counter != NULL;
    atomic_init(&j.sink.events, 0);
    cfg.sink = collect_sink_write;
    cfg.sink_user = &j.sink;
    rc = program ? collect_launch(&j, program, &cfg, a.connect_ns) : attach(&j, pid, &cfg, a.wait_ns, a.connect_ns);
    if (rc != CLI_EXIT_OK)
        goto out;
    if (!j.quiet)
        print_providers(&providers);
    if (!j.quiet && cfg.buffering == NT_BUFFERING_BLOCK)
        fprintf(stderr, "nettrace collect: buffering: %s\n",
                nt_session_buffering(j.session) == NT_BUFFERING_BLOCK
                    ? "non-lossy (blocking buffers)"
                    : "lossy: the runtime does not support CollectTracing6 (.NET 11+); events are dropped when "
                      "its buffer is full");
    if (!j.quiet)
        fprintf(stderr, "nettrace collect: pid %d -> %s (Ctrl-C to stop%s)\n",
                (int)(j.runtime ? j.runtime : pid), j.output, j.duration_ns > 0 ? " early" : "");
    rc = collect_run(&j);
out:
    if (j.session)
        nt_session_free(j.session);
    nt_parser_free(j.sink.counter);
    /* Whatever reached the file is the user's trace (a truncated one reads
     * up to its last whole block): kept unless nothing was written. */
    struct stat st;
    bool wrote = out.direct || (out.tmp && fstat(out.fd, &st) == 0 && st.st_size > 0);
    if (!cli_out_file_close(&out, "collect", wrote))
        rc = CLI_EXIT_ERROR;
    cli_providers_free(&providers);
    return rc;
}
