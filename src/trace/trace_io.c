/* One-call entry points: a file, a file descriptor or a memory buffer read
 * through a parser into the aggregator. */
#include "trace/trace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void set_msg(char *msg, size_t size, const char *text)
{
    if (msg && size)
        snprintf(msg, size, "%s", text);
}

/* Start a parser whose callbacks build a trace. */
/* A builder and its parser for one read; *out NULL until end().  Short of
 * memory the message says so. */
static nt_status begin(const nt_trace_options *opt, bool aggregate, nt_trace_builder **b, nt_parser **p,
                       nt_trace **out, char *msg, size_t msg_size)
{
    *out = NULL;
    *p = NULL;
    const nt_allocator *alloc = opt ? opt->alloc : NULL;
    *b = nt_trace_builder_new(alloc);
    if (!*b)
        goto nomem;
    nt_trace_builder_set_limits(*b, opt ? opt->trace_limits : NULL);
    if (aggregate)
        nt_trace_builder_count_samples(*b);
    nt_callbacks cb;
    nt_trace_builder_callbacks(&cb);
    *p = nt_parser_new(&cb, *b, opt ? opt->limits : NULL, alloc);
    if (!*p) {
        nt_trace_builder_free(*b);
        goto nomem;
    }
    nt_parser_set_lazy_names(*p, true); /* the builder converts only the names it keeps */
    return NT_OK;
nomem:
    set_msg(msg, msg_size, "out of memory");
    return NT_ERR_NOMEM;
}

/* Finish: the trace is handed over whenever the header was read. */
static nt_status end(nt_trace_builder *b, nt_parser *p, nt_status s, nt_trace **out, char *msg, size_t msg_size)
{
    *out = NULL;
    /* For I/O problems and timeouts the message is already set. */
    if (s != NT_OK && s != NT_ERR_IO && s != NT_ERR_TIMEOUT)
        set_msg(msg, msg_size, nt_parser_message(p));
    else if (s == NT_OK)
        set_msg(msg, msg_size, "");
    if (!nt_parser_trace_info(p)) {
        nt_trace_builder_free(b);
        nt_parser_free(p);
        return s == NT_OK ? NT_ERR_NO_EVENTS : s;
    }
    nt_trace *t = NULL;
    nt_status fs = nt_trace_builder_finish(b, p, s, &t);
    nt_parser_free(p);
    if (fs != NT_OK) {
        set_msg(msg, msg_size, "out of memory while resolving the trace");
        return fs;
    }
    *out = t;
    if (t->status != NT_OK)
        set_msg(msg, msg_size, nt_trace_message(t)); /* the parser's, or the limit the build reached */
    return t->status;
}

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

static nt_status from_buffer(const void *data, size_t len, const nt_trace_options *opt, bool aggregate,
                             nt_trace **out, char *msg, size_t msg_size)
{
    nt_trace_builder *b;
    nt_parser *p;
    nt_status s = begin(opt, aggregate, &b, &p, out, msg, msg_size);
    if (s != NT_OK)
        return s;
    s = nt_parser_feed(p, data, len);
    if (s == NT_OK)
        s = nt_parser_finish(p);
    return end(b, p, s, out, msg, msg_size);
}

nt_status nt_trace_from_buffer(const void *data, size_t len, const nt_trace_options *opt, nt_trace **out,
                               char *msg, size_t msg_size)
{
    if (!out || (!data && len))
        return NT_ERR_INVALID_ARG;
    bool aggregate = opt && opt->aggregate;
    nt_status s = from_buffer(data, len, opt, aggregate, out, msg, msg_size);
    if (aggregate && again(out))
        s = from_buffer(data, len, opt, false, out, msg, msg_size);
    return s;
}

static nt_status from_fd(int fd, const nt_trace_options *opt, bool aggregate, nt_trace **out, char *msg,
                         size_t msg_size)
{
    nt_trace_builder *b;
    nt_parser *p;
    nt_status s = begin(opt, aggregate, &b, &p, out, msg, msg_size);
    if (s != NT_OK)
        return s;
    nt_feed_options fo = { 0 };
    if (opt) {
        fo.deadline_ns = opt->deadline_ns;
        fo.progress = opt->progress;
        fo.progress_user = opt->progress_user;
    }
    int err = 0;
    s = nt_parser_feed_fd(p, fd, &fo, &err);
    if (s == NT_ERR_IO)
        set_msg(msg, msg_size, err ? strerror(err) : "read failed");
    else if (s == NT_ERR_TIMEOUT)
        set_msg(msg, msg_size, "the deadline passed while reading");
    else if (s == NT_ERR_NOMEM && !nt_parser_trace_info(p))
        set_msg(msg, msg_size, "out of memory");
    return end(b, p, s, out, msg, msg_size);
}

nt_status nt_trace_from_fd(int fd, const nt_trace_options *opt, nt_trace **out, char *msg, size_t msg_size)
{
    if (!out || fd < 0)
        return NT_ERR_INVALID_ARG;
    /* Counting needs a second read when it cannot be exact: only where the input can be read again. */
    off_t start = opt && opt->aggregate ? lseek(fd, 0, SEEK_CUR) : -1;
    nt_status s = from_fd(fd, opt, start >= 0, out, msg, msg_size);
    if (start >= 0 && again(out)) {
        if (lseek(fd, start, SEEK_SET) != start) {
            set_msg(msg, msg_size, strerror(errno));
            return NT_ERR_IO;
        }
        s = from_fd(fd, opt, false, out, msg, msg_size);
    }
    return s;
}

nt_status nt_trace_from_file(const char *path, const nt_trace_options *opt, nt_trace **out, char *msg,
                             size_t msg_size)
{
    if (!out || !path)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (msg && msg_size)
            snprintf(msg, msg_size, "%s: %s", path, strerror(errno));
        return NT_ERR_IO;
    }
    nt_status s = nt_trace_from_fd(fd, opt, out, msg, msg_size);
    close(fd);
    return s;
}
