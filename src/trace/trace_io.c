/* One-call entry points: a file, a file descriptor or a memory buffer read
 * through a parser into the aggregator. */
#include "common/abi.h"
#include "common/file_read.h"
#include "trace/trace_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void tr_set_msg(char *msg, size_t size, const char *text)
{
    if (msg && size)
        snprintf(msg, size, "%s", text);
}

/* Read the input to its end into p and finish it (opt: the deadline and
 * progress of an fd's read); the reason for a failed read or timeout in msg. */
static nt_status feed_input(nt_parser *p, const tr_input *in, const nt_trace_options *opt, char *msg, size_t msg_size)
{
    if (in->fd < 0) {
        nt_status s = nt_parser_feed(p, in->data, in->len);
        return s == NT_OK ? nt_parser_finish(p) : s;
    }
    nt_feed_options fo = { 0 };
    if (opt) {
        fo.deadline_ns = opt->deadline_ns;
        fo.progress = opt->progress;
        fo.progress_user = opt->progress_user;
    }
    int err = 0;
    nt_status s = nt_parser_feed_fd(p, in->fd, &fo, &err);
    if (s == NT_ERR_IO)
        tr_set_msg(msg, msg_size, err ? strerror(err) : "read failed");
    else if (s == NT_ERR_TIMEOUT)
        tr_set_msg(msg, msg_size, "the deadline passed while reading");
    else if (s == NT_ERR_NOMEM && !nt_parser_trace_info(p))
        tr_set_msg(msg, msg_size, "out of memory");
    return s;
}

/* After the read ended with s: the parser's message (or "") in msg; false
 * when there is no header to build from. */
static bool read_done(const nt_parser *p, nt_status s, char *msg, size_t msg_size)
{
    /* For I/O problems and timeouts the message is already set. */
    if (s != NT_OK && s != NT_ERR_IO && s != NT_ERR_TIMEOUT)
        tr_set_msg(msg, msg_size, nt_parser_message(p));
    else if (s == NT_OK)
        tr_set_msg(msg, msg_size, "");
    return nt_parser_trace_info(p) != NULL;
}

/* Read the input through a parser into builder b (NULL: its creation failed)
 * of kind k, and finish: what was built is handed over whenever the header
 * was read, and msg says why it is incomplete (the parser's reason, or the
 * limit the build reached). */
nt_status tr_build_input(const tr_build_kind *k, void *b, const tr_input *in, const nt_trace_options *opt,
                         void *out, char *msg, size_t msg_size)
{
    const nt_allocator *alloc = opt ? opt->alloc : NULL;
    nt_callbacks cb = { 0 };
    k->callbacks(&cb);
    nt_parser *p = b ? nt_parser_new(&cb, b, opt ? opt->limits : NULL, alloc) : NULL;
    if (!p) {
        if (b)
            k->free(b);
        tr_set_msg(msg, msg_size, "out of memory");
        return NT_ERR_NOMEM;
    }
    nt_parser_set_lazy_names(p, true); /* the builder converts only the names it keeps */
    nt_status s = feed_input(p, in, opt, msg, msg_size);
    if (!read_done(p, s, msg, msg_size)) {
        k->free(b);
        nt_parser_free(p);
        return s == NT_OK ? NT_ERR_NO_EVENTS : s;
    }
    const nt_trace *t = NULL;
    nt_status fs = k->finish(b, p, s, out, &t);
    nt_parser_free(p);
    if (fs != NT_OK) {
        tr_set_msg(msg, msg_size, "out of memory while resolving the trace");
        return fs;
    }
    if (t->status != NT_OK)
        tr_set_msg(msg, msg_size, nt_trace_message(t)); /* the parser's, or the limit the build reached */
    return t->status;
}

static void trace_callbacks(nt_callbacks *cb) { nt_trace_builder_callbacks(cb); }
static void trace_free(void *b) { nt_trace_builder_free(b); }

/* The trace is handed over only when it was resolved. */
static nt_status trace_finish(void *b, nt_parser *p, nt_status s, void *out, const nt_trace **built)
{
    nt_trace *t = NULL;
    nt_status fs = nt_trace_builder_finish(b, p, s, &t);
    if (fs == NT_OK)
        *(nt_trace **)out = t;
    *built = t;
    return fs;
}

const tr_build_kind tr_trace_kind = { trace_callbacks, trace_free, trace_finish };

/* An aggregated trace whose counts could not follow the clock is built
 * again sample by sample (the caller re-reads the input). */
static bool again(nt_trace **out)
{
    if (!*out || !(*out)->inexact)
        return false;
    nt_trace_free(*out);
    *out = NULL;
    return true;
}

/* One read of the input into a trace. */
static nt_status from_input(const tr_input *in, const nt_trace_options *opt, bool aggregate, nt_trace **out,
                            char *msg, size_t msg_size)
{
    *out = NULL;
    nt_trace_builder *b = nt_trace_builder_new(opt ? opt->alloc : NULL);
    if (b) {
        nt_trace_builder_set_limits(b, opt ? opt->trace_limits : NULL);
        if (aggregate)
            nt_trace_builder_count_samples(b);
    }
    return tr_build_input(&tr_trace_kind, b, in, opt, out, msg, msg_size);
}

nt_status nt_trace_from_buffer(const void *data, size_t len, const nt_trace_options *given, nt_trace **out,
                               char *msg, size_t msg_size)
{
    nt_trace_options opts, *opt = &opts;
    if (!out || (!data && len) || !ABI_IN(nt_trace_options, opt, given))
        return NT_ERR_INVALID_ARG;
    bool aggregate = opt && opt->aggregate;
    tr_input in = { data, len, -1 };
    nt_status s = from_input(&in, opt, aggregate, out, msg, msg_size);
    if (aggregate && again(out))
        s = from_input(&in, opt, false, out, msg, msg_size);
    return s;
}

nt_status nt_trace_from_fd(int fd, const nt_trace_options *given, nt_trace **out, char *msg, size_t msg_size)
{
    nt_trace_options opts, *opt = &opts;
    if (!out || fd < 0 || !ABI_IN(nt_trace_options, opt, given))
        return NT_ERR_INVALID_ARG;
    /* Counting needs a second read when it cannot be exact: only where the input can be read again. */
    off_t start = opt && opt->aggregate ? lseek(fd, 0, SEEK_CUR) : -1;
    tr_input in = { NULL, 0, fd };
    nt_status s = from_input(&in, opt, start >= 0, out, msg, msg_size);
    if (start >= 0 && again(out)) {
        if (lseek(fd, start, SEEK_SET) != start) {
            tr_set_msg(msg, msg_size, strerror(errno));
            return NT_ERR_IO;
        }
        s = from_input(&in, opt, false, out, msg, msg_size);
    }
    return s;
}

nt_status nt_trace_from_file(const char *path, const nt_trace_options *opt, nt_trace **out, char *msg,
                             size_t msg_size)
{
    if (!out || !path)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    int fd = cm_open_read(path, msg, msg_size);
    if (fd < 0)
        return NT_ERR_IO;
    nt_status s = nt_trace_from_fd(fd, opt, out, msg, msg_size);
    close(fd);
    return s;
}
