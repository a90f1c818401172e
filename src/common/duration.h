/* Durations written by people ("2s", "1.5ms", "250us", "40ns", "3m"): the
 * library's one reader of them, for time windows (nt_time_bound_parse) and
 * the tool's durations (collect --duration). */
#ifndef CM_DURATION_H
#define CM_DURATION_H

#include <stdbool.h>
#include <stdint.h>

/* A non-negative number with an optional unit (ns, us, ms, s, m) in *ns;
 * *unit is the unit's ns, or 0 when s had none (the number then counts
 * default_unit ns).  Integers are exact (trace clocks count ns since boot,
 * beyond a double's 2^53).  false for anything else or a value past INT64_MAX. */
bool cm_duration_read(const char *s, int64_t default_unit, int64_t *ns, int64_t *unit);

#endif
