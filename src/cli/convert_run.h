/* The run that `convert` and `slice` share: the output opened by the
 * out_file rules (never the input, a trace replaced only with --force), the
 * input read through the library's nt_convert with the progress line, and
 * the outcome said on standard error. */
#ifndef CLI_CONVERT_RUN_H
#define CLI_CONVERT_RUN_H

#include "nettrace_convert.h"

#include <stdbool.h>

/* Convert in_path ("-" = standard input) into out_path ("-" = standard
 * output) with o; cmd names the command in messages.  The exit status:
 * CLI_EXIT_INCOMPLETE when something could not be carried over,
 * 10 + status for a damaged input (the output, when it holds events, is
 * kept with what was read before the damage), CLI_EXIT_ERROR when the
 * output failed. */
int cli_convert_run(const char *cmd, const char *in_path, const char *out_path, bool force,
                    const nt_convert_options *o);

#endif
