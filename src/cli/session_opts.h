/* Command-line pieces shared by the commands that attach to a process
 * (collect, live top): provider lists and the Ctrl-C protocol. */
#ifndef CLI_SESSION_OPTS_H
#define CLI_SESSION_OPTS_H

#include "nettrace_session.h"

#include <stddef.h>

#define CLI_MAX_PROVIDERS 32

typedef struct cli_providers {
    nt_provider list[CLI_MAX_PROVIDERS];
    size_t count;
    char *storage; /* the spec's copy that names point into */
} cli_providers;

/* Parse "Name[:keywords[:level[:args]]],..." (keywords hex with 0x, decimal,
 * or for the runtime providers names joined by '+': gc+exception).
 * Returns false with a message in err. */
bool cli_parse_providers(const char *spec, cli_providers *out, char *err, size_t errsize);
void cli_providers_free(cli_providers *p);

/* The .NET processes (nt_process_list).  Otherwise prints "nettrace CMD:
 * cannot list processes: ..." and returns the exit code; CLI_EXIT_OK on success. */
int cli_process_list(const char *cmd, nt_process_entry **list, size_t *n);

/* -n NAME: the one .NET process whose command name, program file name or
 * entry assembly is NAME; else a message naming cmd and the exit code.  Until
 * wait_until (CLOCK_MONOTONIC ns; 0: look once) a name no process has yet is
 * looked for again every 100 ms. */
int cli_pid_by_name(const char *cmd, const char *name, int32_t *pid, int64_t wait_until);
/* Why a process has no endpoint, in plain English for a message (not the
 * status identifier nt_endpoint_reason_name gives; a foreign socket says who
 * may be at work). */
const char *cli_endpoint_reason(nt_endpoint_reason r);

/* Whether process pid is gone (no such process), asked again every 20 ms
 * for up to wait_ms: a runtime closes its stream a moment before it exits.
 * For the "process N exited" line of the commands that follow a live process. */
bool cli_process_gone(int32_t pid, int wait_ms);

/* The argument of command cmd's -p: false, said on stderr, when it is not
 * a positive process id. */
bool cli_pid_option(const char *cmd, const char *arg, int32_t *pid);

/* Ctrl-C: the first SIGINT/SIGTERM makes cli_interrupt_fd() readable, the
 * second cancels the session registered here (abandoning it). */
void cli_interrupts_install(void);
void cli_interrupts_session(nt_session *s);
/* Around a session's start: register s, make the first Ctrl-C cancel it (also
 * one already received), and after the start go back to "the first Ctrl-C
 * stops cleanly". */
void cli_start_guard_begin(nt_session *s);
void cli_start_guard_end(void);
int cli_interrupt_fd(void);
int cli_interrupt_count(void);

#endif
