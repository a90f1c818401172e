/* One-call entry points of the profiles: a file or a buffer read through a
 * parser into a profile builder (opening, reading and messages as
 * trace_io.c's). */
#include "trace/profile_internal.h"

#include <unistd.h>

static nt_status begin(const nt_profile_options *opt, nt_profile_builder **b, nt_parser **p)
{
    const nt_trace_options *to = opt ? opt->trace : NULL;
    const nt_allocator *alloc = to ? to->alloc : NULL;
    *b = nt_profile_builder_new(opt, alloc);
    if (!*b)
        return NT_ERR_NOMEM;
    nt_callbacks cb;
    nt_profile_builder_callbacks(&cb);
    *p = nt_parser_new(&cb, *b, to ? to->limits : NULL, alloc);
    if (!*p) {
        nt_profile_builder_free(*b);
        return NT_ERR_NOMEM;
    }
    nt_parser_set_lazy_names(*p, true); /* the trace builder inside converts only the names it keeps */
    return NT_OK;
}

/* The profile is handed over whenever the header was read (as for nt_trace). */
static nt_status end(nt_profile_builder *b, nt_parser *p, nt_status s, nt_profile **out, char *msg,
                     size_t msg_size)
{
    if (!tr_read_done(p, s, msg, msg_size)) {
        nt_profile_builder_free(b);
        nt_parser_free(p);
        return s == NT_OK ? NT_ERR_NO_EVENTS : s;
    }
    nt_status fs = nt_profile_builder_finish(b, p, s, out);
    nt_parser_free(p);
    if (fs != NT_OK) {
        tr_set_msg(msg, msg_size, "out of memory while resolving the trace");
        return fs;
    }
    return nt_profile_trace(*out)->status;
}

static nt_status from_input(const tr_input *in, const nt_profile_options *opt, nt_profile **out, char *msg,
                            size_t msg_size)
{
    nt_profile_builder *b;
    nt_parser *p;
    nt_status s = begin(opt, &b, &p);
    if (s != NT_OK) {
        tr_set_msg(msg, msg_size, "out of memory");
        return s;
    }
    s = tr_feed_input(p, in, opt ? opt->trace : NULL, msg, msg_size);
    return end(b, p, s, out, msg, msg_size);
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
    tr_input in = { NULL, 0, tr_open_read(path, msg, msg_size) };
    if (in.fd < 0)
        return NT_ERR_IO;
    nt_status s = from_input(&in, opt, out, msg, msg_size);
    close(in.fd);
    return s;
}
