"""Decoded events: the library's field iterator (the one 'nettrace events'
prints) turned into Python values."""
import uuid
from collections import namedtuple
from ctypes import byref, string_at

from . import _lib, errors
from ._lib import lib

# One event as 'nettrace events --json' prints it.  fields maps each
# top-level field name to its value: int, float (None for NaN and the
# infinities, as in the JSON), bool, str, bytes (win:Binary, Decimal),
# uuid.UUID, a FileTime (an int), a dict
# for a struct, a list for an array.  error / error_offset: why the payload
# stopped decoding early (None when it did not); leftover: payload bytes no
# field covered (a newer event version's additions).  offset: the event's
# byte offset in the stream.
Event = namedtuple("Event", "time_ns thread_id provider event_id version name fields error error_offset leftover "
                            "offset")



class FileTime(int):
    """A DateTime field: a Windows FILETIME, 100 ns ticks since 1601-01-01 UTC."""

    @property
    def datetime(self):
        """As a datetime (UTC, to the microsecond); ValueError past year 9999."""
        import datetime
        return datetime.datetime(1601, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(
            microseconds=self // 10)


_INT, _UINT, _BOOL, _FLOAT, _GUID, _DATETIME, _STRING, _BINARY, _SBEGIN, _SEND, _ABEGIN, _AEND = range(1, 13)


def _scalar(v):
    k = v.kind
    if k == _INT:
        return v.v.i
    if k == _DATETIME:
        return FileTime(v.v.i)
    if k == _UINT:
        return v.v.u
    if k == _BOOL:
        return bool(v.v.u)
    if k == _FLOAT:
        f = v.v.f
        return f if f - f == 0 else None  # NaN and the infinities: None, as the JSON's null
    if k == _GUID:
        return uuid.UUID(bytes_le=bytes(v.v.guid))
    if k == _STRING:
        return string_at(v.v.str.ptr, v.v.str.len).decode("utf-8", "replace") if v.v.str.ptr else ""
    if k == _BINARY:
        return string_at(v.v.bin.ptr, v.v.bin.len) if v.v.bin.len else b""
    return None


def decode(ev_ptr, frequency):
    """The Event of a parser callback's nt_event address (valid only during the callback)."""
    ev = _lib.nt_event.from_address(ev_ptr)
    d = _lib.nt_event_desc.from_address(ev.desc) if ev.desc else None
    it = _lib.nt_field_iter()
    v = _lib.nt_field_value()
    fields = {}
    # The open containers, innermost last: a dict (struct) or list (array).
    stack = [fields]
    lib.nt_event_fields_begin(ev_ptr, byref(it))
    while lib.nt_field_next(byref(it), byref(v)):
        k = v.kind
        if k in (_SEND, _AEND):
            if len(stack) > 1:
                stack.pop()
            continue
        value = {} if k == _SBEGIN else [] if k == _ABEGIN else _scalar(v)
        into = stack[-1]
        if isinstance(into, list):
            into.append(value)
        else:
            into[_lib.text(v.name)] = value
        if k in (_SBEGIN, _ABEGIN):
            stack.append(value)
    error = _lib.text(it.message) if it.status else None
    return Event(lib.nt_ticks_to_ns(ev.timestamp, frequency) if frequency else ev.timestamp, ev.thread_id,
                 _lib.text(d.provider) if d else "", d.event_id if d else 0, d.version if d else 0,
                 _lib.text(lib.nt_event_name(ev_ptr)), fields, error, it.error_offset if it.status else None,
                 0 if it.status else it.leftover, ev.offset)


def events(source):
    """Every event of a trace -- a path, bytes-like object or binary file
    object -- decoded, in stream order.  The stream is read a chunk at a
    time and only one chunk's events are held.  A damaged or truncated
    stream yields the events before the fault, then raises its
    NettraceError (with the offset)."""
    from .parser import Parser
    from .trace import chunks
    pending = []
    parser = Parser(on_event=pending.append)
    try:
        for chunk in chunks(source):
            failure = _step(parser.feed, chunk)
            yield from _drain(pending)
            if failure:
                raise failure
        failure = _step(parser.close)
        yield from _drain(pending)
        if failure:
            raise failure
    finally:
        if not parser._closed:
            parser._abandon()


def _step(call, *args):
    # The parse's failure, raised only once the events before it are out.
    try:
        call(*args)
    except errors.NettraceError as e:
        return e
    return None


def _drain(pending):
    batch = pending[:]
    del pending[:]
    return batch
