/* The parser's limits as a caller gives them: zero in any field selects its
 * default (nt_limits_default), the one rule for every nt_limits. */
#ifndef CM_LIMITS_H
#define CM_LIMITS_H

#include "nettrace.h"
#include "nettrace_trace.h"

/* *out = the defaults, with each non-zero field of `given` (may be NULL) taken. */
void cm_limits_resolve(nt_limits *out, const nt_limits *given);
/* The same for what a trace or an event profile may hold. */
void cm_trace_limits_resolve(nt_trace_limits *out, const nt_trace_limits *given);

#endif
