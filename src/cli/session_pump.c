/* The tool's session pump (session_pump.h). */
#include "cli/session_pump.h"
#include "cli/session_opts.h"

#include <errno.h>
#include <poll.h>

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
