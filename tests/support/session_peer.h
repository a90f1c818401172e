/* A fake diagnostics server for the session tests: a Unix socket served by a
 * thread that answers (or pointedly does not answer) like a runtime would. */
#ifndef TEST_SESSION_PEER_H
#define TEST_SESSION_PEER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum peer_mode {
    PEER_SILENT,        /* accept, read, never answer */
    PEER_REFUSE,        /* answer CollectTracing with an error HRESULT */
    PEER_STREAM,        /* answer OK, stream until StopTracing, reply, end the stream */
    PEER_STREAM_DEAF,   /* answer OK, stream, accept StopTracing but never reply or end */
    PEER_STREAM_CLOSE,  /* answer OK, stream a little, then close without the end marker */
    PEER_INFO,          /* answer ProcessInfo2 with `info` as runtime version, OS and arch */
    PEER_FLOOD          /* answer OK, send `prefix`, then unknown V6 blocks (skipped by readers) as fast as
                         * the reader takes them until flood_bytes, then stay silent */
} peer_mode;

typedef struct peer {
    peer_mode mode;
    uint32_t hresult;            /* PEER_REFUSE */
    char info[64];               /* PEER_INFO: the strings it answers with (ASCII) */
    uint8_t prefix[4096];        /* PEER_FLOOD: a stream's header and Trace block */
    size_t prefix_len;
    unsigned long long flood_bytes;
    char dir[256];
    char path[512];
    int listen_fd;
    int quit_pipe[2];
    pthread_t thread;
    atomic_int connections;
    atomic_int stops;            /* StopTracing requests received */
    atomic_ullong streamed;      /* stream bytes written */
    uint8_t request[65536];      /* the first request received */
    atomic_size_t request_len;
    uint8_t unknown_command;     /* an EventPipe command id answered with UNKNOWN_COMMAND (0: none), as a
                                  * runtime older than the command does */
    uint8_t commands[16];        /* the EventPipe command ids of the requests received, StopTracing aside */
    atomic_int command_count;
    uint64_t session_id;
} peer;

/* Start a peer on a fresh socket (in a fresh directory under /tmp, or at
 * `path` when not NULL).  false when the socket cannot be created. */
bool peer_start(peer *p, peer_mode mode, const char *path);
void peer_stop(peer *p);

/* A fake runtime in a process of its own: a forked child serves its own
 * diagnostics socket ($TMPDIR or /tmp, named for its pid and start key), so
 * the socket's peer credentials are the process's, as a real runtime's are.
 * p must come from peer_shared (memory shared with the child) so the
 * counters can be read here; info, prefix and flood_bytes are kept.  Returns the
 * child's pid, or -1. */
peer *peer_shared(void);
void peer_shared_free(peer *p);
pid_t peer_spawn_runtime(peer *p, peer_mode mode, uint32_t hresult);
/* Kill the fake runtime and remove its socket. */
void peer_kill_runtime(peer *p, pid_t pid);

#endif
