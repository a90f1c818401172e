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

static void show_counter(const collect_job *j, int64_t started_ns, bool *shown)
{
    uint64_t bytes = nt_session_bytes(j->session);
    uint64_t events = atomic_load(&((collect_job *)j)->sink.events);
    fprintf(stderr, "\r\033[Knettrace collect: %.1f s, %.1f MiB, %" PRIu64 " events",
            (double)(nt_now_ns() - started_ns) / 1e9, (double)bytes / 1048576.0, events);
    *shown = true;
}

/* Whether the traced runtime has ended (a descendant: reaped by its parent or by us). */
static bool runtime_gone(collect_job *j)
{
    bool child_done = collect_program_reap(j);
    if (j->runtime == j->child)
        return child_done;
    return kill(j->runtime, 0) != 0 && errno == ESRCH;
}

int collect_run(collect_job *j)
{
    nt_session *s = j->session;
    bool tty = !j->quiet && isatty(2), shown = false;
    int64_t until = j->duration_ns > 0 ? nt_now_ns() + j->duration_ns : NT_DEADLINE_NONE;
    int64_t started_ns = nt_now_ns(), next_show = started_ns + 250 * 1000000;
    nt_status st;
    for (;;) {
        st = nt_session_wait(s, nt_now_ns());
        if (st != NT_ERR_TIMEOUT)
            break;
        if (j->child && runtime_gone(j)) {
            /* The runtime ends the session as it shuts down: wait for the rest of the stream. */
            st = nt_session_wait(s, nt_now_ns() + j->stop_timeout_ns);
            break;
        }
        if (until != NT_DEADLINE_NONE && nt_now_ns() >= until)
            break;
        if (tty && nt_now_ns() >= next_show) {
            show_counter(j, started_ns, &shown);
            next_show = nt_now_ns() + 250 * 1000000;
        }
        int ms = j->child ? 50 : 200;
        if (until != NT_DEADLINE_NONE) {
            int64_t left = (until - nt_now_ns()) / 1000000 + 1;
            if (left < ms)
                ms = left < 0 ? 0 : (int)left;
        }
        if (j->child) {
            collect_program_serve(j, ms); /* later runtimes of the program are resumed meanwhile */
        } else {
            struct pollfd pf = { .fd = cli_interrupt_fd(), .events = POLLIN };
            poll(&pf, 1, ms);
        }
        if (cli_interrupt_count() > 0)
            break;
    }
    if (shown)
        fputs("\r\033[K", stderr);
    bool ended_by_itself = st != NT_ERR_TIMEOUT;
    /* An attached process that ended the stream by exiting: say so (a launched program's end is its status). */
    if (ended_by_itself && !j->child && j->runtime > 0 && cli_interrupt_count() == 0 &&
        cli_process_gone(j->runtime, 1000))
        fprintf(stderr, "nettrace collect: process %d exited\n", (int)j->runtime);
    /* The runtime ended its stream (it exited, or its process goes on): the program runs to its end. */
    bool program_goes_on = ended_by_itself && st != NT_ERR_STREAM_CAP && st != NT_ERR_STOPPED;
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
        /* The program's own status becomes ours, as dotnet-trace does, unless we ended it. */
        bool ended_alone = program_goes_on || collect_program_reap(j);
        int code = collect_program_end(j, !program_goes_on);
        if (rc == CLI_EXIT_OK && ended_alone && code >= 0)
            rc = code;
    }
    return rc;
}
