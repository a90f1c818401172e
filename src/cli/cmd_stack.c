/* nettrace stack -p PID | -n NAME: every thread's current managed stack, as
 * dotnet-stack prints them.  A short session with the sample profiler (one
 * sample of every thread per tick) and the rundown at its stop (which names
 * the code); its bytes go from the socket into the parser and the trace
 * builder as they come, with no temporary file, and each thread's first
 * sample is printed, innermost frame first. */
#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/session_opts.h"
#include "cli/session_pump.h"
#include "common/map.h"
#include "common/text_escape.h"
#include "nettrace_trace.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace stack -p PID | -n NAME [--duration T] [--signatures]\n"
          "\n"
          "Print every thread's current managed stack, innermost frame first, like\n"
          "dotnet-stack: a short session with the sample profiler takes one sample of\n"
          "each thread, and the rundown at its stop names the code.  Runs of frames no\n"
          "method covers (native code, the runtime) show as [Native Frames].  The\n"
          "session's bytes are parsed as they arrive (no temporary file).\n"
          "\n"
          "  -p, --pid PID      the process\n"
          "  -n, --name NAME    the one .NET process of this name (see 'nettrace ps')\n"
          "  -d, --duration T   how long to sample before stopping (default 100ms;\n"
          "                       each thread's first sample is printed)\n"
          "      --signatures   frames with their parameter lists\n"
          "  -h, --help         this help\n",
          f);
}

typedef struct stack_args {
    int32_t pid;
    const char *name;
    int64_t duration_ns;
    unsigned name_flags;
} stack_args;

static int parse(int argc, char **argv, stack_args *a)
{
    static const struct option opts[] = { { "pid", required_argument, NULL, 'p' },
                                           { "name", required_argument, NULL, 'n' },
                                           { "duration", required_argument, NULL, 'd' },
                                           { "signatures", no_argument, NULL, 'S' },
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hp:n:d:", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (!cli_pid_option("stack", optarg, &a->pid))
                return CLI_EXIT_USAGE;
            break;
        case 'n': a->name = optarg; break;
        case 'd':
            if (!cli_duration_option("stack", "--duration", optarg, 1000000000, 3600 * 1000000000ll, &a->duration_ns))
                return CLI_EXIT_USAGE;
            break;
        case 'S': a->name_flags = NT_NAME_SIGNATURE; break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default: return cli_usage_hint(argv[0]);
        }
    }
    if ((a->pid != 0) == (a->name != NULL) || optind != argc) {
        fprintf(stderr, "%s: %s; '%s --help' lists the options\n", argv[0],
                optind != argc ? "no operands (the process is the input)" : "give the process with -p PID or -n NAME",
                argv[0]);
        return CLI_EXIT_USAGE;
    }
    return -1;
}

/* The frames of one sample, innermost first; unresolved runs folded. */
static void print_stack(FILE *o, const nt_trace *t, const nt_trace_sample *s, unsigned flags)
{
    fprintf(o, "Thread %" PRIu64 " (0x%" PRIx64 "):\n", s->thread_id, s->thread_id);
    bool native = false;
    char name[2048], safe[4096];
    for (uint32_t k = 0; k < s->frame_count; k++) {
        const nt_frame *f = nt_trace_frame_at(t, s->frame_ids[k]);
        if (f->method_index == NT_TRACE_NO_METHOD) {
            if (!native)
                fputs("  [Native Frames]\n", o);
            native = true;
            continue;
        }
        native = false;
        nt_frame_name_ex(f, flags, name, sizeof name);
        cm_text_escape(safe, sizeof safe, name, ""); /* a name from the process: data, not terminal commands */
        fprintf(o, "  %s\n", safe);
    }
    if (!s->frame_count)
        fputs("  (no frames: the sample's stack was empty)\n", o);
    fputc('\n', o);
}

/* Each thread's first sample, in the order the threads were first sampled. */
static int print_threads(FILE *o, const nt_trace *t, unsigned flags)
{
    cm_mem mem;
    cm_mem_init(&mem, NULL);
    cm_map seen = { 0 };
    size_t n = nt_trace_sample_count(t), threads = 0;
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < n; i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        bool added = false;
        if (!cm_map_put(&mem, &seen, s.thread_id, &added)) {
            fprintf(stderr, "nettrace stack: out of memory\n");
            rc = CLI_EXIT_ERROR;
            break;
        }
        if (!added)
            continue;
        print_stack(o, t, &s, flags);
        threads++;
    }
    cm_map_free(&mem, &seen);
    if (!threads && rc == CLI_EXIT_OK) {
        fprintf(stderr, "nettrace stack: the session held no thread samples: the process sampled none of its "
                        "threads (is it a .NET process past its start?); a longer --duration may help\n");
        rc = CLI_EXIT_ERROR;
    }
    return rc;
}

/* The session: sample for the duration, stop (the rundown names the code), read to the end. */
static int sample(const stack_args *a, nt_parser *parser, nt_status *stream)
{
    nt_provider prov = { .name = NT_PROVIDER_SAMPLE_PROFILER, .keywords = 0, .level = 4 };
    nt_session_config cfg = { 0 };
    cfg.providers = &prov;
    cfg.provider_count = 1;
    cfg.sink = nt_sink_parser;
    cfg.sink_user = parser;
    nt_session *s;
    char why[512];
    nt_status st = cli_session_begin(a->pid, &cfg, &s, why, sizeof why);
    if (st != NT_OK) {
        fprintf(stderr, "nettrace stack: cannot start a session with process %d: %s\n", (int)a->pid, why);
        return cli_exit_code(st);
    }
    bool ended = false;
    nt_status final = NT_OK;
    nt_status w = cli_pump_until(s, NULL, NULL, nt_now_ns() + a->duration_ns, 0, &ended, &final);
    if (ended)
        fprintf(stderr, "nettrace stack: process %d exited while it was sampled\n", (int)a->pid);
    if (!ended && w != NT_ERR_CANCELLED) {
        w = cli_session_drain(s, &ended, &final);
        if (!ended)
            fprintf(stderr, "nettrace stack: the rundown did not end (%s): frames it would name stay unnamed\n",
                    w == NT_ERR_CANCELLED ? "interrupted" : nt_status_describe(w));
    }
    cli_session_end(s);
    *stream = nt_parser_finish(parser);
    return w == NT_ERR_CANCELLED && !ended ? CLI_EXIT_ERROR : CLI_EXIT_OK;
}

int cmd_stack(int argc, char **argv)
{
    stack_args a = { .duration_ns = 100 * 1000000ll };
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (a.name && (rc = cli_pid_by_name("stack", a.name, &a.pid, 0)) != CLI_EXIT_OK)
        return rc;
    nt_callbacks cb;
    nt_trace_builder_callbacks(&cb);
    nt_trace_builder *b = nt_trace_builder_new(NULL);
    nt_parser *p = b ? nt_parser_new(&cb, b, NULL, NULL) : NULL;
    if (!p) {
        fprintf(stderr, "nettrace stack: out of memory\n");
        nt_trace_builder_free(b);
        return CLI_EXIT_ERROR;
    }
    cli_interrupts_install();
    nt_status stream = NT_OK;
    rc = sample(&a, p, &stream);
    if (rc != CLI_EXIT_OK && nt_parser_offset(p) == 0) { /* no session, no bytes: the message said why */
        nt_parser_free(p);
        nt_trace_builder_free(b);
        return rc;
    }
    nt_trace *t = NULL;
    nt_status fs = nt_trace_builder_finish(b, p, stream, &t);
    if (stream != NT_OK && stream != NT_ERR_TRUNCATED)
        fprintf(stderr, "nettrace stack: the session's stream did not read cleanly: %s\n", nt_parser_message(p));
    nt_parser_free(p);
    if (fs != NT_OK) {
        fprintf(stderr, "nettrace stack: %s\n", nt_status_describe(fs));
        return CLI_EXIT_ERROR;
    }
    int prc = print_threads(stdout, t, a.name_flags);
    nt_trace_free(t);
    return rc != CLI_EXIT_OK ? rc : prc;
}
