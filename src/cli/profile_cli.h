/* The event profiles in the file commands (cmd_profile.c) and the GC
 * timeline (cmd_gc.c). */
#ifndef NT_CLI_PROFILE_CLI_H
#define NT_CLI_PROFILE_CLI_H

#include "cli/trace_load.h"

/* Parse a --profile argument for command cmd (error on stderr). */
bool cli_profile_parse(const char *cmd, const char *arg, nt_profile_kind *k);
/* samples --profile K: one line per event in time order (see cmd_profile.c). */
int cli_profile_samples(const char *path, nt_profile_kind kind);
/* top --profile K: weight by label and leaf frame (and thread), largest first. */
int cli_profile_top(const char *path, nt_profile_kind kind, size_t top, bool by_thread, bool has_thread,
                    uint64_t thread);
/* The same table for a profile (file or live window) into o; false when memory is short. */
bool cli_profile_top_print(FILE *o, const nt_profile *p, nt_profile_kind kind, size_t top, bool by_thread,
                           bool has_thread, uint64_t thread);
/* stacks --profile K: folded, speedscope or pprof of the kind's records. */
int cli_profile_stacks(const char *path, const char *format, const char *output,
                       const nt_profile_export_options *eo);

#endif
