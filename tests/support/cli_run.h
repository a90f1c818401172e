/* Running the built nettrace from a test: exit status, peak RSS (a child's
 * own figure, for memory bounds as ratios), standard output and error. */
#ifndef TEST_CLI_RUN_H
#define TEST_CLI_RUN_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cli_run {
    int status;       /* exit status; 128 + signal when killed; -1 when it could not run */
    long rss_kb;      /* the child's peak RSS */
    char *out;        /* standard output (NULL unless kept) */
    size_t out_len;
    char *err;        /* standard error, NUL-terminated ("" when none) */
} cli_run;

/* $top_builddir/nettrace ARGS... (args NULL-terminated, at most 30); standard
 * output is kept when keep, else thrown away.  Under ASan the child's
 * quarantine of freed memory is 1 MB, so its RSS is what it holds. */
cli_run cli_run_nettrace(const char *const *args, bool keep);
void cli_run_free(cli_run *r);

#endif
