/* Saturating int64 arithmetic for numbers a trace gives (its clock, its byte
 * counts): a hostile trace puts operands anywhere in int64, where C's signed
 * overflow is undefined.  Results clamp to INT64_MIN / INT64_MAX, as
 * nt_ticks_to_ns does. */
#ifndef CM_SAT_H
#define CM_SAT_H

#include <stdint.h>

static inline int64_t cm_sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

static inline int64_t cm_sat_sub(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* The time from start to end: never negative (an end before its start, as a
 * disordered trace has, is 0), at most INT64_MAX. */
static inline int64_t cm_elapsed(int64_t start, int64_t end)
{
    if (end <= start)
        return 0;
    uint64_t d = (uint64_t)end - (uint64_t)start;
    return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}

#endif
