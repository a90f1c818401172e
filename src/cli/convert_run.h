/* The run that `convert` and `slice` share: the output opened by the
 * out_file rules (never the input, a trace replaced only with --force), the
 * input read through the library's nt_convert with the progress line, and
 * the outcome said on standard error. */
#ifndef CLI_CONVERT_RUN_H
#define CLI_CONVERT_RUN_H

#include "nettrace_convert.h"

#include <stdbool.h>
#include <stdio.h>

/* Convert in_path ("-" = standard input) into out_path ("-" = standard
 * output) with o; cmd names the command in messages.  The exit status:
 * CLI_EXIT_INCOMPLETE when something could not be carried over,
 * 10 + status for a damaged input (the output, when it holds events, is
 * kept with what was read before the damage), CLI_EXIT_ERROR when the
 * output failed. */
int cli_convert_run(const char *cmd, const char *in_path, const char *out_path, bool force,
                    const nt_convert_options *o);

/* A command built on cli_convert_run: its own long options (ended by an
 * all-zero entry; at most CLI_CONVERT_OWN_MAX), their getopt letters
 * (own_short), what each sets (own_option: false after saying why, a usage
 * error) and its usage text. */
#define CLI_CONVERT_OWN_MAX 8
struct option;
typedef struct cli_convert_command {
    const struct option *own;
    const char *own_short;
    bool (*own_option)(int ch, const char *arg, nt_convert_options *o);
    void (*usage)(FILE *f);
} cli_convert_command;

/* What such a command read: its options, the output, --force, and the FILE
 * operand (NULL unless there is exactly one). */
typedef struct cli_convert_request {
    nt_convert_options o;
    const char *in_path, *out_path;
    bool force;
} cli_convert_request;

/* Read argv: the command's own options and the ones every such command takes
 * (-o/--output, --force, -h/--help).  Returns -1 when the command goes on
 * with *a, or its exit status (help printed; a usage error said). */
int cli_convert_args(const cli_convert_command *c, int argc, char **argv, cli_convert_request *a);

/* A --to / --format value (flag names it): v4 (v5, 4) or v6 (6) into
 * *format; false, said on stderr, for anything else. */
bool cli_convert_format(const char *cmd, const char *flag, const char *arg, uint32_t *format);

#endif
