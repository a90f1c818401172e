/* Diagnostic ports (reverse mode): the tool listens, a runtime started with
 * DOTNET_DiagnosticPorts=<path>[,suspend] connects and advertises itself,
 * and every connection carries one command.  A runtime told to suspend waits
 * for ResumeRuntime before running any managed code, so a session started on
 * the first connection sees the program from its very start. */
#include "common/alloc.h"
#include "session/ipc.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define ADVERTISE_SIZE 34

struct nt_port {
    nt_mem mem;
    int listen_fd;
    int cancel_fd;
    char path[sizeof ((struct sockaddr_un *)0)->sun_path];
};

nt_status nt_port_open(const char *path, nt_port **out, const nt_allocator *alloc)
{
    if (!out || !path)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof sa.sun_path)
        return NT_ERR_INVALID_ARG;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    nt_port *p = NT_MEM_NEW(nt_port, alloc);
    if (!p)
        return NT_ERR_NOMEM;
    memcpy(p->path, sa.sun_path, sizeof p->path);
    p->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    p->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (p->cancel_fd < 0 || p->listen_fd < 0 || bind(p->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(p->listen_fd, 8) != 0) {
        int e = errno;
        bool bound = p->listen_fd >= 0 && e != EADDRINUSE;
        if (p->listen_fd >= 0)
            close(p->listen_fd);
        if (p->cancel_fd >= 0)
            close(p->cancel_fd);
        if (bound)
            unlink(p->path);
        nt_mem mem = p->mem;
        nt_mem_free(&mem, p, sizeof *p);
        errno = e;
        return NT_ERR_IO;
    }
    *out = p;
    return NT_OK;
}

const char *nt_port_path(const nt_port *p) { return p ? p->path : ""; }

nt_status nt_port_accept(nt_port *p, int64_t deadline_ns, int *fd_out, uint64_t *pid_out)
{
    deadline_ns = ipc_deadline(deadline_ns);
    if (!p || !fd_out)
        return NT_ERR_INVALID_ARG;
    *fd_out = -1;
    for (;;) {
        nt_status st = ipc_wait(p->listen_fd, POLLIN, deadline_ns, p->cancel_fd);
        if (st != NT_OK)
            return st;
        int fd = accept4(p->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
                continue;
            return NT_ERR_IO;
        }
        /* The advertise: "ADVR_V1\0", the runtime cookie, the pid, a reserved u16. */
        uint8_t adv[ADVERTISE_SIZE];
        st = ipc_recv_exact(fd, adv, sizeof adv, deadline_ns, p->cancel_fd);
        if (st == NT_OK && memcmp(adv, "ADVR_V1", 8) != 0)
            st = NT_ERR_PROTOCOL;
        if (st != NT_OK) {
            close(fd);
            if (st == NT_ERR_TRUNCATED || st == NT_ERR_PROTOCOL)
                continue; /* not a runtime, or one that went away: wait for the next */
            return st;
        }
        if (pid_out) {
            uint64_t pid = 0;
            for (int i = 31; i >= 24; i--)
                pid = pid << 8 | adv[i];
            *pid_out = pid;
        }
        *fd_out = fd;
        return NT_OK;
    }
}

nt_status nt_port_resume_runtime(nt_port *p, int64_t deadline_ns)
{
    deadline_ns = ipc_deadline(deadline_ns);
    int fd;
    nt_status st = nt_port_accept(p, deadline_ns, &fd, NULL);
    if (st != NT_OK)
        return st;
    ipc_buf req;
    ipc_begin(&req, IPC_SET_PROCESS, IPC_PROCESS_RESUME);
    ipc_end(&req);
    uint8_t reply[64];
    size_t len;
    uint32_t hr;
    st = ipc_exchange(fd, &req, reply, sizeof reply, &len, &hr, deadline_ns, p->cancel_fd);
    close(fd);
    return st;
}

void nt_port_cancel(nt_port *p)
{
    if (p)
        ipc_raise(p->cancel_fd);
}

void nt_port_close(nt_port *p)
{
    if (!p)
        return;
    close(p->listen_fd);
    close(p->cancel_fd);
    unlink(p->path);
    NT_MEM_DELETE(nt_port, p);
}
