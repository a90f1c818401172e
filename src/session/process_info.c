/* ProcessInfo / ProcessInfo2 over the diagnostics IPC, with /proc as the
 * fallback for the command line when the runtime does not answer. */
#include "common/utf16.h"
#include "session/ipc.h"
#include "common/cursor.h"
#include "session/procfs.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A length-prefixed UTF-16 string of the reply into out (cut to fit). */
static bool take_string(const uint8_t *p, size_t len, size_t *pos, char *out, size_t size)
{
    out[0] = 0;
    if (len - *pos < 4)
        return false;
    uint32_t units = cm_le32(p + *pos);
    *pos += 4;
    if (units > (len - *pos) / 2)
        return false;
    const uint8_t *s = p + *pos;
    *pos += (size_t)units * 2;
    if (units && s[units * 2 - 2] == 0 && s[units * 2 - 1] == 0)
        units--; /* the terminator */
    /* Convert at most what fits: 3 bytes per unit at worst, plus the NUL. */
    size_t fit = (size - 1) / 3;
    cm_utf16_to_utf8(s, units < fit ? units : fit, out);
    return true;
}

static void from_proc(int32_t pid, nt_process_info *out)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    ssize_t n = procfs_read(path, out->command_line, sizeof out->command_line);
    if (n <= 0)
        return;
    /* NUL-separated arguments (a trailing NUL ends the last one) */
    while (n > 0 && out->command_line[n - 1] == 0)
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (out->command_line[i] == 0)
            out->command_line[i] = ' ';
    out->from_proc = true;
}

/* A ProcessInfo(2) reply's payload into out. */
static nt_status decode_info(const uint8_t *reply, size_t len, uint8_t command, nt_process_info *out)
{
    if (len < 24)
        return NT_ERR_PROTOCOL;
    out->pid = cm_le64(reply);
    memcpy(out->runtime_cookie, reply + 8, 16);
    size_t pos = 24;
    bool ok = take_string(reply, len, &pos, out->command_line, sizeof out->command_line) &&
              take_string(reply, len, &pos, out->os, sizeof out->os) &&
              take_string(reply, len, &pos, out->arch, sizeof out->arch);
    if (ok && command == IPC_PROCESS_INFO2)
        ok = take_string(reply, len, &pos, out->entrypoint_assembly, sizeof out->entrypoint_assembly) &&
             take_string(reply, len, &pos, out->runtime_version, sizeof out->runtime_version);
    return ok ? NT_OK : NT_ERR_PROTOCOL;
}

/* One ProcessInfo command; NT_OK with out filled, NT_ERR_REFUSED with *hr. */
static nt_status ask(const nt_endpoint *ep, uint8_t command, nt_process_info *out, uint32_t *hr,
                     int64_t deadline_ns)
{
    *hr = 0;
    int fd;
    char why[256];
    nt_status st = ipc_connect_endpoint(ep, deadline_ns, -1, &fd, why, sizeof why);
    if (st != NT_OK)
        return st;
    /* The reply may be a whole message long: from the heap, not the caller's stack. */
    ipc_buf *req = malloc(sizeof *req);
    uint8_t *reply = malloc(IPC_MAX_MESSAGE);
    size_t len = 0;
    if (!req || !reply) {
        st = NT_ERR_NOMEM;
    } else {
        ipc_begin(req, IPC_SET_PROCESS, command);
        ipc_end(req);
        st = ipc_exchange(fd, req, reply, IPC_MAX_MESSAGE, &len, hr, deadline_ns, -1);
    }
    close(fd);
    if (st == NT_OK)
        st = decode_info(reply, len, command, out);
    free(req);
    free(reply);
    return st;
}

nt_status nt_process_info_get(const nt_endpoint *ep, nt_process_info *out, int64_t deadline_ns)
{
    deadline_ns = ipc_deadline(deadline_ns);
    if (!ep || !out)
        return NT_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    uint32_t hr;
    nt_status st = ask(ep, IPC_PROCESS_INFO2, out, &hr, deadline_ns);
    if (st == NT_ERR_REFUSED && hr == NT_HR_UNKNOWN_COMMAND) { /* before .NET 7 */
        memset(out, 0, sizeof *out);
        st = ask(ep, IPC_PROCESS_INFO, out, &hr, deadline_ns);
    }
    if (st != NT_OK) {
        memset(out, 0, sizeof *out);
        from_proc(ep->pid, out);
    }
    return st;
}

/* ---- many at once: one thread, non-blocking sockets, one poll ---- */

/* Endpoints asked at once (each holds a descriptor until it answers). */
#define ASK_AT_ONCE 128
/* What a connect may take: a full backlog (a busy or a never-accepting
 * listener) is retried this long, not until the deadline. */
#define CONNECT_MS 20

typedef struct asking {
    int fd;                      /* -1 once answered or failed */
    uint8_t head[IPC_HEADER_SIZE];
    uint8_t *payload;            /* allocated once the header gives its size */
    size_t size, got;            /* payload size; bytes of the header, then of the payload */
    bool in_payload;
} asking;

/* Read what fd has.  NT_OK once the whole reply is in, NT_ERR_TIMEOUT while
 * more is to come, or the failure. */
static nt_status read_step(asking *a)
{
    for (;;) {
        uint8_t *dst = a->in_payload ? a->payload + a->got : a->head + a->got;
        size_t want = (a->in_payload ? a->size : IPC_HEADER_SIZE) - a->got;
        if (want == 0 && a->in_payload)
            return NT_OK;
        ssize_t n = want ? recv(a->fd, dst, want, MSG_DONTWAIT) : 0;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? NT_ERR_TIMEOUT : NT_ERR_IO;
        if (n == 0 && want)
            return NT_ERR_PROTOCOL; /* closed mid-reply */
        a->got += (size_t)n;
        if (!a->in_payload && a->got == IPC_HEADER_SIZE) {
            ipc_header h;
            if (!ipc_parse_header(a->head, &h) || h.command_set != IPC_SET_SERVER)
                return NT_ERR_PROTOCOL;
            a->size = h.size - IPC_HEADER_SIZE;
            a->payload = malloc(a->size ? a->size : 1);
            if (!a->payload)
                return NT_ERR_NOMEM;
            a->in_payload = true;
            a->got = 0;
        }
    }
}

/* A whole reply into out: NT_OK, or NT_ERR_REFUSED with *hr. */
static nt_status take_reply(const asking *a, nt_process_info *out, uint32_t *hr)
{
    *hr = 0;
    if (a->head[17] == IPC_SERVER_ERROR) {
        if (a->size >= 4)
            *hr = cm_le32(a->payload);
        return NT_ERR_REFUSED;
    }
    if (a->head[17] != IPC_SERVER_OK)
        return NT_ERR_PROTOCOL;
    return decode_info(a->payload, a->size, IPC_PROCESS_INFO2, out);
}

static void finish_one(asking *a, nt_status *status, nt_status st)
{
    *status = st;
    close(a->fd);
    a->fd = -1;
}

/* Ask up to ASK_AT_ONCE endpoints: connect and send to each, then poll them all. */
static void ask_batch(const nt_endpoint *eps, size_t n, nt_process_info *out, nt_status *status,
                      int64_t deadline_ns, const ipc_buf *req)
{
    asking a[ASK_AT_ONCE];
    struct pollfd pf[ASK_AT_ONCE];
    size_t slot_of[ASK_AT_ONCE];
    for (size_t i = 0; i < n; i++) {
        a[i] = (asking){ .fd = -1 };
        int64_t soon = nt_deadline_after_ms(CONNECT_MS);
        char why[256];
        status[i] = ipc_connect_endpoint(&eps[i], soon < deadline_ns ? soon : deadline_ns, -1, &a[i].fd, why,
                                         sizeof why);
        if (status[i] == NT_OK && (status[i] = ipc_send_all(a[i].fd, req->out.d, req->out.n, deadline_ns, -1)) != NT_OK)
            finish_one(&a[i], &status[i], status[i]);
    }
    for (;;) {
        nfds_t waiting = 0;
        for (size_t i = 0; i < n; i++)
            if (a[i].fd >= 0) {
                pf[waiting] = (struct pollfd){ .fd = a[i].fd, .events = POLLIN };
                slot_of[waiting++] = i;
            }
        if (waiting == 0)
            break;
        int r = poll(pf, waiting, ipc_poll_timeout(deadline_ns));
        if (r < 0 && errno == EINTR)
            continue;
        for (nfds_t k = 0; k < waiting; k++) {
            size_t i = slot_of[k];
            if (r <= 0) {
                finish_one(&a[i], &status[i], r == 0 ? NT_ERR_TIMEOUT : NT_ERR_IO); /* silent to the end */
                continue;
            }
            if (!pf[k].revents)
                continue;
            nt_status st = read_step(&a[i]);
            if (st == NT_OK) {
                uint32_t hr;
                st = take_reply(&a[i], &out[i], &hr);
                if (st == NT_ERR_REFUSED && hr == NT_HR_UNKNOWN_COMMAND) /* before .NET 7: ProcessInfo */
                    st = ask(&eps[i], IPC_PROCESS_INFO, memset(&out[i], 0, sizeof out[i]), &hr, deadline_ns);
            }
            if (st != NT_ERR_TIMEOUT)
                finish_one(&a[i], &status[i], st);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(a[i].payload);
}

void nt_process_info_get_many(const nt_endpoint *eps, size_t n, nt_process_info *out, nt_status *status,
                              int64_t deadline_ns)
{
    deadline_ns = ipc_deadline(deadline_ns);
    if (!eps || !out || !status)
        return;
    ipc_buf *req = malloc(sizeof *req);
    for (size_t i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        status[i] = NT_ERR_NOMEM;
    }
    if (req) {
        ipc_begin(req, IPC_SET_PROCESS, IPC_PROCESS_INFO2);
        ipc_end(req);
        for (size_t at = 0; at < n; at += ASK_AT_ONCE)
            ask_batch(eps + at, n - at < ASK_AT_ONCE ? n - at : ASK_AT_ONCE, out + at, status + at, deadline_ns, req);
    }
    free(req);
    for (size_t i = 0; i < n; i++)
        if (status[i] != NT_OK) {
            memset(&out[i], 0, sizeof out[i]);
            from_proc(eps[i].pid, &out[i]);
        }
}
