/* nettrace slice FILE --from T --to T -o OUT: a standalone trace of a time
 * window, through the library's nt_convert with a window (what it keeps:
 * nettrace_convert.h).  Its samples are the original's samples in the
 * window, named alike. */
#include "cli/cli.h"
#include "cli/convert_run.h"
#include "cli/opts.h"
#include "cli/time_opt.h"

#include <getopt.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace slice FILE [--from T] [--to T] -o OUT [--format v4|v6]\n"
          "\n"
          "Write the events of a time window of a NetTrace trace as a trace of its own:\n"
          "the header, the metadata and stacks the window's events use, the window's\n"
          "events and sequence points, and every method, module and assembly record\n"
          "(loads before the window, rundown), so that its frames are named as in the\n"
          "original.  FILE may be '-' for standard input.  Sequence numbers are\n"
          "numbered again (the events left out are not lost events).\n"
          "\n" CLI_TIME_HELP
          "  -o, --output    output file ('-' = standard output); never FILE itself,\n"
          "                    and replaced only when the slice is complete\n"
          "  --force         replace the output even when it holds a trace\n"
          "  --format v4|v6  the output's version (default: the input's)\n",
          f);
}

int cmd_slice(int argc, char **argv)
{
    static const struct option opts[] = { { "from", required_argument, NULL, 'f' },
                                          { "to", required_argument, NULL, 't' },
                                          { "output", required_argument, NULL, 'o' },
                                          { "format", required_argument, NULL, 'F' },
                                          CLI_FORCE_LONGOPT,
                                          { "help", no_argument, NULL, 'h' },
                                          { NULL, 0, NULL, 0 } };
    nt_convert_options o = { .struct_size = sizeof o };
    const char *out_path = NULL;
    bool force = false;
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'f':
            if (!cli_time_option("slice", "from", optarg, &o.from))
                return CLI_EXIT_USAGE;
            break;
        case 't':
            if (!cli_time_option("slice", "to", optarg, &o.to))
                return CLI_EXIT_USAGE;
            break;
        case 'F':
            if (strcmp(optarg, "v4") == 0 || strcmp(optarg, "v5") == 0)
                o.format = 4;
            else if (strcmp(optarg, "v6") == 0)
                o.format = 6;
            else {
                fprintf(stderr, "nettrace slice: --format must be v4 or v6, not '%s'\n", optarg);
                return CLI_EXIT_USAGE;
            }
            break;
        case 'o': out_path = optarg; break;
        case CLI_OPT_FORCE: force = true; break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default: return cli_usage_hint(argv[0]);
        }
    }
    if (optind != argc - 1 || !out_path || !(o.from.set || o.to.set)) {
        fprintf(stderr, "nettrace slice: give FILE, --from T and/or --to T, and -o OUT; 'nettrace slice --help' "
                        "lists the options\n");
        return CLI_EXIT_USAGE;
    }
    return cli_convert_run("slice", argv[optind], out_path, force, &o);
}
