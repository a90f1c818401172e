/* The tool's session pump (session_pump.h). */
#include "cli/session_pump.h"
#include "cli/session_opts.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>

nt_status cli_pump_until(nt_session *s, bool (*done)(void *), void *user, int64_t deadline, int interrupts,
                         bool *ended, nt_status *final)
{
    *ended = false;
    while (!(done && done(user))) {
        int64_t left = deadline - nt_now_ns();
        if (left <= 0)
            return NT_ERR_TIMEOUT;
        struct pollfd p[2] = { { nt_session_fd(s), POLLIN, 0 }, { cli_interrupt_fd(), POLLIN, 0 } };
        int ms = left / 1000000 > 200 ? 200 : (int)(left / 1000000) + 1;
        if (poll(p, 2, ms) < 0 && errno != EINTR)
            return NT_ERR_IO;
        if (cli_interrupt_count() > interrupts)
            return NT_ERR_CANCELLED;
        nt_status st = nt_session_pump(s, ended);
        if (*ended) {
            *final = st;
            return NT_OK;
        }
    }
    return NT_OK;
}

nt_status cli_session_begin(int32_t pid, nt_session_config *cfg, nt_session **out, char *why, size_t why_size)
{
    *out = NULL;
    cfg->caller_pumps = true;
    nt_session *s = nt_session_new(cfg, NULL);
    if (!s) {
        snprintf(why, why_size, "out of memory");
        return NT_ERR_NOMEM;
    }
    cli_start_guard_begin(s);
    nt_status st = nt_session_start(s, pid, nt_deadline_after_ms(10000));
    cli_start_guard_end();
    if (st != NT_OK) {
        snprintf(why, why_size, "%s", nt_session_message(s)[0] ? nt_session_message(s) : nt_status_describe(st));
        cli_session_end(s);
        return st;
    }
    *out = s;
    return NT_OK;
}

nt_status cli_session_drain(nt_session *s, bool *ended, nt_status *final)
{
    nt_session_request_stop(s);
    return cli_pump_until(s, NULL, NULL, nt_deadline_after_ms(60000), 1, ended, final);
}

void cli_session_end(nt_session *s)
{
    if (!s)
        return;
    cli_interrupts_session(NULL);
    nt_session_free(s);
}
