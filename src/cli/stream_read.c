/* Reading a trace file into callbacks: by one parser (cli_feed_path), or by
 * the parallel parse (nettrace_parallel.h) over a read-only map of the file
 * when it pays -- a regular file of at least CLI_PARALLEL_MIN_BYTES and a job
 * count other than 1.  Both deliver the same callbacks; pipes and standard
 * input are read once, in order, by one parser. */
#include "cli/stream_read.h"
#include "cli/progress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static uint32_t jobs_wanted; /* --jobs: 0 = the processors online */

void cli_stream_set_jobs(uint32_t jobs) { jobs_wanted = jobs; }

bool cli_parse_jobs(const char *arg, const char *cmd)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(arg, &end, 10);
    if (errno || end == arg || *end || arg[0] == '-' || n < 1 || n > NT_DEFAULT_PARALLEL_MAX_JOBS) {
        fprintf(stderr, "nettrace %s: --jobs takes a count of threads from 1 to %u, not '%s'\n", cmd,
                NT_DEFAULT_PARALLEL_MAX_JOBS, arg);
        return false;
    }
    cli_stream_set_jobs((uint32_t)n);
    return true;
}

/* The file on fd mapped read-only when the parallel parse should read it; false otherwise (st untouched). */
static bool map_for_parallel(cli_stream *st, int fd, const char *path)
{
    if (jobs_wanted == 1 || strcmp(path, "-") == 0)
        return false;
    if (jobs_wanted == 0 && sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return false;
    struct stat sb;
    void *map = MAP_FAILED;
    /* By default only files large enough to gain; --jobs N asks for it on any file. */
    uint64_t min = jobs_wanted ? 1 : CLI_PARALLEL_MIN_BYTES;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size >= min && (uint64_t)sb.st_size <= SIZE_MAX)
        map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return false;
    st->map = map;
    st->len = (size_t)sb.st_size;
    return true;
}

/* One parser over fd: the window's blocks through the sidecar, or the whole stream. */
static nt_status read_sequential(cli_stream *st, int fd, const char *path, const nt_time_bound *from,
                                 const nt_time_bound *to, const nt_callbacks *cb, void *user, bool lazy_names,
                                 char *err, size_t errsize)
{
    st->p = nt_parser_new(cb, user, NULL, NULL);
    if (!st->p) {
        snprintf(err, errsize, "out of memory");
        return NT_ERR_NOMEM;
    }
    nt_parser_set_lazy_names(st->p, lazy_names);
    if (fd < 0) /* err says why it could not be opened; the parser is there, as the header promises */
        return NT_ERR_IO;
    return cli_feed_fd_window(st->p, fd, path, from, to, err, errsize);
}

nt_status cli_stream_read(cli_stream *st, const char *path, const nt_time_bound *from, const nt_time_bound *to,
                          const nt_callbacks *cb, void *user, const nt_parallel_consumer *consumer, bool lazy_names,
                          char *err, size_t errsize)
{
    memset(st, 0, sizeof *st);
    /* One open decides every way the file is read: the map for the parallel parse, the sidecar, the plain read. */
    int fd = cli_open_input(path, err, errsize);
    /* A window is read by one parser: through the sidecar it reads only the window's blocks (io_window.c),
     * which beats decoding all of them on every core; without one it reads the whole trace. */
    bool window = (from && from->set) || (to && to->set);
    if (fd < 0 || window || !map_for_parallel(st, fd, path)) {
        nt_status s = read_sequential(st, fd, path, from, to, cb, user, lazy_names, err, errsize);
        cli_close_input(fd);
        return s;
    }
    cli_close_input(fd); /* the map keeps the file's bytes */
    cli_progress_start();
    cli_progress_phase("reading");
    nt_parallel_options opt = { .struct_size = sizeof opt, .jobs = jobs_wanted, .lazy_names = lazy_names,
                                .consumer = consumer };
    /* Smaller parts, so that the tests cut small files too (nettrace(1), ENVIRONMENT). */
    const char *part = getenv("NETTRACE_PART_BYTES");
    if (part && *part)
        opt.part_bytes = strtoull(part, NULL, 10);
    nt_status s = nt_parse_parallel(st->map, st->len, NULL, cb, user, &opt, &st->pp, err, errsize);
    cli_progress_clear();
    const nt_parser *p = nt_parallel_parser(st->pp);
    if (!p) {
        snprintf(err, errsize, "%s", nt_status_describe(s));
        return s;
    }
    cli_feed_message(p, s, st->len, err, errsize);
    return s;
}

const nt_parser *cli_stream_parser(const cli_stream *st) { return st->p ? st->p : nt_parallel_parser(st->pp); }

void cli_stream_close(cli_stream *st)
{
    nt_parser_free(st->p);
    nt_parallel_free(st->pp);
    if (st->map)
        munmap(st->map, st->len);
    memset(st, 0, sizeof *st);
}
