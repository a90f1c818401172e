/* Reading the small /proc files endpoint discovery and process listing need. */
#ifndef SS_PROCFS_H
#define SS_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

/* Read a small file whole (NUL-terminated, at most cap - 1 bytes); -1 with errno on failure. */
ssize_t procfs_read(const char *path, char *buf, size_t cap);

#endif
