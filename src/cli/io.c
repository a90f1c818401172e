/* Reading a trace file into a parser, with a progress bar on terminals. */
#include "cli/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1u << 20)

int cli_exit_code(nt_status s)
{
    if (s == NT_OK)
        return CLI_EXIT_OK;
    if (s == NT_ERR_IO)
        return CLI_EXIT_ERROR;
    return CLI_EXIT_STREAM_BASE + (int)s;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Drawn only on a terminal and only once a read has taken half a second, so
 * pipelines and quick reads stay quiet. */
typedef struct progress {
    bool enabled, shown;
    double start, last;
    uint64_t total;
} progress;

static void progress_update(progress *pr, uint64_t done)
{
    if (!pr->enabled)
        return;
    double t = now_s();
    if (t - pr->start < 0.5 || t - pr->last < 0.1)
        return;
    pr->last = t;
    pr->shown = true;
    if (pr->total) {
        int pct = (int)(done * 100 / pr->total);
        int bar = pct / 4;
        fprintf(stderr, "\r[%-25.*s] %3d%% %llu MB", bar, "#########################", pct,
                (unsigned long long)(done >> 20));
    } else {
        fprintf(stderr, "\r%llu MB read", (unsigned long long)(done >> 20));
    }
}

static void progress_end(progress *pr)
{
    if (pr->shown)
        fputs("\r\033[K", stderr);
}

nt_status cli_feed_path(nt_parser *p, const char *path, char *errbuf, size_t errsize)
{
    int fd = 0;
    if (strcmp(path, "-") != 0) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            snprintf(errbuf, errsize, "%s: %s", path, strerror(errno));
            return NT_ERR_IO;
        }
    }
    progress pr = { 0 };
    pr.enabled = isatty(2) && getenv("NETTRACE_NO_PROGRESS") == NULL;
    pr.start = pr.last = now_s();
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        pr.total = (uint64_t)st.st_size;

    /* Cache-line aligned: read()'s copy into a misaligned buffer costs twice
     * as much (see TR_READ_ALIGN in src/trace_io.c). */
    static _Alignas(64) unsigned char buf[CHUNK];
    nt_status s = NT_OK;
    uint64_t done = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            snprintf(errbuf, errsize, "%s: %s", path, strerror(errno));
            s = NT_ERR_IO;
            break;
        }
        if (n == 0) {
            s = nt_parser_finish(p);
            break;
        }
        done += (uint64_t)n;
        s = nt_parser_feed(p, buf, (size_t)n);
        if (s != NT_OK)
            break;
        progress_update(&pr, done);
    }
    progress_end(&pr);
    if (fd != 0)
        close(fd);
    if (s != NT_ERR_IO)
        snprintf(errbuf, errsize, "%s", nt_parser_message(p));
    return s;
}

FILE *cli_output_open(const char *path)
{
    if (!path || strcmp(path, "-") == 0)
        return stdout;
    FILE *f = fopen(path, "wb");
    if (!f)
        fprintf(stderr, "nettrace: %s: %s\n", path, strerror(errno));
    return f;
}

int cli_write_file(void *user, const void *data, size_t len)
{
    return fwrite(data, 1, len, (FILE *)user) == len ? 0 : -1;
}

int cli_output_close(FILE *out, const char *path, nt_status s, int rc)
{
    if (fflush(out) != 0)
        s = NT_ERR_IO;
    if (out != stdout && fclose(out) != 0)
        s = NT_ERR_IO;
    if (s == NT_OK)
        return rc;
    fprintf(stderr, "nettrace: writing %s failed: %s\n", path && strcmp(path, "-") != 0 ? path : "standard output",
            nt_status_describe(s));
    return CLI_EXIT_ERROR;
}
