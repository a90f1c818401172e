/* nettrace samples FILE: the canonical dump, one line per sample in time order
 *   <timestamp_ns> <thread_id> <M|E|?> <frames>
 * frames root first joined by ';', each "<assembly>!<type>.<method>" or
 * "0x<hex ip>", "-" for an empty stack.  Tools and tests compare traces with
 * this format: keep it exactly. */
#include "cli/profile_cli.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace samples [--profile P] FILE\n"
          "\n"
          "Print every thread sample in time order (ties in stream order), one a line:\n"
          "  <timestamp_ns> <thread_id> <M|E|?> <frames>\n"
          "timestamp_ns is floor(ticks * 10^9 / clock frequency); M = managed code,\n"
          "E = external (native, blocked, waiting), ? = anything else; frames are root\n"
          "first, joined by ';', each <assembly>!<declaring type>.<method> (assembly '?'\n"
          "when unknown) or 0x<hex ip> when no method record covers it; '-' = empty stack.\n"
          "FILE may be - for standard input.  A truncated stream prints what was read\n"
          "and says so on standard error.\n"
          "\n"
          "  --profile P  cpu or wall (the default: the thread samples as above), or an\n"
          "               event profile, one line per event in time order:\n"
          "                 <timestamp_ns> <thread_id> <value> <label> <frames>\n"
          "               alloc: value bytes, label <soh|loh|poh|other>:<type>;\n"
          "               exceptions: value 1, label <type>; contention: value the\n"
          "               wait in ns, label managed|native (:open when no stop came)\n"
          "  -h, --help   this help\n",
          f);
}

int cmd_samples(int argc, char **argv)
{
    static const struct option opts[] = { { "help", no_argument, NULL, 'h' },
                                           { "profile", required_argument, NULL, 'P' },
                                           { NULL, 0, NULL, 0 } };
    nt_profile_kind profile = NT_PROFILE_CPU;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'h': usage(stdout); return CLI_EXIT_OK;
        case 'P':
            if (!cli_profile_parse("samples", optarg, &profile))
                return CLI_EXIT_USAGE;
            break;
        default: usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (profile != NT_PROFILE_CPU && profile != NT_PROFILE_WALL)
        return cli_profile_samples(argv[optind], profile);
    nt_trace *t;
    int rc = cli_trace_load(argv[optind], false, &t);
    if (!t)
        return rc;
    cli_warn_unnamed(t);
    /* One formatted line tail per distinct stack, made when first needed. */
    size_t ns = nt_trace_stack_count(t);
    char **lines = calloc(ns ? ns : 1, sizeof *lines);
    if (!lines) {
        nt_trace_free(t);
        fprintf(stderr, "nettrace: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    static char obuf[1 << 16];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    size_t n = nt_trace_sample_count(t);
    for (size_t i = 0; i < n; i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        if (!lines[s.stack_index]) {
            nt_trace_stack st = nt_trace_stack_at(t, s.stack_index);
            lines[s.stack_index] = cli_stack_line(&st);
            if (!lines[s.stack_index]) {
                fprintf(stderr, "nettrace: out of memory\n");
                rc = CLI_EXIT_ERROR;
                break;
            }
        }
        char kind = s.type == NT_SAMPLE_MANAGED ? 'M' : s.type == NT_SAMPLE_EXTERNAL ? 'E' : '?';
        printf("%" PRId64 " %" PRIu64 " %c %s\n", s.time_ns, s.thread_id, kind, lines[s.stack_index]);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nettrace: writing standard output failed\n");
        rc = CLI_EXIT_ERROR;
    }
    for (size_t i = 0; i < ns; i++)
        free(lines[i]);
    free(lines);
    nt_trace_free(t);
    return rc;
}
