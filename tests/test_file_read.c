/* common/file_read.h: a region read in full up to the file's end, a whole
 * file read from an offset under the caller's limit (refused before any
 * allocation when larger), and the refusals a caller words its message from:
 * not a regular file, the deadline, a descriptor pread cannot read. */
#include <criterion/criterion.h>

#include "common/clock.h"
#include "common/file_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A temporary file holding n bytes of a known pattern; its descriptor. */
static int pattern_file(size_t n)
{
    char name[] = "/tmp/test_file_read.XXXXXX";
    int fd = mkstemp(name);
    cr_assert(fd >= 0);
    unlink(name);
    uint8_t *b = malloc(n ? n : 1);
    cr_assert(b);
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(i * 7 + 3);
    cr_assert_eq(write(fd, b, n), (ssize_t)n);
    free(b);
    return fd;
}

static void check_pattern(const uint8_t *b, size_t from, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(b[i], (uint8_t)((from + i) * 7 + 3), "byte %zu", from + i);
}

Test(file_read, region_in_full_and_short_only_at_the_end)
{
    int fd = pattern_file(3000);
    uint8_t buf[4000];
    size_t got = 1;
    cr_assert_eq(cm_read_at(fd, 100, buf, 2000, &got), 0);
    cr_assert_eq(got, 2000);
    check_pattern(buf, 100, 2000);
    cr_assert_eq(cm_read_at(fd, 2500, buf, 1000, &got), 0);
    cr_assert_eq(got, 500, "past the end: what is there");
    check_pattern(buf, 2500, 500);
    cr_assert_eq(cm_read_at(fd, 5000, buf, 10, &got), 0);
    cr_assert_eq(got, 0);
    close(fd);
}

Test(file_read, a_descriptor_pread_cannot_read_gives_its_errno)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    uint8_t buf[4];
    size_t got = 1;
    cr_assert_eq(cm_read_at(p[0], 0, buf, sizeof buf, &got), ESPIPE);
    cr_assert_eq(got, 0);
    close(p[0]);
    close(p[1]);
}

struct seen {
    uint64_t calls, done, total;
};

static void on_progress(void *user, uint64_t done, uint64_t total)
{
    struct seen *s = user;
    cr_assert_geq(done, s->done, "progress never goes back");
    s->calls++;
    s->done = done;
    s->total = total;
}

Test(file_read, whole_file_from_an_offset_in_pieces)
{
    size_t n = (3u << 20) + 17; /* four pieces */
    int fd = pattern_file(n);
    cm_mem mem;
    cm_mem_init(&mem, NULL);
    struct seen seen = { 0 };
    cm_file_read how = { .max_bytes = n, .progress = on_progress, .progress_user = &seen };
    cm_file_bytes f;
    char msg[128] = "";
    cr_assert_eq(cm_read_file(fd, 5, &how, &mem, &f, msg, sizeof msg), NT_OK, "%s", msg);
    cr_assert_eq(f.len, n - 5);
    check_pattern(f.data, 5, f.len);
    cr_assert_eq(seen.calls, 4);
    cr_assert_eq(seen.done, n - 5);
    cr_assert_eq(seen.total, n - 5);
    cr_assert_eq(mem.used, f.cap);
    cm_file_bytes_free(&mem, &f);
    cr_assert_eq(mem.used, 0);
    cr_assert_null(f.data);
    close(fd);
}

/* cm_read_file over a pattern file of n bytes from offset at under max_bytes max. */
static nt_status read_pattern(size_t n, uint64_t at, uint64_t max, cm_mem *mem, cm_file_bytes *f, char *msg,
                              size_t msg_size)
{
    int fd = pattern_file(n);
    cm_mem_init(mem, NULL);
    cm_file_read how = { .max_bytes = max };
    nt_status s = cm_read_file(fd, at, &how, mem, f, msg, msg_size);
    close(fd);
    return s;
}

Test(file_read, an_empty_file_is_no_bytes_at_a_valid_pointer)
{
    cm_mem mem;
    cm_file_bytes f;
    cr_assert_eq(read_pattern(0, 0, 10, &mem, &f, NULL, 0), NT_OK);
    cr_assert_eq(f.len, 0);
    cr_assert_not_null(f.data);
    cm_file_bytes_free(&mem, &f);
    cr_assert_eq(mem.used, 0);
}

Test(file_read, a_file_over_the_limit_is_refused_before_allocating)
{
    cm_mem mem;
    cm_file_bytes f;
    char msg[128] = "";
    cr_assert_eq(read_pattern(1001, 0, 1000, &mem, &f, msg, sizeof msg), NT_ERR_LIMIT);
    cr_assert(strstr(msg, "1001 bytes") && strstr(msg, "1000 bytes"), "%s", msg);
    cr_assert_eq(mem.peak, 0);
    cr_assert_null(f.data);
    /* From offset 1 the same file is 1000 bytes: within the limit. */
    cr_assert_eq(read_pattern(1001, 1, 1000, &mem, &f, msg, sizeof msg), NT_OK, "%s", msg);
    cr_assert_eq(f.len, 1000);
    check_pattern(f.data, 1, 1000);
    cm_file_bytes_free(&mem, &f);
}

Test(file_read, refusals_say_why_and_hold_nothing)
{
    cm_mem mem;
    cm_mem_init(&mem, NULL);
    cm_file_read how = { .max_bytes = 1 << 20 };
    cm_file_bytes f;
    char msg[128] = "";
    int p[2];
    cr_assert_eq(pipe(p), 0);
    cr_assert_eq(cm_read_file(p[0], 0, &how, &mem, &f, msg, sizeof msg), NT_ERR_INVALID_ARG);
    cr_assert_str_eq(msg, "not a regular file");
    close(p[0]);
    close(p[1]);
    cr_assert_eq(cm_read_file(p[0], 0, &how, &mem, &f, msg, sizeof msg), NT_ERR_IO, "a closed descriptor");
    cr_assert_str_eq(msg, strerror(EBADF));
    int fd = pattern_file(4096);
    how.deadline_ns = cm_clock_ns() - 1;
    cr_assert_eq(cm_read_file(fd, 0, &how, &mem, &f, msg, sizeof msg), NT_ERR_TIMEOUT);
    cr_assert(strstr(msg, "deadline"), "%s", msg);
    cr_assert_null(f.data);
    cr_assert_eq(mem.used, 0);
    close(fd);
}
