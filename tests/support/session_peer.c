/* The fake diagnostics server (see session_peer.h). */
#include "session_peer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
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

/* A ProcessInfo2 reply: pid, cookie, then command line, OS, arch, entry
 * assembly and runtime version, each `text` (length-prefixed UTF-16). */
static void reply_info(int fd, const char *text)
{
    uint8_t m[2048];
    size_t n = 20;
    memset(m + n, 0, 24);
    uint32_t pid = (uint32_t)getpid();
    memcpy(m + n, &pid, 4);
    n += 24;
    size_t len = strlen(text);
    for (int k = 0; k < 5; k++) {
        uint32_t units = (uint32_t)len + 1;
        memcpy(m + n, &units, 4);
        n += 4;
        for (size_t i = 0; i <= len; i++) {
            m[n++] = (uint8_t)text[i];
            m[n++] = 0;
        }
    }
    memcpy(m, MAGIC, 14);
    m[14] = (uint8_t)n;
    m[15] = (uint8_t)(n >> 8);
    m[16] = 0xFF;
    m[17] = 0;
    m[18] = m[19] = 0;
    ssize_t r = send(fd, m, n, MSG_NOSIGNAL);
    (void)r;
}

/* PEER_FLOOD: the prefix, then 256 KiB unknown V6 blocks (kind 0x7F) until
 * flood_bytes; blocking sends, so the pace is the reader's. */
static void flood(peer *p, int fd)
{
    enum { BLOCK = 256 * 1024 };
    uint8_t *b = calloc(1, BLOCK);
    if (!b)
        return;
    uint32_t head = (uint32_t)0x7F << 24 | (BLOCK - 4);
    memcpy(b, &head, 4);
    ssize_t n = send(fd, p->prefix, p->prefix_len, MSG_NOSIGNAL);
    if (n > 0)
        atomic_fetch_add(&p->streamed, (unsigned long long)n);
    while (n > 0 && atomic_load(&p->streamed) < p->flood_bytes) {
        size_t off = 0;
        while (off < BLOCK && (n = send(fd, b + off, BLOCK - off, MSG_NOSIGNAL)) > 0)
            off += (size_t)n;
        atomic_fetch_add(&p->streamed, (unsigned long long)off);
    }
    free(b);
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
            int seen = atomic_load(&p->command_count);
            if (set == 2 && seen < (int)sizeof p->commands) {
                p->commands[seen] = id;
                atomic_store(&p->command_count, seen + 1);
            }
            if (p->mode == PEER_SILENT)
                continue;
            if (set == 2 && p->unknown_command && id == p->unknown_command) {
                /* a runtime that predates this command: UNKNOWN_COMMAND, then it hangs up */
                static const uint8_t hr[4] = { 0x85, 0x13, 0x13, 0x80 };
                reply(c[i].fd, 0xFF, hr, 4);
                close(c[i].fd);
                c[i].fd = -1;
                continue;
            }
            if (p->mode == PEER_INFO) {
                reply_info(c[i].fd, p->info);
                continue;
            }
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
            if (p->mode == PEER_FLOOD) {
                flood(p, c[i].fd);
                c[i].fd = -1; /* kept open by flood, never read again */
                continue;
            }
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

peer *peer_shared(void)
{
    void *m = mmap(NULL, sizeof(peer), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

void peer_shared_free(peer *p)
{
    if (p)
        munmap(p, sizeof *p);
}

/* Field 22 of /proc/self/stat: the start key runtimes put in their socket's name. */
static unsigned long long own_start_key(void)
{
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *s = strrchr(buf, ')');
    if (!s)
        return 0;
    s += 2;
    for (int field = 3; field < 22 && s; field++) {
        s = strchr(s, ' ');
        if (s)
            s++;
    }
    return s ? strtoull(s, NULL, 10) : 0;
}

pid_t peer_spawn_runtime(peer *p, peer_mode mode, uint32_t hresult)
{
    int ready[2];
    if (pipe(ready) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves no fake runtime behind */
        close(ready[0]);
        const char *tmp = getenv("TMPDIR");
        char path[512];
        snprintf(path, sizeof path, "%s/dotnet-diagnostic-%d-%llu-socket", tmp && *tmp ? tmp : "/tmp",
                 (int)getpid(), own_start_key());
        /* peer_start clears p: keep what the caller set (the parent connects only after "ready") */
        char info[sizeof p->info];
        uint8_t prefix[sizeof p->prefix];
        size_t prefix_len = p->prefix_len;
        unsigned long long flood_bytes = p->flood_bytes;
        memcpy(info, p->info, sizeof info);
        memcpy(prefix, p->prefix, sizeof prefix);
        bool ok = peer_start(p, mode, path);
        p->hresult = hresult;
        memcpy(p->info, info, sizeof info);
        memcpy(p->prefix, prefix, sizeof prefix);
        p->prefix_len = prefix_len;
        p->flood_bytes = flood_bytes;
        ssize_t w = write(ready[1], ok ? "y" : "n", 1);
        (void)w;
        close(ready[1]);
        for (;;)
            pause();
    }
    close(ready[1]);
    char c = 'n';
    ssize_t r = pid > 0 ? read(ready[0], &c, 1) : 0;
    close(ready[0]);
    if (pid > 0 && (r != 1 || c != 'y')) {
        peer_kill_runtime(p, pid);
        return -1;
    }
    return pid;
}

void peer_kill_runtime(peer *p, pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    if (p->path[0])
        unlink(p->path);
}
