/* The session object, shared by the start/stop logic (session.c) and the
 * stream driver (session_stream.c). */
#ifndef SS_INTERNAL_H
#define SS_INTERNAL_H

#include "common/compiler.h"
#include "nettrace_session.h"
#include "common/alloc.h"
#include "session/ipc.h"

#include <pthread.h>
#include <stdatomic.h>

typedef enum session_state {
    SESSION_NEW = 0,
    SESSION_STARTING,
    SESSION_RUNNING,
    SESSION_ENDED
} session_state;

/* Progress of the StopTracing exchange on the second connection. */
typedef enum stop_phase {
    STOP_NONE = 0,   /* not begun */
    STOP_CONNECT,    /* requested: connect and send on the next step */
    STOP_SENDING,
    STOP_AWAIT_REPLY,
    STOP_DONE        /* reply read (or the connection failed): only the stream's end is awaited */
} stop_phase;

struct nt_session {
    cm_mem mem;
    nt_session_config cfg;     /* providers point into `strings` */
    nt_provider *providers;
    size_t providers_size;
    char *strings;
    size_t strings_size;
    nt_endpoint ep;

    pthread_mutex_t mu;
    pthread_cond_t cv;         /* CLOCK_MONOTONIC; signalled when `driving` or `state` change */
    session_state state;       /* under mu */
    bool driving;              /* under mu: a thread is inside the stream driver */
    bool thread_started;
    bool thread_joined;
    pthread_t thread;
    nt_status final;           /* under mu, valid once ENDED */

    atomic_bool abort;         /* abandon the session at the driver's next look */
    atomic_int abort_status;
    int wake_fd;               /* eventfd: stop requested / abort (drained by the driver) */
    int cancel_fd;             /* eventfd: cancelled (sticky, never drained) */
    int epoll_fd;              /* caller_pumps: conn + stop_conn + both eventfds */

    int conn;                  /* the stream connection */
    int stop_conn;             /* the StopTracing connection */
    bool stop_requested;       /* under mu */
    stop_phase stop;           /* driver-owned */
    uint8_t stop_msg[28];
    size_t stop_sent;
    uint8_t stop_reply[64];
    size_t stop_reply_len;
    int64_t stop_retry_ns;     /* connect refused for lack of backlog: retry at this time */

    uint32_t hresult;
    uint64_t session_id;
    nt_buffering buffering;    /* what the runtime accepted: set by a successful start */
    atomic_uint_fast64_t bytes;
    uint8_t last_byte;
    uint8_t *rbuf;
    size_t rbuf_size;
    char msg[256];
};

/* session_stream.c: one round of the driver.  Waits at most until deadline_ns
 * (now = non-blocking) for any descriptor, then handles what is ready.
 * Called by exactly one thread at a time (the `driving` flag). */
void session_step(nt_session *s, int64_t deadline_ns);
/* Close the connections and publish the final status (first call wins). */
void session_end(nt_session *s, nt_status status);
void session_set_message(nt_session *s, const char *fmt, ...) CC_PRINTF(2, 3);
void session_wake(nt_session *s);

#endif
