/* nettrace: read .NET EventPipe NetTrace traces.  One file per subcommand;
 * this file only dispatches. */
#include "cli/cli.h"
#include "cli/progress.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command COMMANDS[] = {
    { "info", cmd_info, "header fields and counts of a trace" },
    { "events", cmd_events, "every event in time order with its decoded fields" },
    { "samples", cmd_samples, "every thread sample with resolved frames, in time order" },
    { "top", cmd_top, "hot methods by exclusive and inclusive samples" },
    { "stacks", cmd_stacks, "export stacks: folded, speedscope or pprof" },
    { "gc", cmd_gc, "the GC timeline: pauses, generations, heap sizes, summary" },
    { "collect", cmd_collect, "attach to a running .NET process and write a trace" },
    { "live-top", cmd_top_live, "the same as top -p PID: live hot methods over the last interval" },
    { "ps", cmd_ps, "list the .NET processes that can be attached to" },
    { "profiles", cmd_profiles, "the collect profiles: what each enables and records" },
    { "convert", cmd_convert, "re-write a trace as NetTrace V4/V5 or V6" },
    { "slice", cmd_slice, "a standalone trace of a time window (its events, stacks and method records)" },
    { "index", cmd_index, "the block index: blocks, time span, event and sample estimates, from headers only" },
    { "heap", cmd_heap, "a heap snapshot: types by retained size, paths to roots, diff, flame graph" },
    { "gcdump", cmd_gcdump, "take a heap snapshot of a running .NET process" },
    { "stack", cmd_stack, "every thread's current managed stack in a running .NET process" },
};

static void usage(FILE *f)
{
    fputs("usage: nettrace COMMAND [OPTIONS] [ARGS]\n"
          "       nettrace --version | --help\n\nCommands:\n",
          f);
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        fprintf(f, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fputs("\n'nettrace help COMMAND' (or 'nettrace COMMAND --help') describes a command.  See nettrace(1).\n", f);
}

/* Every command's standard output is checked once it is done: a full disk
 * or a closed pipe is an I/O error (exit 1), never a silent success. */
static int cli_close_stdout(const char *cmd, int rc)
{
    errno = 0;
    bool failed = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !failed) {
        failed = true;
        e = errno;
    }
    if (!failed)
        return rc;
    fprintf(stderr, "nettrace %s: writing standard output failed%s%s\n", cmd, e ? ": " : "", e ? strerror(e) : "");
    return CLI_EXIT_ERROR;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "help") == 0 && argc == 3) {
        /* 'nettrace help top' is 'nettrace top --help' */
        static char help[] = "--help";
        char *args[] = { argv[0], argv[2], help, NULL };
        return run(3, args);
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("nettrace %s (libnettrace %s)\n", NT_VERSION_STRING, nt_version());
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++) {
        if (strcmp(argv[1], COMMANDS[i].name) != 0)
            continue;
        /* getopt's own messages name argv[0]: make it "nettrace top", not "top". */
        char prog[64];
        snprintf(prog, sizeof prog, "nettrace %s", COMMANDS[i].name);
        argv[1] = prog;
        int rc = COMMANDS[i].run(argc - 1, argv + 1);
        cli_progress_clear();
        return cli_close_stdout(COMMANDS[i].name, rc);
    }
    fprintf(stderr, "nettrace: unknown command '%s'; 'nettrace --help' lists the commands\n", argv[1]);
    return CLI_EXIT_USAGE;
}

int main(int argc, char **argv) { return run(argc, argv); }
