/* nettrace collect, in three parts: cmd_collect.c reads the options and
 * attaches to a running process (-p, -n); collect_launch.c starts a program
 * suspended on a diagnostic port; collect_run.c drives a started session to
 * its end (program exit, --duration, Ctrl-C), with a live counter. */
#ifndef CLI_COLLECT_H
#define CLI_COLLECT_H

#include "nettrace_session.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The sink: the stream goes to the file; a parser without callbacks counts
 * its events for the live counter (it stops counting at the first error,
 * the file gets every byte regardless). */
typedef struct collect_sink {
    int fd;
    nt_parser *counter;
    bool counting;
    atomic_uint_fast64_t events;
} collect_sink;

int collect_sink_write(void *user, const void *data, size_t len);

typedef struct collect_job {
    const char *output;
    collect_sink sink;
    nt_session *session;
    pid_t child;              /* the launched program, leader of its own process group; 0 when attached */
    pid_t runtime;            /* the runtime traced: the child, or the descendant whose runtime connected */
    const char *program;
    nt_port *port;            /* the program's diagnostic port: answered until its process group has ended */
    char port_dir[160];       /* the port's private directory, removed with the port */
    bool child_reaped;
    int child_status;         /* from waitpid, once child_reaped */
    int64_t duration_ns;      /* 0: until the end, Ctrl-C or the program's exit */
    int64_t stop_timeout_ns;
    bool quiet;
} collect_job;

/* Start argv[0] (searched on PATH) with its runtime suspended on a
 * diagnostic port, start the session (cfg) on the port's first connection
 * and resume the runtime.  On success j->session and j->child are set.
 * Returns an exit code (CLI_EXIT_OK when it runs). */
int collect_launch(collect_job *j, char **argv, const nt_session_config *cfg, int64_t connect_timeout_ns);

/* Run the started session to its end and report.  Returns the exit code:
 * with -- PROGRAM, the program's own (128+N for a signal death) when the
 * collection succeeded. */
int collect_run(collect_job *j);

/* The launched program's life once started (collect_program.c).  Reap what
 * ended (nettrace is the subreaper of the program's descendants), the child's
 * status kept; true once the child itself has ended. */
bool collect_program_reap(collect_job *j);
/* Answer the port for up to ms (later runtimes get ResumeRuntime), then reap. */
void collect_program_serve(collect_job *j, int ms);
/* The collection is over: let the program's process group end by itself
 * (end_it false; a Ctrl-C ends it) or end it (SIGTERM, SIGKILL after a grace),
 * answering the port until no process of the group is left; then close the
 * port, remove its directory and report the program's end.  Returns the
 * program's exit status, 128+N for a signal N, or -1 when unknown. */
int collect_program_end(collect_job *j, bool end_it);

#endif
