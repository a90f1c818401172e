/* nettrace convert FILE --to v4|v6 -o OUT: re-write a trace in another
 * NetTrace version through the library's nt_convert (what carries over and
 * what does not: nettrace_convert.h).  Anything left out (events without
 * metadata, field lists) is counted on standard error and makes the exit
 * status CLI_EXIT_INCOMPLETE. */
#include "cli/cli.h"
#include "cli/convert_run.h"
#include "cli/opts.h"

#include <getopt.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace convert FILE --to v4|v6 -o OUT [--uncompressed]\n"
          "\n"
          "Re-write a NetTrace trace (V4/V5 or V6) as V4/V5 or V6.  FILE may be '-'\n"
          "for standard input.  Metadata and stack ids are re-numbered; event\n"
          "headers, payloads, stacks and sequence points carry over.  Exits 3 when\n"
          "something could not be carried over (events without metadata, field\n"
          "descriptions the output cannot hold); standard error says what.\n"
          "\n"
          "  --to v4|v6      output version (v5 is the same as v4)\n"
          "  -o, --output    output file ('-' = standard output); never FILE itself,\n"
          "                    and replaced only when the conversion ends\n"
          "  --force         replace the output even when it holds a trace\n"
          "  --uncompressed  write uncompressed event headers\n",
          f);
}

static bool own_option(int ch, const char *arg, nt_convert_options *o)
{
    switch (ch) {
    case 't': return cli_convert_format("convert", "to", arg, &o->format);
    case 'u': o->uncompressed = true; return true;
    default: return false;
    }
}

int cmd_convert(int argc, char **argv)
{
    static const struct option own[] = { { "to", required_argument, NULL, 't' },
                                         { "uncompressed", no_argument, NULL, 'u' },
                                         { NULL, 0, NULL, 0 } };
    static const cli_convert_command convert = { .own = own, .own_short = "t:", .own_option = own_option,
                                                 .usage = usage };
    cli_convert_request a;
    int rc = cli_convert_args(&convert, argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (!a.in_path || !a.o.format || !a.out_path) {
        fprintf(stderr, "nettrace convert: give FILE, --to v4|v6 and -o OUT; 'nettrace convert --help' lists the "
                        "options\n");
        return CLI_EXIT_USAGE;
    }
    return cli_convert_run("convert", a.in_path, a.out_path, a.force, &a.o);
}
