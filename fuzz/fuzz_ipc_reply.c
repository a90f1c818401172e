/* The diagnostics IPC reply decoding and the stream that follows it.
 *
 * A fake runtime (a server thread on a Unix socket in a private temporary
 * directory) reads each CollectTracing request and answers with the input
 * bytes, then closes.  nt_session_start_endpoint must decode the reply to
 * what an independent reading of it says (OK with the session id, REFUSED
 * with the HRESULT, PROTOCOL otherwise), and, after OK, the stream bytes
 * that follow the reply must reach the parser sink exactly: its callback
 * digest equals a direct whole-buffer parse of the same bytes.  The session
 * must end by itself when the server closes (no hang, no leak). */
#include "fuzz.h"
#include "nettrace_session.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const uint8_t MAGIC[14] = { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/* The server's copy of the current input: replaced only under mu, which the
 * server holds while writing, so a late write never touches freed memory. */
static uint8_t *reply;
static size_t reply_len;
static char sock_path[108];
static int listen_fd = -1;

static int read_all(int fd, uint8_t *p, size_t n)
{
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static void *server(void *arg)
{
    (void)arg;
    for (;;) {
        int c = accept(listen_fd, NULL, NULL);
        if (c < 0)
            continue;
        uint8_t head[20], rest[65536];
        if (read_all(c, head, 20) == 0) {
            size_t size = (size_t)head[14] | (size_t)head[15] << 8;
            if (size >= 20 && read_all(c, rest, size - 20) == 0) {
                pthread_mutex_lock(&mu);
                size_t off = 0;
                while (off < reply_len) {
                    ssize_t w = send(c, reply + off, reply_len - off, MSG_NOSIGNAL);
                    if (w <= 0)
                        break;
                    off += (size_t)w;
                }
                pthread_mutex_unlock(&mu);
            }
        }
        close(c);
    }
    return NULL;
}

static char sock_dir[64];

static void cleanup(void)
{
    unlink(sock_path);
    rmdir(sock_dir);
}

static void setup(void)
{
    char dir[] = "/tmp/nt-fuzz-ipc-XXXXXX";
    if (!mkdtemp(dir))
        fz_fail("mkdtemp failed");
    snprintf(sock_dir, sizeof sock_dir, "%s", dir);
    atexit(cleanup);
    snprintf(sock_path, sizeof sock_path, "%s/s", dir);
    listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path, sock_path, strlen(sock_path) + 1);
    if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(listen_fd, 16) != 0)
        fz_fail("cannot listen on %s", sock_path);
    pthread_t t;
    if (pthread_create(&t, NULL, server, NULL) != 0)
        fz_fail("cannot start the server thread");
    pthread_detach(t);
}

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, setup);
    if (size > 60000)
        return 0;
    pthread_mutex_lock(&mu);
    free(reply);
    reply = malloc(size ? size : 1);
    if (!reply)
        fz_fail("out of memory");
    if (size)
        memcpy(reply, data, size);
    reply_len = size;
    pthread_mutex_unlock(&mu);

    /* What the reply says, read independently. */
    nt_status expect = NT_ERR_PROTOCOL;
    size_t plen = 0;
    if (size >= 20 && memcmp(data, MAGIC, 14) == 0) {
        size_t msize = (size_t)data[14] | (size_t)data[15] << 8;
        plen = msize >= 20 ? msize - 20 : 0;
        size_t keep = plen < 64 ? plen : 64;
        bool complete = msize >= 20 && size >= 20 + keep;
        if (complete && data[16] == 0xFF && data[17] == 0xFF)
            expect = NT_ERR_REFUSED;
        else if (complete && data[16] == 0xFF && data[17] == 0x00 && plen == 8)
            expect = NT_OK;
    }

    nt_limits lim = { 0 };
    fz_harness_limits(&lim);
    ts_digest got;
    nt_callbacks cb = { 0 };
    ts_digest_init(&got);
    ts_digest_callbacks(&cb);
    nt_parser *p = nt_parser_new(&cb, &got, &lim, NULL);
    nt_session_config cfg = { 0 };
    memset(&cfg, 0, sizeof cfg);
    cfg.sink = nt_sink_parser;
    cfg.sink_user = p;
    nt_session *s = nt_session_new(&cfg, NULL);
    if (!p || !s)
        fz_fail("cannot create the parser or the session");
    nt_endpoint ep;
    memset(&ep, 0, sizeof ep);
    snprintf(ep.path, sizeof ep.path, "%s", sock_path);
    nt_status st = nt_session_start_endpoint(s, &ep, nt_deadline_after_ms(5000));
    if (st != expect)
        fz_fail("reply decoded as %s, expected %s (%s)", nt_status_name(st), nt_status_name(expect),
                nt_session_message(s));
    if (st == NT_ERR_REFUSED && plen >= 4 && nt_session_hresult(s) != le32(data + 20))
        fz_fail("HRESULT 0x%08x, the reply says 0x%08x", nt_session_hresult(s), le32(data + 20));
    if (st == NT_OK) {
        uint64_t id = 0;
        for (int i = 7; i >= 0; i--)
            id = id << 8 | data[20 + i];
        if (nt_session_id(s) != id)
            fz_fail("session id %llx, the reply says %llx", (unsigned long long)nt_session_id(s),
                    (unsigned long long)id);
        nt_status end = nt_session_wait(s, nt_deadline_after_ms(5000));
        if (end == NT_ERR_TIMEOUT)
            fz_fail("the session did not end after the server closed");
        const uint8_t *stream = data + 28;
        size_t slen = size - 28;
        if (nt_session_bytes(s) > slen)
            fz_fail("the sink got %llu bytes of a %zu-byte stream", (unsigned long long)nt_session_bytes(s), slen);
        nt_status ps = nt_parser_status(p);
        if (ps == NT_OK && nt_session_bytes(s) == slen)
            nt_parser_finish(p);
        if (nt_parser_status(p) == NT_OK || nt_session_bytes(s) == slen) {
            /* The whole stream reached the parser: same callbacks as parsing it directly. */
            ts_digest want;
            nt_parser_stats wst = { 0 };
            uint64_t err;
            fz_parse(stream, slen, NULL, NULL, &lim, NULL, 0, &want, &wst, &err);
            (void)wst;
            if (nt_session_bytes(s) == slen && (want.calls != got.calls || want.events != got.events))
                fz_fail("the sink's parser saw %llu callbacks, a direct parse %llu",
                        (unsigned long long)got.calls, (unsigned long long)want.calls);
        }
    }
    nt_session_free(s);
    nt_parser_free(p);
    return 0;
}
