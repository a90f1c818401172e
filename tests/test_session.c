/* Session tests that need no .NET runtime: request encoding, endpoint
 * discovery (missing processes, stale and long-path sockets), and a fake
 * peer that refuses, never answers, streams or hangs up. */
#include <criterion/criterion.h>

#include "nettrace_session.h"
#include "session/ipc.h"
#include "session_peer.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- encoding ---- */

/* The worked example of the IPC reference: CollectTracing2, 256 MB, rundown,
 * SampleProfiler (kw 0, level 5) and DotNETRuntime (kw 0x18, level 5). */
Test(session_encoding, collect_tracing2_worked_example)
{
    nt_provider prov[2] = { { .name = NT_PROVIDER_SAMPLE_PROFILER, .level = 5 },
                            { .name = NT_PROVIDER_RUNTIME, .keywords = 0x18, .level = 5 } };
    nt_session_config cfg = { .providers = prov, .provider_count = 2, .buffer_mb = 256 };
    static ipc_buf b;
    cr_assert(ipc_encode_collect(&b, &cfg));
    cr_assert_eq(b.out.n, 209);
    static const uint8_t head[] = { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
                                    0xD1, 0x00, 0x02, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
                                    0x01, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00 };
    cr_assert_arr_eq(b.out.d, head, sizeof head);
    /* first provider: keywords 0, level 5, 36 UTF-16 units, 'M', ..., then empty arguments */
    const uint8_t *p = b.out.d + sizeof head;
    static const uint8_t p1[] = { 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0x24, 0, 0, 0, 'M', 0 };
    cr_assert_arr_eq(p, p1, sizeof p1);
    p += 16 + 72;
    static const uint8_t tail1[] = { 0, 0, 0, 0, 0x18, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0x20, 0, 0, 0 };
    static const uint8_t zeros[4] = { 0, 0, 0, 0 };
    cr_assert_arr_eq(p - 2, zeros, 2, "terminator of the first name");
    cr_assert_arr_eq(p, tail1, sizeof tail1);
    cr_assert_arr_eq(b.out.d + 205, zeros, 4);
}

/* A provider's level on the wire: 0 selects verbose (5), NT_LEVEL_LOG_ALWAYS sends 0, others as given. */
Test(session_encoding, provider_levels)
{
    nt_provider prov[3] = { { .name = "A" }, { .name = "B", .level = NT_LEVEL_LOG_ALWAYS }, { .name = "C", .level = 3 } };
    nt_session_config cfg = { .providers = prov, .provider_count = 3, .buffer_mb = 1 };
    static ipc_buf b;
    cr_assert(ipc_encode_collect(&b, &cfg));
    /* after the 20-byte header, 4+4+1 bytes of buffer, format and rundown, the provider count; each
     * provider: keywords (8), level (4), name (4 + 2 units), arguments (4) */
    const uint8_t *p = b.out.d + 20 + 9 + 4;
    const uint32_t want[3] = { 5, 0, 3 };
    for (int i = 0; i < 3; i++, p += 8 + 4 + 8 + 4) {
        uint32_t level = (uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24;
        cr_assert_eq(level, want[i], "provider %d: level %u on the wire, want %u", i, level, want[i]);
        cr_assert_eq(level, nt_provider_level(&prov[i]));
    }
    cr_assert_eq(nt_provider_level(NULL), 0);
}

Test(session_encoding, command_selection)
{
    nt_session_config cfg = { .rundown_keyword = NT_DEFAULT_RUNDOWN_KEYWORD };
    cr_assert_eq(ipc_collect_command(&cfg), IPC_EP_COLLECT2);
    cfg.no_stackwalk = true;
    cr_assert_eq(ipc_collect_command(&cfg), IPC_EP_COLLECT3);
    cfg.rundown_keyword = 0x8;
    cr_assert_eq(ipc_collect_command(&cfg), IPC_EP_COLLECT4);
    cfg.no_rundown = true; /* no rundown at all: CollectTracing3 says that */
    cr_assert_eq(ipc_collect_command(&cfg), IPC_EP_COLLECT3);
}

/* NT_BUFFERING_BLOCK is CollectTracing6 (dotnet/diagnostics' ipc-protocol.md at 3c9f99e, the client's
 * SerializeV6): CollectTracing5's streaming payload, each provider with an empty event filter, then
 * the u32 sessionBufferMode, 1 for Block. */
Test(session_encoding, collect_tracing6_for_block_buffering)
{
    nt_provider prov = { .name = "P", .keywords = 0x1980001, .level = 5 };
    nt_session_config cfg = { .providers = &prov, .provider_count = 1, .buffer_mb = 1024,
                              .rundown_keyword = NT_DEFAULT_RUNDOWN_KEYWORD, .no_stackwalk = true,
                              .buffering = NT_BUFFERING_BLOCK };
    cr_assert_eq(ipc_collect_command(&cfg), IPC_EP_COLLECT6, "Block needs 6 whatever else is asked");
    static ipc_buf b;
    cr_assert(ipc_encode_collect(&b, &cfg));
    static const uint8_t want[] = {
        'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0, 78, 0, 0x02, 0x07, 0, 0,
        0, 0, 0, 0,                                     /* session_type 0: streaming */
        0x00, 0x04, 0, 0,                               /* circularBufferMB 1024 */
        1, 0, 0, 0,                                     /* format: NetTrace */
        0x39, 0x01, 0x02, 0x80, 0, 0, 0, 0,             /* rundownKeyword */
        0,                                              /* requestStackwalk */
        1, 0, 0, 0,                                     /* one provider */
        0x01, 0x00, 0x98, 0x01, 0, 0, 0, 0,             /* keywords */
        5, 0, 0, 0,                                     /* level */
        2, 0, 0, 0, 'P', 0, 0, 0,                       /* name */
        0, 0, 0, 0,                                     /* no arguments */
        0, 0, 0, 0, 0,                                  /* event filter: enable 0, no ids */
        1, 0, 0, 0,                                     /* sessionBufferMode: Block */
    };
    cr_assert_eq(b.out.n, sizeof want);
    cr_assert_arr_eq(b.out.d, want, sizeof want);
    cfg.buffering = NT_BUFFERING_DROP;
    cr_assert_eq(ipc_collect_command(&cfg), IPC_EP_COLLECT3, "Drop is what the runtime does anyway: no 6");
}

Test(session_encoding, strings_utf16_and_limits)
{
    static ipc_buf b;
    ipc_begin(&b, 2, 3);
    ipc_put_string(&b, "a\xC3\xA9\xF0\x9F\x98\x80"); /* a, e-acute, U+1F600 (a surrogate pair) */
    cr_assert(ipc_end(&b));
    static const uint8_t want[] = { 5, 0, 0, 0, 'a', 0, 0xE9, 0, 0x3D, 0xD8, 0x00, 0xDE, 0, 0 };
    cr_assert_eq(b.out.n, 20 + sizeof want);
    cr_assert_arr_eq(b.out.d + 20, want, sizeof want);
    ipc_begin(&b, 2, 3);
    ipc_put_string(&b, "bad\xC3");
    cr_assert_not(ipc_end(&b), "malformed UTF-8 is refused");
    ipc_begin(&b, 2, 3);
    for (int i = 0; i < 40000; i++)
        cm_buf_u8(&b.out, 0);
    cm_buf_u32(&b.out, 1);
    for (int i = 0; i < 30000; i++)
        cm_buf_u8(&b.out, 0);
    cr_assert_not(ipc_end(&b), "a request beyond 65,535 bytes is refused");
}

Test(session_encoding, stop_message)
{
    static ipc_buf b;
    ipc_encode_stop(&b, 0x00007F12345678A0ull);
    static const uint8_t want[] = { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
                                    0x1C, 0x00, 0x02, 0x01, 0x00, 0x00, 0xA0, 0x78, 0x56, 0x34,
                                    0x12, 0x7F, 0x00, 0x00 };
    cr_assert_eq(b.out.n, sizeof want);
    cr_assert_arr_eq(b.out.d, want, sizeof want);
}

Test(session_encoding, hresult_names)
{
    cr_assert_str_eq(nt_hresult_name(0x80131384u), "BAD_ENCODING");
    cr_assert_str_eq(nt_hresult_name(0x80131385u), "UNKNOWN_COMMAND");
    cr_assert_null(nt_hresult_name(0x12345678u));
}

/* ---- endpoint discovery ---- */

Test(session_endpoint, missing_process)
{
    nt_endpoint ep;
    /* Above the kernel's pid limit (at most 2^22), so no process has it. */
    cr_assert_eq(nt_endpoint_find(0x3FFFFFF0, &ep), NT_ERR_NO_ENDPOINT);
    cr_assert_eq(ep.reason, NT_ENDPOINT_NO_PROCESS);
    cr_assert_eq(nt_endpoint_find(-5, &ep), NT_ERR_INVALID_ARG);
}

Test(session_endpoint, not_a_dotnet_process)
{
    nt_endpoint ep;
    cr_assert_eq(nt_endpoint_find((int32_t)getpid(), &ep), NT_ERR_NO_ENDPOINT);
    cr_assert_eq(ep.reason, NT_ENDPOINT_NO_SOCKET, "reason %s", nt_endpoint_reason_name(ep.reason));
    nt_session_config cfg = { .sink = nt_sink_fd };
    int fd = -1;
    cfg.sink_user = &fd;
    nt_session *s = nt_session_new(&cfg, NULL);
    cr_assert_not_null(s);
    cr_assert_eq(nt_session_start(s, (int32_t)getpid(), nt_deadline_after_ms(2000)), NT_ERR_NO_ENDPOINT);
    cr_assert_eq(nt_session_start(s, 0x3FFFFFF0, nt_deadline_after_ms(2000)), NT_ERR_NO_ENDPOINT);
    nt_session_free(s);
}

/* A child (`sleep`) with its own TMPDIR, and socket files named for it. */
static pid_t spawn_with_tmpdir(const char *tmpdir)
{
    pid_t pid = fork();
    if (pid == 0) {
        setenv("TMPDIR", tmpdir, 1);
        execlp("sleep", "sleep", "30", (char *)NULL);
        _exit(127);
    }
    usleep(100 * 1000); /* let exec replace the environment */
    return pid;
}

static uint64_t start_key_of(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')') + 2;
    for (int field = 3; field < 22; field++)
        p = strchr(p, ' ') + 1;
    return strtoull(p, NULL, 10);
}

static int bind_socket_at(const char *dir, const char *name)
{
    /* bind() takes at most 108 bytes: bind relative to the directory. */
    char cwd[4096];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(dir), 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", name);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0, "bind: %s", strerror(errno));
    cr_assert_eq(listen(fd, 4), 0);
    cr_assert_eq(chdir(cwd), 0);
    return fd;
}

Test(session_endpoint, target_tmpdir_and_stale_sockets)
{
    char dir[] = "/tmp/nt-ep-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    pid_t child = spawn_with_tmpdir(dir);
    uint64_t key = start_key_of(child);
    char name[128];
    /* Only a socket of an earlier process with the same pid: stale. */
    snprintf(name, sizeof name, "dotnet-diagnostic-%d-%" PRIu64 "-socket", (int)child, key + 12345);
    int stale = bind_socket_at(dir, name);
    nt_endpoint ep;
    cr_assert_eq(nt_endpoint_find(child, &ep), NT_ERR_NO_ENDPOINT);
    cr_assert_eq(ep.reason, NT_ENDPOINT_STALE, "reason %s", nt_endpoint_reason_name(ep.reason));
    /* The live one, in the target's TMPDIR (not ours). */
    snprintf(name, sizeof name, "dotnet-diagnostic-%d-%" PRIu64 "-socket", (int)child, key);
    int live = bind_socket_at(dir, name);
    cr_assert_eq(nt_endpoint_find(child, &ep), NT_OK);
    char want[512];
    snprintf(want, sizeof want, "%s/%s", dir, name);
    cr_assert_str_eq(ep.path, want);
    cr_assert_eq(ep.start_key, key);
    cr_assert_eq(ep.ns_pid, child);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    close(stale);
    close(live);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* A socket path longer than sun_path's 108 bytes still connects. */
Test(session_endpoint, path_beyond_108_bytes)
{
    char dir[1024] = "/tmp/nt-long-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char base[64];
    snprintf(base, sizeof base, "%s", dir);
    while (strlen(dir) < 150) {
        strcat(dir, "/deeper-directory-level");
        cr_assert_eq(mkdir(dir, 0700), 0);
    }
    pid_t child = spawn_with_tmpdir(dir);
    char name[128];
    snprintf(name, sizeof name, "dotnet-diagnostic-%d-%" PRIu64 "-socket", (int)child, start_key_of(child));
    int lfd = bind_socket_at(dir, name);
    nt_endpoint ep;
    cr_assert_eq(nt_endpoint_find(child, &ep), NT_OK);
    cr_assert_gt(strlen(ep.path), 108);
    int fd;
    cr_assert_eq(ipc_connect(ep.path, nt_deadline_after_ms(1000), -1, &fd), NT_OK);
    int afd = accept(lfd, NULL, NULL);
    cr_assert_geq(afd, 0, "the listening socket saw the connection");
    close(afd);
    close(fd);
    close(lfd);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    cr_assert_eq(system(cmd), 0);
}

/* ---- fake peers ---- */

/* A hung test dies by SIGALRM (Criterion reports it as a crash) rather than
 * hanging make check.  (Criterion's own .timeout leaks under LeakSanitizer.) */
static void arm_alarm(void) { alarm(15); }
TestSuite(session_peer, .init = arm_alarm);

typedef struct counting_sink {
    atomic_ullong bytes;
    atomic_int calls;
    atomic_int calls_after_stop; /* set by the test once stop returned */
    atomic_bool stopped;
    uint8_t last;
} counting_sink;

static int count_sink(void *user, const void *data, size_t len)
{
    counting_sink *c = user;
    atomic_fetch_add(&c->bytes, len);
    atomic_fetch_add(&c->calls, 1);
    if (atomic_load(&c->stopped))
        atomic_fetch_add(&c->calls_after_stop, 1);
    c->last = ((const uint8_t *)data)[len - 1];
    return 0;
}

static nt_endpoint endpoint_at(const char *path)
{
    nt_endpoint ep;
    memset(&ep, 0, sizeof ep);
    snprintf(ep.path, sizeof ep.path, "%s", path);
    return ep;
}

static double elapsed_ms(int64_t since) { return (double)(nt_now_ns() - since) / 1e6; }

Test(session_peer, start_times_out_on_a_silent_peer)
{
    peer p;
    cr_assert(peer_start(&p, PEER_SILENT, NULL));
    counting_sink c = { 0 };
    nt_session_config cfg = { .sink = count_sink, .sink_user = &c };
    nt_session *s = nt_session_new(&cfg, NULL);
    nt_endpoint ep = endpoint_at(p.path);
    int64_t t0 = nt_now_ns();
    cr_assert_eq(nt_session_start_endpoint(s, &ep, nt_deadline_after_ms(300)), NT_ERR_TIMEOUT);
    double ms = elapsed_ms(t0);
    cr_assert(ms >= 295 && ms < 800, "start returned after %.0f ms for a 300 ms deadline", ms);
    cr_assert_gt(atomic_load(&p.request_len), 0, "the peer got the request");
    cr_assert_eq(nt_session_stop(s, nt_deadline_after_ms(100)), NT_ERR_TIMEOUT, "a failed start stays failed");
    nt_session_free(s);
    peer_stop(&p);
}

static void *cancel_later(void *arg)
{
    usleep(200 * 1000);
    nt_session_cancel(arg);
    return NULL;
}

Test(session_peer, start_is_cancelled_from_another_thread)
{
    peer p;
    cr_assert(peer_start(&p, PEER_SILENT, NULL));
    counting_sink c = { 0 };
    nt_session_config cfg = { .sink = count_sink, .sink_user = &c };
    nt_session *s = nt_session_new(&cfg, NULL);
    nt_endpoint ep = endpoint_at(p.path);
    pthread_t t;
    pthread_create(&t, NULL, cancel_later, s);
    int64_t t0 = nt_now_ns();
    cr_assert_eq(nt_session_start_endpoint(s, &ep, NT_DEADLINE_NONE), NT_ERR_CANCELLED);
    double ms = elapsed_ms(t0);
    cr_assert(ms < 1000, "cancel took %.0f ms", ms);
    pthread_join(t, NULL);
    nt_session_free(s);
    peer_stop(&p);
}

Test(session_peer, refusal_carries_the_hresult)
{
    peer p;
    cr_assert(peer_start(&p, PEER_REFUSE, NULL));
    counting_sink c = { 0 };
    nt_session_config cfg = { .sink = count_sink, .sink_user = &c };
    nt_session *s = nt_session_new(&cfg, NULL);
    nt_endpoint ep = endpoint_at(p.path);
    cr_assert_eq(nt_session_start_endpoint(s, &ep, nt_deadline_after_ms(2000)), NT_ERR_REFUSED);
    cr_assert_eq(nt_session_hresult(s), 0x80131384u);
    cr_assert(strstr(nt_session_message(s), "BAD_ENCODING"), "message: %s", nt_session_message(s));
    cr_assert_eq(atomic_load(&c.calls), 0);
    /* The default configuration went out: CollectTracing2 with two providers. */
    cr_assert_eq(p.request[16], 2);
    cr_assert_eq(p.request[17], 3);
    nt_session_free(s);
    peer_stop(&p);
}

/* A session asking for non-lossy buffering, started on p. */
static nt_session *block_session(counting_sink *c, peer *p, nt_status *st)
{
    nt_session_config cfg = NT_STRUCT_INIT(nt_session_config);
    cfg.sink = count_sink;
    cfg.sink_user = c;
    cfg.buffering = NT_BUFFERING_BLOCK;
    nt_session *s = nt_session_new(&cfg, NULL);
    cr_assert(s);
    cr_assert_eq(nt_session_buffering(s), NT_BUFFERING_DEFAULT, "nothing is known before the start");
    nt_endpoint ep = endpoint_at(p->path);
    *st = nt_session_start_endpoint(s, &ep, nt_deadline_after_ms(2000));
    return s;
}

Test(session_peer, block_buffering_sends_collect_tracing6)
{
    peer p;
    cr_assert(peer_start(&p, PEER_STREAM, NULL));
    counting_sink c = { 0 };
    nt_status st;
    nt_session *s = block_session(&c, &p, &st);
    cr_assert_eq(st, NT_OK, "%s", nt_session_message(s));
    cr_assert_eq(nt_session_buffering(s), NT_BUFFERING_BLOCK);
    size_t n = atomic_load(&p.request_len);
    cr_assert_eq(p.request[16], 2);
    cr_assert_eq(p.request[17], 7, "CollectTracing6, not %u", p.request[17]);
    cr_assert_eq(n, (size_t)(p.request[14] | p.request[15] << 8));
    static const uint8_t streaming[4] = { 0 }, block[4] = { 1, 0, 0, 0 };
    cr_assert_arr_eq(p.request + 20, streaming, 4, "session_type 0 leads the payload");
    cr_assert_arr_eq(p.request + n - 4, block, 4, "sessionBufferMode 1 ends it");
    cr_assert_eq(atomic_load(&p.command_count), 1);
    cr_assert_eq(nt_session_stop(s, nt_deadline_after_ms(2000)), NT_OK);
    nt_session_free(s);
    peer_stop(&p);
}

Test(session_peer, a_runtime_without_collect_tracing6_gets_the_older_command)
{
    peer p;
    cr_assert(peer_start(&p, PEER_STREAM, NULL));
    p.unknown_command = 7; /* as .NET 10 and earlier answer */
    counting_sink c = { 0 };
    nt_status st;
    nt_session *s = block_session(&c, &p, &st);
    cr_assert_eq(st, NT_OK, "the session falls back: %s", nt_session_message(s));
    cr_assert_eq(nt_session_buffering(s), NT_BUFFERING_DROP, "the session says it got the lossy mode");
    cr_assert_eq(atomic_load(&p.command_count), 2);
    cr_assert_eq(p.commands[0], 7);
    cr_assert_eq(p.commands[1], 3, "then CollectTracing2, what the configuration needs otherwise");
    cr_assert_eq(atomic_load(&p.connections), 2, "a new connection: the runtime hung up on the refusal");
    cr_assert_eq(nt_session_hresult(s), 0);
    cr_assert_str_eq(nt_session_message(s), "", "a fallback is not a failure");
    cr_assert_eq(nt_session_stop(s, nt_deadline_after_ms(2000)), NT_OK);
    cr_assert(atomic_load(&c.bytes) > 0, "the stream came");
    nt_session_free(s);
    peer_stop(&p);
}

/* On a diagnostic port the runtime opened the connection and hangs up on the refusal: the library
 * cannot ask again there, so the start fails and says what to do. */
Test(session_peer, a_port_connection_refused_collect_tracing6_is_not_retried)
{
    peer p;
    cr_assert(peer_start(&p, PEER_STREAM, NULL));
    p.unknown_command = 7;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    cr_assert(strlen(p.path) < sizeof sa.sun_path);
    memcpy(sa.sun_path, p.path, strlen(p.path) + 1);
    cr_assert(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0, "%s", strerror(errno));
    counting_sink c = { 0 };
    nt_session_config cfg = NT_STRUCT_INIT(nt_session_config);
    cfg.sink = count_sink;
    cfg.sink_user = &c;
    cfg.buffering = NT_BUFFERING_BLOCK;
    nt_session *s = nt_session_new(&cfg, NULL);
    nt_endpoint ep = endpoint_at(p.path);
    cr_assert_eq(nt_session_start_connected(s, fd, &ep, nt_deadline_after_ms(2000)), NT_ERR_REFUSED);
    cr_assert_eq(nt_session_hresult(s), NT_HR_UNKNOWN_COMMAND);
    cr_assert(strstr(nt_session_message(s), "CollectTracing6"), "message: %s", nt_session_message(s));
    cr_assert_eq(atomic_load(&p.command_count), 1, "no second request on a closed connection");
    cr_assert_eq(nt_session_buffering(s), NT_BUFFERING_DEFAULT);
    nt_session_free(s);
    peer_stop(&p);
}

Test(session_peer, other_refusals_of_collect_tracing6_stand)
{
    peer p;
    cr_assert(peer_start(&p, PEER_REFUSE, NULL)); /* BAD_ENCODING: the runtime knows 6 and refused it */
    counting_sink c = { 0 };
    nt_status st;
    nt_session *s = block_session(&c, &p, &st);
    cr_assert_eq(st, NT_ERR_REFUSED);
    cr_assert_eq(nt_session_hresult(s), 0x80131384u);
    cr_assert_eq(atomic_load(&p.command_count), 1, "no second request");
    cr_assert_eq(nt_session_buffering(s), NT_BUFFERING_DEFAULT);
    nt_session_free(s);
    peer_stop(&p);
    nt_session_config bad = NT_STRUCT_INIT(nt_session_config);
    bad.sink = count_sink;
    bad.buffering = NT_BUFFERING_BLOCK + 1;
    cr_assert_null(nt_session_new(&bad, NULL), "an unknown buffering is refused");
    cr_assert_eq(nt_session_buffering(NULL), NT_BUFFERING_DEFAULT);
}

typedef struct stopper {
    nt_session *s;
    int64_t deadline;
    nt_status result;
    counting_sink *sink;
    unsigned long long bytes_at_return;
} stopper;

static void *stop_thread(void *arg)
{
    stopper *st = arg;
    st->result = nt_session_stop(st->s, st->deadline);
    st->bytes_at_return = atomic_load(&st->sink->bytes);
    return NULL;
}

static void stop_concurrently(bool caller_pumps)
{
    peer p;
    cr_assert(peer_start(&p, PEER_STREAM, NULL));
    counting_sink c = { 0 };
    nt_session_config cfg = { .sink = count_sink, .sink_user = &c, .caller_pumps = caller_pumps };
    nt_session *s = nt_session_new(&cfg, NULL);
    nt_endpoint ep = endpoint_at(p.path);
    cr_assert_eq(nt_session_start_endpoint(s, &ep, nt_deadline_after_ms(2000)), NT_OK, "%s",
                 nt_session_message(s));
    cr_assert_eq(nt_session_id(s), 0x1122334455667788ull);
    /* Let some stream arrive (in pump mode, pump it). */
    int64_t until = nt_deadline_after_ms(200);
    while (nt_now_ns() < until) {
        if (caller_pumps) {
            bool ended;
            cr_assert_eq(nt_session_pump(s, &ended), NT_OK);
            cr_assert_not(ended);
        }
        usleep(5000);
    }
    stopper st[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        st[i] = (stopper){ .s = s, .deadline = nt_deadline_after_ms(3000), .sink = &c };
        pthread_create(&t[i], NULL, stop_thread, &st[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        cr_assert_eq(st[i].result, NT_OK, "stop %d: %s", i, nt_status_name(st[i].result));
    }
    atomic_store(&c.stopped, true);
    cr_assert_eq(atomic_load(&p.stops), 1, "StopTracing was sent once, not %d times", atomic_load(&p.stops));
    cr_assert_eq(nt_session_stop(s, nt_deadline_after_ms(100)), NT_OK, "a later stop returns the result");
    cr_assert_gt(atomic_load(&c.bytes), 0);
    cr_assert_eq(c.last, 1, "the end marker reached the sink");
    cr_assert_eq(atomic_load(&c.bytes), atomic_load(&p.streamed) + 1, "every streamed byte arrived");
    cr_assert_eq(nt_session_bytes(s), atomic_load(&c.bytes));
    nt_session_free(s);
    cr_assert_eq(atomic_load(&c.calls_after_stop), 0, "the sink was called after stop returned");
    peer_stop(&p);
}

Test(session_peer, stop_runs_once_from_many_threads) { stop_concurrently(false); }
Test(session_peer, stop_runs_once_from_many_threads_pumped) { stop_concurrently(true); }

static void deaf_stop(bool caller_pumps)
{
    peer p;
    cr_assert(peer_start(&p, PEER_STREAM_DEAF, NULL));
    counting_sink c = { 0 };
    nt_session_config cfg = { .sink = count_sink, .sink_user = &c, .caller_pumps = caller_pumps };
    nt_session *s = nt_session_new(&cfg, NULL);
    nt_endpoint ep = endpoint_at(p.path);
    cr_assert_eq(nt_session_start_endpoint(s, &ep, nt_deadline_after_ms(2000)), NT_OK);
    usleep(100 * 1000);
    /* Two callers with different deadlines: each returns by its own. */
    stopper st[2] = { { .s = s, .deadline = nt_deadline_after_ms(300), .sink = &c },
                      { .s = s, .deadline = nt_deadline_after_ms(5000), .sink = &c } };
    int64_t t0 = nt_now_ns();
    pthread_t t[2];
    pthread_create(&t[1], NULL, stop_thread, &st[1]);
    stop_thread(&st[0]);
    double ms = elapsed_ms(t0);
    atomic_store(&c.stopped, true);
    cr_assert_eq(st[0].result, NT_ERR_TIMEOUT);
    cr_assert(ms >= 295 && ms < 900, "stop returned after %.0f ms for a 300 ms deadline", ms);
    cr_assert_eq(st[0].bytes_at_return, atomic_load(&c.bytes), "the sink ran after stop returned");
    pthread_join(t[1], NULL);
    cr_assert(elapsed_ms(t0) < 2000, "the abandoned session released the other caller");
    cr_assert_eq(st[1].result, NT_ERR_TIMEOUT, "the other caller sees the abandoned session: %s",
                 nt_status_name(st[1].result));
    usleep(50 * 1000);
    cr_assert_eq(atomic_load(&c.calls_after_stop), 0);
    cr_assert_geq(atomic_load(&p.stops), 1);
    nt_session_free(s);
    peer_stop(&p);
}

Test(session_peer, stop_honours_its_deadline_when_the_peer_never_answers) { deaf_stop(false); }
Test(session_peer, stop_honours_its_deadline_when_the_peer_never_answers_pumped)
{
    deaf_stop(true);
}

Test(session_peer, stream_cap_closes_the_session)
{
    peer p;
    cr_assert(peer_start(&p, PEER_STREAM_DEAF, NULL));
    counting_sink c = { 0 };
    nt_session_config cfg = { .sink = count_sink, .sink_user = &c, .max_stream_bytes = 100000 };
    nt_session *s = nt_session_new(&cfg, NULL);
    nt_endpoint ep = endpoint_at(p.path);
    cr_assert_eq(nt_session_start_endpoint(s, &ep, nt_deadline_after_ms(2000)), NT_OK);
    cr_assert_eq(nt_session_wait(s, nt_deadline_after_ms(5000)), NT_ERR_STREAM_CAP);
    cr_assert_eq(atomic_load(&c.bytes), 100000, "exactly the cap reached the sink");
    cr_assert_eq(nt_session_stop(s, nt_deadline_after_ms(100)), NT_ERR_STREAM_CAP);
    nt_session_free(s);
    peer_stop(&p);
}

Test(session_peer, hang_up_without_end_marker_is_truncated)
{
    peer p;
    cr_assert(peer_start(&p, PEER_STREAM_CLOSE, NULL));
    counting_sink c = { 0 };
    nt_session_config cfg = { .sink = count_sink, .sink_user = &c, .caller_pumps = true };
    nt_session *s = nt_session_new(&cfg, NULL);
    nt_endpoint ep = endpoint_at(p.path);
    cr_assert_eq(nt_session_start_endpoint(s, &ep, nt_deadline_after_ms(2000)), NT_OK);
    /* Drive it like an event loop: poll the session's descriptor, pump. */
    int fd = nt_session_fd(s);
    cr_assert_geq(fd, 0);
    bool ended = false;
    nt_status st = NT_OK;
    int64_t until = nt_deadline_after_ms(5000);
    while (!ended && nt_now_ns() < until) {
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        poll(&pf, 1, 100);
        st = nt_session_pump(s, &ended);
    }
    cr_assert(ended);
    cr_assert_eq(st, NT_ERR_TRUNCATED, "%s", nt_status_name(st));
    cr_assert_eq(atomic_load(&c.bytes), atomic_load(&p.streamed));
    nt_session_free(s);
    peer_stop(&p);
}

Test(session_peer, sink_can_stop_the_session)
{
    peer p;
    cr_assert(peer_start(&p, PEER_STREAM_DEAF, NULL));
    int fd = open("/dev/full", O_WRONLY);
    cr_assert_geq(fd, 0);
    nt_session_config cfg = { .sink = nt_sink_fd, .sink_user = &fd };
    nt_session *s = nt_session_new(&cfg, NULL);
    nt_endpoint ep = endpoint_at(p.path);
    cr_assert_eq(nt_session_start_endpoint(s, &ep, nt_deadline_after_ms(2000)), NT_OK);
    cr_assert_eq(nt_session_wait(s, nt_deadline_after_ms(5000)), NT_ERR_STOPPED);
    nt_session_free(s);
    close(fd);
    peer_stop(&p);
}

Test(session_peer, cancel_ends_a_waiting_stop)
{
    peer p;
    cr_assert(peer_start(&p, PEER_STREAM_DEAF, NULL));
    counting_sink c = { 0 };
    nt_session_config cfg = { .sink = count_sink, .sink_user = &c };
    nt_session *s = nt_session_new(&cfg, NULL);
    nt_endpoint ep = endpoint_at(p.path);
    cr_assert_eq(nt_session_start_endpoint(s, &ep, nt_deadline_after_ms(2000)), NT_OK);
    pthread_t t;
    pthread_create(&t, NULL, cancel_later, s);
    int64_t t0 = nt_now_ns();
    cr_assert_eq(nt_session_stop(s, NT_DEADLINE_NONE), NT_ERR_CANCELLED);
    double ms = elapsed_ms(t0);
    atomic_store(&c.stopped, true);
    cr_assert(ms < 1000, "cancel took %.0f ms", ms);
    pthread_join(t, NULL);
    usleep(50 * 1000);
    cr_assert_eq(atomic_load(&c.calls_after_stop), 0);
    cr_assert_eq(nt_session_wait(s, nt_deadline_after_ms(10)), NT_ERR_CANCELLED, "the session stays cancelled");
    nt_session_free(s);
    peer_stop(&p);
}

Test(session_peer, start_twice_is_a_state_error)
{
    peer p;
    cr_assert(peer_start(&p, PEER_STREAM, NULL));
    counting_sink c = { 0 };
    nt_session_config cfg = { .sink = count_sink, .sink_user = &c };
    nt_session *s = nt_session_new(&cfg, NULL);
    nt_endpoint ep = endpoint_at(p.path);
    cr_assert_eq(nt_session_stop(s, nt_deadline_after_ms(10)), NT_ERR_STATE, "stop before start");
    cr_assert_eq(nt_session_start_endpoint(s, &ep, nt_deadline_after_ms(2000)), NT_OK);
    cr_assert_eq(nt_session_start_endpoint(s, &ep, nt_deadline_after_ms(2000)), NT_ERR_STATE);
    cr_assert_eq(nt_session_pump(s, NULL), NT_ERR_STATE, "a threaded session is not pumped");
    cr_assert_eq(nt_session_fd(s), -1);
    cr_assert_eq(nt_session_stop(s, nt_deadline_after_ms(3000)), NT_OK);
    nt_session_free(s);
    nt_session_config bad = { .sink = NULL };
    cr_assert_null(nt_session_new(&bad, NULL), "a session needs a sink");
    peer_stop(&p);
}

/* ---- issue 13, item 10: a full backlog is retried; Ctrl-C cancels a start ---- */

typedef struct backlog {
    int listen_fd;
    int fillers[16];
    int nfill;
    char path[108];
} backlog;

/* A listener with backlog 0 whose queue is full: connect() gives EAGAIN. */
static void backlog_fill(backlog *b)
{
    snprintf(b->path, sizeof b->path, "/tmp/nt-backlog-%d.sock", (int)getpid());
    unlink(b->path);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", b->path);
    b->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert_eq(bind(b->listen_fd, (struct sockaddr *)&sa, sizeof sa), 0);
    cr_assert_eq(listen(b->listen_fd, 0), 0);
    b->nfill = 0;
    for (;;) {
        cr_assert_lt(b->nfill, 16, "the backlog never filled");
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
            cr_assert_eq(errno, EAGAIN, "connect: %s", strerror(errno));
            close(fd);
            break;
        }
        b->fillers[b->nfill++] = fd;
    }
}

static void *drain_later(void *arg)
{
    backlog *b = arg;
    usleep(300 * 1000);
    int fd = accept(b->listen_fd, NULL, NULL); /* one slot frees */
    usleep(500 * 1000);
    if (fd >= 0)
        close(fd);
    return NULL;
}

Test(session_peer, connect_retries_a_full_backlog_until_the_deadline)
{
    backlog b;
    backlog_fill(&b);
    /* Nobody accepts: the deadline ends the retries, no earlier. */
    int fd;
    int64_t t0 = nt_now_ns();
    nt_status st = ipc_connect(b.path, nt_deadline_after_ms(400), -1, &fd);
    cr_assert_eq(st, NT_ERR_TIMEOUT, "a full backlog gave %s, not a timeout", nt_status_name(st));
    cr_assert_geq(elapsed_ms(t0), 390.0, "gave up after %.0f ms of a 400 ms deadline", elapsed_ms(t0));
    /* A slot frees after 300 ms: the connection is made, and is a real one. */
    pthread_t th;
    pthread_create(&th, NULL, drain_later, &b);
    st = ipc_connect(b.path, nt_deadline_after_ms(5000), -1, &fd);
    cr_assert_eq(st, NT_OK, "%s", nt_status_name(st));
    struct sockaddr_un peer_addr;
    socklen_t len = sizeof peer_addr;
    cr_assert_eq(getpeername(fd, (struct sockaddr *)&peer_addr, &len), 0, "not connected: %s", strerror(errno));
    close(fd);
    pthread_join(th, NULL);
    for (int i = 0; i < b.nfill; i++)
        close(b.fillers[i]);
    close(b.listen_fd);
    unlink(b.path);
}

/* A process (`sleep`) that looks like a .NET one: its TMPDIR is a fresh
 * directory (dir, a mkdtemp template) where path names its diagnostics
 * socket, for an impostor to serve. */
static pid_t fake_dotnet_process(char *dir, char *path, size_t size)
{
    cr_assert_not_null(mkdtemp(dir));
    pid_t target = spawn_with_tmpdir(dir);
    snprintf(path, size, "%s/dotnet-diagnostic-%d-%" PRIu64 "-socket", dir, (int)target, start_key_of(target));
    return target;
}

Test(session_peer, collect_cancels_on_the_first_ctrl_c_while_awaiting_the_reply)
{
    peer *p = peer_shared();
    cr_assert_not_null(p);
    pid_t target = peer_spawn_runtime(p, PEER_SILENT, 0); /* reads the request, never answers */
    cr_assert_gt(target, 0);
    char dir[] = "/tmp/nt-ctrlc-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    const char *top = getenv("top_builddir");
    char nt[1024], pidarg[16], out[600];
    snprintf(nt, sizeof nt, "%s/nettrace", top ? top : ".");
    snprintf(pidarg, sizeof pidarg, "%d", (int)target);
    snprintf(out, sizeof out, "%s/out.nettrace", dir);
    pid_t child = fork();
    if (child == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2);
        execl(nt, "nettrace", "collect", "-q", "-p", pidarg, "-o", out, "--connect-timeout", "60", (char *)NULL);
        _exit(127);
    }
    while (atomic_load(&p->request_len) == 0) /* the request arrived: it now awaits the reply */
        usleep(10 * 1000);
    usleep(100 * 1000);
    kill(child, SIGINT);
    /* One Ctrl-C must end it well before the 60 s connect timeout (the suite's alarm is 15 s). */
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 33, "exit %d, want 33 (cancelled)",
              WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
    peer_kill_runtime(p, target);
    peer_shared_free(p);
    unlink(out);
    rmdir(dir);
}

/* ---- ProcessInfo: a runtime that refuses still leaves the command line from /proc ---- */

Test(session_peer, process_info_falls_back_to_proc_when_refused)
{
    peer *p = peer_shared();
    cr_assert_not_null(p);
    pid_t target = peer_spawn_runtime(p, PEER_REFUSE, NT_HR_NOT_SUPPORTED);
    cr_assert_gt(target, 0);
    nt_endpoint ep;
    cr_assert_eq(nt_endpoint_find(target, &ep), NT_OK, "%s", nt_endpoint_reason_name(ep.reason));
    nt_process_info pi;
    nt_status st = nt_process_info_get(&ep, &pi, nt_deadline_after_ms(3000));
    cr_assert_eq(st, NT_ERR_REFUSED, "%s", nt_status_name(st));
    cr_assert(pi.from_proc);
    char want[256] = "";
    char cmdline[64];
    snprintf(cmdline, sizeof cmdline, "/proc/%d/cmdline", (int)target);
    FILE *f = fopen(cmdline, "r");
    cr_assert_not_null(f);
    want[fread(want, 1, sizeof want - 1, f)] = 0; /* the first argument, up to its NUL */
    fclose(f);
    cr_assert(want[0] && strncmp(pi.command_line, want, strlen(want)) == 0, "command line from /proc: '%s', want '%s'",
              pi.command_line, want);
    cr_assert_str_eq(pi.runtime_version, "");
    peer_kill_runtime(p, target);
    peer_shared_free(p);
}

/* ---- impostors: a socket under a process's endpoint name is not its endpoint ---- */

/* Another process of the same user listens under a `sleep` process's endpoint
 * name: found by name, refused at connect (the kernel names the listener),
 * and the impostor is sent nothing. */
Test(session_peer, an_impostor_listening_under_a_process_name_is_refused)
{
    char dir[] = "/tmp/nt-impostor-XXXXXX", path[512];
    pid_t target = fake_dotnet_process(dir, path, sizeof path);
    peer p;
    cr_assert(peer_start(&p, PEER_STREAM, path)); /* this process listens, not the target */
    nt_endpoint ep;
    cr_assert_eq(nt_endpoint_find(target, &ep), NT_OK, "%s", nt_endpoint_reason_name(ep.reason));
    nt_process_info pi;
    cr_assert_eq(nt_process_info_get(&ep, &pi, nt_deadline_after_ms(2000)), NT_ERR_NO_ENDPOINT);
    cr_assert_str_eq(pi.runtime_version, "", "the impostor's answer was taken");
    int fd = -1;
    nt_session_config cfg = { .sink = nt_sink_fd, .sink_user = &fd };
    nt_session *s = nt_session_new(&cfg, NULL);
    cr_assert_not_null(s);
    nt_status st = nt_session_start_endpoint(s, &ep, nt_deadline_after_ms(2000));
    cr_assert_eq(st, NT_ERR_NO_ENDPOINT, "start on an impostor: %s", nt_status_name(st));
    char want[64];
    snprintf(want, sizeof want, "served by pid %d", (int)getpid());
    cr_assert(strstr(nt_session_message(s), want), "message: %s", nt_session_message(s));
    nt_session_free(s);
    cr_assert_eq(atomic_load(&p.request_len), 0, "a request reached the impostor");
    peer_stop(&p);
    kill(target, SIGKILL);
    waitpid(target, NULL, 0);
    unlink(path);
    rmdir(dir);
}

/* A socket that another user (uid 12345) bound under a root process's
 * endpoint name, in a TMPDIR anyone may write to, is skipped when looking
 * for the endpoint: reason "foreign". */
Test(session_peer, a_socket_of_another_user_is_not_the_endpoint)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to act as a second user (uid 12345)");
    char dir[] = "/tmp/nt-foreign-XXXXXX", path[512];
    pid_t target = fake_dotnet_process(dir, path, sizeof path);
    cr_assert_eq(chmod(dir, 01777), 0);
    int ready[2];
    cr_assert_eq(pipe(ready), 0);
    pid_t planter = fork();
    if (planter == 0) {
        gid_t none[1];
        if (setgroups(0, none) != 0 || setresgid(12345, 12345, 12345) != 0 || setresuid(12345, 12345, 12345) != 0)
            _exit(2);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof sa.sun_path)
            _exit(4);
        memcpy(sa.sun_path, path, strlen(path) + 1);
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 4) != 0)
            _exit(3);
        ssize_t w = write(ready[1], "y", 1);
        (void)w;
        pause();
        _exit(0);
    }
    close(ready[1]);
    char c = 0;
    cr_assert_eq(read(ready[0], &c, 1), 1, "the second user could not bind its socket");
    close(ready[0]);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_uid, 12345u);
    nt_endpoint ep;
    cr_assert_eq(nt_endpoint_find(target, &ep), NT_ERR_NO_ENDPOINT, "found %s", ep.path);
    cr_assert_eq(ep.reason, NT_ENDPOINT_FOREIGN, "reason %s", nt_endpoint_reason_name(ep.reason));
    cr_assert_str_eq(nt_endpoint_reason_name(ep.reason), "foreign");
    kill(planter, SIGKILL);
    waitpid(planter, NULL, 0);
    kill(target, SIGKILL);
    waitpid(target, NULL, 0);
    unlink(path);
    rmdir(dir);
}

/* ProcessInfo for many runtimes at once: silent ones cost the deadline once,
 * not once each, and an answering one among them is answered. */
Test(session_peer, process_info_for_many_runtimes_in_parallel)
{
    enum { SILENT = 8 };
    peer *p[SILENT + 1];
    pid_t pid[SILENT + 1];
    nt_endpoint ep[SILENT + 1];
    for (int i = 0; i <= SILENT; i++) {
        p[i] = peer_shared();
        cr_assert_not_null(p[i]);
        snprintf(p[i]->info, sizeof p[i]->info, "9.8.7");
        pid[i] = peer_spawn_runtime(p[i], i == SILENT ? PEER_INFO : PEER_SILENT, 0);
        cr_assert_gt(pid[i], 0);
        cr_assert_eq(nt_endpoint_find(pid[i], &ep[i]), NT_OK, "%s", nt_endpoint_reason_name(ep[i].reason));
    }
    nt_process_info *pi = calloc(SILENT + 1, sizeof *pi);
    nt_status st[SILENT + 1];
    int64_t t0 = nt_now_ns();
    nt_process_info_get_many(ep, SILENT + 1, pi, st, nt_deadline_after_ms(500));
    double ms = elapsed_ms(t0);
    cr_assert_lt(ms, 2000, "%d silent runtimes took %.0f ms: asked one after the other?", SILENT, ms);
    for (int i = 0; i < SILENT; i++) {
        cr_assert_eq(st[i], NT_ERR_TIMEOUT, "silent runtime %d: %s", i, nt_status_name(st[i]));
        cr_assert(pi[i].from_proc, "no /proc fallback for %d", i);
    }
    cr_assert_eq(st[SILENT], NT_OK, "%s", nt_status_name(st[SILENT]));
    cr_assert_str_eq(pi[SILENT].runtime_version, "9.8.7");
    cr_assert_eq(pi[SILENT].pid, (uint64_t)pid[SILENT]);
    free(pi);
    for (int i = 0; i <= SILENT; i++) {
        peer_kill_runtime(p[i], pid[i]);
        peer_shared_free(p[i]);
    }
}

/* ---- deadlines: 0 means none (the library's one convention) ---- */

static void *cancel_port_later(void *arg)
{
    usleep(200 * 1000);
    nt_port_cancel(arg);
    return NULL;
}

Test(session_peer, a_zero_deadline_is_no_deadline)
{
    char path[108];
    snprintf(path, sizeof path, "/tmp/nt-port-%d.sock", (int)getpid());
    unlink(path);
    nt_port *port;
    cr_assert_eq(nt_port_open(path, &port, NULL), NT_OK);
    pthread_t th;
    pthread_create(&th, NULL, cancel_port_later, port);
    int fd;
    int64_t t0 = nt_now_ns();
    nt_status st = nt_port_accept(port, 0, &fd, NULL);
    cr_assert_eq(st, NT_ERR_CANCELLED, "deadline 0 gave %s after %.0f ms", nt_status_name(st), elapsed_ms(t0));
    pthread_join(th, NULL);
    nt_port_close(port);
    cr_assert_neq(access(path, F_OK), 0, "the port's socket file is left behind");
}

/* ---- the diagnostic port answers later runtimes ---- */

typedef struct serving {
    nt_port *port;
    atomic_bool stop;
} serving;

static void *serve_port(void *arg)
{
    serving *sv = arg;
    while (!atomic_load(&sv->stop))
        nt_port_serve(sv->port, nt_deadline_after_ms(50));
    return NULL;
}

/* A runtime's side: connect and advertise (cookie all `id`, pid 4242). */
static int runtime_connects(const char *path, uint8_t id)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0, "connect: %s", strerror(errno));
    uint8_t adv[34] = "ADVR_V1";
    memset(adv + 8, id, 16);
    adv[24] = 0x92; /* pid 4242, little-endian */
    adv[25] = 0x10;
    cr_assert_eq(send(fd, adv, sizeof adv, MSG_NOSIGNAL), (ssize_t)sizeof adv);
    return fd;
}

/* What arrives on fd within ms: 'R' ResumeRuntime (answered OK), 'C' closed, '-' nothing, '?' anything else. */
static char runtime_hears(int fd, int ms)
{
    struct pollfd pf = { .fd = fd, .events = POLLIN };
    if (poll(&pf, 1, ms) <= 0)
        return '-';
    uint8_t h[20];
    ssize_t n = recv(fd, h, sizeof h, MSG_WAITALL);
    if (n == 0)
        return 'C';
    if (n != 20 || memcmp(h, "DOTNET_IPC_V1", 14) != 0 || h[16] != IPC_SET_PROCESS || h[17] != IPC_PROCESS_RESUME)
        return '?';
    uint8_t ok[24] = "DOTNET_IPC_V1";
    ok[14] = 24;
    ok[16] = IPC_SET_SERVER;
    ok[17] = IPC_SERVER_OK;
    cr_assert_eq(send(fd, ok, sizeof ok, MSG_NOSIGNAL), (ssize_t)sizeof ok);
    return 'R';
}

/* Every process a launched program starts inherits the port: a runtime it
 * has not seen is resumed (else a suspended child waits forever), a resumed
 * one has its next connection held (else it reconnects in a loop), and one
 * that goes away is let go. */
Test(session_peer, the_port_resumes_later_runtimes_and_holds_their_next_connection)
{
    char path[108];
    snprintf(path, sizeof path, "/tmp/nt-serve-%d.sock", (int)getpid());
    unlink(path);
    serving sv = { .port = NULL };
    atomic_init(&sv.stop, false);
    cr_assert_eq(nt_port_open(path, &sv.port, NULL), NT_OK);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, serve_port, &sv), 0);

    int a1 = runtime_connects(path, 0xA1);
    cr_assert_eq(runtime_hears(a1, 2000), 'R', "a new runtime is not resumed");
    cr_assert_eq(runtime_hears(a1, 2000), 'C', "the resumed connection is not closed");
    close(a1);
    int a2 = runtime_connects(path, 0xA1);
    cr_assert_eq(runtime_hears(a2, 300), '-', "a resumed runtime's next connection is not held quietly");
    int b1 = runtime_connects(path, 0xB2);
    cr_assert_eq(runtime_hears(b1, 2000), 'R', "a second runtime is not resumed");
    close(b1);
    cr_assert_eq(runtime_hears(a2, 100), '-', "the held connection was dropped");
    close(a2); /* the runtime exits: let go, and a new instance with its cookie is resumed again */
    usleep(200 * 1000);
    int a3 = runtime_connects(path, 0xA1);
    cr_assert_eq(runtime_hears(a3, 2000), 'R', "a runtime whose held connection closed is not forgotten");
    close(a3);

    atomic_store(&sv.stop, true);
    pthread_join(th, NULL);
    nt_port_close(sv.port);
    cr_assert_neq(access(path, F_OK), 0, "the port's socket file is left");
}

/* ---- nettrace top -p: the live view ---- */

#include "nettrace_writer.h"

static pid_t run_nettrace(char *const args[], const char *errpath)
{
    const char *top = getenv("top_builddir");
    char nt[1024];
    snprintf(nt, sizeof nt, "%s/nettrace", top ? top : ".");
    pid_t child = fork();
    if (child == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(fd, 2);
        dup2(devnull, 1);
        execv(nt, args);
        _exit(127);
    }
    return child;
}

static void read_small(const char *path, char *buf, size_t size)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        buf[fread(buf, 1, size - 1, f)] = 0;
        fclose(f);
    }
}

/* --duration is the whole run: a runtime that never answers the start does
 * not add the 10 s connect deadline to it. */
Test(session_peer, live_top_duration_includes_the_connect)
{
    peer *p = peer_shared();
    cr_assert_not_null(p);
    pid_t target = peer_spawn_runtime(p, PEER_SILENT, 0);
    cr_assert_gt(target, 0);
    char pidarg[16], errpath[] = "/tmp/nt-topdur-XXXXXX";
    cr_assert_geq(mkstemp(errpath), 0);
    snprintf(pidarg, sizeof pidarg, "%d", (int)target);
    char *args[] = { "nettrace", "top", "-p", pidarg, "--duration", "1s", "--no-rundown-first", NULL };
    int64_t t0 = nt_now_ns();
    pid_t top = run_nettrace(args, errpath);
    int status;
    cr_assert_eq(waitpid(top, &status, 0), top);
    double s = elapsed_ms(t0) / 1000;
    char err[1024];
    read_small(errpath, err, sizeof err);
    cr_assert_lt(s, 4.0, "top -p --duration 1s took %.1f s: %s", s, err);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 32, "exit %d, want 32 (timeout): %s",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1, err);
    peer_kill_runtime(p, target);
    peer_shared_free(p);
    unlink(errpath);
}

/* A V6 writer into mb. */
static nt_writer *v6_writer(nt_membuf *mb)
{
    nt_writer_options opt;
    nt_writer_options_default(&opt);
    opt.format = 6;
    nt_writer *w = nt_writer_new(&opt, nt_membuf_write, mb, NULL);
    cr_assert_not_null(w);
    return w;
}

/* Finish w's stream into mb, then copy it to out without its end block: a stream that has not ended. */
static size_t finish_unended(nt_writer *w, nt_membuf *mb, uint8_t *out, size_t cap)
{
    cr_assert_eq(nt_writer_finish(w), NT_OK);
    nt_writer_free(w);
    cr_assert(mb->len > 4 && mb->len - 4 <= cap);
    uint32_t end;
    memcpy(&end, mb->data + mb->len - 4, 4);
    cr_assert_eq(end, 0u, "the stream does not end with an empty end-of-stream block");
    memcpy(out, mb->data, mb->len - 4);
    size_t n = mb->len - 4;
    nt_membuf_free(mb);
    return n;
}

/* A V6 stream's header and Trace block (a finished empty stream without its end block). */
static size_t stream_prefix(uint8_t *out, size_t cap)
{
    nt_membuf mb = { 0 };
    nt_writer *w = v6_writer(&mb);
    return finish_unended(w, &mb, out, cap);
}

/* The live view holds one interval, so it runs on past the 1 GiB a recording
 * session stops at (the runtime streams 1 GiB + 64 MiB of blocks a reader
 * skips here, then goes quiet); Ctrl-C then ends it cleanly. */
Test(session_peer, live_top_runs_past_a_gibibyte_of_stream, .timeout = 120)
{
    alarm(120);
    peer *p = peer_shared();
    cr_assert_not_null(p);
    p->prefix_len = stream_prefix(p->prefix, sizeof p->prefix);
    p->flood_bytes = (1ull << 30) + (64ull << 20);
    pid_t target = peer_spawn_runtime(p, PEER_FLOOD, 0);
    cr_assert_gt(target, 0);
    char pidarg[16], errpath[] = "/tmp/nt-topcap-XXXXXX";
    cr_assert_geq(mkstemp(errpath), 0);
    snprintf(pidarg, sizeof pidarg, "%d", (int)target);
    char *args[] = { "nettrace", "top", "-p", pidarg, "-i", "1s", "--no-rundown-first", NULL };
    pid_t top = run_nettrace(args, errpath);
    int status = 0;
    bool ended = false;
    for (int i = 0; i < 1100 && atomic_load(&p->streamed) < p->flood_bytes && !ended; i++) {
        usleep(100 * 1000);
        ended = waitpid(top, &status, WNOHANG) == top;
    }
    char err[1024];
    read_small(errpath, err, sizeof err);
    cr_assert_not(ended, "top -p ended after %llu bytes: exit %d: %s", atomic_load(&p->streamed),
                  WIFEXITED(status) ? WEXITSTATUS(status) : -1, err);
    cr_assert_geq(atomic_load(&p->streamed), p->flood_bytes, "the stream did not get past 1 GiB in time");
    usleep(1500 * 1000); /* the rest is read and a refresh drawn */
    cr_assert_eq(waitpid(top, &status, WNOHANG), 0, "top -p ended once past 1 GiB: %s", err);
    kill(top, SIGINT);
    cr_assert_eq(waitpid(top, &status, 0), top);
    read_small(errpath, err, sizeof err);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "exit %d after Ctrl-C: %s",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1, err);
    peer_kill_runtime(p, target);
    peer_shared_free(p);
    unlink(errpath);
}

/* A V6 stream's header and a block of samples that lost events on two threads (7: numbers 2-4, 8: 2-9),
 * without the end block: the live view's one window of it. */
static size_t lossy_prefix(uint8_t *out, size_t cap)
{
    nt_membuf mb = { 0 };
    nt_writer *w = v6_writer(&mb);
    const struct { uint64_t tid; uint32_t seq; } ev[] = { { 7, 1 }, { 8, 1 }, { 7, 5 }, { 8, 10 } };
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) {
        uint32_t stack;
        cr_assert_eq(nt_writer_stack(w, (const uint64_t[]){ 0x1010 }, 1, &stack), NT_OK);
        nt_writer_event hdr = { .thread_id = ev[i].tid, .sequence_number = ev[i].seq, .timestamp = 1000 + (int64_t)i,
                                .stack_id = stack, .is_sorted = true };
        cr_assert_eq(nt_writer_sample(w, &hdr, NT_SAMPLE_MANAGED), NT_OK, "%s", nt_writer_message(w));
    }
    return finish_unended(w, &mb, out, cap);
}

/* A window that lost events says so on stderr, once, with the threads that lost most. */
Test(session_peer, live_top_reports_the_windows_loss)
{
    peer *p = peer_shared();
    cr_assert_not_null(p);
    p->prefix_len = lossy_prefix(p->prefix, sizeof p->prefix);
    p->flood_bytes = 0; /* the prefix, then silence */
    pid_t target = peer_spawn_runtime(p, PEER_FLOOD, 0);
    cr_assert_gt(target, 0);
    char pidarg[16], errpath[] = "/tmp/nt-toploss-XXXXXX";
    cr_assert_geq(mkstemp(errpath), 0);
    snprintf(pidarg, sizeof pidarg, "%d", (int)target);
    char *args[] = { "nettrace", "top", "-p", pidarg, "-i", "1s", "--duration", "2.5s", "--no-rundown-first", NULL };
    pid_t top = run_nettrace(args, errpath);
    int status;
    cr_assert_eq(waitpid(top, &status, 0), top);
    char err[2048];
    read_small(errpath, err, sizeof err);
    const char *want = "nettrace top: this window lost 11 events in 2 gaps on 2 threads (thread 8: 8, thread 7: 3)\n";
    const char *at = strstr(err, want);
    cr_assert_not_null(at, "no loss line in: %s", err);
    cr_assert_null(strstr(at + strlen(want), "lost"), "the loss is reported for its window only: %s", err);
    peer_kill_runtime(p, target);
    peer_shared_free(p);
    unlink(errpath);
}
