"""Live collection from a running .NET process over its diagnostics IPC."""
import os
import time
from collections import namedtuple
from ctypes import byref, c_bool, c_int, c_void_p, cast, pointer

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


def _config(providers, buffer_mb, rundown, max_stream_bytes, keep):
    """An nt_session_config; keep receives what must outlive it."""
    cfg = _lib.nt_session_config()
    if providers:
        arr = (_lib.nt_provider * len(providers))()
        for i, p in enumerate(providers):
            p = Provider(*p)
            name = p.name.encode()
            args = p.arguments.encode() if p.arguments else None
            keep += [name, args]
            arr[i] = _lib.nt_provider(name=name, keywords=p.keywords, level=p.level, arguments=args)
        cfg.providers, cfg.provider_count = cast(arr, type(cfg.providers)), len(providers)
        keep.append(arr)
    cfg.buffer_mb = buffer_mb or 0
    cfg.no_rundown = not rundown
    cfg.max_stream_bytes = max_stream_bytes or 0
    return cfg


def _start(cfg, pid, start_timeout):
    session = lib.nt_session_new(byref(cfg), None)
    if not session:
        raise errors.OutOfMemoryError("out of memory")
    status = lib.nt_session_start(session, pid, lib.nt_deadline_after_ms(int(start_timeout * 1000)))
    if status != 0:
        err = _start_error(session, status)
        lib.nt_session_free(session)
        raise err
    return session


def _deadline(seconds):
    return lib.nt_deadline_after_ms(int(seconds * 1000) + 1)


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
    keep = []
    cfg = _config(providers, buffer_mb, rundown, max_stream_bytes, keep)
    parser = fd = session = None
    if output is not None:
        fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o644)
        fd_box = c_int(fd)
        keep.append(fd_box)
        cfg.sink, cfg.sink_user = _lib.SINK_FD, cast(pointer(fd_box), c_void_p)
    else:
        parser = Parser(keep_trace=True)
        cfg.sink, cfg.sink_user = _lib.SINK_PARSER, parser._p
    try:
        session = _start(cfg, pid, start_timeout)
        # Wait in short slices so that Ctrl-C interrupts the collection.
        end = time.monotonic() + duration
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            status = lib.nt_session_wait(session, _deadline(min(left, 0.2)))
            if status != errors.DeadlineError.status:
                break  # the stream ended by itself
        status = lib.nt_session_stop(session, _deadline(stop_timeout))
        stream_error = errors.from_status(status, _lib.text(lib.nt_session_message(session)))
        lib.nt_session_free(session)
        session = None
        try:
            if fd is not None:
                os.close(fd)
                fd = None
                from .trace import open as open_trace
                trace = open_trace(output)
            else:
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


class _RundownFirst:
    """A second session, stopped as soon as it starts, whose rundown names
    the methods compiled before the watch began, within its first windows
    (as 'nettrace top -p' does): its records go into the watch's window
    beside the sampling session's.  Without it those methods would be
    named only by the rundown at the end."""

    def __init__(self, window_parser, pid, start_timeout):
        self.session = self.parser = None
        self.parser = lib.nt_parser_new(byref(window_parser._kcb), window_parser._keep, None, None)
        if not self.parser:
            return
        # Only the rundown matters: one cheap provider and a small buffer.
        self._keep = []
        cfg = _config([Provider(PROVIDER_RUNTIME, KEYWORD_LOADER, 4)], 16, True, 0, self._keep)
        cfg.sink, cfg.sink_user, cfg.caller_pumps = _lib.SINK_PARSER, self.parser, True
        try:
            self.session = _start(cfg, pid, start_timeout)
        except errors.NettraceError:
            self.close()  # the names then come with the final rundown only
            return
        lib.nt_session_request_stop(self.session)

    @property
    def live(self):
        return self.session is not None

    def pump(self):
        """Pass on what arrived; closes the session once its stream ended."""
        if not self.session:
            return
        ended = c_bool(False)
        lib.nt_session_pump(self.session, byref(ended))
        if ended.value:
            lib.nt_parser_finish(self.parser)
            self.close()

    def close(self):
        if self.session:
            lib.nt_session_free(self.session)
        if self.parser:
            lib.nt_parser_free(self.parser)
        self.session = self.parser = None


def watch(pid, interval=1.0, duration=None, providers=None, buffer_mb=0, rundown=True, max_stream_bytes=0,
          start_timeout=10.0, stop_timeout=120.0, rundown_first=True):
    """Trace process pid and yield a Trace every interval seconds: the
    samples of that window, named from every record seen since the session
    began (trace.top(n) is then the live hot-method table, frames named as
    'nettrace top -p' names them).  rundown_first: a short second session's
    rundown names the methods compiled before the watch began from the
    first windows on (else only the last window, after the stop's rundown,
    names them).

    The session runs in the calling thread, between the yields (the
    runtime's buffer holds what arrives meanwhile), so nothing runs behind
    the caller's back.  It stops after duration seconds (None: when the
    process exits or the generator is closed); the last window, yielded
    after the stop, holds the rundown's names.  Arguments and errors as for
    collect().
    """
    from .parser import Parser
    keep = []
    cfg = _config(providers, buffer_mb, rundown, max_stream_bytes, keep)
    parser = Parser(windows=True)
    cfg.sink, cfg.sink_user = _lib.SINK_PARSER, parser._p
    cfg.caller_pumps = True
    session = _start(cfg, pid, start_timeout)
    first = None
    try:
        first = _RundownFirst(parser, pid, start_timeout) if rundown_first else None
        end = None if duration is None else time.monotonic() + duration
        ended = False
        while not ended and (end is None or time.monotonic() < end):
            until = time.monotonic() + interval
            if end is not None:
                until = min(until, end)
            # A caller-pumped session is driven by whoever waits on it; the
            # rundown session between short waits while it lasts.
            while not ended and time.monotonic() < until:
                slice_s = 0.02 if first and first.live else 0.2
                status = lib.nt_session_wait(session, _deadline(min(until - time.monotonic(), slice_s)))
                ended = status != errors.DeadlineError.status
                if first:
                    first.pump()
            yield parser.take_window()
        status = lib.nt_session_stop(session, _deadline(stop_timeout))
        stream_error = errors.from_status(status, _lib.text(lib.nt_session_message(session)))
        last = parser.take_window()
        if stream_error is not None:
            stream_error.trace = last
            raise stream_error
        yield last
    finally:
        if first:
            first.close()
        lib.nt_session_free(session)
        parser._abandon()
