/* The two sinks a session's stream goes to most often: a file descriptor
 * (what `nettrace collect` records) and a parser (live analysis). */
#include "nettrace_session.h"

#include <errno.h>
#include <unistd.h>

int nt_sink_fd(void *user, const void *data, size_t len)
{
    int fd = *(const int *)user;
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int nt_sink_parser(void *user, const void *data, size_t len)
{
    return nt_parser_feed(user, data, len) == NT_OK ? 0 : 1;
}
