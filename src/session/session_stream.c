/* The stream driver: reads the session's connection and hands the bytes to
 * the sink, runs the StopTracing exchange on a second connection, and ends
 * the session.  One thread at a time runs it (the reader thread, a pumping
 * event loop, or a caller of stop/wait in caller-pumps mode). */
#include "session/session_internal.h"
#include "common/cursor.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* Bytes read per step at most, so a fast stream cannot starve the stop. */
#define STEP_READ_BUDGET (1u << 20)

void session_set_message(nt_session *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&s->mu);
    vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    pthread_mutex_unlock(&s->mu);
    va_end(ap);
}

void session_wake(nt_session *s) { ipc_raise(s->wake_fd); }

static void close_fd(nt_session *s, int *fd)
{
    if (*fd < 0)
        return;
    if (s->epoll_fd >= 0)
        epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, *fd, NULL);
    close(*fd);
    *fd = -1;
}

void session_end(nt_session *s, nt_status status)
{
    close_fd(s, &s->conn);
    close_fd(s, &s->stop_conn);
    pthread_mutex_lock(&s->mu);
    if (s->state != SESSION_ENDED) {
        s->state = SESSION_ENDED;
        s->final = status;
    }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static bool ended(nt_session *s)
{
    pthread_mutex_lock(&s->mu);
    bool e = s->state == SESSION_ENDED;
    pthread_mutex_unlock(&s->mu);
    return e;
}

static void watch(nt_session *s, int fd, uint32_t events, bool add)
{
    if (s->epoll_fd < 0 || fd < 0)
        return;
    struct epoll_event ev = { .events = events, .data.fd = fd };
    epoll_ctl(s->epoll_fd, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev);
}

/* Open the second connection and send StopTracing (non-blocking). */
static void stop_begin(nt_session *s)
{
    if (s->stop_retry_ns && nt_now_ns() < s->stop_retry_ns)
        return;
    int fd;
    char why[sizeof s->msg] = "";
    nt_status st = ipc_connect_endpoint(&s->ep, nt_now_ns(), -1, &fd, why, sizeof why);
    if (why[0]) { /* not the runtime: it gets no StopTracing, the stop's deadline ends the session */
        session_set_message(s, "StopTracing: %s", why);
        s->stop = STOP_DONE;
        return;
    }
    if (st == NT_ERR_TIMEOUT) { /* listen backlog full: try again shortly */
        s->stop_retry_ns = nt_now_ns() + 10 * 1000000;
        return;
    }
    if (st != NT_OK) {
        /* The runtime is gone or not listening: the stream will end by itself. */
        session_set_message(s, "StopTracing: cannot connect to %s: %s", s->ep.path, strerror(errno));
        s->stop = STOP_DONE;
        return;
    }
    s->stop_conn = fd;
    ipc_buf b;
    ipc_encode_stop(&b, s->session_id);
    memcpy(s->stop_msg, b.out.d, sizeof s->stop_msg);
    s->stop_sent = 0;
    s->stop = STOP_SENDING;
    watch(s, fd, EPOLLOUT, true);
}

static void stop_progress(nt_session *s, short revents)
{
    if (s->stop == STOP_SENDING && (revents & (POLLOUT | POLLERR | POLLHUP))) {
        ssize_t n = send(s->stop_conn, s->stop_msg + s->stop_sent, sizeof s->stop_msg - s->stop_sent,
                         MSG_NOSIGNAL);
        if (n > 0) {
            s->stop_sent += (size_t)n;
            if (s->stop_sent == sizeof s->stop_msg) {
                s->stop = STOP_AWAIT_REPLY;
                watch(s, s->stop_conn, EPOLLIN, false);
            }
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
            session_set_message(s, "StopTracing: send failed: %s", strerror(errno));
            close_fd(s, &s->stop_conn);
            s->stop = STOP_DONE;
        }
        return;
    }
    if (s->stop == STOP_AWAIT_REPLY && (revents & (POLLIN | POLLERR | POLLHUP))) {
        ssize_t n = recv(s->stop_conn, s->stop_reply + s->stop_reply_len,
                         sizeof s->stop_reply - s->stop_reply_len, 0);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n > 0)
            s->stop_reply_len += (size_t)n;
        ipc_header h;
        bool whole = s->stop_reply_len >= IPC_HEADER_SIZE && ipc_parse_header(s->stop_reply, &h) &&
                     (s->stop_reply_len >= h.size || s->stop_reply_len == sizeof s->stop_reply);
        if (!whole && n > 0)
            return;
        if (whole && h.command_set == IPC_SET_SERVER && h.command_id == IPC_SERVER_ERROR &&
            s->stop_reply_len >= 24) {
            const uint8_t *p = s->stop_reply + IPC_HEADER_SIZE;
            uint32_t hr = cm_le32(p);
            const char *name = nt_hresult_name(hr);
            session_set_message(s, "StopTracing refused: 0x%08X%s%s", hr, name ? " " : "", name ? name : "");
        } else if (!whole) {
            session_set_message(s, "StopTracing: the runtime closed the connection without a reply");
        }
        close_fd(s, &s->stop_conn);
        s->stop = STOP_DONE;
    }
}

/* Hand n bytes to the sink within the cap; false when the session ended. */
static bool deliver(nt_session *s, const uint8_t *data, size_t n)
{
    uint64_t have = atomic_load(&s->bytes);
    uint64_t room = have >= s->cfg.max_stream_bytes ? 0 : s->cfg.max_stream_bytes - have;
    bool capped = n > room;
    if (capped)
        n = (size_t)room;
    if (n > 0) {
        if (s->cfg.sink(s->cfg.sink_user, data, n) != 0) {
            session_set_message(s, "the sink stopped the session after %llu bytes",
                                (unsigned long long)(have + n));
            atomic_store(&s->bytes, have + n);
            session_end(s, NT_ERR_STOPPED);
            return false;
        }
        atomic_store(&s->bytes, have + n);
        s->last_byte = data[n - 1];
    }
    if (capped) {
        session_set_message(s, "the stream exceeded its cap of %llu bytes; the session was closed",
                            (unsigned long long)s->cfg.max_stream_bytes);
        session_end(s, NT_ERR_STREAM_CAP);
        return false;
    }
    return true;
}

/* Read what the stream connection has (up to the budget). */
static void read_stream(nt_session *s)
{
    size_t total = 0;
    while (total < STEP_READ_BUDGET) {
        if (atomic_load(&s->abort))
            return;
        ssize_t n = recv(s->conn, s->rbuf, s->rbuf_size, 0);
        if (n > 0) {
            total += (size_t)n;
            if (!deliver(s, s->rbuf, (size_t)n))
                return;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0 && errno != ECONNRESET) {
            session_set_message(s, "reading the stream failed after %llu bytes: %s",
                                (unsigned long long)atomic_load(&s->bytes), strerror(errno));
            session_end(s, NT_ERR_IO);
            return;
        }
        /* End of stream.  The NetTrace stream ends with a NullReference tag (1). */
        bool clean = atomic_load(&s->bytes) > 0 && s->last_byte == 1;
        if (!clean)
            session_set_message(s, "the stream ended without its end marker after %llu bytes",
                                (unsigned long long)atomic_load(&s->bytes));
        session_end(s, clean ? NT_OK : NT_ERR_TRUNCATED);
        return;
    }
}

/* Turn a stop request (made under mu by any thread) into driver state;
 * true when StopTracing should be (re)tried now. */
static bool take_stop_request(nt_session *s)
{
    pthread_mutex_lock(&s->mu);
    if (s->stop_requested && s->stop == STOP_NONE)
        s->stop = STOP_CONNECT;
    pthread_mutex_unlock(&s->mu);
    return s->stop == STOP_CONNECT;
}

void session_step(nt_session *s, int64_t deadline_ns)
{
    if (ended(s))
        return;
    if (atomic_load(&s->abort)) {
        session_end(s, (nt_status)atomic_load(&s->abort_status));
        return;
    }
    if (take_stop_request(s))
        stop_begin(s);

    struct pollfd pf[4];
    int n = 0;
    pf[n++] = (struct pollfd){ .fd = s->cancel_fd, .events = POLLIN };
    pf[n++] = (struct pollfd){ .fd = s->wake_fd, .events = POLLIN };
    pf[n++] = (struct pollfd){ .fd = s->conn, .events = POLLIN };
    int stop_idx = -1;
    if (s->stop_conn >= 0) {
        stop_idx = n;
        pf[n++] = (struct pollfd){ .fd = s->stop_conn,
                                   .events = s->stop == STOP_SENDING ? POLLOUT : POLLIN };
    }
    int timeout = ipc_poll_timeout(deadline_ns);
    if (s->stop == STOP_CONNECT && (timeout < 0 || timeout > 10))
        timeout = 10; /* a connect to retry */
    int r = poll(pf, (nfds_t)n, timeout);
    if (r < 0) {
        if (errno == EINTR)
            return;
        session_set_message(s, "poll failed: %s", strerror(errno));
        session_end(s, NT_ERR_IO);
        return;
    }
    if (pf[0].revents & POLLIN) {
        session_set_message(s, "cancelled");
        session_end(s, NT_ERR_CANCELLED);
        return;
    }
    if (pf[1].revents & POLLIN) {
        uint64_t v;
        ssize_t rr = read(s->wake_fd, &v, sizeof v);
        (void)rr;
        if (atomic_load(&s->abort)) {
            session_end(s, (nt_status)atomic_load(&s->abort_status));
            return;
        }
        if (take_stop_request(s))
            stop_begin(s);
    }
    if (stop_idx >= 0 && pf[stop_idx].revents)
        stop_progress(s, pf[stop_idx].revents);
    if (pf[2].revents)
        read_stream(s);
}
