/* One-call entry points: a file, a file descriptor or a memory buffer read
 * through a parser into the heap builder, or, when it starts with the
 * .gcdump magic, by the .gcdump reader (gcdump_read.c). */
#include "heap/heap_internal.h"
#include "heap/gcdump_read.h"
#include "common/abi.h"
#include "common/file_read.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void set_msg(char *msg, size_t size, const char *text)
{
    if (msg && size)
        snprintf(msg, size, "%s", text);
}

/* fd < 0: the buffer. */
static nt_status build(const void *data, size_t len, int fd, const nt_heap_options *given, nt_heap **out,
                       char *msg, size_t msg_size)
{
    *out = NULL;
    nt_heap_options o;
    if (!ABI_IN(nt_heap_options, &o, given)) {
        set_msg(msg, msg_size, "nt_heap_options: a member this library does not know is set");
        return NT_ERR_INVALID_ARG;
    }
    const nt_heap_options *opt = &o;
    const nt_allocator *alloc = opt ? opt->alloc : NULL;
    nt_heap_builder *b = nt_heap_builder_new(opt ? opt->heap_limits : NULL, alloc);
    nt_callbacks cb;
    nt_heap_builder_callbacks(&cb);
    nt_parser *p = b ? nt_parser_new(&cb, b, opt ? opt->limits : NULL, alloc) : NULL;
    if (!p) {
        nt_heap_builder_free(b);
        set_msg(msg, msg_size, "out of memory");
        return NT_ERR_NOMEM;
    }
    nt_status s;
    if (fd < 0) {
        s = nt_parser_feed(p, data, len);
        if (s == NT_OK)
            s = nt_parser_finish(p);
    } else {
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
    }
    if (s != NT_OK && s != NT_ERR_IO && s != NT_ERR_TIMEOUT)
        set_msg(msg, msg_size, nt_parser_message(p));
    else if (s == NT_OK)
        set_msg(msg, msg_size, "");
    if (!nt_parser_trace_info(p)) {
        nt_heap_builder_free(b);
        nt_parser_free(p);
        return s == NT_OK ? NT_ERR_NO_EVENTS : s;
    }
    /* A build stopped by its own limit reports the limit, not the parser's "stopped". */
    nt_status fs = nt_heap_builder_finish(b, p, s, out);
    nt_parser_free(p);
    if (fs != NT_OK) {
        set_msg(msg, msg_size, "out of memory while building the heap");
        return fs;
    }
    if ((*out)->stats.status != NT_OK && (*out)->message[0])
        set_msg(msg, msg_size, (*out)->message);
    else if ((*out)->stats.status == NT_OK && msg && msg_size && !msg[0])
        set_msg(msg, msg_size, (*out)->message);
    return (*out)->stats.status;
}

static nt_status from_gcdump(const void *data, size_t len, const nt_heap_options *given, nt_heap **out, char *msg,
                             size_t msg_size)
{
    *out = NULL;
    nt_heap_options o;
    if (!ABI_IN(nt_heap_options, &o, given)) {
        set_msg(msg, msg_size, "nt_heap_options: a member this library does not know is set");
        return NT_ERR_INVALID_ARG;
    }
    return hp_gcdump_read(data, len, o.heap_limits, o.alloc, out, msg, msg_size);
}

nt_status nt_heap_from_buffer(const void *data, size_t len, const nt_heap_options *opt, nt_heap **out, char *msg,
                              size_t msg_size)
{
    if (!out || (!data && len))
        return NT_ERR_INVALID_ARG;
    if (hp_gcdump_magic(data, len))
        return from_gcdump(data, len, opt, out, msg, msg_size);
    return build(data, len, -1, opt, out, msg, msg_size);
}

/* A regular file from its current offset `at` to its end: read whole
 * (common/file_read.h), minding the deadline and telling the progress. */
static nt_status gcdump_from_fd(int fd, off_t at, const nt_heap_options *given, nt_heap **out, char *msg,
                                size_t msg_size)
{
    nt_heap_options o;
    if (!ABI_IN(nt_heap_options, &o, given)) {
        set_msg(msg, msg_size, "nt_heap_options: a member this library does not know is set");
        return NT_ERR_INVALID_ARG;
    }
    cm_file_read how = { .max_bytes = HP_GCDUMP_MAX_FILE_BYTES, .deadline_ns = o.deadline_ns,
                         .progress = o.progress, .progress_user = o.progress_user };
    cm_mem mem;
    cm_mem_init(&mem, o.alloc);
    cm_file_bytes file;
    char why[200];
    nt_status s = cm_read_file(fd, (uint64_t)at, &how, &mem, &file, why, sizeof why);
    if (s != NT_OK) {
        if (msg && msg_size)
            snprintf(msg, msg_size, ".gcdump: %s", why);
        return s;
    }
    s = hp_gcdump_read(file.data, file.len, o.heap_limits, o.alloc, out, msg, msg_size);
    cm_file_bytes_free(&mem, &file);
    return s;
}

nt_status nt_heap_from_fd(int fd, const nt_heap_options *opt, nt_heap **out, char *msg, size_t msg_size)
{
    if (!out || fd < 0)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    /* A regular file is looked at before it is read (a pipe cannot be: it is read as NetTrace). */
    struct stat st;
    off_t at = lseek(fd, 0, SEEK_CUR);
    unsigned char head[HP_GCDUMP_MAGIC_BYTES];
    size_t got = 0;
    if (at >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > at &&
        cm_read_at(fd, (uint64_t)at, head, sizeof head, &got) == 0 && got == sizeof head &&
        hp_gcdump_magic(head, sizeof head))
        return gcdump_from_fd(fd, at, opt, out, msg, msg_size);
    return build(NULL, 0, fd, opt, out, msg, msg_size);
}

nt_status nt_heap_from_file(const char *path, const nt_heap_options *opt, nt_heap **out, char *msg,
                            size_t msg_size)
{
    if (!out || !path)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    int fd = cm_open_read(path, msg, msg_size);
    if (fd < 0)
        return NT_ERR_IO;
    nt_status s = nt_heap_from_fd(fd, opt, out, msg, msg_size);
    close(fd);
    return s;
}
