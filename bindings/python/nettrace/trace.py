"""A whole trace: header, samples with resolved frames, tables, top, exports."""
import builtins
import ctypes
import os
from collections import namedtuple
from ctypes import POINTER, byref, c_int64, create_string_buffer, string_at

from . import _lib, errors
from ._guard import Guard
from ._lib import lib
from .parser import Header, Parser, header_of

# One thread sample: frames innermost first; samples on one stack share
# their frames tuple.
Sample = namedtuple("Sample", "time_ns thread_id managed frames")
# A frame: method name, declaring type, fully qualified assembly name ("" for
# each when no method record covers the address), the address, and the name
# the tool prints ("SimpleAssembly!Type.Method", "0x<ip>" when unresolved:
# nt_frame_name, as in top, stacks and samples).
Frame = namedtuple("Frame", "method type assembly ip name")
Method = namedtuple("Method", "start_address size namespace name module_id assembly method_id signature")
TopEntry = namedtuple("TopEntry", "name exclusive inclusive")

_CHUNK = 1 << 20
# samples() reads this many samples per entry into the library: the guard's
# cost spread over them, Python objects in between.
_SAMPLE_BATCH = 1024
_WEIGHTS = {"samples": 0, "wall": 1}  # nt_weight


def frame_name(fp):
    """The library's display name of an nt_frame (nt_frame_name)."""
    buf = create_string_buffer(256)
    n = lib.nt_frame_name(fp, buf, len(buf))
    if n >= len(buf):
        buf = create_string_buffer(n + 1)
        lib.nt_frame_name(fp, buf, len(buf))
    return _lib.text(buf.value)


def time_bound(when):
    """An nt_time_bound from an int (trace-clock ns), a string the library
    reads as --from/--to (nt_time_bound_parse), or None (an open end)."""
    bound = _lib.nt_time_bound()
    if when is None:
        return bound
    if isinstance(when, str):
        if not lib.nt_time_bound_parse(when.encode(), byref(bound)):
            raise ValueError("bad time %r: give a unit, relative to the trace's start (2s, +1.5ms, 250us, "
                             "40ns, 3m), or '@' and trace-clock ns (@864741168641)" % when)
        return bound
    if isinstance(when, bool) or not isinstance(when, int):
        raise TypeError("a time is a str or an int of trace-clock ns, not %s" % type(when).__name__)
    bound.set, bound.absolute, bound.ns = True, True, when
    return bound


def open(source, partial=False):  # noqa: A001 - nettrace.open is the module's entry point
    """Read a trace from a path, a bytes-like object or a binary file object.

    A stream that is damaged or ends early raises the matching NettraceError
    (TruncatedError, MalformedError, ...) with the byte offset, and with the
    trace of everything read before the fault in its trace attribute; with
    partial=True that trace is returned instead, its error attribute set.
    """
    parser = Parser(keep_trace=True)
    try:
        for chunk in chunks(source):
            parser.feed(chunk)
        return parser.close()
    except errors.NettraceError as e:
        if not parser._closed:
            try:
                parser.close()
            except errors.NettraceError as closed:
                e.trace = closed.trace
        if partial and e.trace is not None:
            e.trace.error = e
            return e.trace
        raise


def chunks(source):
    """The bytes of a path, bytes-like object or binary file object, a chunk
    at a time (a file's chunks share one buffer: use each before the next)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        yield source
        return
    if isinstance(source, (str, os.PathLike)):
        with builtins.open(source, "rb") as f:
            yield from chunks(f)
        return
    buf = bytearray(_CHUNK)
    view = memoryview(buf)
    readinto = getattr(source, "readinto", None)
    while True:
        if readinto:
            n = readinto(buf)
            if not n:
                return
            yield view[:n]
        else:
            chunk = source.read(_CHUNK)
            if not chunk:
                return
            yield chunk



def _filter(managed_only, thread_id, from_, to):
    """The one nt_sample_filter of the exports and top: each window end as time_bound() reads it."""
    f = _lib.nt_sample_filter(managed_only=managed_only)
    if thread_id is not None:
        f.has_thread, f.thread_id = True, thread_id
    setattr(f, "from", time_bound(from_))
    f.to = time_bound(to)
    return f

class Trace:
    """The samples and symbols of a trace (from open(), a Parser with
    keep_trace, or collect()).  Header fields are attributes; error is the
    exception of a partial read, else None.  Closing it while an export or
    top() runs (from its writer, or another thread) raises BadStateError; an
    iterator used after close() raises BadStateError."""

    def __init__(self, handle, owner=None, guard=None):
        self._t = handle
        self._owner = owner  # a Profile that frees the trace with itself; None: this object frees it
        self._guard = guard or Guard("trace")  # an owner's guard covers both
        self.error = None
        info = lib.nt_trace_header(handle)
        # A window taken before the stream's header arrived has none.
        h = header_of(info.contents) if info else Header(*(None,) * len(Header._fields))
        self.header = h
        self.format_major, self.format_minor = h.format_major, h.format_minor
        self.frequency = lib.nt_trace_frequency(handle)
        self.pointer_size = lib.nt_trace_pointer_size(handle)
        self.process_id, self.processor_count = h.process_id, h.processor_count
        self.sampling_interval_ns, self.sync_time = h.sampling_interval_ns, h.sync_time
        st = _lib.nt_trace_stats(struct_size=ctypes.sizeof(_lib.nt_trace_stats))
        lib.nt_trace_stats_get(handle, byref(st))
        # Events the runtime dropped while tracing (sequence-number gaps): samples and method records
        # may be missing.  A window's: those of its window; a request window's or a cut's: those of
        # its span on its threads.
        self.events_dropped = st.events_dropped
        self._names = {}    # method index -> (name, type, assembly)
        self._stacks = {}   # stack index -> frames tuple
        self._frame_of = {}  # frame id -> Frame

    def _handle(self):
        if not self._t:
            raise errors.BadStateError("the trace is closed")
        return self._t

    def __len__(self):
        with self._guard("len()"):
            return lib.nt_trace_sample_count(self._handle())

    def _method_names(self, index):
        names = self._names.get(index)
        if names is None:
            m = lib.nt_trace_method_at(self._t, index).contents
            names = self._names[index] = (_lib.text(m.name), _lib.text(m.declaring_type), _lib.text(m.assembly))
        return names

    def _frame(self, frame_id):
        # Stacks hold the library's frame ids: each distinct frame is made once.
        fr = self._frame_of.get(frame_id)
        if fr is None:
            fp = lib.nt_trace_frame_at(self._t, frame_id)
            f = fp.contents
            name = frame_name(fp)
            if f.method_index == _lib.NO_METHOD:
                fr = Frame("", "", "", f.ip, name)
            else:
                fr = Frame(*self._method_names(f.method_index), f.ip, name)
            self._frame_of[frame_id] = fr
        return fr

    def _frames(self, stack_index):
        frames = self._stacks.get(stack_index)
        if frames is None:
            st = lib.nt_trace_stack_at(self._t, stack_index)
            out = []
            for j in range(st.frame_count):
                out.append(self._frame(st.frame_ids[j]))
            frames = self._stacks[stack_index] = tuple(out)
        return frames

    def samples(self):
        """Every thread sample in time order (ties in stream order)."""
        i = 0
        while True:
            batch = self._sample_batch(i)
            if not batch:
                return
            i += len(batch)
            for s in batch:
                if not self._t:
                    raise errors.BadStateError("the trace was closed while its samples were read")
                yield s

    def _sample_batch(self, first):
        # Samples first.. as Python values, read while the guard holds the trace.
        with self._guard("samples()"):
            t = self._handle()
            at, frames_of, stacks = lib.nt_trace_sample_at, self._frames, self._stacks
            out = []
            for i in range(first, min(first + _SAMPLE_BATCH, lib.nt_trace_sample_count(t))):
                s = at(t, i)
                frames = stacks.get(s.stack_index)
                if frames is None:
                    frames = frames_of(s.stack_index)
                out.append(Sample(s.time_ns, s.thread_id, s.type == 2, frames))
            return out

    def methods(self):
        """The method records frames resolve against."""
        with self._guard("methods()"):
            t = self._handle()
            out = []
            for i in range(lib.nt_trace_method_count(t)):
                m = lib.nt_trace_method_at(t, i).contents
                out.append(Method(m.start_address, m.size, _lib.text(m.declaring_type), _lib.text(m.name),
                                  m.module_id, _lib.text(m.assembly), m.method_id, _lib.text(m.signature)))
            return out

    @property
    def assemblies(self):
        """Assembly id -> fully qualified name."""
        with self._guard("assemblies"):
            t = self._handle()
            return {a.assembly_id: _lib.text(a.name) for a in
                    (lib.nt_trace_assembly_at(t, i).contents for i in range(lib.nt_trace_assembly_count(t)))}

    @property
    def modules(self):
        """Module id -> assembly id."""
        with self._guard("modules"):
            t = self._handle()
            return {m.module_id: m.assembly_id for m in
                    (lib.nt_trace_module_at(t, i).contents for i in range(lib.nt_trace_module_count(t)))}

    @property
    def threads(self):
        """The sampled threads' ids."""
        with self._guard("threads"):
            t = self._handle()
            return [lib.nt_trace_thread_id(t, i) for i in range(lib.nt_trace_thread_count(t))]

    def top(self, n=20, by_inclusive=False, managed_only=False, thread_id=None, weight="samples", from_=None,
            to=None):
        """The n hottest methods (n <= 0: all) as TopEntry(name, exclusive,
        inclusive): by exclusive weight (innermost frame; by_inclusive:
        anywhere on the stack, once per sample), then the other one, then
        first seen -- the library's table, the one 'nettrace top' prints.
        weight "samples" counts samples; "wall" sums each sample's ns to its
        thread's next sample (wall_ns(), 'nettrace top --profile wall').
        from_ <= time < to selects samples; each end is a string as --from /
        --to take it ("2s", "+1.5ms" after the trace's start, "@<ns>" on the
        trace clock) or an int of trace-clock ns.  Names are
        "Assembly!Type.Method", or "0x<ip>" when unresolved; code versions of
        one method share a row."""
        if weight not in _WEIGHTS:
            raise ValueError("weight must be one of %s, not %r" % (", ".join(_WEIGHTS), weight))
        with self._guard("top()"):
            return self._top(n, by_inclusive, managed_only, thread_id, weight, from_, to)

    def _top(self, n, by_inclusive, managed_only, thread_id, weight, from_, to):
        t = self._handle()
        opts = _lib.nt_top_options(rows=n if n and n > 0 else 0, by_inclusive=by_inclusive,
                                   filter=_filter(managed_only, thread_id, from_, to), weight=_WEIGHTS[weight])
        top = POINTER(_lib.nt_top)()
        err = errors.from_status(lib.nt_top_build(t, byref(opts), byref(top)))
        if err:
            raise err
        try:
            t = top.contents
            return [TopEntry(_lib.text(r.name), r.exclusive, r.inclusive)
                    for table in t.tables[:t.table_count] for r in table.rows[:table.row_count]]
        finally:
            lib.nt_top_free(top)

    def time_ns(self, when):
        """A window end on the trace clock (ns): when is an int (already
        trace-clock ns) or a string as 'nettrace --from/--to' take it, read
        by the library: "2s", "+1.5ms", "250us" after the trace's start (its
        header's sync time), "@864741168641" absolute.  ValueError for a
        string of another form (a bare "2" has no unit and is refused)."""
        bound = time_bound(when)
        with self._guard("time_ns()"):
            return lib.nt_time_bound_resolve(byref(bound), lib.nt_trace_header(self._handle()))

    def wall_ns(self):
        """Each sample's wall weight, in samples() order: ns to the same
        thread's next sample (the sampling interval for its last) -- the
        weight of top(weight="wall") and of the exports' by_time."""
        with self._guard("wall_ns()"):
            t = self._handle()
            out = (c_int64 * lib.nt_trace_sample_count(t))()
            err = errors.from_status(lib.nt_trace_wall_ns(t, out))
        if err:
            raise err
        return list(out)

    def _export(self, fn, dest, managed_only, thread_id, from_ns, to_ns, by_time, name):
        opts = _lib.nt_export_options()
        opts.filter = _filter(managed_only, thread_id, from_ns, to_ns)
        opts.weight = 1 if by_time else 0
        opts.name = name.encode() if name else None
        if isinstance(dest, (str, os.PathLike)):
            with builtins.open(dest, "wb") as f:
                return self._export(fn, f, managed_only, thread_id, from_ns, to_ns, by_time, name)
        raised = []

        def write(_, data, size):
            try:
                dest.write(string_at(data, size))
                return 0
            except BaseException as e:  # re-raised below
                raised.append(e)
                return 1
        with self._guard(fn.__name__.replace("nt_export_", "write_") + "()"):
            status = fn(self._handle(), byref(opts), _lib.WRITE_FN(write), None)
        if raised:
            raise raised[0]
        err = errors.from_status(status)
        if err:
            raise err

    def write_folded(self, dest, managed_only=False, thread_id=None, from_ns=None, to_ns=None, by_time=False,
                     name=None):
        """Folded stacks ("root;...;leaf weight" lines for flamegraph.pl) to a
        path or binary file.  Options select samples (managed_only,
        thread_id, from_ns <= time < to_ns) and weight (by_time: ns to the
        thread's next sample instead of 1)."""
        self._export(lib.nt_export_folded, dest, managed_only, thread_id, from_ns, to_ns, by_time, name)

    def write_speedscope(self, dest, managed_only=False, thread_id=None, from_ns=None, to_ns=None, by_time=False,
                         name=None):
        """Speedscope JSON (one sampled profile per thread); name names the profile."""
        self._export(lib.nt_export_speedscope, dest, managed_only, thread_id, from_ns, to_ns, by_time, name)

    def write_pprof(self, dest, managed_only=False, thread_id=None, from_ns=None, to_ns=None, by_time=False,
                    name=None):
        """A gzipped pprof profile.proto (sample counts and wall time)."""
        self._export(lib.nt_export_pprof, dest, managed_only, thread_id, from_ns, to_ns, by_time, name)

    def close(self):
        """Release the library's trace (samples() and the exports need it)."""
        with self._guard("close()", exclusive=True):
            if self._t:
                if self._owner is None:
                    lib.nt_trace_free(self._t)
                self._t = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_t", None):
            self.close()


