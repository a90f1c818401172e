"""Live collection from a running .NET process over its diagnostics IPC."""
import os
import time
from collections import namedtuple
from ctypes import byref, c_int, c_void_p, cast, pointer

from . import _lib, errors
from ._lib import lib

# One event provider: keywords and level (0 selects 5, verbose) as the
# runtime takes them; arguments "key=value;..." or None.
Provider = namedtuple("Provider", "name keywords level arguments", defaults=(0, 0, None))

PROVIDER_SAMPLE_PROFILER = "Microsoft-DotNETCore-SampleProfiler"
PROVIDER_RUNTIME = "Microsoft-Windows-DotNETRuntime"
KEYWORD_LOADER = 0x8
KEYWORD_JIT = 0x10


def _start_error(session, status):
    message = _lib.text(lib.nt_session_message(session))
    if status == errors.RefusedError.status:
        return errors.refused(lib.nt_session_hresult(session), message)
    return errors.from_status(status, message)


def collect(pid, duration, providers=None, output=None, buffer_mb=0, rundown=True, max_stream_bytes=0,
            start_timeout=10.0, stop_timeout=120.0):
    """Trace process pid for duration seconds and return its Trace.

    A zero or None argument selects the library's default: the sample
    profiler plus the runtime's loader and JIT events, a 256 MB runtime
    buffer, rundown on (methods compiled before the session are named), a
    1 GiB stream cap.  providers is a list of Provider (or (name, keywords,
    level) tuples).  With output (a path) the stream is also written there;
    otherwise it is parsed as it arrives and never held.  The collection ends
    early when the process exits.  Raises NoEndpointError (a
    FileNotFoundError) when pid has no diagnostics endpoint, RefusedError
    (with hresult) when the runtime refuses, and the stream's error -- with
    the trace read so far in its trace attribute -- when it ends badly.
    """
    from .parser import Parser
    cfg = _lib.nt_session_config()
    keep = []
    if providers:
        arr = (_lib.nt_provider * len(providers))()
        for i, p in enumerate(providers):
            p = Provider(*p)
            name = p.name.encode()
            args = p.arguments.encode() if p.arguments else None
            keep += [name, args]
            arr[i] = _lib.nt_provider(name, p.keywords, p.level, args)
        cfg.providers, cfg.provider_count = cast(arr, type(cfg.providers)), len(providers)
        keep.append(arr)
    cfg.buffer_mb = buffer_mb or 0
    cfg.no_rundown = not rundown
    cfg.max_stream_bytes = max_stream_bytes or 0
    parser = fd = None
    if output is not None:
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o644)
        fd_box = c_int(fd)
        keep.append(fd_box)
        cfg.sink, cfg.sink_user = _lib.SINK_FD, cast(pointer(fd_box), c_void_p)
    else:
        parser = Parser(keep_trace=True)
        cfg.sink, cfg.sink_user = _lib.SINK_PARSER, parser._p
    session = lib.nt_session_new(byref(cfg), None)
    if not session:
        raise errors.OutOfMemoryError("out of memory")
    try:
        status = lib.nt_session_start(session, pid, lib.nt_deadline_after_ms(int(start_timeout * 1000)))
        if status != 0:
            raise _start_error(session, status)
        # Wait in short slices so that Ctrl-C interrupts the collection.
        end = time.monotonic() + duration
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            status = lib.nt_session_wait(session, lib.nt_deadline_after_ms(int(min(left, 0.2) * 1000) + 1))
            if status != errors.DeadlineError.status:
                break  # the stream ended by itself
        status = lib.nt_session_stop(session, lib.nt_deadline_after_ms(int(stop_timeout * 1000)))
        stream_error = errors.from_status(status, _lib.text(lib.nt_session_message(session)))
        lib.nt_session_free(session)
        session = None
        if fd is not None:
            os.close(fd)
            fd = None
            from .trace import open as open_trace
            try:
                trace = open_trace(output)
            except errors.NettraceError as e:
                if stream_error is None:
                    raise
                stream_error.trace = e.trace
                raise stream_error
        else:
            try:
                trace = parser.close()
            except errors.NettraceError as e:
                if stream_error is None:
                    raise
                stream_error.trace = e.trace
                raise stream_error
        if stream_error is not None:
            stream_error.trace = trace
            raise stream_error
        return trace
    finally:
        if session:
            lib.nt_session_free(session)
        if fd is not None:
            os.close(fd)
