"""Exceptions mirroring the library's status codes (nt_status)."""
from . import _lib


class NettraceError(Exception):
    """A failure the library reported.

    status is the status number, status_name its stable short name,
    offset the byte offset of the stream it refers to (None when it concerns
    no stream position), message the library's description (which names the
    offset too).  trace, when not None, is what was read before the fault.
    """
    status = None

    def __init__(self, message, offset=None, trace=None):
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.trace = trace

    @property
    def status_name(self):
        return _lib.text(_lib.lib.nt_status_name(self.status))


def _status_class(name, status, *bases):
    return type(name, (NettraceError,) + bases, {"status": status, "__module__": __name__})


NotNettraceError = _status_class("NotNettraceError", 1)
UnsupportedVersionError = _status_class("UnsupportedVersionError", 2)
NoEventsError = _status_class("NoEventsError", 3)
MalformedError = _status_class("MalformedError", 4)
TruncatedError = _status_class("TruncatedError", 5)
LimitError = _status_class("LimitError", 6)
OutOfMemoryError = _status_class("OutOfMemoryError", 7, MemoryError)
StoppedError = _status_class("StoppedError", 8)
InvalidArgumentError = _status_class("InvalidArgumentError", 9, ValueError)
IOFailure = _status_class("IOFailure", 10, OSError)
NoEndpointError = _status_class("NoEndpointError", 20, FileNotFoundError)
RefusedError = _status_class("RefusedError", 21)
DeadlineError = _status_class("DeadlineError", 22, TimeoutError)
CancelledError = _status_class("CancelledError", 23)
StreamCapError = _status_class("StreamCapError", 24)
ProtocolError = _status_class("ProtocolError", 25)
BadStateError = _status_class("BadStateError", 26)

BY_STATUS = {c.status: c for c in (
    NotNettraceError, UnsupportedVersionError, NoEventsError, MalformedError, TruncatedError, LimitError,
    OutOfMemoryError, StoppedError, InvalidArgumentError, IOFailure, NoEndpointError, RefusedError,
    DeadlineError, CancelledError, StreamCapError, ProtocolError, BadStateError)}


def refused(hresult, message):
    """The runtime's refusal, with its HRESULT."""
    e = RefusedError(message)
    e.hresult = hresult
    return e


def from_status(status, message=None, offset=None, trace=None):
    """The exception for a status, or None for NT_OK."""
    if status == 0:
        return None
    cls = BY_STATUS.get(status)
    if cls is None:
        cls = _status_class("NettraceError%d" % status, status)
    if not message:
        message = _lib.text(_lib.lib.nt_status_describe(status))
    return cls(message, offset, trace)
RefusedError.hresult = None  # the runtime's HRESULT, set by refused()
