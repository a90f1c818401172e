/* A failure's message, formatted one way for the parser and the writer. */
#ifndef CM_STATUS_H
#define CM_STATUS_H

#include "common/compiler.h"
#include "nettrace.h"

#include <stdarg.h>
#include <stddef.h>

#define CM_FAILURE_WHAT_MAX 200

/* msg (size bytes) = "NAME: WHAT", NAME the status's short name and WHAT fmt
 * over ap cut to what_max - 1 bytes (what_max at most CM_FAILURE_WHAT_MAX).
 * Returns the length written, so a caller can append where it happened. */
size_t cm_failure_text(char *msg, size_t size, size_t what_max, nt_status s, const char *fmt, va_list ap)
#if defined(__GNUC__)
    CC_PRINTF(5, 0)
#endif
    ;

#endif
