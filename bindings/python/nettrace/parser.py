"""The streaming parser: bytes in, callbacks out, optionally a Trace."""
import ctypes
from collections import namedtuple
from ctypes import byref, c_char, c_uint64, c_void_p

from . import _lib, errors
from ._guard import Guard
from ._lib import lib
from .events import decode as decode_event

# A thread sample as the parser reads it: ips innermost first.
StreamSample = namedtuple("StreamSample", "time_ns thread_id managed ips offset timestamp")
MethodRecord = namedtuple("MethodRecord",
                          "event method_id module_id start_address size flags namespace name signature timestamp")
ModuleRecord = namedtuple("ModuleRecord", "event module_id assembly_id il_path native_path")
AssemblyRecord = namedtuple("AssemblyRecord", "event assembly_id name")
Header = namedtuple("Header", "format_major format_minor frequency pointer_size process_id processor_count "
                              "sampling_interval_ns sync_time")

# Which event a method, module or assembly record came from.
RECORD_EVENTS = ("load", "unload", "dc_start", "dc_end")


def header_of(info):
    import datetime
    st = info.sync_time_utc
    try:
        sync = datetime.datetime(st.year, st.month, st.day, st.hour, st.minute, st.second,
                                 st.milliseconds * 1000, tzinfo=datetime.timezone.utc)
    except ValueError:
        sync = None
    return Header(info.format_major, info.format_minor, info.qpc_frequency, info.pointer_size, info.process_id,
                  info.processor_count, info.sampling_interval_ns, sync)


def as_pointer(data):
    """data's bytes as a ctypes argument and their count, without a copy for
    bytes and writable buffers (bytearray, mmap, array)."""
    if isinstance(data, bytes):
        return data, len(data)
    mv = memoryview(data).cast("B")
    if mv.readonly:
        b = mv.tobytes()
        return b, len(b)
    return (c_char * mv.nbytes).from_buffer(mv) if mv.nbytes else None, mv.nbytes


class Parser:
    """Parse a NetTrace stream (V4, V5 or V6) pushed in chunks of any size.

    Each on_* callback (all optional) receives what the parser reads, in
    stream order (on_event: every event, decoded into an Event as 'nettrace
    events' prints it), from inside feed() and close(); an exception it raises
    stops the parse and comes out of feed().  A callback may read offset but
    not call feed(), close() or take_window(), and one thread at a time
    feeds a parser: such calls raise BadStateError (and, from a callback,
    stop the parse with it).  With keep_trace=True the parser
    also builds the Trace that close() returns; with windows=True
    take_window() returns the samples since its previous call (a live
    stream's hot methods, window by window), open_request() a window per
    request beside them, and recorder_ns (nanoseconds of trace time) a
    flight recorder that cut() cuts after the fact; record_budget bounds the
    bytes the windows' method records may hold (0: 64 MiB; window_stats()
    says what was evicted).  The stream itself is never held.
    """

    def __init__(self, on_header=None, on_sample=None, on_method=None, on_module=None, on_assembly=None,
                 keep_trace=False, windows=False, on_event=None, recorder_ns=0, record_budget=0):
        self._user = {"header": on_header, "sample": on_sample, "method": on_method, "module": on_module,
                      "assembly": on_assembly, "event": on_event}
        self._frequency = 0  # the header's, for the events' times
        self._raised = None
        self._error = None
        self._closed = False
        self._p = None
        self._guard = Guard("parser")
        # What the parser keeps besides calling Python: the whole trace (a
        # builder), a trace per window, or nothing.
        self._kind = "trace" if keep_trace else "windows" if windows else None
        if keep_trace and windows:
            raise errors.InvalidArgumentError("keep_trace and windows exclude each other")
        if recorder_ns < 0 or record_budget < 0 or ((recorder_ns or record_budget) and not windows):
            raise errors.InvalidArgumentError("recorder_ns and record_budget need windows=True and are not negative")
        self._keep = None
        # The current layout: a window then also counts each thread's loss (sequence_gap).
        self._kcb = _lib.nt_callbacks(struct_size=ctypes.sizeof(_lib.nt_callbacks))
        if self._kind == "trace":
            self._keep = lib.nt_trace_builder_new(None)
            lib.nt_trace_builder_callbacks(byref(self._kcb))
        elif self._kind == "windows":
            cfg = _lib.nt_trace_window_config(struct_size=ctypes.sizeof(_lib.nt_trace_window_config),
                                              recorder_ns=recorder_ns, record_budget=record_budget)
            self._keep = lib.nt_trace_window_new(byref(cfg), None)
            lib.nt_trace_window_callbacks(byref(self._kcb))
        if self._kind and not self._keep:
            raise errors.OutOfMemoryError("out of memory")
        if not any(self._user.values()):
            # Nothing for Python: the kept object's own callbacks, no trampolines.
            self._cb = self._kcb
            user = self._keep
        else:
            self._cb = self._trampolines()
            user = None
        self._p = lib.nt_parser_new(byref(self._cb), user, None, None)
        if not self._p:
            self._abandon()
            raise errors.OutOfMemoryError("out of memory")
        # Records that reach only the kept object need no UTF-8 from the
        # parser: the builder and the windows convert just the names they
        # keep (most rundown records are dropped), as nt_trace_from_file does.
        if self._keep and not any(self._user.get(k) for k in ("method", "module", "assembly")):
            lib.nt_parser_set_lazy_names(self._p, True)

    def _trampolines(self):
        cb = _lib.nt_callbacks(struct_size=ctypes.sizeof(_lib.nt_callbacks))
        b, bcb, user = self._keep, self._kcb, self._user

        pairs = (("trace", "header", _lib.CB_TRACE, self._header),
                 ("sample", "sample", _lib.CB_SAMPLE, lambda p: _stream_sample(p.contents)),
                 ("method", "method", _lib.CB_METHOD, lambda p: _method_record(p.contents)),
                 ("module", "module", _lib.CB_MODULE, lambda p: _module_record(p.contents)),
                 ("assembly", "assembly", _lib.CB_ASSEMBLY, lambda p: _assembly_record(p.contents)),
                 ("event", "event", _lib.CB_ANY, lambda p: decode_event(p, self._frequency)))
        for field, name, ftype, convert in pairs:
            builder_fn = getattr(bcb, field) if b else None
            # Decoded events need the header's clock frequency.
            if builder_fn or user.get(name) or (field == "trace" and user.get("event")):
                mine = user.get(name)
                setattr(cb, field, ftype(self._call(b, builder_fn, mine, convert)))
        if b and bcb.sequence_point:
            builder_sp = bcb.sequence_point
            cb.sequence_point = _lib.CB_ANY(lambda _, sp: builder_sp(b, sp))
        if b and bcb.sequence_gap:
            kept_gap = bcb.sequence_gap
            cb.sequence_gap = _lib.CB_ANY(lambda _, gap: kept_gap(b, gap))
        return cb

    def _call(self, b, builder_fn, mine, convert):
        # What the parser keeps sees each record first, then the Python callback.
        def call(_, ptr):
            try:
                if builder_fn and builder_fn(b, ptr):
                    return 1
                if mine:
                    mine(convert(ptr))
                elif convert == self._header:  # no on_header: on_event still needs the frequency
                    convert(ptr)
                return 0
            except BaseException as e:  # re-raised from feed()
                self._raised = e
                return 1
        return call

    def _header(self, ptr):
        self._frequency = ptr.contents.qpc_frequency
        return header_of(ptr.contents)

    def _fail(self, status):
        if self._error is None:
            if self._raised is not None:
                self._error = self._raised
            else:
                self._error = errors.from_status(status, _lib.text(lib.nt_parser_message(self._p)),
                                                 lib.nt_parser_error_offset(self._p))
        return self._error

    def feed(self, data):
        """Parse the next bytes (any bytes-like object); raises on failure,
        the same error on every later call."""
        with self._guard("feed()", exclusive=True):
            if self._closed:
                raise errors.BadStateError("the parser is closed")
            if self._error is not None:
                raise self._error
            ptr, n = as_pointer(data)
            if n and lib.nt_parser_feed(self._p, ptr, n) != 0:
                raise self._fail(lib.nt_parser_feed(self._p, None, 0))

    write = feed

    @property
    def offset(self):
        """Bytes consumed so far (readable from a callback, where the
        parser is paused and cannot be freed)."""
        if self._guard.inside():
            return lib.nt_parser_offset(self._p)
        with self._guard("offset"):
            return lib.nt_parser_offset(self._p) if self._p else 0

    def close(self):
        """End of stream.  Returns the Trace with keep_trace (else None).
        Raises when the stream was bad -- TruncatedError when it ended
        early -- with the trace of what was read in the exception's trace."""
        with self._guard("close()", exclusive=True):
            return self._close()

    def _close(self):
        if self._closed:
            if self._error is not None:
                raise self._error
            return None
        self._closed = True
        status = lib.nt_parser_finish(self._p)
        err = self._fail(status) if status != 0 else self._error
        trace = None
        if self._kind == "trace":
            from .trace import Trace
            out = c_void_p()
            lib.nt_trace_builder_finish(self._keep, self._p, status, byref(out))
            self._keep = None  # finish frees the builder
            if out.value and lib.nt_trace_header(out.value):
                trace = Trace(out.value)
            elif out.value:  # not even the header was read: no trace
                lib.nt_trace_free(out.value)
        self._release()
        if err is not None:
            if isinstance(err, errors.NettraceError):
                err.trace = trace
            raise err
        return trace

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self._closed:
            if exc[0] is None:
                self.close()
            else:
                with self._guard("__exit__", exclusive=True):
                    self._abandon()

    def take_window(self):
        """With windows=True: the samples read since the previous call as a
        Trace, named from every method, module and assembly record read since
        the stream began; a new window starts."""
        with self._guard("take_window()", exclusive=True):
            out = c_void_p()
            status = lib.nt_trace_window_take(self._window("take_window"), byref(out))
        return _window_trace(out, status)

    def _window(self, what):
        if self._kind != "windows" or self._closed:
            raise errors.BadStateError("%s needs an open Parser(windows=True)" % what)
        return self._keep

    def open_request(self, from_ns, threads=()):
        """With windows=True: a RequestWindow taking, from from_ns (trace-clock
        ns, as Sample.time_ns) on, the samples of the given OS thread ids
        (every thread when none), beside the continuous windows; up to 4,096
        open at once (then LimitError).  Close it before the parser."""
        with self._guard("open_request()", exclusive=True):
            f, keep = _filter(threads)
            rid = c_uint64()
            status = lib.nt_trace_window_open(self._window("open_request"), from_ns, byref(f), byref(rid))
        err = errors.from_status(status)
        if err is not None:
            raise err
        return RequestWindow(self, rid.value, from_ns)

    def cut(self, from_ns, to_ns, threads=()):
        """The samples of [from_ns, to_ns) on the given threads (every thread
        when none) that the flight recorder (recorder_ns) still holds, as a
        Trace; it keeps them, so a span can be cut again.  InvalidArgumentError
        without a recorder."""
        with self._guard("cut()", exclusive=True):
            f, keep = _filter(threads)
            out = c_void_p()
            status = lib.nt_trace_window_cut(self._window("cut"), from_ns, to_ns, byref(f), byref(out))
        return _window_trace(out, status)

    def window_stats(self):
        """With windows=True: what the window object holds now and what its
        bounds did, as WindowStats (memory and memory_peak in bytes; records
        kept and their bytes with names and index, the budget; records seen,
        retired on unload, evicted by the budget -- a frame of theirs is then
        unnamed -- and of those sampled; recorder samples; traces handed out
        and request windows open; events dropped)."""
        with self._guard("window_stats()", exclusive=True):
            st = _lib.nt_trace_window_stats(struct_size=ctypes.sizeof(_lib.nt_trace_window_stats))
            lib.nt_trace_window_stats_get(self._window("window_stats"), byref(st))
        return WindowStats(st.memory, st.memory_peak, st.records.entries,
                           st.records.bytes + st.strings.bytes + st.address_index.bytes, st.record_budget,
                           st.records_seen, st.records_retired, st.records_evicted, st.records_evicted_sampled,
                           st.recorder.entries, st.windows, st.open_windows, st.events_dropped)

    def _close_request(self, request, to_ns):
        with self._guard("RequestWindow.close()", exclusive=True):
            out = c_void_p()
            status = lib.nt_trace_window_close(self._window("RequestWindow.close"), request._id, to_ns, byref(out))
            request._closed = True  # closed by the library whatever the status
        return _window_trace(out, status)

    def _release(self):
        if self._kind == "trace":
            lib.nt_trace_builder_free(self._keep)
        elif self._kind == "windows":
            lib.nt_trace_window_free(self._keep)
        self._keep = None
        lib.nt_parser_free(self._p)
        self._p = None

    def _abandon(self):
        self._closed = True
        self._release()

    def __del__(self):
        if getattr(self, "_p", None):
            self._abandon()


WindowStats = namedtuple("WindowStats", "memory memory_peak records record_bytes record_budget records_seen "
                         "records_retired records_evicted records_evicted_sampled recorder_samples windows "
                         "open_windows events_dropped")


class RequestWindow:
    """A window open for one request (Parser.open_request): close(to_ns)
    hands over its samples as a Trace."""

    def __init__(self, parser, rid, from_ns):
        self._parser = parser
        self._id = rid
        self._closed = False
        self.from_ns = from_ns

    def close(self, to_ns):
        """End at to_ns (trace-clock ns, exclusive); its samples as a Trace.
        Past a limit (the sample log's bytes, evicted records) LimitError
        carries the trace; a second close raises BadStateError."""
        if self._closed:
            raise errors.BadStateError("the request window is already closed")
        return self._parser._close_request(self, to_ns)


def _filter(threads):
    """An nt_window_filter over threads and the array it points to (keep both alive)."""
    threads = tuple(threads)
    ids = (c_uint64 * len(threads))(*threads) if threads else None
    f = _lib.nt_window_filter(struct_size=ctypes.sizeof(_lib.nt_window_filter), thread_ids=ids,
                              thread_count=len(threads))
    return f, ids


def _window_trace(out, status):
    """A window handed out (a take, a close, a cut) as a Trace; an error status raises with it."""
    from .trace import Trace
    trace = Trace(out.value) if out.value else None
    err = errors.from_status(status, trace=trace)
    if err is not None:
        raise err
    return trace


def _stream_sample(s):
    ips = ()
    if s.stack and s.stack.contents.count:
        st = s.stack.contents
        ips = tuple(st.ips[:st.count])
    offset = s.event.contents.offset if s.event else None
    return StreamSample(s.time_ns, s.thread_id, s.type == 2, ips, offset, s.timestamp)


def _method_record(m):
    return MethodRecord(RECORD_EVENTS[m.which], m.method_id, m.module_id, m.start_address, m.size, m.flags,
                        _lib.text(m.declaring_type), _lib.text(m.name), _lib.text(m.signature), m.timestamp)


def _module_record(m):
    return ModuleRecord(RECORD_EVENTS[m.which], m.module_id, m.assembly_id, _lib.text(m.il_path),
                        _lib.text(m.native_path))


def _assembly_record(a):
    return AssemblyRecord(RECORD_EVENTS[a.which], a.assembly_id, _lib.text(a.name))

