"""A trace written again as NetTrace V4/V5 or V6, whole or as a time slice,
by the library's nt_convert (what carries over: nettrace_convert.h)."""
import builtins
import os
from ctypes import byref, c_char_p, cast, c_void_p, string_at

from . import _lib, errors
from ._lib import lib
from .trace import time_bound

_FORMATS = {None: 0, 0: 0, 4: 4, 5: 4, 6: 6, "v4": 4, "v5": 4, "v6": 6}


class Conversion:
    """What convert() did: the counts of nt_convert_stats (events_written,
    events_without_metadata, fieldless_metadata, metadata_flushes,
    events_outside_window, records_outside_window, input_bytes,
    output_bytes)."""

    def __init__(self, st):
        for name, _ in _lib.nt_convert_stats._fields_:
            if name not in ("struct_size", "status", "output_failed", "error_offset", "os_error", "message"):
                setattr(self, name, getattr(st, name))

    def __repr__(self):
        return "Conversion(events_written=%d, output_bytes=%d)" % (self.events_written, self.output_bytes)


def convert(source, dest=None, format=None, start=None, end=None, uncompressed=False):  # noqa: A002
    """Convert source (a path, or a bytes-like trace) into dest (a path or a
    binary file object; None: the bytes are returned) as format 4 (V4/V5) or
    6 (None: the input's own).  start / end cut a slice [start, end): each an
    int of trace-clock ns or a string as --from / --to read it ("2s",
    "@864741168641").  Returns the output's bytes when dest is None, else a
    Conversion.  A damaged input raises its error (MalformedError,
    TruncatedError, ...) with .output holding the complete output of what
    was read before the damage (bytes) and .conversion the counts; a path
    dest is then still written."""
    if format not in _FORMATS:
        raise ValueError("format is 4 (v4, v5) or 6 (v6), not %r" % (format,))
    opts = _lib.nt_convert_options(struct_size=_lib.ctypes.sizeof(_lib.nt_convert_options))
    opts.format = _FORMATS[format]
    opts.uncompressed = bool(uncompressed)
    setattr(opts, "from", time_bound(start))
    opts.to = time_bound(end)
    chunks = []
    raised = []

    def write(_, data, size):
        try:
            if dest is None or isinstance(dest, (str, os.PathLike)):
                chunks.append(string_at(data, size))
            else:
                dest.write(string_at(data, size))
            return 0
        except BaseException as e:  # re-raised below
            raised.append(e)
            return 1

    st = _lib.nt_convert_stats(struct_size=_lib.ctypes.sizeof(_lib.nt_convert_stats))
    sink = _lib.WRITE_FN(write)
    if isinstance(source, (str, os.PathLike)):
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            status = lib.nt_convert(fd, byref(opts), sink, None, byref(st))
        finally:
            os.close(fd)
    else:
        data = bytes(source)
        status = lib.nt_convert_bytes(cast(c_char_p(data), c_void_p), len(data), byref(opts), sink, None, byref(st))
    if raised:
        raise raised[0]
    out = b"".join(chunks)
    if isinstance(dest, (str, os.PathLike)) and not st.output_failed:
        with builtins.open(dest, "wb") as f:
            f.write(out)
    err = errors.from_status(status, _lib.text(st.message), st.error_offset if not st.output_failed else None)
    if err:
        err.output = None if st.output_failed else out
        err.conversion = Conversion(st)
        raise err
    return out if dest is None else Conversion(st)
