/* collect -- PROGRAM, once the program runs: its diagnostic port stays open
 * and answered until no process of the program's group is left.  Every
 * process the program starts inherits DOTNET_DiagnosticPorts=<port>,suspend:
 * removing the port while one of them lives would leave a .NET child
 * suspended forever, and a removed name is one another local user may take
 * (the directory is private, see collect_launch.c, but only while it
 * exists).  nettrace is the subreaper of the program's descendants, so
 * orphans are reaped here and a group of zombies does not look alive. */
#include "cli/cli.h"
#include "cli/collect.h"
#include "cli/session_opts.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* How long the program's group gets to end after SIGTERM before SIGKILL. */
#define GROUP_GRACE_MS 5000
/* One round of waiting: the port is answered meanwhile. */
#define SERVE_SLICE_MS 50

bool collect_program_reap(collect_job *j)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (pid == j->child) {
            j->child_reaped = true;
            j->child_status = status;
        }
    }
    return j->child_reaped;
}

void collect_program_serve(collect_job *j, int ms)
{
    if (j->port)
        nt_port_serve(j->port, nt_deadline_after_ms(ms));
    else
        usleep((useconds_t)ms * 1000);
    collect_program_reap(j);
}

/* Whether any process of the group is left (zombies included until reaped). */
static bool group_alive(const collect_job *j)
{
    return !j->child_reaped || kill(-j->child, 0) == 0 || errno == EPERM;
}

static void signal_group(const collect_job *j, int sig)
{
    if (kill(-j->child, sig) != 0 && !j->child_reaped)
        kill(j->child, sig); /* the child has left its group */
}

/* Answer and reap until the group is gone or ms pass; true when gone. */
static bool group_ends_within(collect_job *j, int ms)
{
    for (int waited = 0;; waited += SERVE_SLICE_MS) {
        collect_program_reap(j);
        if (!group_alive(j))
            return true;
        if (waited >= ms)
            return false;
        collect_program_serve(j, SERVE_SLICE_MS);
    }
}

static void end_group(collect_job *j)
{
    signal_group(j, SIGTERM);
    if (!group_ends_within(j, GROUP_GRACE_MS)) {
        signal_group(j, SIGKILL);
        group_ends_within(j, GROUP_GRACE_MS);
    }
}

/* Wait for the group to end by itself; a Ctrl-C (one more than at the start) ends it. */
static void await_group(collect_job *j)
{
    int interrupts = cli_interrupt_count();
    bool told = false;
    for (int slices = 0; !group_ends_within(j, SERVE_SLICE_MS); slices++) {
        if (cli_interrupt_count() > interrupts) {
            end_group(j);
            return;
        }
        if (!told && !j->quiet && slices * SERVE_SLICE_MS >= 1000) { /* a process exiting is not news */
            if (j->child_reaped)
                fprintf(stderr, "nettrace collect: %s ended; waiting for the rest of its process group (%d) to "
                                "end (Ctrl-C ends them)\n", j->program, (int)j->child);
            else
                fprintf(stderr, "nettrace collect: the traced runtime ended; waiting for %s (pid %d) to end "
                                "(Ctrl-C ends it)\n", j->program, (int)j->child);
            told = true;
        }
    }
}

int collect_program_end(collect_job *j, bool end_it)
{
    if (!j->child)
        return -1;
    if (end_it)
        end_group(j);
    else
        await_group(j);
    if (j->port) {
        nt_port_close(j->port);
        j->port = NULL;
    }
    if (j->port_dir[0] && rmdir(j->port_dir) != 0)
        fprintf(stderr, "nettrace collect: cannot remove %s: %s\n", j->port_dir, strerror(errno));
    j->port_dir[0] = 0;
    if (!j->child_reaped)
        return -1; /* not even SIGKILL ended it (a process stuck in the kernel) */
    int status = j->child_status;
    if (WIFEXITED(status)) {
        fprintf(stderr, "nettrace collect: %s (pid %d) exited with status %d\n", j->program, (int)j->child,
                WEXITSTATUS(status));
        return WEXITSTATUS(status);
    }
    fprintf(stderr, "nettrace collect: %s (pid %d) was killed by signal %d (%s)\n", j->program, (int)j->child,
            WTERMSIG(status), strsignal(WTERMSIG(status)));
    return 128 + WTERMSIG(status);
}
