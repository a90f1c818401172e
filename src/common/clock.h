/* The monotonic clock deadlines are measured on (CLOCK_MONOTONIC, ns). */
#ifndef CM_CLOCK_H
#define CM_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t cm_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
