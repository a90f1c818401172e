/* nettrace samples FILE: the canonical dump, one line per sample in time order
 *   <timestamp_ns> <thread_id> <M|E|?> <frames>
 * frames root first joined by ';', each "<assembly>!<type>.<method>" or
 * "0x<hex ip>", "-" for an empty stack.  Tools and tests compare traces with
 * this format: keep it exactly.  --profile wall dumps the same samples in
 * the event profiles' layout (cmd_profile.c), the value being the sample's
 * wall weight:
 *   <timestamp_ns> <thread_id> <wall_ns> <managed|external|other> <frames> */
#include "cli/opts.h"
#include "cli/profile_cli.h"
#include "cli/progress.h"
#include "cli/stack_texts.h"
#include "common/sat.h"

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
          "      --profile P    thread-time (the default: the thread samples as above;\n"
          "                       cpu is its old name), managed-cpu (= --managed-only),\n"
          "                       or a\n"
          "                       profile, one line per sample or event in time order\n"
          "                       (an event profile takes --thread, --from and --to):\n"
          "                         <timestamp_ns> <thread_id> <value> <label> <frames>\n"
          "                       wall: value the ns to the thread's next sample (its\n"
          "                       last: the sampling interval), label managed|external|\n"
          "                       other; alloc: value bytes, label\n"
          "                       <soh|loh|poh|other>:<type>;\n"
          "                       exceptions: value 1, label <type>; contention: value\n"
          "                       the wait in ns, label managed|native (:open when no\n"
          "                       stop came); labels escaped as names are\n"
          CLI_MESSAGES_HELP
          "  -h, --help         this help\n",
          f);
}

int cmd_samples(int argc, char **argv)
{
    static const struct option opts[] = { { "relative", no_argument, NULL, 'r' },
                                           { "signatures", no_argument, NULL, 'S' },
                                           { "profile", required_argument, NULL, 'P' },
                                           { "messages", no_argument, NULL, 'M' },
                                           CLI_FILTER_LONGOPTS,
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    cli_filter filter = { 0 };
    bool relative = false;
    unsigned name_flags = 0;
    bool messages = false;
    nt_profile_kind profile = NT_PROFILE_CPU;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'r': relative = true; break;
        case 'S': name_flags = NT_NAME_SIGNATURE; break;
        case 'M': messages = true; break;
        case 'P':
            if (!cli_profile_parse("samples", optarg, &profile, &filter.managed_only))
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
    bool wall = profile == NT_PROFILE_WALL;
    if (!cli_profile_messages_fit("samples", profile, messages))
        return CLI_EXIT_USAGE;
    if (profile != NT_PROFILE_CPU && !wall) {
        cli_profile_select ps = { .kind = profile, .name_flags = name_flags, .relative = relative,
                                  .messages = messages };
        if (!cli_profile_filter(&filter, "samples", &ps))
            return CLI_EXIT_USAGE;
        return cli_profile_samples(path, &ps);
    }
    nt_trace *t;
    int rc = cli_trace_load_window(path, false, &filter, &t);
    if (!t)
        return rc;
    cli_warn_unnamed(t);
    cli_keep sel;
    cli_keep_init(&sel, &filter, t);
    int64_t origin = relative ? cli_trace_start_ns(nt_trace_header(t)) : 0;
    bool filtered = cli_filter_active(&filter), any = false;
    /* One formatted line tail per distinct stack, made when first needed (kept within a budget). */
    size_t n = nt_trace_sample_count(t);
    cli_stack_texts lines;
    bool have_lines = cli_stack_texts_init(&lines, t, name_flags, 0);
    int64_t *wall_ns = wall ? malloc((n ? n : 1) * sizeof *wall_ns) : NULL;
    if (!have_lines || (wall && (!wall_ns || nt_trace_wall_ns(t, wall_ns) != NT_OK))) {
        cli_stack_texts_free(&lines);
        free(wall_ns);
        nt_trace_free(t);
        fprintf(stderr, "nettrace: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    static char obuf[1 << 16];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    cli_progress_phase("writing samples");
    for (size_t i = 0; i < n; i++) {
        if ((i & 0xFFFF) == 0)
            cli_progress_update(i, n, 0);
        nt_trace_sample s = nt_trace_sample_at(t, i);
        if (filtered && !cli_filter_keeps(&sel, &s))
            continue;
        any = true;
        const char *line = cli_stack_text(&lines, s.stack_index);
        if (!line) {
            fprintf(stderr, "nettrace: out of memory\n");
            rc = CLI_EXIT_ERROR;
            break;
        }
        bool managed = s.type == NT_SAMPLE_MANAGED, external = s.type == NT_SAMPLE_EXTERNAL;
        if (wall)
            printf("%" PRId64 " %" PRIu64 " %" PRId64 " %s %s\n", cm_sat_sub(s.time_ns, origin), s.thread_id, wall_ns[i],
                   managed ? "managed" : external ? "external" : "other", line);
        else
            printf("%" PRId64 " %" PRIu64 " %c %s\n", cm_sat_sub(s.time_ns, origin), s.thread_id,
                   managed ? 'M' : external ? 'E' : '?', line);
    }
    cli_selected count;
    if (filtered && !any && rc != CLI_EXIT_ERROR)
        cli_filter_count(&filter, t, "samples", &count); /* says what the trace holds instead */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nettrace: writing standard output failed\n");
        rc = CLI_EXIT_ERROR;
    }
    cli_stack_texts_free(&lines);
    free(wall_ns);
    nt_trace_free(t);
    return rc;
}
