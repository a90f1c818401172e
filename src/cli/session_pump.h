/* Pumping a caller-pumps session (nt_session_config.caller_pumps) from the
 * tool: start it under the Ctrl-C guard, poll its socket and Ctrl-C together,
 * pump what arrives, stop it and read its rundown.  The short sessions of
 * stack and gcdump are these steps and their own sinks. */
#ifndef CLI_SESSION_PUMP_H
#define CLI_SESSION_PUMP_H

#include "nettrace_session.h"

#include <stdbool.h>

/* Pump s until done(user) is true (done NULL: never), the stream ends, the
 * deadline (CLOCK_MONOTONIC ns) passes or more than `interrupts` Ctrl-Cs came:
 * NT_OK, NT_ERR_TIMEOUT, NT_ERR_CANCELLED or NT_ERR_IO.  *ended says whether
 * the stream ended (then *final is its status). */
nt_status cli_pump_until(nt_session *s, bool (*done)(void *), void *user, int64_t deadline, int interrupts,
                         bool *ended, nt_status *final);

/* A new session of cfg (made caller-pumps here) started with process pid
 * within 10 s; the first Ctrl-C cancels the start.  NT_OK with *out, else
 * the failure with *out NULL and why it failed (the session's message, or
 * the status's description) in why. */
nt_status cli_session_begin(int32_t pid, nt_session_config *cfg, nt_session **out, char *why, size_t why_size);

/* Ask s to stop and pump its rundown until the stream ends, for at most a
 * minute; a second Ctrl-C abandons it.  As cli_pump_until. */
nt_status cli_session_drain(nt_session *s, bool *ended, nt_status *final);

/* Forget s for Ctrl-C and free it (NULL does nothing). */
void cli_session_end(nt_session *s);

#endif
