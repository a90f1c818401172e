/* Reading a file's bytes by pread: a region in full, or a whole regular
 * file into memory under a caller-given limit.  The one place the library
 * and the tool open a file by name and retry interrupted reads and continue
 * short ones (the block index's reads, the .gcdump reader's file, the CLI's
 * sidecar). */
#ifndef CM_FILE_READ_H
#define CM_FILE_READ_H

#include "common/alloc.h"
#include "nettrace.h"

#include <stddef.h>
#include <stdint.h>

/* path opened for reading (O_CLOEXEC); -1, with "PATH: reason" in msg, when it cannot be. */
int cm_open_read(const char *path, char *msg, size_t msg_size);

/* Up to want bytes of fd at offset off into dst: EINTR retried and short
 * reads continued, so *got < want only where the file ends.  Returns 0, or
 * the errno of the read that failed (*got then counts what arrived). */
int cm_read_at(int fd, uint64_t off, void *dst, size_t want, size_t *got);

/* How a whole file is read: max_bytes bounds it (required: a larger file is
 * refused before anything is allocated); the rest zero means none. */
typedef struct cm_file_read {
    uint64_t max_bytes;
    int64_t deadline_ns; /* on cm_clock_ns, checked between 1 MiB pieces */
    void (*progress)(void *user, uint64_t done, uint64_t total);
    void *progress_user;
} cm_file_read;

/* A whole file's bytes: data holds len bytes in a buffer of cap bytes from
 * the cm_mem it was read with (cm_file_bytes_free gives them back). */
typedef struct cm_file_bytes {
    uint8_t *data;
    size_t len;
    size_t cap;
} cm_file_bytes;

/* The regular file on fd from offset at to its end, as fstat sizes it, into
 * out.  A file that shrinks while read gives the bytes that were there.
 * NT_OK, or: NT_ERR_IO (fstat or a read failed: strerror), NT_ERR_INVALID_ARG
 * (not a regular file), NT_ERR_LIMIT (larger than max_bytes), NT_ERR_NOMEM,
 * NT_ERR_TIMEOUT, each with its message in msg; out is empty then. */
nt_status cm_read_file(int fd, uint64_t at, const cm_file_read *how, cm_mem *mem, cm_file_bytes *out, char *msg,
                       size_t msg_size);
void cm_file_bytes_free(cm_mem *mem, cm_file_bytes *b);

#endif
