/* collect -- PROGRAM ARGS: the program starts with DOTNET_DiagnosticPorts
 * pointing at a port of ours with 'suspend', so its runtime waits before
 * any managed code runs; the session starts on the port's first connection
 * and ResumeRuntime goes on the second.  The runtime traced is the one that
 * connects first (its pid from the connection's credentials: `sh -c 'dotnet
 * app'` traces dotnet, not sh).  The program runs in a process group of its
 * own, so the terminal's Ctrl-C reaches only nettrace, which stops the
 * session cleanly (rundown included) before ending the group.
 *
 * The port lives in a directory no other user can create or enter: a fresh
 * 0700 directory under /run/nettrace (root), $XDG_RUNTIME_DIR (others), or
 * /tmp when neither is usable; it is kept, and answered, until the program's
 * whole process group has ended (collect_program.c). */
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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
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
    if (pid > 0)
        setpgid(pid, pid); /* the child does the same: whichever runs first, no signal meets it in ours */
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

/* A directory of ours that no other user can write in (so none can create a
 * name in it once ours is gone): true with its path in out. */
static bool private_parent(const char *path, bool create)
{
    if (create && mkdir(path, 0700) != 0 && errno != EEXIST)
        return false;
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 077) == 0;
}

/* mkdtemp the port's directory in the most private parent available. */
static bool make_port_dir(char *dir, size_t cap)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    const char *parent = "/tmp";
    if (geteuid() == 0 && private_parent("/run/nettrace", true))
        parent = "/run/nettrace";
    else if (geteuid() != 0 && xdg && xdg[0] == '/' && strlen(xdg) < 64 && private_parent(xdg, false))
        parent = xdg;
    if ((size_t)snprintf(dir, cap, "%s/nettrace-port-XXXXXX", parent) >= cap)
        return false;
    return mkdtemp(dir) != NULL;
}

/* The pid of the process at the other end of fd, as we see it (the
 * runtime's advertise has it only as its own PID namespace sees it). */
static pid_t peer_pid(int fd, uint64_t announced)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0)
        return cred.pid;
    return announced > 0 && announced <= INT32_MAX ? (pid_t)announced : 0;
}

/* The first runtime's connection, watching the child and Ctrl-C. */
static nt_status await_runtime(collect_job *j, int64_t until, int *fd)
{
    uint64_t announced = 0;
    for (;;) {
        int64_t slice = nt_now_ns() + 100 * 1000000;
        nt_status st = nt_port_accept(j->port, slice < until ? slice : until, fd, &announced);
        if (st == NT_OK)
            j->runtime = peer_pid(*fd, announced);
        if (st != NT_ERR_TIMEOUT)
            return st;
        if (collect_program_reap(j)) /* the child ended first: collect_program_end reports how */
            return NT_ERR_NO_ENDPOINT;
        if (nt_now_ns() >= until || cli_interrupt_count() > 0)
            return st;
    }
}

/* A session of cfg started on the runtime's connection fd (taken: closed
 * on failure), in j->session; NT_ERR_NOMEM with no session. */
static nt_status start_on(collect_job *j, int fd, const nt_endpoint *ep, const nt_session_config *cfg, int64_t until)
{
    j->session = nt_session_new(cfg, NULL);
    if (!j->session) {
        close(fd);
        return NT_ERR_NOMEM;
    }
    cli_start_guard_begin(j->session);
    nt_status st = nt_session_start_connected(j->session, fd, ep, until);
    cli_start_guard_end();
    return st;
}

/* The session on the runtime's connection fd, then ResumeRuntime. */
static int start_traced(collect_job *j, int fd, const nt_session_config *cfg, int64_t until)
{
    /* StopTracing goes to the runtime's own listen endpoint (it exists while suspended). */
    nt_endpoint ep;
    nt_status st = nt_endpoint_find(j->runtime, &ep);
    while (st != NT_OK && nt_now_ns() < until && cli_interrupt_count() == 0) {
        collect_program_serve(j, 20);
        st = nt_endpoint_find(j->runtime, &ep);
    }
    if (st != NT_OK) {
        fprintf(stderr, "nettrace collect: the runtime of %s (pid %d) has no listen endpoint to stop the session "
                        "through (%s)\n", j->program, (int)j->runtime, cli_endpoint_reason(ep.reason));
        close(fd);
        return cli_exit_code(st);
    }
    st = start_on(j, fd, &ep, cfg, until);
    if (st == NT_ERR_REFUSED && cfg->buffering == NT_BUFFERING_BLOCK &&
        nt_session_hresult(j->session) == NT_HR_UNKNOWN_COMMAND) {
        /* A runtime older than .NET 11 hung up on CollectTracing6; it connects to the port again, and that
         * connection gets the lossy buffer (the summary line says which buffering the session got). */
        cli_interrupts_session(NULL);
        nt_session_free(j->session);
        j->session = NULL;
        nt_session_config lossy = *cfg;
        lossy.buffering = NT_BUFFERING_DROP;
        st = await_runtime(j, until, &fd);
        if (st == NT_OK)
            st = start_on(j, fd, &ep, &lossy, until);
    }
    if (st == NT_ERR_NOMEM && !j->session) {
        fprintf(stderr, "nettrace collect: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    if (!j->session) {
        fprintf(stderr, "nettrace collect: %s's runtime did not connect again after refusing non-lossy "
                        "buffering: %s\n", j->program, nt_status_describe(st));
        return cli_exit_code(st);
    }
    if (st == NT_OK)
        st = nt_port_resume_runtime(j->port, until);
    if (st == NT_OK)
        return CLI_EXIT_OK;
    fprintf(stderr, "nettrace collect: %s: %s\n", nt_status_describe(st),
            nt_session_message(j->session)[0] ? nt_session_message(j->session) : "resuming the runtime");
    cli_interrupts_session(NULL);
    nt_session_cancel(j->session);
    nt_session_free(j->session);
    j->session = NULL;
    return cli_exit_code(st);
}

int collect_launch(collect_job *j, char **argv, const nt_session_config *cfg, int64_t connect_timeout_ns)
{
    j->program = argv[0];
    if (!make_port_dir(j->port_dir, sizeof j->port_dir)) {
        fprintf(stderr, "nettrace collect: cannot create a directory for the diagnostic port: %s\n", strerror(errno));
        j->port_dir[0] = 0;
        return CLI_EXIT_ERROR;
    }
    char path[sizeof j->port_dir + 8];
    snprintf(path, sizeof path, "%s/port", j->port_dir);
    nt_status st = nt_port_open(path, &j->port, NULL);
    if (st != NT_OK) {
        fprintf(stderr, "nettrace collect: cannot listen on %s: %s\n", path, strerror(errno));
        rmdir(j->port_dir);
        j->port_dir[0] = 0;
        return CLI_EXIT_ERROR;
    }
    /* Orphaned descendants come to us: reaped, they do not keep the group looking alive. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int exec_errno = 0;
    pid_t child = spawn(argv, path, j->sink.fd == 1, &exec_errno);
    if (child < 0 || exec_errno) {
        fprintf(stderr, "nettrace collect: cannot run %s: %s\n", argv[0], strerror(exec_errno ? exec_errno : errno));
        if (child > 0)
            waitpid(child, NULL, 0);
        nt_port_close(j->port);
        j->port = NULL;
        rmdir(j->port_dir);
        j->port_dir[0] = 0;
        return exec_errno == ENOENT ? 127 : CLI_EXIT_ERROR;
    }
    j->child = child;
    int64_t until = nt_now_ns() + connect_timeout_ns;
    int fd = -1;
    st = await_runtime(j, until, &fd);
    int rc;
    if (st == NT_OK) {
        rc = start_traced(j, fd, cfg, until);
    } else if (j->child_reaped) {
        fprintf(stderr, "nettrace collect: %s ended before its runtime connected (is it a .NET program? the "
                        "runtime reads DOTNET_DiagnosticPorts)\n", argv[0]);
        rc = CLI_EXIT_ERROR;
    } else {
        fprintf(stderr, "nettrace collect: %s's runtime did not connect to the diagnostic port%s\n", argv[0],
                cli_interrupt_count() ? " (interrupted)" : " within --connect-timeout");
        rc = cli_interrupt_count() ? cli_exit_code(NT_ERR_CANCELLED) : cli_exit_code(NT_ERR_TIMEOUT);
    }
    if (rc != CLI_EXIT_OK)
        collect_program_end(j, true);
    return rc;
}
