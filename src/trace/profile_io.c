/* One-call entry points of the profiles: a file or a buffer read through a
 * parser into a profile builder, by trace_io.c's steps (so opening, reading
 * and messages are the trace's). */
#include "common/abi.h"
#include "common/file_read.h"
#include "trace/profile_internal.h"

#include <unistd.h>

static void profile_callbacks(nt_callbacks *cb) { nt_profile_builder_callbacks(cb); }
static void profile_free(void *b) { nt_profile_builder_free(b); }

static nt_status profile_finish(void *b, nt_parser *p, nt_status s, void *out, const nt_trace **built)
{
    nt_profile **pout = out;
    nt_status fs = nt_profile_builder_finish(b, p, s, pout);
    *built = *pout ? nt_profile_trace(*pout) : NULL;
    return fs;
}

const tr_build_kind pr_profile_kind = { profile_callbacks, profile_free, profile_finish };

static nt_status from_input(const tr_input *in, const nt_profile_options *opt, nt_profile **out, char *msg,
                            size_t msg_size)
{
    nt_profile_options po;
    nt_trace_options to;
    if (!ABI_IN(nt_profile_options, &po, opt) || !ABI_IN(nt_trace_options, &to, po.trace))
        return NT_ERR_INVALID_ARG;
    nt_profile_builder *b = nt_profile_builder_new(&po, to.alloc);
    return tr_build_input(&pr_profile_kind, b, in, &to, out, msg, msg_size);
}

nt_status nt_profile_from_buffer(const void *data, size_t len, const nt_profile_options *opt, nt_profile **out,
                                 char *msg, size_t msg_size)
{
    if (!out || (!data && len))
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    tr_input in = { data, len, -1 };
    return from_input(&in, opt, out, msg, msg_size);
}

nt_status nt_profile_from_file(const char *path, const nt_profile_options *opt, nt_profile **out, char *msg,
                               size_t msg_size)
{
    if (!out || !path)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    tr_input in = { NULL, 0, cm_open_read(path, msg, msg_size) };
    if (in.fd < 0)
        return NT_ERR_IO;
    nt_status s = from_input(&in, opt, out, msg, msg_size);
    close(in.fd);
    return s;
}
