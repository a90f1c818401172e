/* nt_parser_feed_fd: the same callbacks as feeding the bytes by hand, from a
 * file and from a pipe; progress reports; the deadline on a stalled pipe;
 * read errors reported with errno. */
#include "support.h"

#include "ltest.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *own_trace(void) { return ts_path(ts_own_corpus(), "spin-threads.nettrace"); }

typedef struct progress_log {
    uint64_t calls, last_done, total;
    bool monotonic;
} progress_log;

static void on_progress(void *user, uint64_t done, uint64_t total)
{
    progress_log *l = user;
    if (done < l->last_done)
        l->monotonic = false;
    l->calls++;
    l->last_done = done;
    l->total = total;
}

/* Digest of the bytes fed by hand in one piece. */
static nt_status digest_buffer(const uint8_t *data, size_t len, ts_digest *d)
{
    nt_callbacks cb = { 0 };
    ts_digest_init(d);
    ts_digest_callbacks(&cb);
    nt_parser *p = nt_parser_new(&cb, d, NULL, NULL);
    cr_assert_not_null(p);
    nt_status s = nt_parser_feed(p, data, len);
    if (s == NT_OK)
        s = nt_parser_finish(p);
    nt_parser_free(p);
    return s;
}

/* Digest of the file fed by nt_parser_feed_fd. */
static nt_status digest_fd(int fd, const nt_feed_options *opt, ts_digest *d, int *err)
{
    nt_callbacks cb = { 0 };
    ts_digest_init(d);
    ts_digest_callbacks(&cb);
    nt_parser *p = nt_parser_new(&cb, d, NULL, NULL);
    cr_assert_not_null(p);
    nt_status s = nt_parser_feed_fd(p, fd, opt, err);
    nt_parser_free(p);
    return s;
}

LTest(feed_fd, file_matches_buffer_and_reports_progress)
{
    uint8_t *data;
    size_t len;
    cr_assert(ts_read_file(own_trace(), &data, &len));
    ts_digest want;
    nt_status ws = digest_buffer(data, len, &want);

    int fd = open(own_trace(), O_RDONLY);
    cr_assert_geq(fd, 0);
    progress_log log = { .monotonic = true };
    nt_feed_options opt = { .progress = on_progress, .progress_user = &log, .chunk_bytes = 4096 };
    ts_digest got;
    int err = -1;
    nt_status s = digest_fd(fd, &opt, &got, &err);
    close(fd);
    cr_expect_eq(s, ws);
    cr_expect_eq(err, 0);
    cr_expect_eq(got.h, want.h, "the same callbacks as nt_parser_feed");
    cr_expect_eq(got.calls, want.calls);
    cr_expect_eq(log.calls, (len + 4095) / 4096, "one progress report per chunk");
    cr_expect_eq(log.last_done, len);
    cr_expect_eq(log.total, len, "a regular file's size is known");
    cr_expect(log.monotonic);
    free(data);
}

LTest(feed_fd, pipe_in_small_writes)
{
    uint8_t *data;
    size_t len;
    cr_assert(ts_read_file(own_trace(), &data, &len));
    ts_digest want;
    digest_buffer(data, len, &want);
    int pfd[2];
    cr_assert_eq(pipe(pfd), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(pfd[0]);
        for (size_t off = 0; off < len; off += 777) {
            size_t k = len - off < 777 ? len - off : 777;
            if (write(pfd[1], data + off, k) != (ssize_t)k)
                _exit(1);
        }
        _exit(0);
    }
    close(pfd[1]);
    progress_log log = { .monotonic = true };
    nt_feed_options opt = { .progress = on_progress, .progress_user = &log };
    ts_digest got;
    nt_status s = digest_fd(pfd[0], &opt, &got, NULL);
    close(pfd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    cr_expect_eq(s, NT_OK);
    cr_expect_eq(got.h, want.h);
    cr_expect_eq(log.total, 0, "a pipe's size is unknown");
    cr_expect_eq(log.last_done, len);
    free(data);
}

LTest(feed_fd, deadline_on_a_stalled_pipe)
{
    int pfd[2];
    cr_assert_eq(pipe(pfd), 0);
    /* A few valid bytes, then nothing more while the write end stays open. */
    cr_assert_eq(write(pfd[1], "Nettrace", 8), 8);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    nt_feed_options opt = { .deadline_ns = now + 50 * 1000000 };
    nt_parser *p = nt_parser_new(NULL, NULL, NULL, NULL);
    nt_status s = nt_parser_feed_fd(p, pfd[0], &opt, NULL);
    cr_expect_eq(s, NT_ERR_TIMEOUT);
    cr_expect_eq(nt_parser_offset(p), 8, "what arrived was fed");
    cr_expect_eq(nt_parser_status(p), NT_OK, "the parser itself is fine");
    nt_parser_free(p);
    close(pfd[0]);
    close(pfd[1]);
}

LTest(feed_fd, read_error_gives_errno)
{
    int fd = open(".", O_RDONLY | O_DIRECTORY);
    cr_assert_geq(fd, 0);
    nt_parser *p = nt_parser_new(NULL, NULL, NULL, NULL);
    int err = 0;
    nt_status s = nt_parser_feed_fd(p, fd, NULL, &err);
    cr_expect_eq(s, NT_ERR_IO);
    cr_expect_eq(err, EISDIR);
    cr_expect_eq(nt_parser_feed_fd(p, -1, NULL, &err), NT_ERR_INVALID_ARG);
    nt_parser_free(p);
    close(fd);
}
