/* Ends of a time window (nt_time_bound): read from the spellings the tool
 * takes, and placed on the trace clock once the trace's header is known. */
#include "nettrace_profile.h"
#include "common/duration.h"
#include "common/sat.h"

bool nt_time_bound_parse(const char *s, nt_time_bound *out)
{
    nt_time_bound t = { .set = true };
    int64_t unit;
    if (!s || !out)
        return false;
    if (*s == '@') {
        t.absolute = true;
        if (!cm_duration_read(s + 1, 1, &t.ns, &unit))
            return false;
    } else {
        if (*s == '+')
            s++;
        /* a relative value needs its unit: "2" is refused rather than guessed */
        if (!cm_duration_read(s, 1, &t.ns, &unit) || !unit)
            return false;
    }
    *out = t;
    return true;
}

int64_t nt_time_bound_resolve(const nt_time_bound *b, const nt_trace_info *info)
{
    if (!b || !b->set)
        return 0;
    if (b->absolute || !info)
        return b->ns;
    int64_t start = nt_ticks_to_ns(info->sync_qpc, info->qpc_frequency);
    return cm_sat_add(start, b->ns);
}
