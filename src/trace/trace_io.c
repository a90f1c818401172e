/* One-call entry points: a file, a file descriptor or a memory buffer read
 * through a parser into the aggregator. */
#include "trace/trace_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TR_READ_CHUNK (1024u * 1024u)
/* read() copies into a cache-line-aligned buffer: the kernel's copy into a
 * buffer 16 bytes past a line (where malloc puts large blocks) took twice as
 * long on the benchmark machine, 66 against 31 ms for the 100 MB trace,
 * more than parsing it (bench/README.md). */
#define TR_READ_ALIGN 64u

static void set_msg(char *msg, size_t size, const char *text)
{
    if (msg && size)
        snprintf(msg, size, "%s", text);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Start a parser whose callbacks build a trace. */
static nt_status begin(const nt_trace_options *opt, nt_trace_builder **b, nt_parser **p)
{
    const nt_allocator *alloc = opt ? opt->alloc : NULL;
    *b = nt_trace_builder_new(alloc);
    if (!*b)
        return NT_ERR_NOMEM;
    nt_callbacks cb;
    nt_trace_builder_callbacks(&cb);
    *p = nt_parser_new(&cb, *b, opt ? opt->limits : NULL, alloc);
    if (!*p) {
        nt_trace_builder_free(*b);
        return NT_ERR_NOMEM;
    }
    return NT_OK;
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
    return t->status;
}

nt_status nt_trace_from_buffer(const void *data, size_t len, const nt_trace_options *opt, nt_trace **out,
                               char *msg, size_t msg_size)
{
    if (!out || (!data && len))
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    nt_trace_builder *b;
    nt_parser *p;
    nt_status s = begin(opt, &b, &p);
    if (s != NT_OK) {
        set_msg(msg, msg_size, "out of memory");
        return s;
    }
    s = nt_parser_feed(p, data, len);
    if (s == NT_OK)
        s = nt_parser_finish(p);
    return end(b, p, s, out, msg, msg_size);
}

nt_status nt_trace_from_fd(int fd, const nt_trace_options *opt, nt_trace **out, char *msg, size_t msg_size)
{
    if (!out || fd < 0)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    nt_trace_builder *b;
    nt_parser *p;
    nt_status s = begin(opt, &b, &p);
    if (s != NT_OK) {
        set_msg(msg, msg_size, "out of memory");
        return s;
    }
    uint64_t total = 0, done = 0;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        total = (uint64_t)st.st_size;
    int64_t deadline = opt ? opt->deadline_ns : 0;
    static const size_t chunk = TR_READ_CHUNK;
    nt_mem m;
    nt_mem_init(&m, opt ? opt->alloc : NULL);
    unsigned char *raw = nt_mem_alloc(&m, chunk + TR_READ_ALIGN), *buf = NULL;
    if (raw)
        buf = raw + (TR_READ_ALIGN - (uintptr_t)raw % TR_READ_ALIGN) % TR_READ_ALIGN;
    if (!buf) {
        nt_trace_builder_free(b);
        nt_parser_free(p);
        set_msg(msg, msg_size, "out of memory");
        return NT_ERR_NOMEM;
    }
    for (;;) {
        if (deadline) {
            int64_t left = deadline - mono_ns();
            if (left <= 0) {
                s = NT_ERR_TIMEOUT;
                set_msg(msg, msg_size, "the deadline passed while reading");
                break;
            }
            struct pollfd pfd = { fd, POLLIN, 0 };
            int ms = left / 1000000 > 60000 ? 60000 : (int)(left / 1000000) + 1;
            int r = poll(&pfd, 1, ms);
            if (r < 0 && errno != EINTR) {
                s = NT_ERR_IO;
                set_msg(msg, msg_size, strerror(errno));
                break;
            }
            if (r <= 0)
                continue;
        }
        ssize_t n = read(fd, buf, chunk);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                /* A non-blocking descriptor: wait for data rather than spin. */
                if (!deadline) {
                    struct pollfd pfd = { fd, POLLIN, 0 };
                    poll(&pfd, 1, -1);
                }
                continue;
            }
            s = NT_ERR_IO;
            set_msg(msg, msg_size, strerror(errno));
            break;
        }
        if (n == 0) {
            s = nt_parser_finish(p);
            break;
        }
        done += (uint64_t)n;
        s = nt_parser_feed(p, buf, (size_t)n);
        if (opt && opt->progress)
            opt->progress(opt->progress_user, done, total);
        if (s != NT_OK)
            break;
    }
    nt_mem_free(&m, raw, chunk + TR_READ_ALIGN);
    return end(b, p, s, out, msg, msg_size);
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
