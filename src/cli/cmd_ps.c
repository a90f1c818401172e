/* nettrace ps: the .NET processes this user can attach to (those with a live
 * diagnostics endpoint), each with what its runtime says about itself:
 * command line, runtime version, OS and architecture. */
#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/session_opts.h"
#include "common/json.h"
#include "common/text_escape.h"

#include "nettrace_session.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the runtimes get to answer: all are asked at once, so a runtime that
 * never answers (or a thousand) costs this once, not once each. */
#define PS_ASK_MS 1000

static void usage(FILE *f)
{
    fputs("usage: nettrace ps [-v] [--json]\n"
          "\n"
          "List the .NET processes with a diagnostics endpoint this user can attach to:\n"
          "pid, runtime version, OS/architecture and command line, as each runtime\n"
          "reports them (ProcessInfo2; /proc/PID/cmdline when a runtime does not answer\n"
          "within a second, the other columns then '-'; all are asked at once).  What a\n"
          "runtime says is escaped; an endpoint not served by its process is not listed.\n"
          "\n"
          "  -v, --verbose  also the endpoint's socket path and the pid inside the\n"
          "                 process's PID namespace\n"
          "      --json     one JSON array of objects instead of the table\n"
          "  -h, --help     this help\n",
          f);
}

/* Every string here is the peer's or the file system's word: escaped (text_escape.h) before the terminal. */
static void print_text(const nt_process_entry *pe, const nt_process_info *pi, nt_status st, bool verbose)
{
    char cmd[sizeof pi->command_line * 4], version[sizeof pi->runtime_version * 4], osarch[72], osarch_e[72 * 4];
    char path[sizeof pe->endpoint.path * 4];
    cm_text_escape(cmd, sizeof cmd, pi->command_line[0] ? pi->command_line : pe->command, "");
    cm_text_escape(version, sizeof version, st == NT_OK && pi->runtime_version[0] ? pi->runtime_version : "-", "");
    snprintf(osarch, sizeof osarch, "%s/%s", pi->os, pi->arch);
    cm_text_escape(osarch_e, sizeof osarch_e, st == NT_OK ? osarch : "-", "");
    printf("%8" PRId32 "  %-10s  %-12s  ", pe->pid, version, osarch_e);
    if (verbose) {
        cm_text_escape(path, sizeof path, pe->endpoint.path, "");
        printf("%5" PRId32 "  %s  ", pe->endpoint.ns_pid, path);
    }
    printf("%s\n", cmd);
}

static void print_json(const nt_process_entry *pe, const nt_process_info *pi, nt_status st, bool first)
{
    printf("%s  {\"pid\": %" PRId32 ", \"ns_pid\": %" PRId32 ", \"endpoint\": ", first ? "" : ",\n", pe->pid,
           pe->endpoint.ns_pid);
    cm_json_fputs(stdout, pe->endpoint.path);
    fputs(", \"command\": ", stdout);
    cm_json_fputs(stdout, pe->command);
    fputs(", \"command_line\": ", stdout);
    cm_json_fputs(stdout, pi->command_line[0] ? pi->command_line : NULL);
    fputs(", \"command_line_source\": ", stdout);
    cm_json_fputs(stdout, st == NT_OK ? "runtime" : pi->from_proc ? "proc" : NULL);
    fputs(", \"runtime_version\": ", stdout);
    cm_json_fputs(stdout, st == NT_OK && pi->runtime_version[0] ? pi->runtime_version : NULL);
    fputs(", \"entrypoint_assembly\": ", stdout);
    cm_json_fputs(stdout, st == NT_OK && pi->entrypoint_assembly[0] ? pi->entrypoint_assembly : NULL);
    fputs(", \"os\": ", stdout);
    cm_json_fputs(stdout, st == NT_OK ? pi->os : NULL);
    fputs(", \"arch\": ", stdout);
    cm_json_fputs(stdout, st == NT_OK ? pi->arch : NULL);
    fputs(", \"status\": ", stdout);
    cm_json_fputs(stdout, nt_status_name(st));
    fputs("}", stdout);
}

int cmd_ps(int argc, char **argv)
{
    static const struct option opts[] = { { "verbose", no_argument, NULL, 'v' },
                                           { "json", no_argument, NULL, 'j' },
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    bool verbose = false, json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
        switch (c) {
        case 'v': verbose = true; break;
        case 'j': json = true; break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default: return cli_usage_hint(argv[0]);
        }
    }
    if (optind != argc) {
        fprintf(stderr, "nettrace ps: takes no operand ('%s'); 'nettrace ps --help' lists the options\n", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    nt_process_entry *list;
    size_t n;
    int rc = cli_process_list("ps", &list, &n);
    if (rc != CLI_EXIT_OK)
        return rc;
    nt_process_info *pi = calloc(n ? n : 1, sizeof *pi);
    nt_status *st = calloc(n ? n : 1, sizeof *st);
    nt_endpoint *eps = calloc(n ? n : 1, sizeof *eps);
    if (!pi || !st || !eps) {
        free(pi);
        free(st);
        free(eps);
        nt_process_list_free(list, NULL);
        fprintf(stderr, "nettrace ps: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    for (size_t i = 0; i < n; i++)
        eps[i] = list[i].endpoint;
    nt_process_info_get_many(eps, n, pi, st, nt_deadline_after_ms(PS_ASK_MS));
    if (json)
        fputs("[\n", stdout);
    else
        printf("%8s  %-10s  %-12s  %s%s\n", "PID", "RUNTIME", "OS/ARCH", verbose ? "NSPID  ENDPOINT  " : "",
               "COMMAND LINE");
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) {
        if (st[i] == NT_ERR_NO_ENDPOINT) {
            /* Not served by the process itself: another process took its endpoint's name. */
            char path[sizeof eps[i].path * 4];
            cm_text_escape(path, sizeof path, eps[i].path, "");
            fprintf(stderr, "nettrace ps: pid %" PRId32 ": %s is not served by that process (nothing listens, or "
                            "another process bound a socket under its endpoint's name): not listed\n",
                    list[i].pid, path);
            continue;
        }
        if (json)
            print_json(&list[i], &pi[i], st[i], shown == 0);
        else
            print_text(&list[i], &pi[i], st[i], verbose);
        shown++;
    }
    if (json)
        fputs(shown ? "\n]\n" : "]\n", stdout);
    free(pi);
    free(st);
    free(eps);
    nt_process_list_free(list, NULL);
    return CLI_EXIT_OK;
}
