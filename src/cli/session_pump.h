/* Pumping a caller-pumps session (nt_session_config.caller_pumps) from the
 * tool: poll its socket and Ctrl-C together, pump what arrives. */
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

#endif
