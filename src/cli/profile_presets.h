/* The providers, keywords and levels each profile needs when collecting
 * (`nettrace collect --profile`, `nettrace top -p PID --profile`): one table,
 * documented in nettrace(1) and the README. */
#ifndef CLI_PROFILE_PRESETS_H
#define CLI_PROFILE_PRESETS_H

#include "cli/session_opts.h"

#include <stdio.h>

/* Parse "NAME[,NAME]" (thread-time, managed-cpu and cpu alike, wall, alloc,
 * exceptions, contention, gc) and add
 * the profiles' providers to out (which may already hold --providers
 * entries): a provider named twice gets the union of the keywords and the
 * higher level.  Returns false with a message in err. */
bool cli_profile_providers(const char *names, cli_providers *out, char *err, size_t errsize);

/* The table as text for --help (one line per profile). */
void cli_profile_table_print(FILE *f);

#endif
