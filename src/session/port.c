/* Diagnostic ports (reverse mode): the tool listens, a runtime started with
 * DOTNET_DiagnosticPorts=<path>[,suspend] connects and advertises itself,
 * and every connection carries one command.  A runtime told to suspend waits
 * for ResumeRuntime before running any managed code, so a session started on
 * the first connection sees the program from its very start.
 *
 * The variable is inherited by every process the program starts, so the port
 * keeps answering after the traced runtime is resumed (nt_port_serve): a
 * runtime it has not seen gets ResumeRuntime, a runtime already resumed has
 * its next connection held open, which is what stops it reconnecting. */
#include "common/alloc.h"
#include "session/ipc.h"
#include "common/cursor.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define ADVERTISE_SIZE 34
/* Runtimes the port remembers at once (each holds one descriptor while it lives). */
#define PORT_MAX_RUNTIMES 64
/* A runtime resumed but not reconnected by then is forgotten (it exited). */
#define PORT_FORGET_NS (30ll * 1000000000)
/* How long a fresh connection gets to send its advertise. */
#define ADVERTISE_MS 1000

typedef struct port_runtime {
    uint8_t cookie[16];     /* the runtime instance's GUID from its advertise */
    int held_fd;            /* its idle connection, held open; -1 until it reconnects */
    int64_t resumed_ns;
} port_runtime;

struct nt_port {
    cm_mem mem;
    int listen_fd;
    int cancel_fd;
    char path[sizeof ((struct sockaddr_un *)0)->sun_path];
    port_runtime runtimes[PORT_MAX_RUNTIMES];
    size_t runtime_count;
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
    nt_port *p = CM_MEM_NEW(nt_port, alloc);
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
        cm_mem mem = p->mem;
        cm_mem_free(&mem, p, sizeof *p);
        errno = e;
        return NT_ERR_IO;
    }
    *out = p;
    return NT_OK;
}

const char *nt_port_path(const nt_port *p) { return p ? p->path : ""; }

/* The next connection and its advertise ("ADVR_V1\0", the runtime cookie, the
 * pid, a reserved u16); connections that are not a runtime's are dropped. */
static nt_status accept_runtime(nt_port *p, int64_t deadline_ns, int *fd_out, uint8_t cookie[16], uint64_t *pid_out)
{
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
        uint8_t adv[ADVERTISE_SIZE];
        int64_t adv_deadline = nt_deadline_after_ms(ADVERTISE_MS);
        st = ipc_recv_exact(fd, adv, sizeof adv, adv_deadline < deadline_ns ? adv_deadline : deadline_ns,
                            p->cancel_fd);
        if (st == NT_OK && memcmp(adv, "ADVR_V1", 8) != 0)
            st = NT_ERR_PROTOCOL;
        if (st != NT_OK) {
            close(fd);
            if (st == NT_ERR_CANCELLED || st == NT_ERR_IO || (st == NT_ERR_TIMEOUT && nt_now_ns() >= deadline_ns))
                return st;
            continue; /* not a runtime, a silent one, or one that went away: wait for the next */
        }
        memcpy(cookie, adv + 8, 16);
        uint64_t pid = cm_le64(adv + 24);
        if (pid_out)
            *pid_out = pid;
        *fd_out = fd;
        return NT_OK;
    }
}

nt_status nt_port_accept(nt_port *p, int64_t deadline_ns, int *fd_out, uint64_t *pid_out)
{
    deadline_ns = ipc_deadline(deadline_ns);
    if (!p || !fd_out)
        return NT_ERR_INVALID_ARG;
    uint8_t cookie[16];
    return accept_runtime(p, deadline_ns, fd_out, cookie, pid_out);
}

static port_runtime *find_runtime(nt_port *p, const uint8_t cookie[16])
{
    for (size_t i = 0; i < p->runtime_count; i++)
        if (memcmp(p->runtimes[i].cookie, cookie, 16) == 0)
            return &p->runtimes[i];
    return NULL;
}

static void forget_runtime(nt_port *p, port_runtime *r)
{
    if (r->held_fd >= 0)
        close(r->held_fd);
    *r = p->runtimes[--p->runtime_count];
}

/* Remember a resumed runtime.  A full table first forgets the oldest runtime
 * that holds no connection; when every entry holds one, the runtime is not
 * remembered (it is resumed again on each reconnect: a no-op for it). */
static void remember_runtime(nt_port *p, const uint8_t cookie[16])
{
    if (find_runtime(p, cookie))
        return;
    if (p->runtime_count == PORT_MAX_RUNTIMES) {
        port_runtime *oldest = NULL;
        for (size_t i = 0; i < p->runtime_count; i++)
            if (p->runtimes[i].held_fd < 0 && (!oldest || p->runtimes[i].resumed_ns < oldest->resumed_ns))
                oldest = &p->runtimes[i];
        if (!oldest)
            return;
        forget_runtime(p, oldest);
    }
    port_runtime *r = &p->runtimes[p->runtime_count++];
    memcpy(r->cookie, cookie, 16);
    r->held_fd = -1;
    r->resumed_ns = nt_now_ns();
}

/* ResumeRuntime on fd (which is closed), the runtime remembered as resumed. */
static nt_status resume_on(nt_port *p, int fd, const uint8_t cookie[16], int64_t deadline_ns)
{
    ipc_buf req;
    ipc_begin(&req, IPC_SET_PROCESS, IPC_PROCESS_RESUME);
    ipc_end(&req);
    uint8_t reply[64];
    size_t len;
    uint32_t hr;
    nt_status st = ipc_exchange(fd, &req, reply, sizeof reply, &len, &hr, deadline_ns, p->cancel_fd);
    close(fd);
    if (st == NT_OK || st == NT_ERR_REFUSED)
        remember_runtime(p, cookie);
    return st;
}

nt_status nt_port_resume_runtime(nt_port *p, int64_t deadline_ns)
{
    deadline_ns = ipc_deadline(deadline_ns);
    if (!p)
        return NT_ERR_INVALID_ARG;
    int fd;
    uint8_t cookie[16];
    nt_status st = accept_runtime(p, deadline_ns, &fd, cookie, NULL);
    if (st != NT_OK)
        return st;
    return resume_on(p, fd, cookie, deadline_ns);
}

/* Drop held connections their runtime closed (it exited) and resumed
 * runtimes that never came back. */
static void sweep_runtimes(nt_port *p, const struct pollfd *held, size_t count)
{
    int64_t now = nt_now_ns();
    for (size_t i = count; i-- > 0;) {
        port_runtime *r = &p->runtimes[i];
        bool gone = r->held_fd >= 0 && held[i].fd == r->held_fd && (held[i].revents & (POLLIN | POLLHUP | POLLERR));
        bool stale = r->held_fd < 0 && now - r->resumed_ns > PORT_FORGET_NS;
        if (gone || stale)
            forget_runtime(p, r);
    }
}

nt_status nt_port_serve(nt_port *p, int64_t deadline_ns)
{
    deadline_ns = ipc_deadline(deadline_ns);
    if (!p)
        return NT_ERR_INVALID_ARG;
    for (;;) {
        struct pollfd pf[PORT_MAX_RUNTIMES + 2];
        size_t count = p->runtime_count;
        for (size_t i = 0; i < count; i++)
            pf[i] = (struct pollfd){ .fd = p->runtimes[i].held_fd, .events = POLLIN };
        pf[count] = (struct pollfd){ .fd = p->listen_fd, .events = POLLIN };
        pf[count + 1] = (struct pollfd){ .fd = p->cancel_fd, .events = POLLIN };
        int r = poll(pf, (nfds_t)count + 2, ipc_poll_timeout(deadline_ns));
        if (r < 0 && errno != EINTR)
            return NT_ERR_IO;
        if (r > 0 && (pf[count + 1].revents & POLLIN))
            return NT_ERR_CANCELLED;
        if (r > 0)
            sweep_runtimes(p, pf, count);
        if (r > 0 && (pf[count].revents & POLLIN)) {
            int fd;
            uint8_t cookie[16];
            /* The advertise follows the connect at once: a short deadline of its own. */
            int64_t soon = nt_deadline_after_ms(ADVERTISE_MS);
            nt_status st = accept_runtime(p, soon, &fd, cookie, NULL);
            if (st == NT_OK) {
                port_runtime *known = find_runtime(p, cookie);
                if (known && known->held_fd < 0)
                    known->held_fd = fd; /* resumed already: hold its idle connection */
                else if (known)
                    close(fd);           /* a second idle connection of one runtime: not needed */
                else
                    resume_on(p, fd, cookie, soon); /* new (suspended, maybe): resume it */
            } else if (st == NT_ERR_CANCELLED || st == NT_ERR_IO) {
                return st;
            }
        }
        if (deadline_ns != NT_DEADLINE_NONE && nt_now_ns() >= deadline_ns)
            return NT_ERR_TIMEOUT;
    }
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
    while (p->runtime_count)
        forget_runtime(p, &p->runtimes[p->runtime_count - 1]);
    close(p->listen_fd);
    close(p->cancel_fd);
    unlink(p->path);
    CM_MEM_DELETE(nt_port, p);
}
