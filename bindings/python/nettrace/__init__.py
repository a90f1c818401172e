"""Read .NET EventPipe NetTrace streams (V4, V5, V6) with libnettrace.

    import nettrace
    with nettrace.open("app.nettrace") as trace:
        for s in trace.samples():
            print(s.time_ns, s.thread_id, s.managed, s.frames[0].method if s.frames else "-")
        print(trace.top(10))
        trace.write_speedscope("app.speedscope.json")

A ctypes binding of the C library, standard library only.  The library is
the one NETTRACE_LIBRARY names, else a copy bundled in the package, else
the installed one (found through pkg-config, the loader's path or the usual
folders); without one, importing the module raises an ImportError that says
what to do.
"""
from ._lib import lib as _lib_handle, path as _lib_path, text as _text
from .errors import (BadStateError, CancelledError, DeadlineError, InvalidArgumentError, IOFailure, LimitError,
                     MalformedError, NettraceError, NoEndpointError, NoEventsError, NotNettraceError,
                     OutOfMemoryError, ProtocolError, RefusedError, StoppedError, StreamCapError,
                     TruncatedError, UnsupportedVersionError)
from .parser import AssemblyRecord, Header, MethodRecord, ModuleRecord, Parser, RequestWindow, StreamSample, WindowStats
from .session import (KEYWORD_JIT, KEYWORD_LOADER, PROVIDER_RUNTIME, PROVIDER_SAMPLE_PROFILER, Provider,
                      collect, watch)
from .convert import Conversion, convert
from .events import Event, FileTime, events
from .profile import GC, Profile, ProfileRecord, Totals, open_profile
from .trace import Frame, Method, Sample, TopEntry, Trace, open

__all__ = [
    "open", "Trace", "convert", "Conversion", "open_profile", "Profile", "ProfileRecord", "Totals", "GC", "Event", "FileTime", "events", "Sample", "Frame", "Method", "TopEntry", "Parser", "RequestWindow", "StreamSample", "WindowStats", "MethodRecord",
    "ModuleRecord", "AssemblyRecord", "Header", "collect", "watch", "Provider", "PROVIDER_SAMPLE_PROFILER",
    "PROVIDER_RUNTIME", "KEYWORD_LOADER", "KEYWORD_JIT", "library_version", "library_path", "NettraceError",
    "NotNettraceError", "UnsupportedVersionError", "NoEventsError", "MalformedError", "TruncatedError",
    "LimitError", "OutOfMemoryError", "StoppedError", "InvalidArgumentError", "IOFailure", "NoEndpointError",
    "RefusedError", "DeadlineError", "CancelledError", "StreamCapError", "ProtocolError", "BadStateError",
]


def library_version():
    """The loaded C library's version string."""
    return _text(_lib_handle.nt_version())


def library_path():
    """Where the loaded C library was found (a path, or the bare name the
    dynamic loader resolved)."""
    return _lib_path
