/* Diagnostics IPC plumbing: message framing and payload encoding, and socket
 * I/O that honours an absolute deadline and a cancellation descriptor.
 * The wire format is described in docs/diagnostics-ipc.md (shared docs). */
#ifndef SS_IPC_H
#define SS_IPC_H

#include "nettrace_session.h"
#include "common/byte_buf.h"

#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#define IPC_HEADER_SIZE 20
#define IPC_MAX_MESSAGE 65535u

#define IPC_SET_EVENTPIPE 0x02
#define IPC_SET_PROCESS 0x04
#define IPC_SET_SERVER 0xFF
#define IPC_EP_STOP 0x01
#define IPC_EP_COLLECT2 0x03
#define IPC_EP_COLLECT3 0x04
#define IPC_EP_COLLECT4 0x05
#define IPC_EP_COLLECT6 0x07 /* CollectTracing5's streaming payload + u32 buffering mode (.NET 11+) */
#define IPC_SESSION_STREAMING 0u /* CollectTracing5/6 session_type: events in the IPC stream */
#define IPC_BUFFER_DROP 0u       /* CollectTracing6 sessionBufferMode */
#define IPC_BUFFER_BLOCK 1u
#define IPC_PROCESS_INFO 0x00
#define IPC_PROCESS_RESUME 0x01
#define IPC_PROCESS_INFO2 0x04
#define IPC_SERVER_OK 0x00
#define IPC_SERVER_ERROR 0xFF

typedef struct ipc_header {
    uint16_t size;          /* whole message, header included */
    uint8_t command_set;
    uint8_t command_id;
} ipc_header;

/* A request: the library's byte writer over storage of the largest size a
 * header can state, so `out.failed` sticks once a request outgrows it.  The
 * message is out.d[0 .. out.n). */
typedef struct ipc_buf {
    cm_buf out;
    uint8_t storage[IPC_MAX_MESSAGE];
} ipc_buf;

/* Start a request (header with its size still 0); the payload is then
 * appended with the cm_buf_* calls on b->out. */
void ipc_begin(ipc_buf *b, uint8_t command_set, uint8_t command_id);
/* UTF-8 in, length-prefixed NUL-terminated UTF-16LE out; NULL or "" is u32 0. */
void ipc_put_string(ipc_buf *b, const char *s);
/* Patch the header's size field; false when the message is too large or malformed UTF-8 was seen. */
bool ipc_end(ipc_buf *b);

/* Which CollectTracing command a configuration needs (IPC_EP_COLLECT2..4, or
 * IPC_EP_COLLECT6 for NT_BUFFERING_BLOCK); a runtime that does not know 6 is
 * sent what the same configuration with the default buffering needs. */
uint8_t ipc_collect_command(const nt_session_config *cfg);
/* Encode the start request for cfg (defaults already applied by the caller). */
bool ipc_encode_collect(ipc_buf *b, const nt_session_config *cfg);
void ipc_encode_stop(ipc_buf *b, uint64_t session_id);

/* Validate a received 20-byte header. */
bool ipc_parse_header(const uint8_t *p, ipc_header *h);

/* Socket I/O.  Every call returns NT_OK, NT_ERR_TIMEOUT (deadline passed),
 * NT_ERR_CANCELLED (cancel_fd became readable; -1 = none), NT_ERR_NO_ENDPOINT
 * (connect: nothing listens), NT_ERR_IO (errno kept), or for reads
 * NT_ERR_TRUNCATED when the peer closed first. */
nt_status ipc_connect(const char *path, int64_t deadline_ns, int cancel_fd, int *out_fd);
/* Connect to ep->path and check who serves it (ipc_check_peer); on a
 * mismatch the connection is closed and why says who it was. */
nt_status ipc_connect_endpoint(const nt_endpoint *ep, int64_t deadline_ns, int cancel_fd, int *out_fd, char *why,
                               size_t why_size);
/* Whether the process at the other end of fd (its kernel credentials, as
 * this PID namespace sees it) is the endpoint's: ep->pid itself, or for a
 * bare socket path (pid 0) a process of our own user or root.  Anyone can
 * bind a socket under a name a runtime would use; only the kernel says who
 * listens.  NT_OK, or NT_ERR_NO_ENDPOINT with why filled. */
nt_status ipc_check_peer(int fd, const nt_endpoint *ep, char *why, size_t why_size);
nt_status ipc_send_all(int fd, const void *data, size_t len, int64_t deadline_ns, int cancel_fd);
nt_status ipc_recv_exact(int fd, void *data, size_t len, int64_t deadline_ns, int cancel_fd);
/* Wait for fd to be ready for `events` (POLLIN/POLLOUT). */
nt_status ipc_wait(int fd, short events, int64_t deadline_ns, int cancel_fd);
/* One command on a fresh connection: send req, read the whole reply into
 * payload (cap bytes at most).  NT_OK for an OK reply, NT_ERR_REFUSED with
 * *hresult for an error reply, NT_ERR_PROTOCOL for anything malformed, or
 * the I/O status. */
nt_status ipc_exchange(int fd, const ipc_buf *req, uint8_t *payload, size_t cap, size_t *len, uint32_t *hresult,
                       int64_t deadline_ns, int cancel_fd);
/* Raise an eventfd (a wake-up or a cancellation); async-signal-safe.  A full
 * counter is already raised, so a failed write needs no handling. */
static inline void ipc_raise(int eventfd)
{
    uint64_t one = 1;
    ssize_t r = write(eventfd, &one, sizeof one);
    (void)r;
}

/* A caller's deadline as the session code uses it: 0 (no deadline, the
 * library's convention) becomes NT_DEADLINE_NONE. */
static inline int64_t ipc_deadline(int64_t deadline_ns) { return deadline_ns == 0 ? NT_DEADLINE_NONE : deadline_ns; }

/* Milliseconds until the deadline for poll(): -1 for none, rounded up. */
int ipc_poll_timeout(int64_t deadline_ns);

#endif
