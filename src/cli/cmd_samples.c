/* nettrace samples FILE: the canonical dump, one line per sample in time order
 *   <timestamp_ns> <thread_id> <M|E|?> <frames>
 * frames root first joined by ';', each "<assembly>!<type>.<method>" or
 * "0x<hex ip>", "-" for an empty stack.  Tools and tests compare traces with
 * this format: keep it exactly. */
#include "cli/opts.h"
#include "cli/profile_cli.h"
#include "cli/progress.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace samples [OPTIONS] FILE\n"
          "\n"
          "Print every thread sample in time order (ties in stream order), one a line:\n"
          "  <timestamp_ns> <thread_id> <M|E|?> <frames>\n"
          "timestamp_ns is floor(ticks * 10^9 / clock frequency); M = managed code,\n"
          "E = external (native, blocked, waiting), ? = anything else; frames are root\n"
          "first, joined by ';', each <assembly>!<declaring type>.<method> (assembly '?'\n"
          "when unknown) or 0x<hex ip> when no method record covers it; '-' = empty stack.\n"
          "In names, control characters, invalid UTF-8, ';' and ' ' are written as \\xHH,\n"
          "so one sample is always one line of four fields.\n"
          "FILE may be - for standard input.  A truncated stream prints what was read\n"
          "and says so on standard error.\n"
          "\n"
          "      --relative     timestamps in ns since the trace's start (its sync time)\n"
          "                       instead of the trace clock\n" CLI_SIGNATURES_HELP CLI_FILTER_HELP
          "      --profile P    cpu or wall (the default: the thread samples as above),\n"
          "                       or an event profile, one line per event in time\n"
          "                       order (of the filters, --thread only):\n"
          "                         <timestamp_ns> <thread_id> <value> <label> <frames>\n"
          "                       alloc: value bytes, label <soh|loh|poh|other>:<type>;\n"
          "                       exceptions: value 1, label <type>; contention: value\n"
          "                       the wait in ns, label managed|native (:open when no\n"
          "                       stop came); labels escaped as names are\n"
          "  -h, --help         this help\n",
          f);
}

int cmd_samples(int argc, char **argv)
{
    static const struct option opts[] = { { "relative", no_argument, NULL, 'r' },
                                           { "signatures", no_argument, NULL, 'S' },
                                           { "profile", required_argument, NULL, 'P' },
                                           CLI_FILTER_LONGOPTS,
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    cli_filter filter = { 0 };
    bool relative = false;
    unsigned name_flags = 0;
    nt_profile_kind profile = NT_PROFILE_CPU;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'r': relative = true; break;
        case 'S': name_flags = NT_NAME_SIGNATURE; break;
        case 'P':
            if (!cli_profile_parse("samples", optarg, &profile))
                return CLI_EXIT_USAGE;
            break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default:
            if (!cli_filter_option_or_usage(&filter, "samples", c, optarg, usage))
                return CLI_EXIT_USAGE;
        }
    }
    const char *path = cli_file_operand(argc, argv, usage);
    if (!path)
        return CLI_EXIT_USAGE;
    if (profile != NT_PROFILE_CPU && profile != NT_PROFILE_WALL) {
        cli_profile_select ps = { .kind = profile, .name_flags = name_flags, .relative = relative };
        if (!cli_profile_filter(&filter, "samples", &ps.has_thread, &ps.thread_id))
            return CLI_EXIT_USAGE;
        return cli_profile_samples(path, &ps);
    }
    nt_trace *t;
    int rc = cli_trace_load(path, false, &t);
    if (!t)
        return rc;
    cli_warn_unnamed(t);
    nt_export_options sel = { 0 };
    cli_filter_export(&filter, t, &sel);
    int64_t origin = relative ? cli_trace_start_ns(nt_trace_header(t)) : 0;
    bool filtered = cli_filter_active(&filter), any = false;
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
    cli_progress_phase("writing samples");
    for (size_t i = 0; i < n; i++) {
        if ((i & 0xFFFF) == 0)
            cli_progress_update(i, n, 0);
        nt_trace_sample s = nt_trace_sample_at(t, i);
        if (filtered && !cli_filter_keeps(&sel, &s))
            continue;
        any = true;
        if (!lines[s.stack_index]) {
            lines[s.stack_index] = cli_stack_line(t, s.stack_index, name_flags);
            if (!lines[s.stack_index]) {
                fprintf(stderr, "nettrace: out of memory\n");
                rc = CLI_EXIT_ERROR;
                break;
            }
        }
        char kind = s.type == NT_SAMPLE_MANAGED ? 'M' : s.type == NT_SAMPLE_EXTERNAL ? 'E' : '?';
        printf("%" PRId64 " %" PRIu64 " %c %s\n", s.time_ns - origin, s.thread_id, kind, lines[s.stack_index]);
    }
    cli_selected count;
    if (filtered && !any && rc != CLI_EXIT_ERROR)
        cli_filter_count(&filter, t, "samples", &count); /* says what the trace holds instead */
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
