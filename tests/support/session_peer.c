/* The fake diagnostics server (see session_peer.h). */
#include "session_peer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_CONN 16

static const uint8_t MAGIC[14] = "DOTNET_IPC_V1";

static void reply(int fd, uint8_t id, const void *payload, size_t n)
{
    uint8_t m[64];
    memcpy(m, MAGIC, 14);
    m[14] = (uint8_t)(20 + n);
    m[15] = 0;
    m[16] = 0xFF;
    m[17] = id;
    m[18] = m[19] = 0;
    memcpy(m + 20, payload, n);
    ssize_t r = send(fd, m, 20 + n, MSG_NOSIGNAL);
    (void)r;
}

typedef struct conn {
    int fd;
    uint8_t in[65536];
    size_t len;
    bool answered;
    bool streaming;
} conn;

static void *peer_main(void *arg)
{
    peer *p = arg;
    conn *c = calloc(MAX_CONN, sizeof *c);
    int stream_fd = -1;
    bool stop_seen = false, finished = false;
    uint8_t chunk[4096];
    for (size_t i = 0; i < sizeof chunk; i++)
        chunk[i] = (uint8_t)(i * 7 + 3) | 0x80; /* never 1: only the end marker is */
    for (int i = 0; i < MAX_CONN; i++)
        c[i].fd = -1;
    for (;;) {
        struct pollfd pf[MAX_CONN + 2];
        pf[0] = (struct pollfd){ .fd = p->quit_pipe[0], .events = POLLIN };
        pf[1] = (struct pollfd){ .fd = p->listen_fd, .events = POLLIN };
        for (int i = 0; i < MAX_CONN; i++)
            pf[i + 2] = (struct pollfd){ .fd = c[i].fd, .events = POLLIN };
        bool pushing = stream_fd >= 0 && !finished;
        if (poll(pf, MAX_CONN + 2, pushing ? 1 : 50) < 0 && errno != EINTR)
            break;
        if (pf[0].revents)
            break;
        if (pf[1].revents & POLLIN) {
            int fd = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC);
            for (int i = 0; fd >= 0 && i < MAX_CONN; i++) {
                if (c[i].fd < 0) {
                    c[i] = (conn){ .fd = fd };
                    fd = -1;
                    atomic_fetch_add(&p->connections, 1);
                }
            }
            if (fd >= 0)
                close(fd);
        }
        for (int i = 0; i < MAX_CONN; i++) {
            if (c[i].fd < 0 || !(pf[i + 2].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t n = recv(c[i].fd, c[i].in + c[i].len, sizeof c[i].in - c[i].len, MSG_DONTWAIT);
            if (n <= 0) {
                if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                    if (c[i].fd == stream_fd)
                        stream_fd = -1;
                    close(c[i].fd);
                    c[i].fd = -1;
                }
                continue;
            }
            c[i].len += (size_t)n;
            if (c[i].answered || c[i].len < 20)
                continue;
            size_t size = c[i].in[14] | (size_t)c[i].in[15] << 8;
            if (c[i].len < size)
                continue;
            c[i].answered = true;
            uint8_t set = c[i].in[16], id = c[i].in[17];
            if (set == 2 && id == 1) { /* StopTracing */
                atomic_fetch_add(&p->stops, 1);
                if (p->mode == PEER_STREAM && !stop_seen) {
                    stop_seen = true;
                    reply(c[i].fd, 0, c[i].in + 20, 8);
                    if (stream_fd >= 0) {
                        uint8_t end = 1;
                        ssize_t r = send(stream_fd, &end, 1, MSG_NOSIGNAL);
                        (void)r;
                        shutdown(stream_fd, SHUT_WR);
                        finished = true;
                    }
                }
                continue;
            }
            if (atomic_load(&p->request_len) == 0) {
                memcpy(p->request, c[i].in, size);
                atomic_store(&p->request_len, size);
            }
            if (p->mode == PEER_SILENT)
                continue;
            if (p->mode == PEER_REFUSE) {
                uint8_t hr[4] = { (uint8_t)p->hresult, (uint8_t)(p->hresult >> 8), (uint8_t)(p->hresult >> 16),
                                  (uint8_t)(p->hresult >> 24) };
                reply(c[i].fd, 0xFF, hr, 4);
                close(c[i].fd);
                c[i].fd = -1;
                continue;
            }
            uint8_t sid[8];
            for (int k = 0; k < 8; k++)
                sid[k] = (uint8_t)(p->session_id >> (8 * k));
            reply(c[i].fd, 0, sid, 8);
            stream_fd = c[i].fd;
            c[i].streaming = true;
        }
        if (stream_fd >= 0 && !finished) {
            ssize_t n = send(stream_fd, chunk, sizeof chunk, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0)
                atomic_fetch_add(&p->streamed, (unsigned long long)n);
            if (p->mode == PEER_STREAM_CLOSE && atomic_load(&p->streamed) >= 64 * 1024) {
                for (int i = 0; i < MAX_CONN; i++)
                    if (c[i].fd == stream_fd)
                        c[i].fd = -1;
                close(stream_fd);
                stream_fd = -1;
                finished = true;
            }
        }
    }
    for (int i = 0; i < MAX_CONN; i++)
        if (c[i].fd >= 0)
            close(c[i].fd);
    free(c);
    return NULL;
}

bool peer_start(peer *p, peer_mode mode, const char *path)
{
    memset(p, 0, sizeof *p);
    p->mode = mode;
    p->hresult = 0x80131384u;
    p->session_id = 0x1122334455667788ull;
    p->listen_fd = -1;
    if (path) {
        snprintf(p->path, sizeof p->path, "%s", path);
    } else {
        snprintf(p->dir, sizeof p->dir, "/tmp/nt-peer-XXXXXX");
        if (!mkdtemp(p->dir))
            return false;
        snprintf(p->path, sizeof p->path, "%s/peer-socket", p->dir);
    }
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(p->path) >= sizeof sa.sun_path)
        return false;
    strcpy(sa.sun_path, p->path);
    p->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (p->listen_fd < 0 || bind(p->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(p->listen_fd, 8) != 0 || pipe(p->quit_pipe) != 0)
        return false;
    return pthread_create(&p->thread, NULL, peer_main, p) == 0;
}

void peer_stop(peer *p)
{
    ssize_t r = write(p->quit_pipe[1], "q", 1);
    (void)r;
    pthread_join(p->thread, NULL);
    close(p->listen_fd);
    close(p->quit_pipe[0]);
    close(p->quit_pipe[1]);
    unlink(p->path);
    if (p->dir[0])
        rmdir(p->dir);
}
