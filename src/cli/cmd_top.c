/* nettrace top FILE: hot methods by exclusive (leaf) and inclusive (anywhere
 * on the stack, once per sample) samples, overall or per thread.  Methods are
 * named as in 'nettrace samples'; a frame no method record covers is shown by
 * its address, and the header says how many frames resolved. */
#include "cli/profile_cli.h"
#include "cli/top_print.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace top [OPTIONS] FILE\n"
          "       nettrace top -p PID ...   (live: the same over the last interval; see 'nettrace live-top --help')\n"
          "\n"
          "Hot methods: exclusive samples (the method was the innermost frame) and\n"
          "inclusive samples (it was anywhere on the stack), with their share of the\n"
          "samples counted.  Frames that no method record covers are shown as 0x<ip>;\n"
          "the header says what share of frames resolved.\n"
          "\n"
          "  -n, --top N        rows to print (default 20; 0 = all)\n"
          "      --inclusive    sort by inclusive samples (default: exclusive)\n"
          "      --by-thread    one table per thread\n"
          "      --managed-only only samples taken in managed code\n"
          "      --thread ID    only this thread\n"
          "      --profile P    cpu or wall (default: the thread samples, counted), or\n"
          "                     alloc (bytes), exceptions (throws), contention (wait\n"
          "                     ns): weight by label (type and heap, lock kind) and\n"
          "                     site (leaf frame), largest first\n"
          "  -h, --help         this help\n",
          f);
}

int cmd_top(int argc, char **argv)
{
    static const struct option opts[] = { { "top", required_argument, NULL, 'n' },
                                           { "inclusive", no_argument, NULL, 'i' },
                                           { "by-thread", no_argument, NULL, 'b' },
                                           { "managed-only", no_argument, NULL, 'm' },
                                           { "thread", required_argument, NULL, 't' },
                                           { "profile", required_argument, NULL, 'P' },
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    nt_profile_kind kind = NT_PROFILE_CPU;
    /* 'nettrace top -p PID' is the live form (cmd_top_live, the session component). */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-p") == 0 || strcmp(argv[i], "--pid") == 0 || strncmp(argv[i], "--pid=", 6) == 0 ||
            (strncmp(argv[i], "-p", 2) == 0 && argv[i][2] >= '0' && argv[i][2] <= '9'))
            return cmd_top_live(argc, argv);
    size_t top = 20;
    bool by_incl = false, by_thread = false, managed_only = false, has_thread = false;
    uint64_t thread = 0;
    int c;
    char *end;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hn:", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            top = (size_t)strtoull(optarg, &end, 10);
            if (*end || !*optarg) {
                fprintf(stderr, "nettrace top: -n wants a number\n");
                return CLI_EXIT_USAGE;
            }
            break;
        case 'i': by_incl = true; break;
        case 'b': by_thread = true; break;
        case 'm': managed_only = true; break;
        case 't':
            thread = strtoull(optarg, &end, 0);
            if (*end || !*optarg) {
                fprintf(stderr, "nettrace top: --thread wants a thread id\n");
                return CLI_EXIT_USAGE;
            }
            has_thread = true;
            break;
        case 'P':
            if (!cli_profile_parse("top", optarg, &kind))
                return CLI_EXIT_USAGE;
            break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default: usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *path = argv[optind];
    if (kind != NT_PROFILE_CPU && kind != NT_PROFILE_WALL)
        return cli_profile_top(path, kind, top ? top : SIZE_MAX, by_thread, has_thread, thread);
    nt_trace *t;
    int rc = cli_trace_load(path, true, &t);
    if (!t)
        return rc;
    FILE *o = stdout;
    cli_top_print_header(o, t);
    cli_warn_unnamed(t);
    fputc('\n', o);

    nt_top_options to = { .rows = top > UINT32_MAX ? UINT32_MAX : (uint32_t)top, .by_inclusive = by_incl,
                          .by_thread = by_thread, .managed_only = managed_only, .has_thread = has_thread,
                          .thread_id = thread };
    nt_top *tt;
    if (nt_top_build(t, &to, &tt) != NT_OK) {
        fprintf(stderr, "nettrace: out of memory\n");
        rc = CLI_EXIT_ERROR;
    } else {
        cli_top_print(o, tt, by_thread);
        nt_top_free(tt);
    }
    nt_trace_free(t);
    return rc;
}
