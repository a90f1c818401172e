/* Sessions against a real .NET runtime: the LiveTarget workload (two threads,
 * each spinning in a method of its own) is built and started by the tests.
 * Each test attaches, collects a few seconds, stops, parses and checks that
 * each thread's hottest method is its own, with type and assembly.
 * Everything here skips, saying why, when dotnet is absent. */
#include <criterion/criterion.h>

#include "nettrace_session.h"
#include "nettrace_trace.h"
#include "live_target.h"
#include "support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define COLLECT_MS 2500

static live_target g_target;

static void setup(void)
{
    alarm(60); /* a hung test dies rather than hanging make check */
    const char *why = live_prepare();
    if (why && strncmp(why, "BUILD FAILED", 12) == 0)
        cr_assert_fail("%s", why);
    if (why)
        cr_skip_test("%s", why);
    cr_assert(live_start(&g_target, 40), "the LiveTarget workload did not start (see %s)", live_build_dir());
}

static void teardown(void) { live_kill(&g_target); }

TestSuite(live, .init = setup, .fini = teardown);

static void out_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/../%s-%d.nettrace", live_build_dir(), name, (int)getpid());
}

/* Each thread's hottest method is its own spinning method. */
static void check_threads(live_analysis *a)
{
    char top[512];
    double share;
    static const char *const want[2] = { "LiveTarget.Alpha.SpinAlpha [LiveTarget", "LiveTarget.Beta.SpinBeta [LiveTarget" };
    for (int i = 0; i < 2; i++) {
        cr_assert(live_analysis_top(a, i, top, sizeof top, &share), "thread %d (%" PRIu64 ") has no resolved samples",
                  i, a->tids[i]);
        cr_log_info("thread %" PRIu64 ": %s (%.0f%% of %zu managed samples)", a->tids[i], top, share * 100,
                    a->nips[i]);
        cr_assert(strncmp(top, want[i], strlen(want[i])) == 0, "thread %d's top method is %s, want %s...", i, top,
                  want[i]);
        cr_assert_gt(share, 0.5, "%s has only %.0f%% of its thread's samples", top, share * 100);
    }
}

/* A small text file (a command's standard error) into buf; "" when absent. */
static void read_text(const char *path, char *buf, size_t size)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        buf[fread(buf, 1, size - 1, f)] = 0;
        fclose(f);
    }
}

/* A recorded file names each thread's own method. */
static void check_trace_file(const char *path)
{
    live_analysis a;
    live_analysis_init(&a, (uint64_t)g_target.alpha_tid, (uint64_t)g_target.beta_tid);
    cr_assert_eq(live_analyse_file(path, &a), NT_OK);
    check_threads(&a);
    live_analysis_free(&a);
}

Test(live, file_sink_names_each_threads_method)
{
    char path[1200];
    out_path(path, sizeof path, "file-sink");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    cr_assert_geq(fd, 0);
    nt_session_config cfg = { .sink = nt_sink_fd, .sink_user = &fd };
    nt_session *s = nt_session_new(&cfg, NULL);
    int64_t t0 = nt_now_ns();
    nt_status st = nt_session_start(s, g_target.pid, nt_deadline_after_ms(5000));
    cr_assert_eq(st, NT_OK, "start: %s: %s", nt_status_name(st), nt_session_message(s));
    cr_log_info("start took %.1f ms", (double)(nt_now_ns() - t0) / 1e6);
    usleep(COLLECT_MS * 1000);
    t0 = nt_now_ns();
    st = nt_session_stop(s, nt_deadline_after_ms(15000));
    cr_assert_eq(st, NT_OK, "stop: %s: %s", nt_status_name(st), nt_session_message(s));
    cr_log_info("stop (rundown included) took %.1f ms; %" PRIu64 " bytes", (double)(nt_now_ns() - t0) / 1e6,
                nt_session_bytes(s));
    nt_session_free(s);
    close(fd);
    check_trace_file(path);
    unlink(path);
}

Test(live, collect_command_writes_a_readable_trace)
{
    char path[1200], cmd[2600];
    out_path(path, sizeof path, "collect");
    const char *top = getenv("top_builddir");
    snprintf(cmd, sizeof cmd, "'%s/nettrace' collect -q -p %d -o '%s' --duration 2.5", top ? top : ".",
             (int)g_target.pid, path);
    int rc = system(cmd);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "%s exited with %d", cmd, WEXITSTATUS(rc));
    check_trace_file(path);
    unlink(path);
}

Test(live, collect_command_ctrl_c_stops_with_rundown)
{
    char path[1200], dll[1200];
    out_path(path, sizeof path, "ctrlc");
    const char *top = getenv("top_builddir");
    snprintf(dll, sizeof dll, "%s/nettrace", top ? top : ".");
    char pidarg[16];
    snprintf(pidarg, sizeof pidarg, "%d", (int)g_target.pid);
    pid_t child = fork();
    if (child == 0) {
        execl(dll, "nettrace", "collect", "-q", "-p", pidarg, "-o", path, (char *)NULL);
        _exit(127);
    }
    usleep(COLLECT_MS * 1000);
    kill(child, SIGINT);
    int rc;
    waitpid(child, &rc, 0);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "collect exited with %d", WEXITSTATUS(rc));
    live_analysis a;
    live_analysis_init(&a, (uint64_t)g_target.alpha_tid, (uint64_t)g_target.beta_tid);
    cr_assert_eq(live_analyse_file(path, &a), NT_OK, "Ctrl-C ends the file cleanly");
    check_threads(&a); /* names come from the rundown that Ctrl-C still ran */
    live_analysis_free(&a);
    unlink(path);
}

/* An event loop drives the session (descriptor + pump) and the bytes go
 * straight into a parser: nothing touches the disk. */
Test(live, pumped_session_feeds_the_parser_directly)
{
    live_analysis a;
    live_analysis_init(&a, (uint64_t)g_target.alpha_tid, (uint64_t)g_target.beta_tid);
    nt_callbacks cb = { 0 };
    live_analysis_callbacks(&cb);
    nt_parser *p = nt_parser_new(&cb, &a, NULL, NULL);
    nt_session_config cfg = { .sink = nt_sink_parser, .sink_user = p, .caller_pumps = true };
    nt_session *s = nt_session_new(&cfg, NULL);
    nt_status st = nt_session_start(s, g_target.pid, nt_deadline_after_ms(5000));
    cr_assert_eq(st, NT_OK, "start: %s", nt_session_message(s));
    int64_t stop_at = nt_deadline_after_ms(COLLECT_MS), give_up = nt_deadline_after_ms(20000);
    bool ended = false, stop_sent = false;
    uint64_t samples_before_stop = 0;
    while (!ended && nt_now_ns() < give_up) {
        struct pollfd pf = { .fd = nt_session_fd(s), .events = POLLIN };
        poll(&pf, 1, 50);
        st = nt_session_pump(s, &ended);
        if (!stop_sent && nt_now_ns() >= stop_at) {
            samples_before_stop = a.samples;
            cr_assert_eq(nt_session_request_stop(s), NT_OK);
            stop_sent = true;
        }
    }
    cr_assert(ended, "the stream did not end within 20 s");
    cr_assert_eq(st, NT_OK, "%s: %s", nt_status_name(st), nt_session_message(s));
    cr_assert_gt(samples_before_stop, 0, "samples arrived while the session ran");
    cr_assert_eq(nt_parser_finish(p), NT_OK);
    check_threads(&a);
    nt_session_free(s);
    nt_parser_free(p);
    live_analysis_free(&a);
}

Test(live, refusal_surfaces_the_hresult)
{
    nt_provider bad = { .name = NT_PROVIDER_RUNTIME, .keywords = 0x18, .level = 9 }; /* level 9: the runtime takes 0..5 */
    int fd = -1;
    nt_session_config cfg = { .providers = &bad, .provider_count = 1, .sink = nt_sink_fd, .sink_user = &fd };
    nt_session *s = nt_session_new(&cfg, NULL);
    nt_status st = nt_session_start(s, g_target.pid, nt_deadline_after_ms(5000));
    cr_assert_eq(st, NT_ERR_REFUSED, "%s", nt_status_name(st));
    cr_assert_eq(nt_session_hresult(s), NT_HR_BAD_ENCODING, "hresult 0x%08X", nt_session_hresult(s));
    cr_assert(strstr(nt_session_message(s), "BAD_ENCODING"));
    nt_session_free(s);
}

Test(live, no_endpoint_for_other_processes)
{
    pid_t sleeper = fork();
    if (sleeper == 0) {
        execlp("sleep", "sleep", "20", (char *)NULL);
        _exit(127);
    }
    usleep(100 * 1000);
    nt_endpoint ep;
    cr_assert_eq(nt_endpoint_find(sleeper, &ep), NT_ERR_NO_ENDPOINT);
    /* STALE when a .NET process killed earlier with the same pid left its
     * socket in TMPDIR (pids are reused; killed runtimes do not clean up). */
    cr_assert(ep.reason == NT_ENDPOINT_NO_SOCKET || ep.reason == NT_ENDPOINT_STALE, "reason %d for pid %d",
              (int)ep.reason, (int)sleeper);
    cr_assert_eq(nt_endpoint_find(0x3FFFFFF0, &ep), NT_ERR_NO_ENDPOINT);
    cr_assert_eq(ep.reason, NT_ENDPOINT_NO_PROCESS);
    cr_assert_eq(nt_endpoint_find(g_target.pid, &ep), NT_OK, "while the workload has one");
    /* The tool says so with its own exit code. */
    char cmd[1200];
    const char *top = getenv("top_builddir");
    snprintf(cmd, sizeof cmd, "'%s/nettrace' collect -q -p %d -o /dev/null 2>/dev/null", top ? top : ".",
             (int)sleeper);
    int rc = system(cmd);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 10 + NT_ERR_NO_ENDPOINT, "exit %d", WEXITSTATUS(rc));
    kill(sleeper, SIGKILL);
    waitpid(sleeper, NULL, 0);
    /* The process list has the workload and not the sleeper. */
    nt_process_entry *list;
    size_t n;
    cr_assert_eq(nt_process_list(&list, &n, NULL), NT_OK);
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        cr_assert_neq(list[i].pid, sleeper);
        found |= list[i].pid == g_target.pid;
    }
    cr_assert(found, "nt_process_list misses the workload");
    nt_process_list_free(list, NULL);
    /* And so does the tool. */
    snprintf(cmd, sizeof cmd, "'%s/nettrace' ps", top ? top : ".");
    FILE *f = popen(cmd, "r");
    char line[256];
    found = false;
    while (fgets(line, sizeof line, f))
        found |= atoi(line) == g_target.pid && strstr(line, "dotnet") != NULL;
    cr_assert_eq(pclose(f), 0);
    cr_assert(found, "nettrace ps does not list pid %d", (int)g_target.pid);
}

typedef struct parse_check {
    nt_status status;
    uint64_t samples, bytes_read;
    bool have_header;
} parse_check;

static int pc_sample(void *user, const nt_sample *s)
{
    (void)s;
    ((parse_check *)user)->samples++;
    return 0;
}

static void parse_prefix(const char *path, parse_check *pc)
{
    memset(pc, 0, sizeof *pc);
    nt_callbacks cb = { .sample = pc_sample };
    nt_parser *p = nt_parser_new(&cb, pc, NULL, NULL);
    uint8_t *data;
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    data = malloc((size_t)st.st_size + 1);
    FILE *f = fopen(path, "rb");
    size_t n = fread(data, 1, (size_t)st.st_size, f);
    fclose(f);
    nt_parser_feed(p, data, n);
    pc->status = nt_parser_finish(p);
    pc->have_header = nt_parser_trace_info(p) != NULL;
    pc->bytes_read = n;
    nt_parser_free(p);
    free(data);
}

Test(live, killed_target_leaves_a_truncated_readable_stream)
{
    char path[1200];
    out_path(path, sizeof path, "killed");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    nt_session_config cfg = { .sink = nt_sink_fd, .sink_user = &fd };
    nt_session *s = nt_session_new(&cfg, NULL);
    cr_assert_eq(nt_session_start(s, g_target.pid, nt_deadline_after_ms(5000)), NT_OK);
    usleep(COLLECT_MS * 1000);
    kill(g_target.pid, SIGKILL);
    nt_status st = nt_session_wait(s, nt_deadline_after_ms(10000));
    cr_assert_eq(st, NT_ERR_TRUNCATED, "%s: %s", nt_status_name(st), nt_session_message(s));
    cr_assert_eq(nt_session_stop(s, nt_deadline_after_ms(1000)), NT_ERR_TRUNCATED, "stop after the end is harmless");
    nt_session_free(s);
    close(fd);
    parse_check pc;
    parse_prefix(path, &pc);
    cr_assert_eq(pc.status, NT_ERR_TRUNCATED, "%s", nt_status_name(pc.status));
    cr_assert(pc.have_header);
    cr_assert_gt(pc.samples, 100, "the complete blocks before the kill parse (%" PRIu64 " samples)", pc.samples);
    unlink(path);
}

Test(live, stream_cap_ends_the_session_with_a_readable_prefix)
{
    char path[1200];
    out_path(path, sizeof path, "capped");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    nt_session_config cfg = { .sink = nt_sink_fd, .sink_user = &fd, .max_stream_bytes = 40000 };
    nt_session *s = nt_session_new(&cfg, NULL);
    cr_assert_eq(nt_session_start(s, g_target.pid, nt_deadline_after_ms(5000)), NT_OK);
    nt_status st = nt_session_wait(s, nt_deadline_after_ms(15000));
    cr_assert_eq(st, NT_ERR_STREAM_CAP, "%s: %s", nt_status_name(st), nt_session_message(s));
    cr_assert_eq(nt_session_bytes(s), 40000);
    nt_session_free(s);
    close(fd);
    parse_check pc;
    parse_prefix(path, &pc);
    cr_assert_eq(pc.bytes_read, 40000);
    cr_assert_eq(pc.status, NT_ERR_TRUNCATED, "%s", nt_status_name(pc.status));
    cr_assert(pc.have_header, "the prefix holds the trace header");
    /* The runtime is unharmed: a new session starts. */
    int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    nt_session_config cfg2 = { .sink = nt_sink_fd, .sink_user = &devnull };
    s = nt_session_new(&cfg2, NULL);
    cr_assert_eq(nt_session_start(s, g_target.pid, nt_deadline_after_ms(5000)), NT_OK);
    cr_assert_eq(nt_session_stop(s, nt_deadline_after_ms(15000)), NT_OK);
    nt_session_free(s);
    close(devnull);
    unlink(path);
}

/* The first line after "thread TID" and the column header: that thread's top method. */
/* The first row of thread tid's table in a 'top --by-thread' block. */
static bool top_line_of(const char *block, int tid, char *out, size_t size)
{
    char key[64];
    snprintf(key, sizeof key, "thread %d:\n", tid);
    const char *p = strstr(block, key);
    if (!p || !(p = strstr(p, "method\n")))
        return false;
    p += strlen("method\n");
    size_t n = strcspn(p, "\n");
    snprintf(out, size, "%.*s", (int)n, p);
    return true;
}

Test(live, live_top_names_each_thread_in_the_first_refresh)
{
    char cmd[1400];
    const char *top = getenv("top_builddir");
    snprintf(cmd, sizeof cmd, "'%s/nettrace' top -p %d --interval 1 -n 3 --by-thread --managed-only --duration 1.5",
             top ? top : ".", (int)g_target.pid);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    static char out[65536];
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = 0;
    int rc = pclose(f);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "top -p exited with %d:\n%s", WEXITSTATUS(rc), out);
    /* Only the first refresh counts: cut at the second header. */
    char *second = strstr(out + 1, "nettrace top  pid");
    if (second)
        *second = 0;
    cr_log_info("first refresh:\n%s", out);
    cr_assert(strstr(out, ":\n exclusive   share  inclusive   share  method\n"), "the file top's columns:\n%s", out);
    char line[512];
    cr_assert(top_line_of(out, g_target.alpha_tid, line, sizeof line), "no entries for alpha in:\n%s", out);
    cr_assert(strstr(line, "  LiveTarget!LiveTarget.Alpha.SpinAlpha"), "alpha's top line: %s", line);
    cr_assert(top_line_of(out, g_target.beta_tid, line, sizeof line), "no entries for beta in:\n%s", out);
    cr_assert(strstr(line, "  LiveTarget!LiveTarget.Beta.SpinBeta"), "beta's top line: %s", line);
}

/* The live path and the file path over the same bytes: a session's stream
 * goes both into a file and, as 'top -p' feeds it, into a trace window. */
typedef struct tee_sink_user {
    int fd;
    nt_parser *parser;
} tee_sink_user;

static int tee_sink(void *user, const void *data, size_t len)
{
    tee_sink_user *t = user;
    int fd = t->fd;
    if (nt_sink_fd(&fd, data, len) != 0)
        return 1;
    return nt_sink_parser(t->parser, data, len);
}

static void assert_same_tables(const nt_top *live, const nt_top *file)
{
    cr_assert_eq(live->table_count, file->table_count);
    for (size_t i = 0; i < file->table_count; i++) {
        const nt_top_table *a = &live->tables[i], *b = &file->tables[i];
        cr_assert_eq(a->thread_id, b->thread_id);
        cr_assert_eq(a->samples, b->samples, "thread %" PRIu64 ": the same samples", b->thread_id);
        cr_assert_eq(a->empty, b->empty);
        cr_assert_eq(a->row_count, b->row_count, "thread %" PRIu64, b->thread_id);
        for (size_t r = 0; r < b->row_count; r++) {
            cr_assert_str_eq(a->rows[r].name, b->rows[r].name, "thread %" PRIu64 " row %zu", b->thread_id, r);
            cr_assert_eq(a->rows[r].exclusive, b->rows[r].exclusive, "%s", b->rows[r].name);
            cr_assert_eq(a->rows[r].inclusive, b->rows[r].inclusive, "%s", b->rows[r].name);
        }
    }
}

Test(live, live_top_and_file_top_agree)
{
    char path[1200];
    out_path(path, sizeof path, "tee");
    tee_sink_user tt = { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), NULL };
    cr_assert_geq(tt.fd, 0);
    nt_trace_window *win = nt_trace_window_new(NULL, NULL);
    nt_callbacks cb = { 0 };
    nt_trace_window_callbacks(&cb);
    tt.parser = nt_parser_new(&cb, win, NULL, NULL);
    nt_session_config cfg = { .sink = tee_sink, .sink_user = &tt };
    nt_session *s = nt_session_new(&cfg, NULL);
    cr_assert_eq(nt_session_start(s, g_target.pid, nt_deadline_after_ms(5000)), NT_OK);
    usleep(1500 * 1000);
    cr_assert_eq(nt_session_stop(s, nt_deadline_after_ms(15000)), NT_OK, "%s", nt_session_message(s));
    nt_session_free(s);
    close(tt.fd);
    cr_assert_eq(nt_parser_finish(tt.parser), NT_OK);
    nt_trace *live_t, *file_t;
    cr_assert_eq(nt_trace_window_take(win, &live_t), NT_OK);
    cr_assert_eq(nt_trace_from_file(path, NULL, &file_t, NULL, 0), NT_OK);
    nt_trace_stats ls = { 0 }, fs = { 0 };
    nt_trace_stats_get(live_t, &ls);
    nt_trace_stats_get(file_t, &fs);
    cr_log_info("%" PRIu64 " samples, %" PRIu64 " of %" PRIu64 " frames resolved", fs.samples, fs.resolved_frames,
                fs.frames);
    cr_assert_gt(fs.samples, 100);
    cr_assert_eq(ls.samples, fs.samples);
    cr_assert_eq(ls.resolved_frames, fs.resolved_frames, "one resolver: the same frames resolve");
    nt_top_options opts[] = { { .rows = 0 }, { .by_thread = true }, { .filter.managed_only = true, .by_inclusive = true } };
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        nt_top *a, *b;
        cr_assert_eq(nt_top_build(live_t, &opts[k], &a), NT_OK);
        cr_assert_eq(nt_top_build(file_t, &opts[k], &b), NT_OK);
        assert_same_tables(a, b);
        if (k == 1) {
            int seen = 0;
            for (size_t i = 0; i < b->table_count; i++) {
                const nt_top_table *tb = &b->tables[i];
                const char *want = tb->thread_id == (uint64_t)g_target.alpha_tid ? "LiveTarget!LiveTarget.Alpha.SpinAlpha"
                                   : tb->thread_id == (uint64_t)g_target.beta_tid ? "LiveTarget!LiveTarget.Beta.SpinBeta"
                                                                                    : NULL;
                if (!want)
                    continue;
                seen++;
                cr_assert_gt(tb->row_count, 0);
                cr_assert_str_eq(tb->rows[0].name, want);
            }
            cr_assert_eq(seen, 2, "both threads were counted");
        }
        nt_top_free(a);
        nt_top_free(b);
    }
    nt_trace_free(live_t);
    nt_trace_free(file_t);
    nt_parser_free(tt.parser);
    nt_trace_window_free(win);
    unlink(path);
}

/* A target in its own PID and mount namespace (as in a container): the
 * socket carries the inner pid and is reached through /proc/<pid>/root. */
Test(live, target_in_another_pid_namespace)
{
    live_target ns;
    const char *why = NULL;
    if (!live_start_in_namespace(&ns, 40, &why))
        cr_skip_test("%s", why);
    nt_endpoint ep;
    cr_assert_eq(nt_endpoint_find(ns.pid, &ep), NT_OK, "reason %s", nt_endpoint_reason_name(ep.reason));
    cr_assert_eq(ep.ns_pid, 1, "the runtime is pid 1 in its namespace");
    char prefix[64];
    snprintf(prefix, sizeof prefix, "/proc/%d/root/", (int)ns.pid);
    cr_assert(strncmp(ep.path, prefix, strlen(prefix)) == 0, "path %s", ep.path);
    char path[1200];
    out_path(path, sizeof path, "namespace");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    nt_session_config cfg = { .sink = nt_sink_fd, .sink_user = &fd };
    nt_session *s = nt_session_new(&cfg, NULL);
    cr_assert_eq(nt_session_start(s, ns.pid, nt_deadline_after_ms(5000)), NT_OK, "%s", nt_session_message(s));
    usleep(1500 * 1000);
    cr_assert_eq(nt_session_stop(s, nt_deadline_after_ms(15000)), NT_OK, "%s", nt_session_message(s));
    nt_session_free(s);
    close(fd);
    /* Thread ids in the trace are the namespace's own, as the workload printed them. */
    live_analysis a;
    live_analysis_init(&a, (uint64_t)ns.alpha_tid, (uint64_t)ns.beta_tid);
    cr_assert_eq(live_analyse_file(path, &a), NT_OK);
    check_threads(&a);
    live_analysis_free(&a);
    unlink(path);
    live_kill(&ns);
}

/* Ctrl-C twice: the first asks for a clean stop, which cannot finish while
 * the target is frozen (SIGSTOP); the second abandons the session, leaving a
 * truncated file whose complete blocks still read. */
Test(live, collect_command_second_ctrl_c_abandons)
{
    char path[1200], tool[1200], pidarg[16];
    out_path(path, sizeof path, "abandoned");
    const char *top = getenv("top_builddir");
    snprintf(tool, sizeof tool, "%s/nettrace", top ? top : ".");
    snprintf(pidarg, sizeof pidarg, "%d", (int)g_target.pid);
    pid_t child = fork();
    if (child == 0) {
        execl(tool, "nettrace", "collect", "-q", "-p", pidarg, "-o", path, (char *)NULL);
        _exit(127);
    }
    usleep(COLLECT_MS * 1000);
    kill(g_target.pid, SIGSTOP);
    usleep(100 * 1000);
    kill(child, SIGINT);
    usleep(500 * 1000);
    int rc;
    cr_assert_eq(waitpid(child, &rc, WNOHANG), 0, "collect must still be waiting for the frozen target");
    int64_t t0 = nt_now_ns();
    kill(child, SIGINT);
    waitpid(child, &rc, 0);
    double ms = (double)(nt_now_ns() - t0) / 1e6;
    kill(g_target.pid, SIGCONT);
    cr_assert(ms < 2000, "the second Ctrl-C took %.0f ms to take effect", ms);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 10 + NT_ERR_CANCELLED, "exit %d", WEXITSTATUS(rc));
    parse_check pc;
    parse_prefix(path, &pc);
    cr_assert_eq(pc.status, NT_ERR_TRUNCATED, "%s", nt_status_name(pc.status));
    cr_assert(pc.have_header);
    cr_assert_gt(pc.samples, 100, "the complete blocks read (%" PRIu64 " samples)", pc.samples);
    unlink(path);
}

typedef struct stack_count {
    uint64_t events, with_stack;
} stack_count;

static int count_event_stacks(void *user, const nt_event *ev)
{
    stack_count *sc = user;
    if (ev->desc && ev->desc->kind == NT_KIND_THREAD_SAMPLE)
        return 0;
    sc->events++;
    sc->with_stack += ev->stack && ev->stack->count > 0; /* the runtime still names an empty stack */
    return 0;
}

/* Options that CollectTracing2 cannot say go out as CollectTracing3 (no
 * stacks) and CollectTracing4 (a rundown keyword of our own). */
Test(live, newer_command_versions)
{
    char path[1200];
    out_path(path, sizeof path, "v4");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    nt_session_config cfg = { .sink = nt_sink_fd, .sink_user = &fd, .no_stackwalk = true,
                              .rundown_keyword = NT_KEYWORD_LOADER | NT_KEYWORD_JIT };
    nt_session *s = nt_session_new(&cfg, NULL);
    nt_status st = nt_session_start(s, g_target.pid, nt_deadline_after_ms(5000));
    cr_assert_eq(st, NT_OK, "CollectTracing4: %s", nt_session_message(s));
    usleep(500 * 1000);
    cr_assert_eq(nt_session_stop(s, nt_deadline_after_ms(15000)), NT_OK);
    nt_session_free(s);
    close(fd);
    live_analysis a;
    live_analysis_init(&a, (uint64_t)g_target.alpha_tid, (uint64_t)g_target.beta_tid);
    cr_assert_eq(live_analyse_file(path, &a), NT_OK);
    cr_assert_gt(a.samples, 0);
    cr_assert_gt(a.nmethods, 10, "the custom rundown keyword still named methods");
    live_analysis_free(&a);
    /* The sample profiler walks stacks itself; other events carry none now. */
    stack_count sc = { 0, 0 };
    nt_callbacks cb = { .event = count_event_stacks };
    uint8_t *data;
    size_t len;
    cr_assert(ts_read_file(path, &data, &len));
    cr_assert_eq(nt_parse_buffer(data, len, &cb, &sc, NULL, NULL, 0), NT_OK);
    free(data);
    cr_assert_gt(sc.events, 0);
    cr_assert_eq(sc.with_stack, 0, "%" PRIu64 " of %" PRIu64 " non-sample events have stacks", sc.with_stack,
                 sc.events);
    unlink(path);
}

/* Attaching to a runtime that is still starting: no endpoint at first (a
 * distinct, retryable status), then collect --wait gets it. */
Test(live, collect_waits_for_a_starting_runtime)
{
    live_target fresh;
    cr_assert(live_spawn(&fresh, 30));
    nt_endpoint ep;
    nt_status first = nt_endpoint_find(fresh.pid, &ep);
    cr_log_info("right after exec: %s (%s)", nt_status_name(first), nt_endpoint_reason_name(ep.reason));
    /* Not there yet, or (pids are reused) only a socket an earlier runtime with
     * this pid left behind when it was killed: both must be waited out. */
    cr_assert(first == NT_OK || (first == NT_ERR_NO_ENDPOINT && (ep.reason == NT_ENDPOINT_NO_SOCKET ||
                                                                  ep.reason == NT_ENDPOINT_STALE)),
              "right after exec: %s (%s)", nt_status_name(first), nt_endpoint_reason_name(ep.reason));
    char path[1200], cmd[2600];
    out_path(path, sizeof path, "waited");
    const char *top = getenv("top_builddir");
    snprintf(cmd, sizeof cmd, "'%s/nettrace' collect -q -p %d -o '%s' --wait 15 --duration 1", top ? top : ".",
             (int)fresh.pid, path);
    int rc = system(cmd);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "collect --wait exited %d", WEXITSTATUS(rc));
    live_kill(&fresh);
    live_analysis a;
    live_analysis_init(&a, 0, 0);
    cr_assert_eq(live_analyse_file(path, &a), NT_OK);
    cr_assert_gt(a.samples, 0);
    live_analysis_free(&a);
    unlink(path);
}

/* ps names the runtime's command line, version, OS and architecture (ProcessInfo2). */
Test(live, ps_shows_command_line_and_runtime_version)
{
    nt_endpoint ep;
    cr_assert_eq(nt_endpoint_find(g_target.pid, &ep), NT_OK);
    nt_process_info pi;
    nt_status st = nt_process_info_get(&ep, &pi, nt_deadline_after_ms(5000));
    cr_assert_eq(st, NT_OK, "%s", nt_status_name(st));
    cr_assert(strstr(pi.command_line, "LiveTarget.dll") != NULL, "command line: %s", pi.command_line);
    cr_assert_str_eq(pi.os, "Linux");
    cr_assert_neq(pi.arch[0], 0);
    cr_assert_neq(pi.runtime_version[0], 0);
    cr_assert_str_eq(pi.entrypoint_assembly, "LiveTarget");
    cr_assert_eq(pi.pid, (uint64_t)g_target.pid);

    const char *top = getenv("top_builddir");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s/nettrace' ps", top ? top : ".");
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    char line[8192], want[32];
    snprintf(want, sizeof want, "%8d  ", (int)g_target.pid);
    bool found = false;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, want, strlen(want)) == 0) {
            found = true;
            cr_assert(strstr(line, pi.runtime_version) && strstr(line, "Linux/") && strstr(line, "LiveTarget.dll"),
                      "ps line: %s", line);
        }
    pclose(f);
    cr_assert(found, "ps does not list pid %d", (int)g_target.pid);
}

/* ---- collect -- PROGRAM: profiling a program from its start ---- */

#include "nettrace_trace.h"

static char g_startup_dll[1200];

static void launch_setup(void)
{
    alarm(90);
    const char *why = live_prepare_workload("StartupTarget", g_startup_dll, sizeof g_startup_dll);
    if (why && strncmp(why, "BUILD FAILED", 12) == 0)
        cr_assert_fail("%s", why);
    if (why)
        cr_skip_test("%s", why);
}

TestSuite(launch, .init = launch_setup);

static bool frame_is(const nt_frame *f, const char *name)
{
    return strcmp(f->method->declaring_type, "StartupTarget.Program") == 0 && strcmp(f->method->name, name) == 0;
}

Test(launch, collect_records_a_program_from_main_and_reports_its_exit)
{
    char path[1300], errpath[1300], cmd[4000];
    snprintf(path, sizeof path, "%s.launch-%d.nettrace", g_startup_dll, (int)getpid());
    snprintf(errpath, sizeof errpath, "%s.launch-%d.err", g_startup_dll, (int)getpid());
    const char *top = getenv("top_builddir");
    snprintf(cmd, sizeof cmd, "'%s/nettrace' collect -o '%s' -- dotnet '%s' 1500 3 2> '%s'", top ? top : ".", path,
             g_startup_dll, errpath);
    int rc = system(cmd);
    char err[4096];
    read_text(errpath, err, sizeof err);
    /* The program's exit status is collect's own, as dotnet-trace's is (CI wrappers need it). */
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 3, "exit %d, want the program's 3: %s", WEXITSTATUS(rc), err);
    cr_assert(strstr(err, "exited with status 3"), "the program's exit status is not reported: %s", err);

    nt_trace *t;
    char msg[512];
    cr_assert_eq(nt_trace_from_file(path, NULL, &t, msg, sizeof msg), NT_OK, "%s", msg);
    /* The program's first sampled frames are in Main. */
    size_t first = SIZE_MAX, in_main = 0, in_program = 0;
    for (size_t i = 0; i < nt_trace_sample_count(t); i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        bool ours = false, main = false;
        for (uint32_t k = 0; k < s.frame_count; k++) {
            ours |= strcmp(nt_trace_frame_at(t, s.frame_ids[k])->method->declaring_type, "StartupTarget.Program") == 0;
            main |= frame_is(nt_trace_frame_at(t, s.frame_ids[k]), "Main");
        }
        if (ours && first == SIZE_MAX) {
            first = i;
            cr_assert(main, "the program's first sample (%zu) is not in Main", i);
        }
        in_main += main;
        in_program += ours;
    }
    cr_assert_neq(first, SIZE_MAX, "no sample of the program's own code");
    /* Load on the machine changes how many samples a 1.5 s spin gets, not where they are. */
    cr_assert_geq(in_program, 20, "only %zu samples of the program's code", in_program);
    cr_assert_geq(in_main * 10, in_program * 9, "%zu of the program's %zu samples are in Main", in_main, in_program);
    /* Main was compiled during the session: a JIT record, not only rundown. */
    bool jit = false;
    for (size_t i = 0; i < nt_trace_method_count(t); i++) {
        const nt_trace_method *m = nt_trace_method_at(t, i);
        jit |= m->source == NT_RECORD_LOAD && strcmp(m->declaring_type, "StartupTarget.Program") == 0 &&
               strcmp(m->name, "Main") == 0;
    }
    cr_assert(jit, "no JIT record for Main");
    nt_trace_free(t);
    unlink(path);
    unlink(errpath);
}

/* `collect -- sh -c '...'`: the runtime traced is the one that connects (sh
 * starts it), the later .NET process the script starts is resumed by the port
 * rather than left suspended, and the script's exit status is collect's. */
Test(launch, collect_traces_the_runtime_a_shell_starts_and_resumes_later_ones)
{
    char path[1300], errpath[1300], cmd[8000];
    snprintf(path, sizeof path, "%s.shell-%d.nettrace", g_startup_dll, (int)getpid());
    snprintf(errpath, sizeof errpath, "%s.shell-%d.err", g_startup_dll, (int)getpid());
    const char *top = getenv("top_builddir");
    snprintf(cmd, sizeof cmd,
             "timeout 60 '%s/nettrace' collect -o '%s' -- sh -c \"dotnet '%s' 1500 0; dotnet '%s' 200 5\" 2> '%s'",
             top ? top : ".", path, g_startup_dll, g_startup_dll, errpath);
    int64_t t0 = nt_now_ns();
    int rc = system(cmd);
    double s = (double)(nt_now_ns() - t0) / 1e9;
    char err[4096];
    read_text(errpath, err, sizeof err);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) != 124, "collect hung (the second runtime left suspended?): %s", err);
    cr_assert_eq(WEXITSTATUS(rc), 5, "exit %d, want the script's 5 (%.1f s): %s", WEXITSTATUS(rc), s, err);
    nt_trace *t;
    char msg[512];
    cr_assert_eq(nt_trace_from_file(path, NULL, &t, msg, sizeof msg), NT_OK, "%s", msg);
    size_t in_main = 0;
    for (size_t i = 0; i < nt_trace_sample_count(t); i++) {
        nt_trace_sample smp = nt_trace_sample_at(t, i);
        for (uint32_t k = 0; k < smp.frame_count; k++)
            if (frame_is(nt_trace_frame_at(t, smp.frame_ids[k]), "Main")) {
                in_main++;
                break;
            }
    }
    cr_assert_geq(in_main, 20, "only %zu samples in the first runtime's Main: %s", in_main, err);
    nt_trace_free(t);
    unlink(path);
    unlink(errpath);
}

/* The pid of a child of parent whose environment has DOTNET_DiagnosticPorts,
 * with that variable's path (up to the ',') in port; 0 when none (yet). */
static pid_t child_with_port(pid_t parent, char *port, size_t size)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    pid_t found = 0;
    while (d && !found && (e = readdir(d)) != NULL) {
        char file[300], buf[65536];
        snprintf(file, sizeof file, "/proc/%s/stat", e->d_name);
        read_text(file, buf, sizeof buf);
        char *close_paren = strrchr(buf, ')');
        int ppid = 0;
        if (!close_paren || sscanf(close_paren + 2, "%*c %d", &ppid) != 1 || ppid != parent)
            continue;
        snprintf(file, sizeof file, "/proc/%s/environ", e->d_name);
        FILE *f = fopen(file, "r");
        if (!f)
            continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        for (size_t at = 0; at < n; at += strlen(buf + at) + 1)
            if (strncmp(buf + at, "DOTNET_DiagnosticPorts=", 23) == 0) {
                snprintf(port, size, "%s", buf + at + 23);
                port[strcspn(port, ",")] = 0;
                found = (pid_t)atoi(e->d_name);
            }
    }
    if (d)
        closedir(d);
    return found;
}

/* Whether uid 12345 can create the port's directory or bind its socket. */
static bool second_user_can_take(const char *port)
{
    char dir[1024], cmd[3000];
    snprintf(dir, sizeof dir, "%s", port);
    *strrchr(dir, '/') = 0;
    snprintf(cmd, sizeof cmd,
             "setpriv --reuid=12345 --regid=12345 --clear-groups sh -c \"mkdir '%s' || touch '%s'\" 2>/dev/null", dir,
             port);
    int rc = system(cmd);
    if (WIFEXITED(rc) && WEXITSTATUS(rc) == 0) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir); /* what the other user made */
        cr_assert_eq(system(cmd), 0);
        return true;
    }
    return false;
}

/* The port named in the program's environment stays unusable by another
 * user (uid 12345) for as long as the program runs, and after collect ends
 * (a runtime reconnects to it all along); its directory is removed at the end. */
Test(launch, the_port_stays_private_while_the_program_runs)
{
    if (geteuid() != 0 || system("command -v setpriv >/dev/null") != 0)
        cr_skip_test("needs root and setpriv to act as a second user (uid 12345)");
    char path[1300], errpath[1300], cmd[5000];
    snprintf(path, sizeof path, "%s.private-%d.nettrace", g_startup_dll, (int)getpid());
    snprintf(errpath, sizeof errpath, "%s.private-%d.err", g_startup_dll, (int)getpid());
    const char *top = getenv("top_builddir");
    pid_t collect = fork();
    if (collect == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        snprintf(cmd, sizeof cmd, "%s/nettrace", top ? top : ".");
        execl(cmd, "nettrace", "collect", "-o", path, "--", "dotnet", g_startup_dll, "4000", "0", (char *)NULL);
        _exit(127);
    }
    char port[1024] = "";
    pid_t program = 0;
    for (int i = 0; i < 200 && !program; i++, usleep(50 * 1000))
        program = child_with_port(collect, port, sizeof port);
    cr_assert_gt(program, 0, "no child of collect has DOTNET_DiagnosticPorts");
    struct stat st;
    for (int i = 0; i < 200 && (stat(path, &st) != 0 || st.st_size == 0); i++)
        usleep(50 * 1000);
    cr_assert_gt(st.st_size, 0, "the session did not start");
    for (int i = 0; i < 5; i++) { /* resumed by now: the port must outlive the start */
        usleep(400 * 1000);
        cr_assert_not(second_user_can_take(port), "uid 12345 took %s while the program runs", port);
    }
    int status;
    cr_assert_eq(waitpid(collect, &status, 0), collect);
    char err[4096];
    read_text(errpath, err, sizeof err);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "collect: exit %d: %s", WEXITSTATUS(status), err);
    cr_assert_not(second_user_can_take(port), "uid 12345 took %s once collect ended", port);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", port);
    *strrchr(dir, '/') = 0;
    cr_assert_neq(access(dir, F_OK), 0, "%s is left behind", dir);
    unlink(path);
    unlink(errpath);
}

Test(launch, collect_refuses_a_program_that_does_not_exist)
{
    const char *top = getenv("top_builddir");
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "'%s/nettrace' collect -q -o /dev/null -- /nonexistent/program 2>/dev/null",
             top ? top : ".");
    int rc = system(cmd);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 127, "exit %d", WEXITSTATUS(rc));
}

/* -n NAME finds the target by its program's name; when another LiveTarget runs
 * (a parallel test run), the name is ambiguous and refused, naming both. */
Test(live, collect_by_name)
{
    char path[1200], errpath[1300], cmd[4000];
    out_path(path, sizeof path, "byname");
    snprintf(errpath, sizeof errpath, "%s.err", path);
    const char *top = getenv("top_builddir");
    snprintf(cmd, sizeof cmd, "'%s/nettrace' collect -q -n LiveTarget -o '%s' --duration 1.5s 2> '%s'",
             top ? top : ".", path, errpath);
    int rc = system(cmd);
    char err[4096];
    read_text(errpath, err, sizeof err);
    cr_assert(WIFEXITED(rc), "%s", cmd);
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)g_target.pid);
    if (WEXITSTATUS(rc) == 2) {
        cr_assert(strstr(err, "are named 'LiveTarget'") && strstr(err, pid), "refusal without the pids: %s", err);
    } else {
        cr_assert_eq(WEXITSTATUS(rc), 0, "exit %d: %s", WEXITSTATUS(rc), err);
        check_trace_file(path);
    }
    unlink(path);
    unlink(errpath);
    /* a name nothing has */
    snprintf(cmd, sizeof cmd, "'%s/nettrace' collect -q -n NoSuchProgram-%d -o /dev/null 2>/dev/null", top ? top : ".",
             (int)getpid());
    rc = system(cmd);
    cr_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 30, "no match exited %d, want 30", WEXITSTATUS(rc));
}
