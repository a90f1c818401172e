/* nettrace slice FILE --from T --to T -o OUT: a standalone trace of a time
 * window, through the library's nt_convert with a window (what it keeps:
 * nettrace_convert.h: the method records its frames need, or with
 * --all-records every one).  Its samples are the original's samples in the
 * window, named alike. */
#include "cli/cli.h"
#include "cli/convert_run.h"
#include "cli/opts.h"
#include "cli/time_opt.h"

#include <getopt.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace slice FILE [--from T] [--to T] -o OUT [--format v4|v6] [--all-records]\n"
          "\n"
          "Write the events of a time window of a NetTrace trace as a trace of its own:\n"
          "the header, the metadata and stacks the window's events use, the window's\n"
          "events and sequence points, every module and assembly record, and the\n"
          "method records (loads before the window, rundown) whose code holds a frame\n"
          "of the window's stacks, so that its frames are named as in the original\n"
          "(a first read of FILE finds those frames).  FILE may be '-' for standard\n"
          "input, which is read once: every method record is kept then.  Sequence\n"
          "numbers are numbered again (the events left out are not lost events).\n"
          "\n" CLI_TIME_HELP
          "  -o, --output    output file ('-' = standard output); never FILE itself,\n"
          "                    and replaced only when the slice is complete\n"
          "  --force         replace the output even when it holds a trace\n"
          "  --format v4|v6  the output's version (default: the input's)\n"
          "  --all-records   keep every method record, not only those the window's\n"
          "                    frames need\n",
          f);
}

static bool own_option(int ch, const char *arg, nt_convert_options *o)
{
    switch (ch) {
    case 'f': return cli_time_option("slice", "from", arg, &o->from);
    case 't': return cli_time_option("slice", "to", arg, &o->to);
    case 'F': return cli_convert_format("slice", "format", arg, &o->format);
    case 'A': o->records = NT_CONVERT_RECORDS_ALL; return true;
    default: return false;
    }
}

int cmd_slice(int argc, char **argv)
{
    static const struct option own[] = { { "from", required_argument, NULL, 'f' },
                                         { "to", required_argument, NULL, 't' },
                                         { "format", required_argument, NULL, 'F' },
                                         { "all-records", no_argument, NULL, 'A' },
                                         { NULL, 0, NULL, 0 } };
    static const cli_convert_command slice = { .own = own, .own_short = "", .own_option = own_option, .usage = usage };
    cli_convert_request a;
    int rc = cli_convert_args(&slice, argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (!a.in_path || !a.out_path || !(a.o.from.set || a.o.to.set)) {
        fprintf(stderr, "nettrace slice: give FILE, --from T and/or --to T, and -o OUT; 'nettrace slice --help' "
                        "lists the options\n");
        return CLI_EXIT_USAGE;
    }
    return cli_convert_run("slice", a.in_path, a.out_path, a.force, &a.o);
}
