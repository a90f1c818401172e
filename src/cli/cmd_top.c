/* nettrace top FILE: hot methods by exclusive (leaf) and inclusive (anywhere
 * on the stack, once per sample) samples, overall or per thread.  Methods are
 * named as in 'nettrace samples'; a frame no method record covers is shown by
 * its address, and the header says how many frames resolved. */
#include "cli/opts.h"
#include "cli/profile_cli.h"
#include "cli/progress.h"
#include "cli/top_print.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace top [OPTIONS] FILE\n"
          "       nettrace top -p PID | -n NAME ...   (live: the same over the last interval;\n"
          "                                 see 'nettrace live-top --help')\n"
          "\n"
          "Hot methods: exclusive samples (the method was the innermost frame) and\n"
          "inclusive samples (it was anywhere on the stack), with their share of the\n"
          "samples counted.  Frames that no method record covers are shown as 0x<ip>;\n"
          "the header says what share of frames resolved.\n"
          "\n"
          "      --top N        rows to print (default 20; 0 = all); -n N is its old\n"
          "                       spelling, kept for numbers (-n NAME, --name NAME: the\n"
          "                       live form on the process of that name)\n"
          "      --inclusive    sort by inclusive samples (default: exclusive); with an\n"
          "                       event profile, one row per method anywhere on the\n"
          "                       events' stacks\n"
          "      --by-thread    one table per thread\n"
          CLI_FILTER_HELP
          "      --json         one JSON object: the header's counts and, per table,\n"
          "                       its samples and methods with their counts\n"
          CLI_SIGNATURES_HELP
          "      --profile P    thread-time (default: the thread samples, running or\n"
          "                       blocked, counted; cpu is its old name); managed-cpu:\n"
          "                       only the samples in managed code; wall: the\n"
          "                       same samples weighed by the ns to their thread's next\n"
          "                       sample (columns in ns); or alloc (bytes), exceptions\n"
          "                       (throws), contention (wait ns): weight by label (type\n"
          "                       and heap, lock kind) and site (the innermost frame\n"
          "                       outside the runtime's throw dispatch and lock waits),\n"
          "                       largest first (not with --json or --managed-only;\n"
          "                       --from/--to count each event by its time, a wait by\n"
          "                       its start)\n"
          CLI_MESSAGES_HELP
          "      --raw-leaf     event profiles: the site is the leaf frame, even the\n"
          "                       runtime's own (System.Runtime.EH.DispatchEx,\n"
          "                       Monitor.Enter_Slowpath)\n"
          "  -h, --help         this help\n"
          "Names are printed with control characters and invalid UTF-8 as \\xHH.\n",
          f);
}

int cmd_top(int argc, char **argv)
{
    static const struct option opts[] = { { "top", required_argument, NULL, 'n' },
                                           { "inclusive", no_argument, NULL, 'i' },
                                           { "raw-leaf", no_argument, NULL, 'L' },
                                           { "by-thread", no_argument, NULL, 'b' },
                                           CLI_FILTER_LONGOPTS,
                                           { "json", no_argument, NULL, 'j' },
                                           { "signatures", no_argument, NULL, 'S' },
                                           { "profile", required_argument, NULL, 'P' },
                                           { "messages", no_argument, NULL, 'M' },
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    /* 'nettrace top -p PID' and 'top -n NAME' are the live form (cmd_top_live, the session component). */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-p") == 0 || strcmp(argv[i], "--pid") == 0 || strncmp(argv[i], "--pid=", 6) == 0 ||
            (strncmp(argv[i], "-p", 2) == 0 && argv[i][2] >= '0' && argv[i][2] <= '9') ||
            strcmp(argv[i], "--name") == 0 || strncmp(argv[i], "--name=", 7) == 0 ||
            (strcmp(argv[i], "-n") == 0 && i + 1 < argc && !cli_top_n_is_rows(argv[i + 1])) ||
            (strncmp(argv[i], "-n", 2) == 0 && argv[i][2] && !cli_top_n_is_rows(argv[i] + 2)))
            return cmd_top_live(argc, argv);
    uint64_t top = 20;
    bool by_incl = false, by_thread = false, json = false, signatures = false, messages = false, raw_leaf = false;
    cli_filter filter = { 0 };
    nt_profile_kind kind = NT_PROFILE_CPU;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hn:", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (!cli_u64_option("top", "-n", optarg, 0, UINT32_MAX, &top))
                return CLI_EXIT_USAGE;
            break;
        case 'i': by_incl = true; break;
        case 'L': raw_leaf = true; break;
        case 'b': by_thread = true; break;
        case 'j': json = true; break;
        case 'S': signatures = true; break;
        case 'M': messages = true; break;
        case 'P':
            if (!cli_profile_parse("top", optarg, &kind, &filter.managed_only))
                return CLI_EXIT_USAGE;
            break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default:
            if (!cli_filter_option_or_usage(&filter, "top", c, optarg, usage))
                return CLI_EXIT_USAGE;
        }
    }
    const char *path = cli_file_operand(argc, argv, usage);
    if (!path)
        return CLI_EXIT_USAGE;
    if (!cli_profile_messages_fit("top", kind, messages))
        return CLI_EXIT_USAGE;
    if (kind != NT_PROFILE_CPU && kind != NT_PROFILE_WALL) {
        cli_profile_select ps = { .kind = kind, .name_flags = signatures ? NT_NAME_SIGNATURE : 0,
                                  .messages = messages, .raw_leaf = raw_leaf, .inclusive = by_incl };
        if (json) {
            fprintf(stderr, "nettrace top: --json is for the thread samples, not --profile %s\n",
                    nt_profile_kind_name(kind));
            return CLI_EXIT_USAGE;
        }
        if (!cli_profile_filter(&filter, "top", &ps))
            return CLI_EXIT_USAGE;
        return cli_profile_top(path, &ps, top ? (size_t)top : SIZE_MAX, by_thread);
    }
    nt_trace *t;
    /* Counts per stack are enough, unless a time window cuts samples. */
    int rc = cli_trace_load_window(path, !filter.from.set && !filter.to.set, &filter, &t);
    if (!t)
        return rc;
    cli_selected chosen;
    if (!cli_filter_count(&filter, t, "top", &chosen)) {
        fprintf(stderr, "nettrace top: out of memory\n");
        nt_trace_free(t);
        return CLI_EXIT_ERROR;
    }
    const cli_selected *sel = cli_filter_active(&filter) ? &chosen : NULL;
    FILE *o = stdout;
    if (!json) {
        cli_top_print_header(o, t, sel);
        cli_top_print_profile(o, t, &filter, filter.managed_only, kind == NT_PROFILE_WALL);
    }
    cli_warn_unnamed(t);
    if (!json)
        fputc('\n', o);

    nt_top_options to = { .rows = (uint32_t)top, .by_inclusive = by_incl, .by_thread = by_thread,
                          .filter = filter, .signatures = signatures,
                          .weight = kind == NT_PROFILE_WALL ? NT_WEIGHT_TIME : NT_WEIGHT_SAMPLES };
    nt_top *tt;
    cli_progress_phase("counting");
    nt_status bs = nt_top_build(t, &to, &tt);
    cli_progress_clear();
    if (bs != NT_OK) {
        fprintf(stderr, "nettrace: out of memory\n");
        rc = CLI_EXIT_ERROR;
    } else {
        if (json)
            cli_top_print_json(o, path, t, sel, tt, to.weight == NT_WEIGHT_TIME);
        else
            cli_top_print(o, tt, by_thread, to.weight == NT_WEIGHT_TIME);
        nt_top_free(tt);
    }
    nt_trace_free(t);
    return rc;
}
