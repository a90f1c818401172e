/* Reading a file's bytes by pread (file_read.h). */
#include "common/file_read.h"
#include "common/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Pieces of a whole-file read: the deadline and the progress are looked at between them. */
#define PIECE_BYTES ((size_t)1 << 20)

int cm_open_read(const char *path, char *msg, size_t msg_size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && msg && msg_size)
        snprintf(msg, msg_size, "%s: %s", path, strerror(errno));
    return fd;
}

int cm_read_at(int fd, uint64_t off, void *dst, size_t want, size_t *got)
{
    *got = 0;
    while (*got < want) {
        ssize_t n = pread(fd, (uint8_t *)dst + *got, want - *got, (off_t)(off + *got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno ? errno : EIO;
        if (n == 0)
            break;
        *got += (size_t)n;
    }
    return 0;
}

static nt_status fail(char *msg, size_t msg_size, nt_status s, const char *text)
{
    if (msg && msg_size)
        snprintf(msg, msg_size, "%s", text);
    return s;
}

/* The size bytes at `at` into out->data, piece by piece. */
static nt_status read_pieces(int fd, uint64_t at, size_t size, const cm_file_read *how, cm_file_bytes *out,
                             char *msg, size_t msg_size)
{
    while (out->len < size) {
        if (how->deadline_ns && cm_clock_ns() > how->deadline_ns)
            return fail(msg, msg_size, NT_ERR_TIMEOUT, "the deadline passed while reading");
        size_t want = size - out->len < PIECE_BYTES ? size - out->len : PIECE_BYTES;
        size_t got = 0;
        int err = cm_read_at(fd, at + out->len, out->data + out->len, want, &got);
        if (err)
            return fail(msg, msg_size, NT_ERR_IO, strerror(err));
        out->len += got;
        if (how->progress)
            how->progress(how->progress_user, out->len, size);
        if (got < want) /* the file shrank: what is there is what is read */
            break;
    }
    return NT_OK;
}

nt_status cm_read_file(int fd, uint64_t at, const cm_file_read *how, cm_mem *mem, cm_file_bytes *out, char *msg,
                       size_t msg_size)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (fstat(fd, &st) != 0)
        return fail(msg, msg_size, NT_ERR_IO, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return fail(msg, msg_size, NT_ERR_INVALID_ARG, "not a regular file");
    uint64_t size = (uint64_t)st.st_size > at ? (uint64_t)st.st_size - at : 0;
    if (size > how->max_bytes || size > SIZE_MAX - 1) {
        if (msg && msg_size)
            snprintf(msg, msg_size, "the file's %llu bytes pass the limit of %llu bytes", (unsigned long long)size,
                     (unsigned long long)how->max_bytes);
        return NT_ERR_LIMIT;
    }
    out->cap = size ? (size_t)size : 1; /* a valid pointer to no bytes for an empty file */
    out->data = cm_mem_alloc(mem, out->cap);
    if (!out->data) {
        out->cap = 0;
        return fail(msg, msg_size, NT_ERR_NOMEM, "out of memory for the file's bytes");
    }
    nt_status s = read_pieces(fd, at, (size_t)size, how, out, msg, msg_size);
    if (s != NT_OK)
        cm_file_bytes_free(mem, out);
    return s;
}

void cm_file_bytes_free(cm_mem *mem, cm_file_bytes *b)
{
    cm_mem_free(mem, b->data, b->cap);
    memset(b, 0, sizeof *b);
}
