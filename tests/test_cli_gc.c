/* nettrace gc's summary on a trace of many GCs (issue 25's follow-up): its
 * counts are grouped by three as the other human tables' are (1,200, not
 * 1200), and --json keeps the plain number.  The trace is written here by
 * the heap-dump stream writer: GCStart/GCEnd pairs of gen-0 GCs. */
#include <criterion/criterion.h>

#include "cli_run.h"
#include "heap_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GCS 1200u

/* A V4 trace of GCS gen-0 GCs in a temporary file; its path in path. */
static void write_gcs(char *path, size_t size)
{
    hw h;
    cr_assert(hw_begin(&h, 4, 8));
    for (uint32_t n = 1; n <= GCS; n++) {
        hw_gc_start(&h, n, 0, 1, 0);
        hw_gc_end(&h, n);
    }
    cr_assert_eq(hw_finish(&h), NT_OK);
    snprintf(path, size, "/tmp/test_cli_gc.XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, h.out.data, h.out.len), (ssize_t)h.out.len);
    close(fd);
    hw_free(&h);
}

Test(cli_gc, the_summary_groups_its_counts)
{
    char path[64];
    write_gcs(path, sizeof path);
    const char *text[] = { "gc", path, NULL };
    cli_run r = cli_run_nettrace(text, true);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(r.out && strstr(r.out, "\nGCs: 1,200 (gen0 1,200, gen1 0, gen2 0)\n"), "%.*s", 400,
              r.out ? r.out + (r.out_len > 400 ? r.out_len - 400 : 0) : "");
    cli_run_free(&r);
    const char *json[] = { "gc", "--json", path, NULL };
    r = cli_run_nettrace(json, true);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(r.out && strstr(r.out, "\"summary\":{\"gcs\":1200,"), "--json keeps the raw count");
    cli_run_free(&r);
    unlink(path);
}
