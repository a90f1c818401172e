/* nettrace ps: the .NET processes this user can attach to (those with a live
 * diagnostics endpoint), with the endpoint's socket. */
#include "cli/cli.h"

#include "nettrace_session.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int cmd_ps(int argc, char **argv)
{
    bool verbose = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
            verbose = true;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            puts("usage: nettrace ps [-v]\n"
                 "  List the .NET processes with a diagnostics endpoint this user can attach to.\n"
                 "  -v also prints the endpoint's socket path and the pid inside the process's namespace.");
            return CLI_EXIT_OK;
        } else {
            fprintf(stderr, "nettrace ps: unknown argument '%s'\n", argv[i]);
            return CLI_EXIT_USAGE;
        }
    }
    nt_process_entry *list;
    size_t n;
    nt_status st = nt_process_list(&list, &n, NULL);
    if (st != NT_OK) {
        fprintf(stderr, "nettrace ps: cannot list processes: %s\n", nt_status_describe(st));
        return cli_exit_code(st);
    }
    printf("%8s  %-16s%s\n", "PID", "COMMAND", verbose ? "  NSPID  ENDPOINT" : "");
    for (size_t i = 0; i < n; i++) {
        printf("%8" PRId32 "  %-16s", list[i].pid, list[i].command);
        if (verbose)
            printf("  %5" PRId32 "  %s", list[i].endpoint.ns_pid, list[i].endpoint.path);
        putchar('\n');
    }
    nt_process_list_free(list, NULL);
    return CLI_EXIT_OK;
}
