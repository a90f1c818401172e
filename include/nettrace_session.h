/*
 * libnettrace — attach to a running .NET process over its diagnostics IPC and
 * stream an EventPipe session's NetTrace bytes (to a file, or straight into a
 * parser; nt_trace_window in nettrace_trace.h turns such a stream into one
 * trace per window).
 *
 * Threads: a session either runs its own reader thread (the default) or is
 * driven by the caller's event loop (nt_session_fd + nt_session_pump).  Every
 * blocking call takes an absolute CLOCK_MONOTONIC deadline in nanoseconds
 * (nt_deadline_after_ms) and returns NT_ERR_TIMEOUT when it passes; 0 means
 * no deadline, as everywhere in the library (NT_DEADLINE_NONE says the same);
 * nt_session_cancel, from any thread, ends every blocking call on the session
 * with NT_ERR_CANCELLED.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef NETTRACE_SESSION_H
#define NETTRACE_SESSION_H

#include "nettrace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Deadlines                                                                 */
/* ------------------------------------------------------------------------ */

/** A deadline that never passes.  A deadline of 0 means the same (the
 *  library's one convention: a zeroed field or argument selects the default,
 *  and the default is no deadline). */
#define NT_DEADLINE_NONE INT64_MAX

/** Now, in CLOCK_MONOTONIC nanoseconds. */
NT_API int64_t nt_now_ns(void);
/** The deadline ms milliseconds from now (saturating; ms < 0 gives NT_DEADLINE_NONE). */
NT_API int64_t nt_deadline_after_ms(int64_t ms);

/* ------------------------------------------------------------------------ */
/* Endpoint discovery                                                        */
/* ------------------------------------------------------------------------ */

/** Why a process has no endpoint (the status is NT_ERR_NO_ENDPOINT for all). */
typedef enum nt_endpoint_reason {
    NT_ENDPOINT_FOUND = 0,
    NT_ENDPOINT_NO_PROCESS,   /**< no such pid */
    NT_ENDPOINT_NO_SOCKET,    /**< no socket: not .NET, endpoint not created yet, or diagnostics disabled */
    NT_ENDPOINT_STALE,        /**< only sockets of an earlier process with the same pid */
    NT_ENDPOINT_NO_ACCESS,    /**< the process's environment or root is not readable (other user) */
    NT_ENDPOINT_FOREIGN       /**< only sockets owned by another user than the process's: planted, not its runtime's */
} nt_endpoint_reason;

/** Where a process's diagnostics socket is. */
typedef struct nt_endpoint {
    int32_t pid;             /**< pid as the caller sees it */
    int32_t ns_pid;          /**< pid inside the process's own PID namespace (== pid outside containers) */
    uint64_t start_key;      /**< the runtime's disambiguation key (start time in clock ticks since boot) */
    nt_endpoint_reason reason;
    /** Socket path, usable with connect() even beyond the 108-byte sun_path limit
     *  (the library connects through an O_PATH descriptor then). */
    char path[1024];
} nt_endpoint;

/**
 * Find pid's diagnostics socket: in the target's own TMPDIR (read from
 * /proc/<pid>/environ, else /tmp), under /proc/<pid>/root with the innermost
 * NSpid for a process in another PID or mount namespace; sockets whose start
 * key is not the live process's are stale and skipped, and so are sockets
 * owned by a user who is not the process's (NT_ENDPOINT_FOREIGN when only
 * such are left: another user planted them).  The connection itself is
 * checked again by every call that uses the endpoint: the socket must be
 * served by the process ep->pid (SO_PEERCRED), else NT_ERR_NO_ENDPOINT.
 * Returns NT_OK, NT_ERR_NO_ENDPOINT (ep->reason says why; retry later if the
 * runtime may still be starting), or NT_ERR_INVALID_ARG.
 */
NT_API nt_status nt_endpoint_find(int32_t pid, nt_endpoint *ep);

/** Short name of a reason ("no_process", "no_socket", "foreign", ...). */
NT_API const char *nt_endpoint_reason_name(nt_endpoint_reason r);

/** A .NET process that nt_endpoint_list found. */
typedef struct nt_process_entry {
    int32_t pid;
    char command[64];         /**< /proc/<pid>/comm */
    nt_endpoint endpoint;
} nt_process_entry;

/**
 * List the processes with a live diagnostics endpoint, ascending by pid.
 * *out is allocated through alloc (free it with nt_process_list_free).
 */
NT_API nt_status nt_process_list(nt_process_entry **out, size_t *count, const nt_allocator *alloc);
NT_API void nt_process_list_free(nt_process_entry *list, const nt_allocator *alloc);

/** What a runtime says about itself: the diagnostics ProcessInfo2 command
 *  (.NET 7+), else ProcessInfo (.NET 5+).  Strings are UTF-8, "" when unknown. */
typedef struct nt_process_info {
    uint64_t pid;                  /**< pid inside the process's namespace (0 when the runtime did not answer) */
    uint8_t runtime_cookie[16];    /**< the runtime instance's GUID */
    char command_line[4096];
    char os[32];                   /**< "Linux", "macOS", "Windows", "Unknown" */
    char arch[32];                 /**< "x64", "arm64", ... */
    char entrypoint_assembly[256]; /**< ProcessInfo2 only */
    char runtime_version[64];      /**< ProcessInfo2 only: the CLR product version, e.g. "10.0.12" */
    bool from_proc;                /**< the runtime did not answer: command_line is /proc/<pid>/cmdline */
} nt_process_info;

/**
 * Ask the runtime at ep for its process information.  Returns NT_OK when it
 * answered; otherwise its status (NT_ERR_REFUSED, NT_ERR_TIMEOUT,
 * NT_ERR_NO_ENDPOINT, ...) with command_line read from /proc/<pid>/cmdline
 * when that is readable (from_proc set).  The socket must be served by the
 * process ep->pid itself (its kernel credentials, SO_PEERCRED), else
 * NT_ERR_NO_ENDPOINT: another process bound a socket under its name.
 */
NT_API nt_status nt_process_info_get(const nt_endpoint *ep, nt_process_info *out, int64_t deadline_ns);

/**
 * nt_process_info_get for n endpoints at once, from the calling thread (no
 * thread is started): every runtime is asked in parallel over non-blocking
 * sockets and one poll, so runtimes that never answer cost the deadline once,
 * not once each.  deadline_ns bounds the whole call.  out[i] and status[i]
 * are what nt_process_info_get would give for eps[i].
 */
NT_API void nt_process_info_get_many(const nt_endpoint *eps, size_t n, nt_process_info *out, nt_status *status,
                                     int64_t deadline_ns);

/* ------------------------------------------------------------------------ */
/* Runtime errors                                                            */
/* ------------------------------------------------------------------------ */

#define NT_HR_BAD_ENCODING 0x80131384u
#define NT_HR_UNKNOWN_COMMAND 0x80131385u
#define NT_HR_UNKNOWN_MAGIC 0x80131386u
#define NT_HR_NOT_SUPPORTED 0x80131515u
#define NT_HR_FAIL 0x80004005u
#define NT_HR_NOT_YET_AVAILABLE 0x8013135Bu
#define NT_HR_RUNTIME_UNINITIALIZED 0x80131371u
#define NT_HR_INVALID_ARG 0x80070057u

/** Name of a diagnostics HRESULT ("BAD_ENCODING", ...), or NULL when unknown. */
NT_API const char *nt_hresult_name(uint32_t hresult);

/* ------------------------------------------------------------------------ */
/* Sessions                                                                  */
/* ------------------------------------------------------------------------ */

#define NT_KEYWORD_LOADER 0x8ull
#define NT_KEYWORD_JIT 0x10ull
#define NT_DEFAULT_BUFFER_MB 256u
#define NT_DEFAULT_MAX_STREAM_BYTES (1ull << 30)
#define NT_DEFAULT_RUNDOWN_KEYWORD 0x80020139ull

/** One provider to enable. */
typedef struct nt_provider {
    uint32_t struct_size;    /**< 0, or sizeof(nt_provider); the library steps through an array of them by
                                  the first element's (see "How structs grow" in nettrace.h) */
    const char *name;
    uint64_t keywords;
    uint32_t level;          /**< 0 selects 5 (verbose), which method-load events need; NT_LEVEL_LOG_ALWAYS
                                  sends EventPipe's level 0; sent as given otherwise */
    const char *arguments;   /**< "key=value;..." filter data, or NULL */
} nt_provider;

/** nt_provider.level for EventPipe's level 0 (LogAlways: only the events written at every level), which
 *  a level of 0 cannot say since 0 selects the default. */
#define NT_LEVEL_LOG_ALWAYS 0x80000000u

/** The level a session sends for p: 5 for 0, 0 for NT_LEVEL_LOG_ALWAYS, else p->level (0 for NULL). */
NT_API uint32_t nt_provider_level(const nt_provider *p);

/*
 * Where the stream's bytes go: an nt_sink_fn (nettrace.h), called with
 * consecutive chunks, in order, from the thread that drives the session.
 * Return 0 to continue; anything else ends the session with NT_ERR_STOPPED
 * (its connection is closed).  It is never called again once nt_session_stop
 * (or _free) has returned.
 */

/** Sink that writes to a file descriptor: user points to an int holding it. */
NT_API int nt_sink_fd(void *user, const void *data, size_t len);
/** Sink that feeds an nt_parser (user); stops the session when the parser fails. */
NT_API int nt_sink_parser(void *user, const void *data, size_t len);

/**
 * What the runtime does when the session's buffer is full (nt_session_config.buffering).
 * Block is CollectTracing6, which only .NET 11 and later know: a runtime that answers it with
 * UNKNOWN_COMMAND gets the command the configuration needs otherwise, and nt_session_buffering
 * says which mode the session got.
 */
typedef enum nt_buffering {
    NT_BUFFERING_DEFAULT = 0, /**< the runtime's default: drop events when the buffer is full (lossy) */
    NT_BUFFERING_DROP = 1,    /**< drop events when the buffer is full (lossy), said explicitly */
    NT_BUFFERING_BLOCK = 2    /**< the runtime's writers wait for the reader instead (non-lossy; .NET 11+):
                                   nothing is lost, and a slow reader slows the process */
} nt_buffering;

/** A session's configuration.  Zero fields select the defaults. */
typedef struct nt_session_config {
    uint32_t struct_size; /**< 0, or sizeof(nt_session_config) (see "How structs grow" in nettrace.h) */
    /** Providers; none selects the sample profiler plus the runtime's loader
     *  and JIT keywords, both at verbose level. */
    const nt_provider *providers;
    size_t provider_count;
    uint32_t buffer_mb;          /**< runtime-side buffer; 0 selects 256 */
    bool no_rundown;             /**< skip the rundown at stop (methods JIT-compiled earlier stay unnamed) */
    uint64_t rundown_keyword;    /**< 0 selects 0x80020139; another value needs CollectTracing4 (.NET 9+) */
    bool no_stackwalk;           /**< capture no stacks (CollectTracing3); a sampling profiler needs them */
    uint64_t max_stream_bytes;   /**< cap on bytes passed to the sink; 0 selects 1 GiB */
    nt_sink_fn sink;             /**< required */
    void *sink_user;
    /** false: start runs a reader thread that feeds the sink.  true: the
     *  caller drives the stream with nt_session_fd + nt_session_pump. */
    bool caller_pumps;
    uint8_t reserved_[7];        /**< the first layout's tail padding: zero */
    uint32_t buffering;          /**< an nt_buffering; 0 (default) is lossy */
} nt_session_config;

typedef struct nt_session nt_session;

/** Create a session object (nothing is connected yet).  NULL when memory is short
 *  or cfg is invalid (no sink, a buffering beyond NT_BUFFERING_BLOCK). The configuration is copied. */
NT_API nt_session *nt_session_new(const nt_session_config *cfg, const nt_allocator *alloc);

/**
 * Find pid's endpoint and start the session: send CollectTracing2 (or 3/4 when
 * the configuration needs them, 6 for NT_BUFFERING_BLOCK, retried once with the
 * command it would send otherwise when the runtime does not know 6), wait for
 * the reply, then stream.  Returns
 * NT_OK, NT_ERR_NO_ENDPOINT, NT_ERR_REFUSED (nt_session_hresult has the
 * runtime's code), NT_ERR_TIMEOUT, NT_ERR_CANCELLED, NT_ERR_PROTOCOL, NT_ERR_IO,
 * NT_ERR_STATE (already started).
 */
NT_API nt_status nt_session_start(nt_session *s, int32_t pid, int64_t deadline_ns);
/** The same for a known endpoint (or any socket path in ep->path). */
NT_API nt_status nt_session_start_endpoint(nt_session *s, const nt_endpoint *ep, int64_t deadline_ns);

/**
 * Start on a connection a runtime opened to a diagnostic port (nt_port_accept):
 * the session takes fd (and closes it on failure); stop_ep is the runtime's
 * own listen endpoint, where StopTracing goes.  Returns as nt_session_start,
 * except that a runtime that does not know CollectTracing6 has closed the
 * connection it refused on: NT_ERR_REFUSED with NT_HR_UNKNOWN_COMMAND, and the
 * caller starts a new session with NT_BUFFERING_DEFAULT on the runtime's next
 * connection.
 */
NT_API nt_status nt_session_start_connected(nt_session *s, int fd, const nt_endpoint *stop_ep, int64_t deadline_ns);

/**
 * The buffering the runtime accepted for a started session: NT_BUFFERING_BLOCK when it took
 * CollectTracing6, else NT_BUFFERING_DROP (asked for, or the fallback of a runtime older than
 * .NET 11).  NT_BUFFERING_DEFAULT before a successful start, and for NULL.
 */
NT_API nt_buffering nt_session_buffering(const nt_session *s);

/**
 * Stop: send StopTracing on a second connection and wait until the stream
 * ends (rundown included).  Safe to call repeatedly and from several threads;
 * the stop runs once and each call waits under its own deadline.  When a
 * caller's deadline passes (or the session is cancelled) the session is
 * abandoned: its connections are closed and the stream is truncated.  When it
 * returns, the sink will not be called again.  Returns the session's final
 * status: NT_OK (clean end), NT_ERR_TRUNCATED (the stream ended without its
 * end marker), NT_ERR_STREAM_CAP, NT_ERR_STOPPED (the sink stopped it),
 * NT_ERR_IO, or this call's NT_ERR_TIMEOUT / NT_ERR_CANCELLED.
 */
NT_API nt_status nt_session_stop(nt_session *s, int64_t deadline_ns);

/**
 * Wait until the stream ends by itself (target exit, stream cap, sink stop,
 * another thread's stop) or the deadline passes (NT_ERR_TIMEOUT, the session
 * keeps running).  Returns the final status like nt_session_stop.
 */
NT_API nt_status nt_session_wait(nt_session *s, int64_t deadline_ns);

/** End every blocking call on s with NT_ERR_CANCELLED and abandon the session
 *  (a running stream is closed without rundown).  Async-signal-safe: it only
 *  writes one eventfd, so a SIGINT handler may call it. */
NT_API void nt_session_cancel(nt_session *s);

/** For caller_pumps sessions: a descriptor that polls readable when
 *  nt_session_pump has work (it covers both connections and the wake-up fd). */
NT_API int nt_session_fd(const nt_session *s);
/**
 * Non-blocking: read what the connections have, pass it to the sink, advance a
 * requested stop.  *ended is set once the stream is over; the return value is
 * then the final status (as nt_session_stop), otherwise NT_OK.
 */
NT_API nt_status nt_session_pump(nt_session *s, bool *ended);
/** Non-blocking stop request: send StopTracing (the pump or reader thread finishes it). */
NT_API nt_status nt_session_request_stop(nt_session *s);

/** The runtime's HRESULT after NT_ERR_REFUSED, else 0. */
NT_API uint32_t nt_session_hresult(const nt_session *s);
/** The session id the runtime gave (0 before start). */
NT_API uint64_t nt_session_id(const nt_session *s);
/** Bytes passed to the sink so far. */
NT_API uint64_t nt_session_bytes(const nt_session *s);
/** A one-line description of the last failure ("" when none).  Read it once
 *  the call that failed has returned (the driver may rewrite it meanwhile). */
NT_API const char *nt_session_message(const nt_session *s);
/** Stop (with a short deadline if still running), join the reader, release everything. */
NT_API void nt_session_free(nt_session *s);

/* ------------------------------------------------------------------------ */
/* Diagnostic ports: profiling a program from its start                     */
/* ------------------------------------------------------------------------ */

/**
 * A diagnostic port: a Unix socket this process listens on, which a runtime
 * started with DOTNET_DiagnosticPorts=<path>,suspend connects to.  Such a
 * runtime runs no managed code until it is resumed, so a session started on
 * its first connection sees the program from its start:
 *   nt_port_open -> start the program -> nt_port_accept -> nt_session_start_connected
 *   -> nt_port_resume_runtime -> ... -> nt_session_stop (through the runtime's listen endpoint).
 * Each connection carries one command; the runtime reconnects for the next.
 */
typedef struct nt_port nt_port;

/** Listen on path (shorter than 108 bytes; it must not exist).  NT_ERR_IO with errno on failure. */
NT_API nt_status nt_port_open(const char *path, nt_port **out, const nt_allocator *alloc);
NT_API const char *nt_port_path(const nt_port *p);
/** Wait for a runtime's next connection and read its advertise: *fd_out is the
 *  connection (the caller owns it), *pid_out (may be NULL) the pid it announced
 *  (in its own PID namespace).  NT_ERR_TIMEOUT, NT_ERR_CANCELLED, NT_ERR_IO. */
NT_API nt_status nt_port_accept(nt_port *p, int64_t deadline_ns, int *fd_out, uint64_t *pid_out);
/** Accept the next connection and send ResumeRuntime on it (a no-op for a runtime not suspended). */
NT_API nt_status nt_port_resume_runtime(nt_port *p, int64_t deadline_ns);
/**
 * Keep answering the runtimes that connect, until deadline_ns: every process
 * the program starts inherits DOTNET_DiagnosticPorts, and a .NET one waits,
 * suspended, for its own ResumeRuntime.  A runtime not seen before gets
 * ResumeRuntime; one already resumed (nt_port_resume_runtime included) has its
 * next connection held open, so it does not reconnect in a loop; a held
 * connection its runtime closes is let go.  At most 64 runtimes are held at
 * once (beyond them a reconnect is resumed again, a no-op).  Returns
 * NT_ERR_TIMEOUT at the deadline (the usual end), NT_ERR_CANCELLED, NT_ERR_IO.
 */
NT_API nt_status nt_port_serve(nt_port *p, int64_t deadline_ns);
/** End the port's blocking calls with NT_ERR_CANCELLED.  Async-signal-safe. */
NT_API void nt_port_cancel(nt_port *p);
/** Close the socket (and the connections it holds) and remove its file. */
NT_API void nt_port_close(nt_port *p);

#ifdef __cplusplus
}
#endif

#endif /* NETTRACE_SESSION_H */
