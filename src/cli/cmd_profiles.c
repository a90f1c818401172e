/* nettrace profiles: the presets of 'collect --profile' and 'top -p
 * --profile' -- the providers, keywords and level each enables and what it
 * records -- and the commands that read each (as dotnet-trace
 * list-profiles does for its own). */
#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/profile_presets.h"

#include <getopt.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace profiles\n"
          "\n"
          "The profiles 'nettrace collect --profile NAME[,NAME]' and 'nettrace top -p PID\n"
          "--profile NAME' turn on: provider:keywords:level and what each records.\n"
          "\n"
          "  -h, --help   this help\n",
          f);
}

int cmd_profiles(int argc, char **argv)
{
    static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        return cli_usage_hint(argv[0]);
    }
    if (optind != argc) {
        fprintf(stderr, "%s: takes no operand ('%s'); '%s --help' lists the options\n", argv[0], argv[optind], argv[0]);
        return CLI_EXIT_USAGE;
    }
    fputs("profile     provider:keywords:level                  records\n", stdout);
    cli_profile_table_print(stdout);
    fputs("\nRead them with: nettrace top / stacks / samples --profile thread-time, managed-cpu or wall (the\n"
          "thread samples), --profile alloc, exceptions or contention (the events' stacks), and\n"
          "nettrace gc (the GC timeline).\n",
          stdout);
    return CLI_EXIT_OK;
}
