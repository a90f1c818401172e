/* Session tests that need no .NET runtime: request encoding, endpoint
 * discovery (missing processes, stale and long-path sockets), and a fake
 * peer that refuses, never answers, streams or hangs up. */
#include <criterion/criterion.h>

#include "nettrace_session.h"
#include "session/ipc.h"
#include "session_peer.h"

#include <errno.h>
#include <fcntl.h>
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
    cr_assert_eq(b.len, 209);
    static const uint8_t head[] = { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
                                    0xD1, 0x00, 0x02, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
                                    0x01, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00 };
    cr_assert_arr_eq(b.data, head, sizeof head);
    /* first provider: keywords 0, level 5, 36 UTF-16 units, 'M', ..., then empty arguments */
    const uint8_t *p = b.data + sizeof head;
    static const uint8_t p1[] = { 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0x24, 0, 0, 0, 'M', 0 };
    cr_assert_arr_eq(p, p1, sizeof p1);
    p += 16 + 72;
    static const uint8_t tail1[] = { 0, 0, 0, 0, 0x18, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0x20, 0, 0, 0 };
    static const uint8_t zeros[4] = { 0, 0, 0, 0 };
    cr_assert_arr_eq(p - 2, zeros, 2, "terminator of the first name");
    cr_assert_arr_eq(p, tail1, sizeof tail1);
    cr_assert_arr_eq(b.data + 205, zeros, 4);
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
    const uint8_t *p = b.data + 20 + 9 + 4;
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

Test(session_encoding, strings_utf16_and_limits)
{
    static ipc_buf b;
    ipc_begin(&b, 2, 3);
    ipc_put_string(&b, "a\xC3\xA9\xF0\x9F\x98\x80"); /* a, e-acute, U+1F600 (a surrogate pair) */
    cr_assert(ipc_end(&b));
    static const uint8_t want[] = { 5, 0, 0, 0, 'a', 0, 0xE9, 0, 0x3D, 0xD8, 0x00, 0xDE, 0, 0 };
    cr_assert_eq(b.len, 20 + sizeof want);
    cr_assert_arr_eq(b.data + 20, want, sizeof want);
    ipc_begin(&b, 2, 3);
    ipc_put_string(&b, "bad\xC3");
    cr_assert_not(ipc_end(&b), "malformed UTF-8 is refused");
    ipc_begin(&b, 2, 3);
    for (int i = 0; i < 40000; i++)
        ipc_put_u8(&b, 0);
    ipc_put_u32(&b, 1);
    for (int i = 0; i < 30000; i++)
        ipc_put_u8(&b, 0);
    cr_assert_not(ipc_end(&b), "a request beyond 65,535 bytes is refused");
}

Test(session_encoding, stop_message)
{
    static ipc_buf b;
    ipc_encode_stop(&b, 0x00007F12345678A0ull);
    static const uint8_t want[] = { 'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V', '1', 0,
                                    0x1C, 0x00, 0x02, 0x01, 0x00, 0x00, 0xA0, 0x78, 0x56, 0x34,
                                    0x12, 0x7F, 0x00, 0x00 };
    cr_assert_eq(b.len, sizeof want);
    cr_assert_arr_eq(b.data, want, sizeof want);
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
 * socket, for a peer to serve. */
static pid_t fake_dotnet_process(char *dir, char *path, size_t size)
{
    cr_assert_not_null(mkdtemp(dir));
    pid_t target = spawn_with_tmpdir(dir);
    snprintf(path, size, "%s/dotnet-diagnostic-%d-%" PRIu64 "-socket", dir, (int)target, start_key_of(target));
    return target;
}

Test(session_peer, collect_cancels_on_the_first_ctrl_c_while_awaiting_the_reply)
{
    char dir[] = "/tmp/nt-ctrlc-XXXXXX", path[512];
    pid_t target = fake_dotnet_process(dir, path, sizeof path);
    peer p;
    cr_assert(peer_start(&p, PEER_SILENT, path)); /* reads the request, never answers */
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
    while (atomic_load(&p.request_len) == 0) /* the request arrived: it now awaits the reply */
        usleep(10 * 1000);
    usleep(100 * 1000);
    kill(child, SIGINT);
    /* One Ctrl-C must end it well before the 60 s connect timeout (the suite's alarm is 15 s). */
    int status;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 33, "exit %d, want 33 (cancelled)",
              WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
    peer_stop(&p);
    kill(target, SIGKILL);
    waitpid(target, NULL, 0);
    unlink(out);
    unlink(path);
    rmdir(dir);
}

/* ---- ProcessInfo: a runtime that refuses still leaves the command line from /proc ---- */

Test(session_peer, process_info_falls_back_to_proc_when_refused)
{
    char dir[] = "/tmp/nt-pinfo-XXXXXX", path[512];
    pid_t target = fake_dotnet_process(dir, path, sizeof path);
    peer p;
    p.hresult = NT_HR_NOT_SUPPORTED;
    cr_assert(peer_start(&p, PEER_REFUSE, path));
    nt_endpoint ep;
    cr_assert_eq(nt_endpoint_find(target, &ep), NT_OK);
    nt_process_info pi;
    nt_status st = nt_process_info_get(&ep, &pi, nt_deadline_after_ms(3000));
    cr_assert_eq(st, NT_ERR_REFUSED, "%s", nt_status_name(st));
    cr_assert(pi.from_proc);
    cr_assert_str_eq(pi.command_line, "sleep 30");
    cr_assert_str_eq(pi.runtime_version, "");
    peer_stop(&p);
    kill(target, SIGKILL);
    waitpid(target, NULL, 0);
    unlink(path);
    rmdir(dir);
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
