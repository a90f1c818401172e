/* Driving a started collection to its end: the program's exit, --duration,
 * the stream ending by itself, or Ctrl-C (the first stops cleanly with
 * rundown, a second abandons).  On a terminal a live counter shows the bytes
 * written and the events in them. */
#include "cli/cli.h"
#include "cli/collect.h"
#include "cli/session_opts.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long a launched program gets to end by itself once collection stopped. */
#define CHILD_GRACE_MS 5000

int collect_sink_write(void *user, const void *data, size_t len)
{
    collect_sink *k = user;
    if (nt_sink_fd(&k->fd, data, len) != 0)
        return -1;
    if (k->counting) {
        if (nt_parser_feed(k->counter, data, len) != NT_OK) {
            k->counting = false;
        } else {
            nt_parser_stats ps = { 0 };
            nt_parser_stats_get(k->counter, &ps);
            atomic_store(&k->events, ps.events);
        }
    }
    return 0;
}

static void show_counter(const collect_job *j, bool *shown)
{
    uint64_t bytes = nt_session_bytes(j->session);
    uint64_t events = atomic_load(&((collect_job *)j)->sink.events);
    fprintf(stderr, "\r\033[Knettrace collect: %.1f MB, %" PRIu64 " events", (double)bytes / 1048576.0, events);
    *shown = true;
}

/* Report how the program ended (status from waitpid). */
static void report_child(const collect_job *j, int status)
{
    if (WIFEXITED(status))
        fprintf(stderr, "nettrace collect: %s (pid %d) exited with status %d\n", j->program, (int)j->child,
                WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        fprintf(stderr, "nettrace collect: %s (pid %d) was killed by signal %d (%s)\n", j->program, (int)j->child,
                WTERMSIG(status), strsignal(WTERMSIG(status)));
}

/* Whether the program ends within ms (reaped into *status). */
static bool child_ends_within(pid_t child, int ms, int *status)
{
    for (int waited = 0;; waited += 50) {
        if (waitpid(child, status, WNOHANG) == child)
            return true;
        if (waited >= ms)
            return false;
        usleep(50 * 1000);
    }
}

/* The collection is over and the program runs on.  When the stream ended by
 * itself the runtime is shutting down: let the program finish.  Otherwise (a
 * stop: --duration, Ctrl-C) end it: SIGTERM, then SIGKILL after a grace. */
static void end_program(collect_job *j, bool stream_ended_by_itself)
{
    int status;
    if (child_ends_within(j->child, stream_ended_by_itself ? CHILD_GRACE_MS : 0, &status)) {
        report_child(j, status);
        return;
    }
    kill(j->child, SIGTERM);
    if (!child_ends_within(j->child, CHILD_GRACE_MS, &status)) {
        kill(j->child, SIGKILL);
        waitpid(j->child, &status, 0);
    }
    report_child(j, status);
}

int collect_run(collect_job *j)
{
    nt_session *s = j->session;
    bool tty = !j->quiet && isatty(2), shown = false, child_done = false;
    int child_status = 0;
    int64_t until = j->duration_ns > 0 ? nt_now_ns() + j->duration_ns : NT_DEADLINE_NONE;
    int64_t next_show = nt_now_ns() + 250 * 1000000;
    nt_status st;
    for (;;) {
        st = nt_session_wait(s, nt_now_ns());
        if (st != NT_ERR_TIMEOUT)
            break;
        if (j->child && !child_done && waitpid(j->child, &child_status, WNOHANG) == j->child) {
            /* The runtime ends the session as it shuts down: wait for the rest of the stream. */
            child_done = true;
            st = nt_session_wait(s, nt_now_ns() + j->stop_timeout_ns);
            break;
        }
        if (until != NT_DEADLINE_NONE && nt_now_ns() >= until)
            break;
        if (tty && nt_now_ns() >= next_show) {
            show_counter(j, &shown);
            next_show = nt_now_ns() + 250 * 1000000;
        }
        struct pollfd pf = { .fd = cli_interrupt_fd(), .events = POLLIN };
        int ms = j->child ? 50 : 200;
        if (until != NT_DEADLINE_NONE) {
            int64_t left = (until - nt_now_ns()) / 1000000 + 1;
            if (left < ms)
                ms = left < 0 ? 0 : (int)left;
        }
        if (poll(&pf, 1, ms) > 0 || cli_interrupt_count() > 0)
            break;
    }
    if (shown)
        fputs("\r\033[K", stderr);
    bool ended_by_itself = st != NT_ERR_TIMEOUT;
    if (st == NT_ERR_TIMEOUT) {
        if (!j->quiet)
            fprintf(stderr, "nettrace collect: stopping (rundown; Ctrl-C again to abandon)...\n");
        st = nt_session_stop(s, nt_now_ns() + j->stop_timeout_ns);
    }
    cli_interrupts_session(NULL);
    uint64_t bytes = nt_session_bytes(s);
    int rc;
    if (st == NT_OK) {
        if (!j->quiet)
            fprintf(stderr, "nettrace collect: wrote %" PRIu64 " bytes (%" PRIu64 " events) to %s\n", bytes,
                    (uint64_t)atomic_load(&j->sink.events), j->output);
        rc = CLI_EXIT_OK;
    } else {
        /* The message names the failure itself: no status name before it. */
        const char *why = nt_session_message(s);
        bool says_more = why[0] && strcmp(why, nt_status_describe(st)) != 0;
        fprintf(stderr, "nettrace collect: %s after %" PRIu64 " bytes (%s)%s%s\n", nt_status_describe(st), bytes,
                j->output, says_more ? ": " : "", says_more ? why : "");
        rc = cli_exit_code(st);
    }
    if (j->child) {
        if (child_done)
            report_child(j, child_status);
        else
            end_program(j, ended_by_itself);
    }
    return rc;
}
