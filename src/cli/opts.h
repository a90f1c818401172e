/* Numeric command-line values, validated the same way by every command: a
 * value out of range or with junk is a usage error (exit 2) that names the
 * command and the option. */
#ifndef CLI_OPTS_H
#define CLI_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* A decimal (or 0x hex) integer of at most max, digits only: strtoull alone
 * takes "-3" (wrapping it), leading blanks and "+7".  False otherwise. */
bool cli_parse_u64(const char *s, uint64_t max, uint64_t *out);

/* A decimal (or 0x hex) integer in [min, max].  On failure prints
 * "nettrace CMD: OPT wants a number from MIN to MAX, not 'ARG'" and returns false. */
bool cli_u64_option(const char *cmd, const char *opt, const char *arg, uint64_t min, uint64_t max,
                    uint64_t *out);

/* A duration (time_opt.h spellings; a bare number counts default_unit_ns)
 * in [0, max_ns].  Prints the usage error and returns false otherwise. */
bool cli_duration_option(const char *cmd, const char *opt, const char *arg, int64_t default_unit_ns,
                         int64_t max_ns, int64_t *out);

/* A usage error's second line, after getopt's own (which names the option):
 * where the options are, not all of them ("PROG: 'PROG --help' lists the
 * options"; prog is argv[0], "nettrace top").  Returns CLI_EXIT_USAGE. */
int cli_usage_hint(const char *prog);

/* The one FILE operand a command takes after its options (argv[optind]), or
 * NULL after a one-line usage error on standard error (none given, or more
 * than one) pointing to --help.  usage is no longer printed. */
const char *cli_file_operand(int argc, char **argv, void (*usage)(FILE *));

/* The arguments of a command that takes [--json] FILE (info, gc): -1 when
 * they are good (*json, *path set), else the exit code (--help: usage on
 * standard output; a usage error: on standard error). */
int cli_json_file_args(int argc, char **argv, void (*usage)(FILE *), bool *json, const char **path);

#endif
