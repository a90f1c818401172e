/* Validated numeric options (opts.h). */
#include "cli/opts.h"
#include "cli/time_opt.h"

#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

bool cli_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    if (s[0] < '0' || s[0] > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || v > max)
        return false;
    *out = v;
    return true;
}

bool cli_u64_option(const char *cmd, const char *opt, const char *arg, uint64_t min, uint64_t max,
                    uint64_t *out)
{
    uint64_t v;
    if (!cli_parse_u64(arg, max, &v) || v < min) {
        fprintf(stderr, "nettrace %s: %s wants a number from %" PRIu64 " to %" PRIu64 ", not '%s'\n", cmd, opt,
                min, max, arg);
        return false;
    }
    *out = v;
    return true;
}

bool cli_duration_option(const char *cmd, const char *opt, const char *arg, int64_t default_unit_ns,
                         int64_t max_ns, int64_t *out)
{
    if (cli_duration_parse(arg, default_unit_ns, max_ns, out))
        return true;
    char most[32];
    cli_format_duration(most, sizeof most, max_ns);
    fprintf(stderr,
            "nettrace %s: %s wants a duration up to %s: a number of %s or one with a unit\n"
            "  (ns, us, ms, s, m: 500ms, 2s), not '%s'\n",
            cmd, opt, most, default_unit_ns == 1000000000 ? "seconds" : "ns", arg);
    return false;
}

int cli_usage_hint(const char *prog)
{
    fprintf(stderr, "%s: '%s --help' lists the options\n", prog, prog);
    return CLI_EXIT_USAGE;
}

const char *cli_file_operand(int argc, char **argv, void (*usage)(FILE *))
{
    (void)usage; /* the hint, not the whole help: the error stays on one screen line */
    if (optind == argc - 1)
        return argv[optind];
    if (optind == argc)
        fprintf(stderr, "%s: give a trace FILE (- for standard input); '%s --help' lists the options\n", argv[0],
                argv[0]);
    else
        fprintf(stderr, "%s: one FILE only, not '%s' too; '%s --help' lists the options\n", argv[0],
                argv[optind + 1], argv[0]);
    return NULL;
}

int cli_json_file_args(int argc, char **argv, void (*usage)(FILE *), bool *json, const char **path)
{
    static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    *json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': *json = true; break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default: return cli_usage_hint(argv[0]);
        }
    }
    *path = cli_file_operand(argc, argv, usage);
    return *path ? -1 : CLI_EXIT_USAGE;
}
