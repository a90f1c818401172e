/* EventPipe sessions over the diagnostics IPC: configuration, start, stop,
 * waiting and the caller-driven pump.  The stream itself is driven by
 * session_step (session_stream.c). */
#include "session/session_internal.h"
#include "common/cursor.h"
#include "common/abi.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define READ_BUFFER_SIZE (64u << 10)
/* What nt_session_free gives a running session to stop cleanly. */
#define FREE_STOP_MS 2000

static const nt_provider DEFAULT_PROVIDERS[] = {
    { .name = NT_PROVIDER_SAMPLE_PROFILER, .level = 5 },
    { .name = NT_PROVIDER_RUNTIME, .keywords = NT_KEYWORD_LOADER | NT_KEYWORD_JIT, .level = 5 },
};

static size_t str_size(const char *s) { return s ? strlen(s) + 1 : 0; }

/* Copy the providers (the caller's array, stepped through by its first
 * element's struct_size) and their strings into one block each. */
static bool copy_providers(nt_session *s, const nt_session_config *cfg)
{
    const nt_provider *src = cfg->provider_count ? cfg->providers : DEFAULT_PROVIDERS;
    size_t count = cfg->provider_count ? cfg->provider_count
                                       : sizeof DEFAULT_PROVIDERS / sizeof DEFAULT_PROVIDERS[0];
    if (!src)
        return false;
    size_t stride = abi_caller_size(src, ABI3_nt_provider);
    s->providers = cm_mem_alloc(&s->mem, count * sizeof *s->providers);
    if (!s->providers)
        return false;
    s->providers_size = count * sizeof *s->providers;
    size_t bytes = 0;
    for (size_t i = 0; i < count; i++) {
        if (!ABI_IN(nt_provider, &s->providers[i], (const char *)src + i * stride))
            return false;
        bytes += str_size(s->providers[i].name) + str_size(s->providers[i].arguments);
    }
    s->strings = bytes ? cm_mem_alloc(&s->mem, bytes) : NULL;
    if (bytes && !s->strings)
        return false;
    s->strings_size = bytes;
    char *p = s->strings;
    for (size_t i = 0; i < count; i++) {
        const char *strs[2] = { s->providers[i].name, s->providers[i].arguments };
        const char **dst[2] = { &s->providers[i].name, &s->providers[i].arguments };
        for (int k = 0; k < 2; k++) {
            if (!strs[k]) {
                *dst[k] = NULL;
                continue;
            }
            size_t n = strlen(strs[k]) + 1;
            memcpy(p, strs[k], n);
            *dst[k] = p;
            p += n;
        }
    }
    s->cfg.providers = s->providers;
    s->cfg.provider_count = count;
    return true;
}

static void release(nt_session *s)
{
    if (s->wake_fd >= 0)
        close(s->wake_fd);
    if (s->cancel_fd >= 0)
        close(s->cancel_fd);
    if (s->epoll_fd >= 0)
        close(s->epoll_fd);
    if (s->conn >= 0)
        close(s->conn);
    if (s->stop_conn >= 0)
        close(s->stop_conn);
    cm_mem_free(&s->mem, s->rbuf, s->rbuf_size);
    cm_mem_free(&s->mem, s->providers, s->providers_size);
    cm_mem_free(&s->mem, s->strings, s->strings_size);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    CM_MEM_DELETE(nt_session, s);
}

nt_session *nt_session_new(const nt_session_config *given, const nt_allocator *alloc)
{
    nt_session_config config, *cfg = &config;
    if (!given || !ABI_IN(nt_session_config, cfg, given) || !cfg->sink || cfg->buffering > NT_BUFFERING_BLOCK)
        return NULL;
    nt_session *s = CM_MEM_NEW(nt_session, alloc);
    if (!s)
        return NULL;
    s->cfg = *cfg;
    s->wake_fd = s->cancel_fd = s->epoll_fd = s->conn = s->stop_conn = -1;
    atomic_init(&s->abort, false);
    atomic_init(&s->abort_status, NT_OK);
    atomic_init(&s->bytes, 0);
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (s->cfg.buffer_mb == 0)
        s->cfg.buffer_mb = NT_DEFAULT_BUFFER_MB;
    if (s->cfg.max_stream_bytes == 0)
        s->cfg.max_stream_bytes = NT_DEFAULT_MAX_STREAM_BYTES;
    if (s->cfg.rundown_keyword == 0)
        s->cfg.rundown_keyword = NT_DEFAULT_RUNDOWN_KEYWORD;
    s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    s->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    s->rbuf = cm_mem_alloc(&s->mem, READ_BUFFER_SIZE);
    s->rbuf_size = READ_BUFFER_SIZE;
    if (s->wake_fd < 0 || s->cancel_fd < 0 || !s->rbuf || !copy_providers(s, cfg)) {
        if (!s->rbuf)
            s->rbuf_size = 0;
        release(s);
        return NULL;
    }
    return s;
}

/* Wait on the condition variable until deadline; false when it passed. */
static bool cond_wait_until(nt_session *s, int64_t deadline_ns)
{
    if (deadline_ns == NT_DEADLINE_NONE) {
        pthread_cond_wait(&s->cv, &s->mu);
        return true;
    }
    if (nt_now_ns() >= deadline_ns)
        return false;
    struct timespec ts = { .tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000 };
    pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    return true;
}

static void *reader_thread(void *arg)
{
    nt_session *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        bool done = s->state == SESSION_ENDED;
        pthread_mutex_unlock(&s->mu);
        if (done)
            break;
        session_step(s, NT_DEADLINE_NONE);
    }
    pthread_mutex_lock(&s->mu);
    s->driving = false;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static nt_status start_failed(nt_session *s, nt_status st)
{
    if (s->conn >= 0) {
        close(s->conn);
        s->conn = -1;
    }
    pthread_mutex_lock(&s->mu);
    s->state = SESSION_ENDED;
    s->final = st;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return st;
}

/* The message of a failed socket operation; its status as start reports it. */
static nt_status io_failure(nt_session *s, nt_status st, const char *what)
{
    switch (st) {
    case NT_ERR_TIMEOUT: session_set_message(s, "%s: the deadline passed", what); break;
    case NT_ERR_CANCELLED: session_set_message(s, "%s: cancelled", what); break;
    case NT_ERR_TRUNCATED:
        session_set_message(s, "%s: the runtime closed the connection", what);
        st = NT_ERR_PROTOCOL;
        break;
    case NT_ERR_NO_ENDPOINT: session_set_message(s, "%s: nothing listens on %s", what, s->ep.path); break;
    default: session_set_message(s, "%s: %s", what, strerror(errno)); break;
    }
    return st;
}

/* Send the CollectTracing request s->cfg needs (connecting to s->ep unless
 * s->conn is already open) and read exactly its reply: the stream's bytes
 * follow it on the same connection.  NT_OK with s->session_id, or the
 * failure with s->msg (and s->hresult for a refusal); s->conn stays as it
 * is for the caller to close. */
static nt_status request(nt_session *s, int64_t deadline_ns)
{
    ipc_buf *req = cm_mem_alloc(&s->mem, sizeof *req);
    if (!req)
        return NT_ERR_NOMEM;
    bool encoded = ipc_encode_collect(req, &s->cfg);
    if (!encoded) {
        cm_mem_free(&s->mem, req, sizeof *req);
        session_set_message(s, "the request does not fit 65,535 bytes or a string is not UTF-8");
        return NT_ERR_INVALID_ARG;
    }
    char why[sizeof s->msg] = "";
    nt_status st = s->conn >= 0 ? NT_OK
                                : ipc_connect_endpoint(&s->ep, deadline_ns, s->cancel_fd, &s->conn, why, sizeof why);
    if (why[0]) {
        cm_mem_free(&s->mem, req, sizeof *req);
        session_set_message(s, "%s", why);
        return st;
    }
    if (st == NT_OK)
        st = ipc_send_all(s->conn, req->out.d, req->out.n, deadline_ns, s->cancel_fd);
    cm_mem_free(&s->mem, req, sizeof *req);
    if (st != NT_OK)
        return io_failure(s, st, "sending CollectTracing");

    uint8_t head[IPC_HEADER_SIZE];
    st = ipc_recv_exact(s->conn, head, sizeof head, deadline_ns, s->cancel_fd);
    if (st != NT_OK)
        return io_failure(s, st, "waiting for the CollectTracing reply");
    ipc_header h;
    if (!ipc_parse_header(head, &h) || h.command_set != IPC_SET_SERVER) {
        session_set_message(s, "the reply to CollectTracing is not a diagnostics IPC response");
        return NT_ERR_PROTOCOL;
    }
    uint8_t payload[64];
    size_t plen = h.size - IPC_HEADER_SIZE;
    size_t keep = plen < sizeof payload ? plen : sizeof payload;
    st = ipc_recv_exact(s->conn, payload, keep, deadline_ns, s->cancel_fd);
    if (st != NT_OK)
        return io_failure(s, st, "reading the CollectTracing reply");
    if (h.command_id == IPC_SERVER_ERROR) {
        s->hresult = plen >= 4 ? cm_le32(payload) : 0;
        const char *name = nt_hresult_name(s->hresult);
        session_set_message(s, "the runtime refused the session: HRESULT 0x%08X%s%s", s->hresult,
                            name ? " " : "", name ? name : "");
        return NT_ERR_REFUSED;
    }
    if (h.command_id != IPC_SERVER_OK || plen != 8) {
        session_set_message(s, "unexpected CollectTracing reply (command %u, %zu payload bytes)",
                            h.command_id, plen);
        return NT_ERR_PROTOCOL;
    }
    s->session_id = cm_le64(payload);
    return NT_OK;
}

/* The request, and for NT_BUFFERING_BLOCK on a runtime older than .NET 11
 * (which answers CollectTracing6 with UNKNOWN_COMMAND and closes the
 * connection) the request again with the command the configuration needs
 * otherwise, on a new connection; a diagnostic port's connection cannot be
 * opened again, so there the refusal stands.  s->buffering says which. */
static nt_status request_buffering(nt_session *s, bool connected, int64_t deadline_ns)
{
    bool block = s->cfg.buffering == NT_BUFFERING_BLOCK;
    nt_status st = request(s, deadline_ns);
    if (st == NT_ERR_REFUSED && block && s->hresult == NT_HR_UNKNOWN_COMMAND && !connected) {
        close(s->conn);
        s->conn = -1;
        s->hresult = 0;
        s->msg[0] = 0;
        s->cfg.buffering = NT_BUFFERING_DROP;
        block = false;
        st = request(s, deadline_ns);
    } else if (st == NT_ERR_REFUSED && block && s->hresult == NT_HR_UNKNOWN_COMMAND) {
        session_set_message(s, "the runtime does not know CollectTracing6 (non-lossy buffering, .NET 11+) and "
                               "closed the diagnostic port's connection: start again with the default buffering");
    }
    if (st == NT_OK)
        s->buffering = block ? NT_BUFFERING_BLOCK : NT_BUFFERING_DROP;
    return st;
}

/* Start on ep (connecting to it), or on `connected`, a connection the
 * runtime opened to a diagnostic port (then ep only serves StopTracing). */
static nt_status start(nt_session *s, const nt_endpoint *ep, int connected, int64_t deadline_ns)
{
    if (!s || !ep || !ep->path[0]) {
        if (connected >= 0)
            close(connected);
        return NT_ERR_INVALID_ARG;
    }
    pthread_mutex_lock(&s->mu);
    if (s->state != SESSION_NEW) {
        pthread_mutex_unlock(&s->mu);
        if (connected >= 0)
            close(connected);
        return NT_ERR_STATE;
    }
    s->state = SESSION_STARTING;
    pthread_mutex_unlock(&s->mu);
    s->ep = *ep;

    s->conn = connected; /* start_failed closes it from here on */
    nt_status st = request_buffering(s, connected >= 0, deadline_ns);
    if (st != NT_OK)
        return start_failed(s, st);

    if (s->cfg.caller_pumps) {
        s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event ev = { .events = EPOLLIN };
        bool ok = s->epoll_fd >= 0;
        int fds[3] = { s->conn, s->wake_fd, s->cancel_fd };
        for (int i = 0; ok && i < 3; i++) {
            ev.data.fd = fds[i];
            ok = epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fds[i], &ev) == 0;
        }
        if (!ok) {
            session_set_message(s, "epoll: %s", strerror(errno));
            return start_failed(s, NT_ERR_IO);
        }
    }
    pthread_mutex_lock(&s->mu);
    s->state = SESSION_RUNNING;
    if (!s->cfg.caller_pumps) {
        s->driving = true;
        if (pthread_create(&s->thread, NULL, reader_thread, s) != 0) {
            s->driving = false;
            pthread_mutex_unlock(&s->mu);
            session_set_message(s, "cannot start the reader thread");
            session_end(s, NT_ERR_NOMEM);
            return NT_ERR_NOMEM;
        }
        s->thread_started = true;
    }
    pthread_mutex_unlock(&s->mu);
    return NT_OK;
}

nt_buffering nt_session_buffering(const nt_session *s) { return s ? s->buffering : NT_BUFFERING_DEFAULT; }

nt_status nt_session_start_endpoint(nt_session *s, const nt_endpoint *ep, int64_t deadline_ns)
{
    deadline_ns = ipc_deadline(deadline_ns);
    return start(s, ep, -1, deadline_ns);
}

nt_status nt_session_start_connected(nt_session *s, int fd, const nt_endpoint *stop_ep, int64_t deadline_ns)
{
    deadline_ns = ipc_deadline(deadline_ns);
    if (fd < 0)
        return NT_ERR_INVALID_ARG;
    return start(s, stop_ep, fd, deadline_ns);
}

nt_status nt_session_start(nt_session *s, int32_t pid, int64_t deadline_ns)
{
    deadline_ns = ipc_deadline(deadline_ns);
    if (!s)
        return NT_ERR_INVALID_ARG;
    nt_endpoint ep;
    nt_status st = nt_endpoint_find(pid, &ep);
    if (st != NT_OK) {
        session_set_message(s, "process %d has no diagnostics endpoint (%s)", (int)pid,
                            nt_endpoint_reason_name(ep.reason));
        return st;
    }
    return nt_session_start_endpoint(s, &ep, deadline_ns);
}

/* Wait for the end: as a waiter while another thread drives, or by driving
 * the stream ourselves in caller-pumps mode.  NT_ERR_TIMEOUT when the
 * deadline passes first (the session keeps running). */
static nt_status await_end(nt_session *s, int64_t deadline_ns)
{
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (s->state == SESSION_ENDED) {
            nt_status st = s->final;
            pthread_mutex_unlock(&s->mu);
            return st;
        }
        if (s->state != SESSION_RUNNING) {
            pthread_mutex_unlock(&s->mu);
            return NT_ERR_STATE;
        }
        if (s->cfg.caller_pumps && !s->driving) {
            if (deadline_ns != NT_DEADLINE_NONE && nt_now_ns() >= deadline_ns)
                break;
            s->driving = true;
            pthread_mutex_unlock(&s->mu);
            session_step(s, deadline_ns);
            pthread_mutex_lock(&s->mu);
            s->driving = false;
            pthread_cond_broadcast(&s->cv);
            continue;
        }
        if (!cond_wait_until(s, deadline_ns))
            break;
    }
    pthread_mutex_unlock(&s->mu);
    return NT_ERR_TIMEOUT;
}

/* Abandon the session: the driver closes the connections at its next look
 * (it is never blocked for long: poll wakes on wake_fd).  Returns once no
 * thread can call the sink any more. */
static void abandon(nt_session *s, nt_status why)
{
    int expected = NT_OK;
    atomic_compare_exchange_strong(&s->abort_status, &expected, (int)why);
    atomic_store(&s->abort, true);
    session_wake(s);
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (s->state == SESSION_ENDED && !(s->cfg.caller_pumps && s->driving))
            break;
        if (s->state != SESSION_ENDED && s->cfg.caller_pumps && !s->driving) {
            pthread_mutex_unlock(&s->mu);
            session_set_message(s, "abandoned: %s", nt_status_describe(why));
            session_end(s, why);
            pthread_mutex_lock(&s->mu);
            continue;
        }
        pthread_cond_wait(&s->cv, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
}

nt_status nt_session_request_stop(nt_session *s)
{
    if (!s)
        return NT_ERR_INVALID_ARG;
    pthread_mutex_lock(&s->mu);
    session_state state = s->state;
    if (state == SESSION_RUNNING)
        s->stop_requested = true;
    pthread_mutex_unlock(&s->mu);
    if (state == SESSION_NEW || state == SESSION_STARTING)
        return NT_ERR_STATE;
    session_wake(s);
    return NT_OK;
}

nt_status nt_session_stop(nt_session *s, int64_t deadline_ns)
{
    deadline_ns = ipc_deadline(deadline_ns);
    nt_status st = nt_session_request_stop(s);
    if (st != NT_OK)
        return st;
    st = await_end(s, deadline_ns);
    if (st == NT_ERR_TIMEOUT) {
        session_set_message(s, "stop: the deadline passed before the stream ended; the session was abandoned");
        abandon(s, NT_ERR_TIMEOUT);
        return NT_ERR_TIMEOUT;
    }
    if (st == NT_ERR_CANCELLED)
        abandon(s, NT_ERR_CANCELLED);
    return st;
}

nt_status nt_session_wait(nt_session *s, int64_t deadline_ns)
{
    deadline_ns = ipc_deadline(deadline_ns);
    if (!s)
        return NT_ERR_INVALID_ARG;
    nt_status st = await_end(s, deadline_ns);
    if (st == NT_ERR_CANCELLED)
        abandon(s, NT_ERR_CANCELLED);
    return st;
}

void nt_session_cancel(nt_session *s)
{
    if (s)
        ipc_raise(s->cancel_fd);
}

int nt_session_fd(const nt_session *s) { return s ? s->epoll_fd : -1; }

nt_status nt_session_pump(nt_session *s, bool *ended)
{
    if (ended)
        *ended = false;
    if (!s)
        return NT_ERR_INVALID_ARG;
    pthread_mutex_lock(&s->mu);
    if (!s->cfg.caller_pumps || s->state == SESSION_NEW || s->state == SESSION_STARTING) {
        pthread_mutex_unlock(&s->mu);
        return NT_ERR_STATE;
    }
    if (s->state != SESSION_ENDED && !s->driving) {
        s->driving = true;
        pthread_mutex_unlock(&s->mu);
        session_step(s, nt_now_ns());
        pthread_mutex_lock(&s->mu);
        s->driving = false;
        pthread_cond_broadcast(&s->cv);
    }
    nt_status st = NT_OK;
    if (s->state == SESSION_ENDED) {
        if (ended)
            *ended = true;
        st = s->final;
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

uint32_t nt_session_hresult(const nt_session *s) { return s ? s->hresult : 0; }
uint64_t nt_session_id(const nt_session *s) { return s ? s->session_id : 0; }
uint64_t nt_session_bytes(const nt_session *s) { return s ? atomic_load(&((nt_session *)s)->bytes) : 0; }

const char *nt_session_message(const nt_session *s)
{
    return s ? s->msg : "";
}

void nt_session_free(nt_session *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    bool running = s->state == SESSION_RUNNING;
    pthread_mutex_unlock(&s->mu);
    if (running)
        nt_session_stop(s, nt_deadline_after_ms(FREE_STOP_MS));
    if (s->thread_started && !s->thread_joined) {
        pthread_join(s->thread, NULL);
        s->thread_joined = true;
    }
    release(s);
}
