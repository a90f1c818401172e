/* nt_parser_feed_fd: a file, pipe or socket read to its end into a parser.
 * The one read loop of the library (the trace's one-call entry points) and
 * the tool (its progress bar). */
#include "common/abi.h"
#include "common/clock.h"
#include "parse/context.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define FEED_CHUNK (1u << 20)
/* read() copies into a cache-line-aligned buffer: the kernel's copy into a
 * buffer 16 bytes past a line (where malloc puts large blocks) took twice as
 * long on the benchmark machine, 66 against 31 ms for the 100 MB trace,
 * more than parsing it (bench/README.md). */
#define FEED_ALIGN 64u

/* Wait until fd is readable or the deadline passes (deadline 0: forever). */
static nt_status wait_readable(int fd, int64_t deadline, int *err)
{
    for (;;) {
        int ms = -1;
        if (deadline) {
            int64_t left = deadline - cm_clock_ns();
            if (left <= 0)
                return NT_ERR_TIMEOUT;
            ms = left / 1000000 > 60000 ? 60000 : (int)(left / 1000000) + 1;
        }
        struct pollfd pfd = { fd, POLLIN, 0 };
        int r = poll(&pfd, 1, ms);
        if (r > 0)
            return NT_OK;
        if (r < 0 && errno != EINTR) {
            *err = errno;
            return NT_ERR_IO;
        }
    }
}

nt_status nt_parser_feed_fd(nt_parser *p, int fd, const nt_feed_options *opt, int *os_error)
{
    int err = 0;
    if (os_error)
        *os_error = 0;
    if (!p || fd < 0)
        return NT_ERR_INVALID_ARG;
    nt_feed_options o;
    if (!ABI_IN(nt_feed_options, &o, opt))
        return NT_ERR_INVALID_ARG;
    if (o.deadline_ns == INT64_MAX)
        o.deadline_ns = 0;
    size_t chunk = o.chunk_bytes ? o.chunk_bytes : FEED_CHUNK;
    uint64_t total = 0, done = 0;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        total = (uint64_t)st.st_size;

    /* The parser's allocator, but not its memory figures: the buffer is the caller's I/O, not parser state. */
    cm_mem m;
    cm_mem_init(&m, &p->mem.a);
    unsigned char *raw = cm_mem_alloc(&m, chunk + FEED_ALIGN);
    if (!raw)
        return NT_ERR_NOMEM;
    unsigned char *buf = raw + (FEED_ALIGN - (uintptr_t)raw % FEED_ALIGN) % FEED_ALIGN;
    nt_status s = NT_OK;
    for (;;) {
        if (o.deadline_ns && (s = wait_readable(fd, o.deadline_ns, &err)) != NT_OK)
            break;
        ssize_t n = read(fd, buf, chunk);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                /* A non-blocking descriptor: wait for data rather than spin. */
                if (!o.deadline_ns && (s = wait_readable(fd, 0, &err)) != NT_OK)
                    break;
                continue;
            }
            err = errno;
            s = NT_ERR_IO;
            break;
        }
        if (n == 0) {
            s = nt_parser_finish(p);
            break;
        }
        done += (uint64_t)n;
        s = nt_parser_feed(p, buf, (size_t)n);
        if (o.progress)
            o.progress(o.progress_user, done, total);
        if (s != NT_OK)
            break;
    }
    cm_mem_free(&m, raw, chunk + FEED_ALIGN);
    if (os_error)
        *os_error = err;
    return s;
}
