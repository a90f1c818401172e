/* Diagnostics IPC framing and deadline-bound socket I/O. */
#include "session/ipc.h"
#include "common/cursor.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const uint8_t IPC_MAGIC[14] = { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0 };

int ipc_poll_timeout(int64_t deadline_ns)
{
    if (deadline_ns == NT_DEADLINE_NONE)
        return -1;
    int64_t left = deadline_ns - nt_now_ns();
    if (left <= 0)
        return 0;
    int64_t ms = (left + 999999) / 1000000;
    return ms > 1000000000 ? 1000000000 : (int)ms;
}

/* ---- encoding ---- */

void ipc_put_string(ipc_buf *b, const char *s)
{
    if (!s || !*s) {
        cm_buf_u32(&b->out, 0);
        return;
    }
    /* Count UTF-16 units first: the prefix includes the terminator.  The
     * runtime gets no string we would have to guess at. */
    size_t units = cm_utf16_units(s, CM_UTF8_REJECT);
    if (units >= UINT32_MAX) {
        b->out.failed = true;
        return;
    }
    cm_buf_u32(&b->out, (uint32_t)(units + 1));
    cm_buf_utf16z(&b->out, s, CM_UTF8_REJECT);
}

void ipc_begin(ipc_buf *b, uint8_t command_set, uint8_t command_id)
{
    b->out = cm_buf_over(b->storage, sizeof b->storage);
    cm_buf_bytes(&b->out, IPC_MAGIC, sizeof IPC_MAGIC);
    cm_buf_u16(&b->out, 0); /* the size, patched by ipc_end */
    cm_buf_u8(&b->out, command_set);
    cm_buf_u8(&b->out, command_id);
    cm_buf_u16(&b->out, 0); /* reserved */
}

bool ipc_end(ipc_buf *b)
{
    if (b->out.failed || b->out.n > IPC_MAX_MESSAGE)
        return false;
    cm_buf_put16(&b->out, sizeof IPC_MAGIC, (uint16_t)b->out.n);
    return true;
}

uint8_t ipc_collect_command(const nt_session_config *cfg)
{
    if (cfg->buffering == NT_BUFFERING_BLOCK)
        return IPC_EP_COLLECT6;
    if (!cfg->no_rundown && cfg->rundown_keyword != 0 && cfg->rundown_keyword != NT_DEFAULT_RUNDOWN_KEYWORD)
        return IPC_EP_COLLECT4;
    if (cfg->no_stackwalk)
        return IPC_EP_COLLECT3;
    return IPC_EP_COLLECT2;
}

/* What a provider's level field means on the wire: 0 selects verbose, NT_LEVEL_LOG_ALWAYS is 0. */
uint32_t nt_provider_level(const nt_provider *p)
{
    if (!p)
        return 0;
    return p->level == 0 ? 5 : p->level == NT_LEVEL_LOG_ALWAYS ? 0 : p->level;
}

/* The providers as CollectTracing2-4 send them; with_filter adds
 * CollectTracing5/6's event filter to each, empty (enable 0, no ids: every event). */
static void put_providers(ipc_buf *b, const nt_session_config *cfg, bool with_filter)
{
    cm_buf_u32(&b->out, (uint32_t)cfg->provider_count);
    for (size_t i = 0; i < cfg->provider_count; i++) {
        const nt_provider *p = &cfg->providers[i];
        cm_buf_u64(&b->out, p->keywords);
        cm_buf_u32(&b->out, nt_provider_level(p));
        ipc_put_string(b, p->name);
        ipc_put_string(b, p->arguments);
        if (with_filter) {
            cm_buf_u8(&b->out, 0);
            cm_buf_u32(&b->out, 0);
        }
    }
}

bool ipc_encode_collect(ipc_buf *b, const nt_session_config *cfg)
{
    uint8_t cmd = ipc_collect_command(cfg);
    ipc_begin(b, IPC_SET_EVENTPIPE, cmd);
    if (cmd == IPC_EP_COLLECT6)
        cm_buf_u32(&b->out, IPC_SESSION_STREAMING);
    cm_buf_u32(&b->out, cfg->buffer_mb);
    cm_buf_u32(&b->out, 1); /* format: NetTrace */
    if (cmd == IPC_EP_COLLECT4 || cmd == IPC_EP_COLLECT6) {
        cm_buf_u64(&b->out, cfg->no_rundown ? 0 : cfg->rundown_keyword);
        cm_buf_u8(&b->out, cfg->no_stackwalk ? 0 : 1);
    } else {
        cm_buf_u8(&b->out, cfg->no_rundown ? 0 : 1);
        if (cmd == IPC_EP_COLLECT3)
            cm_buf_u8(&b->out, cfg->no_stackwalk ? 0 : 1);
    }
    put_providers(b, cfg, cmd == IPC_EP_COLLECT6);
    if (cmd == IPC_EP_COLLECT6)
        cm_buf_u32(&b->out, IPC_BUFFER_BLOCK);
    return ipc_end(b);
}

void ipc_encode_stop(ipc_buf *b, uint64_t session_id)
{
    ipc_begin(b, IPC_SET_EVENTPIPE, IPC_EP_STOP);
    cm_buf_u64(&b->out, session_id);
    ipc_end(b);
}

bool ipc_parse_header(const uint8_t *p, ipc_header *h)
{
    if (memcmp(p, IPC_MAGIC, sizeof IPC_MAGIC) != 0)
        return false;
    h->size = cm_le16(p + sizeof IPC_MAGIC);
    h->command_set = p[16];
    h->command_id = p[17];
    return h->size >= IPC_HEADER_SIZE;
}

/* ---- sockets ---- */

nt_status ipc_wait(int fd, short events, int64_t deadline_ns, int cancel_fd)
{
    for (;;) {
        struct pollfd pf[2] = { { .fd = fd, .events = events }, { .fd = cancel_fd, .events = POLLIN } };
        int r = poll(pf, cancel_fd >= 0 ? 2 : 1, ipc_poll_timeout(deadline_ns));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return NT_ERR_IO;
        }
        if (cancel_fd >= 0 && (pf[1].revents & POLLIN))
            return NT_ERR_CANCELLED;
        if (pf[0].revents)
            return NT_OK;
        if (deadline_ns != NT_DEADLINE_NONE && nt_now_ns() >= deadline_ns)
            return NT_ERR_TIMEOUT;
    }
}

/* One connect() attempt: NT_OK, or the failure with the socket closed.
 * *again is set when the listener's backlog was full (EAGAIN on a Unix
 * socket): nothing was refused, the runtime is just busy, so try again. */
static nt_status connect_once(const char *path, int64_t deadline_ns, int cancel_fd, int *out_fd, bool *again)
{
    *again = false;
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int pathfd = -1;
    if (strlen(path) >= sizeof sa.sun_path) {
        /* Beyond the 108-byte limit: reach the socket through a descriptor. */
        pathfd = open(path, O_PATH | O_CLOEXEC);
        if (pathfd < 0)
            return errno == ENOENT ? NT_ERR_NO_ENDPOINT : NT_ERR_IO;
        snprintf(sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d", pathfd);
    } else {
        memcpy(sa.sun_path, path, strlen(path) + 1);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        if (pathfd >= 0)
            close(pathfd);
        errno = e;
        return NT_ERR_IO;
    }
    int r;
    do
        r = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    while (r < 0 && errno == EINTR);
    int e = errno;
    if (pathfd >= 0)
        close(pathfd);
    if (r < 0 && e == EAGAIN) {
        close(fd);
        *again = true;
        return NT_ERR_IO;
    }
    if (r < 0 && e == EINPROGRESS) {
        nt_status st = ipc_wait(fd, POLLOUT, deadline_ns, cancel_fd);
        if (st != NT_OK) {
            close(fd);
            return st;
        }
        socklen_t len = sizeof e;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
            e = errno;
        r = e ? -1 : 0;
    }
    if (r < 0) {
        close(fd);
        errno = e;
        return e == ECONNREFUSED || e == ENOENT ? NT_ERR_NO_ENDPOINT : NT_ERR_IO;
    }
    *out_fd = fd;
    return NT_OK;
}

/* Sleep ms (capped by the deadline) unless cancelled. */
static nt_status pause_ms(int ms, int64_t deadline_ns, int cancel_fd)
{
    int left = ipc_poll_timeout(deadline_ns);
    if (left == 0)
        return NT_ERR_TIMEOUT;
    struct pollfd pf = { .fd = cancel_fd, .events = POLLIN };
    int r = poll(&pf, cancel_fd >= 0 ? 1 : 0, left > 0 && left < ms ? left : ms);
    if (r > 0 && (pf.revents & POLLIN))
        return NT_ERR_CANCELLED;
    return NT_OK;
}

nt_status ipc_connect(const char *path, int64_t deadline_ns, int cancel_fd, int *out_fd)
{
    *out_fd = -1;
    /* A full backlog is retried with a growing pause until the deadline. */
    for (int pause = 5;; pause = pause < 100 ? pause * 2 : 100) {
        bool again;
        nt_status st = connect_once(path, deadline_ns, cancel_fd, out_fd, &again);
        if (!again)
            return st;
        st = pause_ms(pause, deadline_ns, cancel_fd);
        if (st != NT_OK)
            return st;
    }
}

nt_status ipc_check_peer(int fd, const nt_endpoint *ep, char *why, size_t why_size)
{
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        snprintf(why, why_size, "%s: the peer's credentials cannot be read: %s", ep->path, strerror(errno));
        return NT_ERR_NO_ENDPOINT;
    }
    if (ep->pid > 0 ? cred.pid == ep->pid : cred.uid == geteuid() || cred.uid == 0)
        return NT_OK;
    if (ep->pid > 0)
        snprintf(why, why_size, "%s is served by pid %d (uid %u), not by process %d: refused (another process "
                 "bound a socket under the name of this process's endpoint)", ep->path, (int)cred.pid,
                 (unsigned)cred.uid, (int)ep->pid);
    else
        snprintf(why, why_size, "%s is served by pid %d of uid %u, neither this user nor root: refused", ep->path,
                 (int)cred.pid, (unsigned)cred.uid);
    return NT_ERR_NO_ENDPOINT;
}

nt_status ipc_connect_endpoint(const nt_endpoint *ep, int64_t deadline_ns, int cancel_fd, int *out_fd, char *why,
                               size_t why_size)
{
    nt_status st = ipc_connect(ep->path, deadline_ns, cancel_fd, out_fd);
    if (st == NT_OK && (st = ipc_check_peer(*out_fd, ep, why, why_size)) != NT_OK) {
        close(*out_fd);
        *out_fd = -1;
    }
    return st;
}

/* One loop for both directions: a partial transfer continues, a signal
 * retries, a full (send) or empty (receive) socket waits for readiness until
 * the deadline.  A receive that meets the peer's close is a truncated reply. */
static nt_status transfer(int fd, uint8_t *p, size_t len, bool sending, int64_t deadline_ns, int cancel_fd)
{
    while (len > 0) {
        ssize_t n = sending ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0 && !sending)
            return NT_ERR_TRUNCATED;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            nt_status st = ipc_wait(fd, sending ? POLLOUT : POLLIN, deadline_ns, cancel_fd);
            if (st != NT_OK)
                return st;
            continue;
        }
        return NT_ERR_IO;
    }
    return NT_OK;
}

nt_status ipc_send_all(int fd, const void *data, size_t len, int64_t deadline_ns, int cancel_fd)
{
    /* send() does not write through the pointer; the cast only lets one loop serve both directions. */
    return transfer(fd, (uint8_t *)(uintptr_t)data, len, true, deadline_ns, cancel_fd);
}

nt_status ipc_recv_exact(int fd, void *data, size_t len, int64_t deadline_ns, int cancel_fd)
{
    return transfer(fd, data, len, false, deadline_ns, cancel_fd);
}

nt_status ipc_exchange(int fd, const ipc_buf *req, uint8_t *payload, size_t cap, size_t *len, uint32_t *hresult,
                       int64_t deadline_ns, int cancel_fd)
{
    *len = 0;
    *hresult = 0;
    nt_status st = ipc_send_all(fd, req->out.d, req->out.n, deadline_ns, cancel_fd);
    uint8_t head[IPC_HEADER_SIZE];
    if (st == NT_OK)
        st = ipc_recv_exact(fd, head, sizeof head, deadline_ns, cancel_fd);
    if (st != NT_OK)
        return st == NT_ERR_TRUNCATED ? NT_ERR_PROTOCOL : st;
    ipc_header h;
    if (!ipc_parse_header(head, &h) || h.command_set != IPC_SET_SERVER)
        return NT_ERR_PROTOCOL;
    size_t plen = h.size - IPC_HEADER_SIZE;
    if (plen > cap)
        return NT_ERR_PROTOCOL;
    st = ipc_recv_exact(fd, payload, plen, deadline_ns, cancel_fd);
    if (st != NT_OK)
        return st == NT_ERR_TRUNCATED ? NT_ERR_PROTOCOL : st;
    *len = plen;
    if (h.command_id == IPC_SERVER_ERROR) {
        *hresult = plen >= 4 ? cm_le32(payload) : 0;
        return NT_ERR_REFUSED;
    }
    return h.command_id == IPC_SERVER_OK ? NT_OK : NT_ERR_PROTOCOL;
}

const char *nt_hresult_name(uint32_t hr)
{
    switch (hr) {
    case NT_HR_BAD_ENCODING: return "BAD_ENCODING";
    case NT_HR_UNKNOWN_COMMAND: return "UNKNOWN_COMMAND";
    case NT_HR_UNKNOWN_MAGIC: return "UNKNOWN_MAGIC";
    case 0x80131387u: return "UNKNOWN_ERROR";
    case NT_HR_NOT_SUPPORTED: return "NOT_SUPPORTED";
    case NT_HR_FAIL: return "FAIL";
    case NT_HR_NOT_YET_AVAILABLE: return "NOT_YET_AVAILABLE";
    case NT_HR_RUNTIME_UNINITIALIZED: return "RUNTIME_UNINITIALIZED";
    case NT_HR_INVALID_ARG: return "INVALID_ARG";
    case 0x8007007Au: return "INSUFFICIENT_BUFFER";
    case 0x800000CBu: return "ENVVAR_NOT_FOUND";
    case 0x8013136Au: return "PROFILER_ALREADY_ACTIVE";
    default: return NULL;
    }
}
