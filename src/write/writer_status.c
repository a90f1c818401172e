/* The writer's sticky status: the first failure is kept with its message and
 * every later call returns it.  The bottom of the writer: every other unit
 * reports through here and nothing here calls back up. */
#include "write/writer_internal.h"
#include "common/status.h"

#include <stdarg.h>
#include <stdio.h>

nt_status wr_fail(nt_writer *w, nt_status s, const char *fmt, ...)
{
    if (w->status != NT_OK)
        return w->status;
    w->status = s;
    va_list ap;
    va_start(ap, fmt);
    cm_failure_text(w->msg, sizeof w->msg, 160, s, fmt, ap);
    va_end(ap);
    return s;
}

nt_status wr_usable(nt_writer *w)
{
    if (!w)
        return NT_ERR_INVALID_ARG;
    if (w->status)
        return w->status;
    if (w->finished)
        return wr_fail(w, NT_ERR_STATE, "the stream was already finished");
    return NT_OK;
}

nt_status nt_writer_status(const nt_writer *w) { return w ? w->status : NT_ERR_INVALID_ARG; }
uint64_t nt_writer_offset(const nt_writer *w) { return w ? w->offset : 0; }

const char *nt_writer_message(const nt_writer *w)
{
    return !w || w->status == NT_OK ? "" : w->msg; /* "" when there is no failure to describe */
}
