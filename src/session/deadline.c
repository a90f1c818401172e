/* Deadlines of the blocking calls: absolute CLOCK_MONOTONIC ns on the
 * library's one clock (common/clock.h). */
#include "nettrace_session.h"
#include "common/clock.h"

/* The public face of the clock. */
int64_t nt_now_ns(void) { return cm_clock_ns(); }

int64_t nt_deadline_after_ms(int64_t ms)
{
    if (ms < 0)
        return NT_DEADLINE_NONE;
    int64_t now = nt_now_ns();
    if (ms > (NT_DEADLINE_NONE - now) / 1000000)
        return NT_DEADLINE_NONE;
    return now + ms * 1000000;
}
