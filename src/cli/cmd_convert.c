/* nettrace convert FILE --to v4|v6 -o OUT: re-write a trace in another
 * NetTrace version through the library's nt_convert (what carries over and
 * what does not: nettrace_convert.h).  Anything left out (events without
 * metadata, field lists) is counted on standard error and makes the exit
 * status CLI_EXIT_INCOMPLETE. */
#include "cli/cli.h"
#include "cli/convert_run.h"
#include "cli/opts.h"

#include <getopt.h>
#include <string.h>

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

/* --to's value: 4 or 6, 0 for anything else. */
static uint32_t read_format(const char *s)
{
    if (strcmp(s, "v4") == 0 || strcmp(s, "v5") == 0 || strcmp(s, "4") == 0)
        return 4;
    if (strcmp(s, "v6") == 0 || strcmp(s, "6") == 0)
        return 6;
    return 0;
}

int cmd_convert(int argc, char **argv)
{
    static const struct option opts[] = { { "to", required_argument, NULL, 't' },
                                          { "output", required_argument, NULL, 'o' },
                                          { "uncompressed", no_argument, NULL, 'u' },
                                          CLI_FORCE_LONGOPT,
                                          { "help", no_argument, NULL, 'h' },
                                          { NULL, 0, NULL, 0 } };
    nt_convert_options o = { .struct_size = sizeof o };
    const char *out_path = NULL;
    bool force = false;
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "t:o:h", opts, NULL)) != -1) {
        switch (ch) {
        case 't':
            if (!(o.format = read_format(optarg))) {
                fprintf(stderr, "nettrace convert: --to must be v4 or v6, not '%s'\n", optarg);
                return CLI_EXIT_USAGE;
            }
            break;
        case 'o': out_path = optarg; break;
        case 'u': o.uncompressed = true; break;
        case CLI_OPT_FORCE: force = true; break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default: return cli_usage_hint(argv[0]);
        }
    }
    if (optind != argc - 1 || !o.format || !out_path) {
        fprintf(stderr, "nettrace convert: give FILE, --to v4|v6 and -o OUT; 'nettrace convert --help' lists the "
                        "options\n");
        return CLI_EXIT_USAGE;
    }
    return cli_convert_run("convert", argv[optind], out_path, force, &o);
}
