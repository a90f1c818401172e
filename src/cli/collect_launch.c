/* collect -- PROGRAM ARGS: the program starts with DOTNET_DiagnosticPorts
 * pointing at a port of ours with 'suspend', so its runtime waits before
 * any managed code runs; the session starts on the port's first connection
 * and ResumeRuntime goes on the second.  The program runs in a process group
 * of its own, so the terminal's Ctrl-C reaches only nettrace, which stops
 * the session cleanly (rundown included) before ending the program. */
#include "cli/cli.h"
#include "cli/collect.h"
#include "cli/session_opts.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* fork + exec with the port in the environment; exec's errno comes back
 * through a close-on-exec pipe (nothing arrives when exec succeeded).  When
 * the trace goes to standard output the program writes its own output to
 * standard error, so nothing of it lands in the trace. */
static pid_t spawn(char **argv, const char *port_path, bool trace_on_stdout, int *exec_errno)
{
    char *env = NULL;
    const char *old = getenv("DOTNET_DiagnosticPorts");
    size_t len = strlen(port_path) + (old ? strlen(old) : 0) + 16;
    env = malloc(len);
    if (!env)
        return -1;
    snprintf(env, len, "%s,suspend%s%s", port_path, old && *old ? ";" : "", old && *old ? old : "");
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        free(env);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        if (trace_on_stdout && dup2(2, 1) < 0)
            _exit(127);
        setenv("DOTNET_DiagnosticPorts", env, 1);
        execvp(argv[0], argv);
        int e = errno;
        ssize_t w = write(pfd[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    free(env);
    close(pfd[1]);
    *exec_errno = 0;
    if (pid > 0) {
        ssize_t r;
        do
            r = read(pfd[0], exec_errno, sizeof *exec_errno);
        while (r < 0 && errno == EINTR);
        if (r != (ssize_t)sizeof *exec_errno)
            *exec_errno = 0;
    }
    close(pfd[0]);
    return pid;
}

/* Whether the child ended (reaping it, and saying so). */
static bool child_gone(pid_t child, const char *program)
{
    int status;
    if (waitpid(child, &status, WNOHANG) != child)
        return false;
    if (WIFEXITED(status))
        fprintf(stderr, "nettrace collect: %s exited with status %d before its runtime connected\n", program,
                WEXITSTATUS(status));
    else
        fprintf(stderr, "nettrace collect: %s was killed by signal %d before its runtime connected\n", program,
                WTERMSIG(status));
    return true;
}

static void end_child(pid_t child)
{
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
}

int collect_launch(collect_job *j, char **argv, const nt_session_config *cfg, int64_t connect_timeout_ns)
{
    char dir[] = "/tmp/nettrace-port-XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "nettrace collect: cannot create a directory for the diagnostic port: %s\n", strerror(errno));
        return CLI_EXIT_ERROR;
    }
    char path[64];
    snprintf(path, sizeof path, "%s/port", dir);
    nt_port *port;
    nt_status st = nt_port_open(path, &port, NULL);
    if (st != NT_OK) {
        fprintf(stderr, "nettrace collect: cannot listen on %s: %s\n", path, strerror(errno));
        rmdir(dir);
        return CLI_EXIT_ERROR;
    }
    int rc = CLI_EXIT_ERROR, exec_errno = 0;
    j->program = argv[0];
    pid_t child = spawn(argv, path, j->sink.fd == 1, &exec_errno);
    if (child < 0 || exec_errno) {
        fprintf(stderr, "nettrace collect: cannot run %s: %s\n", argv[0], strerror(exec_errno ? exec_errno : errno));
        if (child > 0)
            waitpid(child, NULL, 0);
        rc = exec_errno == ENOENT ? 127 : CLI_EXIT_ERROR;
        goto out;
    }
    /* Wait for the runtime's first connection, watching the child and Ctrl-C. */
    int64_t until = nt_now_ns() + connect_timeout_ns;
    int fd = -1;
    uint64_t announced = 0;
    for (;;) {
        int64_t slice = nt_now_ns() + 100 * 1000000;
        st = nt_port_accept(port, slice < until ? slice : until, &fd, &announced);
        if (st != NT_ERR_TIMEOUT)
            break;
        if (child_gone(child, argv[0])) {
            fprintf(stderr, "nettrace collect: (is %s a .NET program? the runtime reads DOTNET_DiagnosticPorts)\n",
                    argv[0]);
            goto out;
        }
        if (nt_now_ns() >= until || cli_interrupt_count() > 0)
            break;
    }
    if (st != NT_OK) {
        fprintf(stderr, "nettrace collect: %s's runtime did not connect to the diagnostic port%s\n", argv[0],
                cli_interrupt_count() ? " (interrupted)" : " within --connect-timeout");
        end_child(child);
        rc = cli_interrupt_count() ? cli_exit_code(NT_ERR_CANCELLED) : cli_exit_code(NT_ERR_TIMEOUT);
        goto out;
    }
    /* StopTracing goes to the runtime's own listen endpoint (it exists while suspended). */
    nt_endpoint ep;
    st = nt_endpoint_find(child, &ep);
    while (st != NT_OK && nt_now_ns() < until && cli_interrupt_count() == 0) {
        usleep(20 * 1000);
        st = nt_endpoint_find(child, &ep);
    }
    if (st != NT_OK) {
        fprintf(stderr, "nettrace collect: %s (pid %d) has no listen endpoint to stop the session through\n",
                argv[0], (int)child);
        close(fd);
        end_child(child);
        rc = cli_exit_code(st);
        goto out;
    }
    j->session = nt_session_new(cfg, NULL);
    if (!j->session) {
        fprintf(stderr, "nettrace collect: out of memory\n");
        close(fd);
        end_child(child);
        goto out;
    }
    cli_start_guard_begin(j->session);
    st = nt_session_start_connected(j->session, fd, &ep, until);
    cli_start_guard_end();
    if (st == NT_OK)
        st = nt_port_resume_runtime(port, until);
    if (st != NT_OK) {
        fprintf(stderr, "nettrace collect: %s: %s\n", nt_status_describe(st),
                nt_session_message(j->session)[0] ? nt_session_message(j->session) : "resuming the runtime");
        cli_interrupts_session(NULL);
        nt_session_cancel(j->session);
        nt_session_free(j->session);
        j->session = NULL;
        end_child(child);
        rc = cli_exit_code(st);
        goto out;
    }
    j->child = child;
    rc = CLI_EXIT_OK;
out:
    nt_port_close(port);
    rmdir(dir);
    return rc;
}
