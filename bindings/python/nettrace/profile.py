"""Event profiles beside the CPU samples: allocations, exceptions, contention."""
import os
from collections import namedtuple
from ctypes import byref, c_int64, c_void_p, create_string_buffer

from . import _lib, errors
from ._guard import Guard
from ._lib import lib
from .trace import Trace, time_bound

# nt_profile_kind: the event profiles' values (cpu and wall are the trace's samples).
KINDS = ("alloc", "exceptions", "contention")
_KIND = {"alloc": 2, "exceptions": 3, "contention": 4}
_NAME = {v: k for k, v in _KIND.items()}

# One record: the events of one stack, thread and label merged (one event
# each with keep_events).  label: allocated type / exception type / "" for
# contention; message: the exception's message with exception_messages, else
# ""; heap: "soh"/"loh"/"poh"/"other" (alloc) or the lock's ContentionFlags;
# value: bytes, throws or wait ns; frames as Sample.frames (innermost first).
ProfileRecord = namedtuple("ProfileRecord", "kind thread_id label message heap open value count time_ns frames")
Totals = namedtuple("Totals", "events value records open unpaired_stops without_stack")
# One GC of the timeline ('nettrace gc'): trace-clock ns, None where the
# event was absent; reason and type named ("AllocSmall", "background");
# heap sizes in bytes (generation_sizes: gen0, gen1, gen2, LOH, POH).
GC = namedtuple("GC", "number generation reason type thread_id start_ns end_ns suspend_begin_ns suspend_end_ns "
                      "restart_end_ns suspension_ns pause_ns heap_before heap_after promoted generation_sizes")
_HEAPS = ("soh", "loh", "poh", "other")


def open_profile(path, from_=None, to=None, exception_messages=False, keep_events=False, events_only=False):
    """Read a trace file or bytes-like object into its event profiles.

    from_ <= time < to keeps only the events inside (an allocation tick or a
    throw by its time, a contention wait by its start); each end is a string
    as 'nettrace --from/--to' take it ("2s", "@<ns>") or an int of
    trace-clock ns.  exception_messages makes the message part of an
    exception record's key (record.message).  keep_events: one record per
    event; events_only: no thread samples are kept.  A damaged stream raises
    the matching NettraceError.
    """
    opts = _lib.nt_profile_options(keep_events=keep_events, events_only=events_only,
                                   exception_messages=exception_messages)
    setattr(opts, "from", time_bound(from_))
    opts.to = time_bound(to)
    out = c_void_p()
    msg = create_string_buffer(512)
    if isinstance(path, (str, os.PathLike)):
        status = lib.nt_profile_from_file(os.fsencode(path), byref(opts), byref(out), msg, len(msg))
    else:
        data = bytes(path)
        status = lib.nt_profile_from_buffer(data, len(data), byref(opts), byref(out), msg, len(msg))
    err = errors.from_status(status, _lib.text(msg.value))
    if err:
        if out.value:
            lib.nt_profile_free(out)
        raise err
    return Profile(out.value)


class Profile:
    """The event records of a trace; trace is its CPU samples and names (valid while the profile is open;
    closing the profile while its trace exports raises BadStateError)."""

    def __init__(self, handle):
        self._p = handle
        self._guard = Guard("profile")  # one guard for the profile and its trace: they are freed together
        self.trace = Trace(lib.nt_profile_trace(handle), owner=self, guard=self._guard)

    def _handle(self):
        if not self._p:
            raise errors.BadStateError("the profile is closed")
        return self._p

    def records(self, kind=None):
        """The records of kind ("alloc", "exceptions", "contention"; None: all),
        grouped by kind, in stream order of their first event."""
        if kind is not None and kind not in _KIND:
            raise ValueError("kind must be one of %s, not %r" % (", ".join(KINDS), kind))
        with self._guard("records()"):
            return self._records(kind)

    def _records(self, kind):
        p = self._handle()
        frames = self.trace._frames
        out = []
        for i in range(lib.nt_profile_record_count(p)):
            r = lib.nt_profile_record_at(p, i)
            name = _NAME.get(r.kind)
            if kind is not None and name != kind:
                continue
            heap = _HEAPS[min(r.heap, 3)] if name == "alloc" else r.heap
            out.append(ProfileRecord(name, r.thread_id, _lib.text(r.label), _lib.text(r.message), heap, r.open,
                                     r.value, r.count, r.time_ns, frames(r.stack_index)))
        return out

    def totals(self, kind):
        """Totals(events, value, records, open, unpaired_stops, without_stack) of a kind (in the window)."""
        if kind not in _KIND:
            raise ValueError("kind must be one of %s, not %r" % (", ".join(KINDS), kind))
        t = _lib.nt_profile_totals()
        with self._guard("totals()"):
            lib.nt_profile_totals_get(self._handle(), _KIND[kind], byref(t))
        return Totals(t.events, t.value, t.records, t.open, t.unpaired_stops, t.without_stack)

    def gcs(self):
        """The GC timeline, in order of start time: a GC per GCStart, with its
        end, pause and heap sizes (the library's, as 'nettrace gc' shows)."""
        with self._guard("gcs()"):
            p = self._handle()
            return [_gc(lib.nt_profile_gc_at(p, i).contents) for i in range(lib.nt_profile_gc_count(p))]

    @property
    def span(self):
        """Trace-clock ns of the first and last event or sample read."""
        first, last = c_int64(), c_int64()
        with self._guard("span"):
            lib.nt_profile_span(self._handle(), byref(first), byref(last))
        return first.value, last.value

    @property
    def memory_peak(self):
        """The most bytes the profile held while it was built (an upper bound)."""
        with self._guard("memory_peak"):
            return lib.nt_profile_memory_peak(self._handle())

    def close(self):
        with self._guard("close()", exclusive=True):
            if self._p:
                self.trace._t = None
                lib.nt_profile_free(self._p)
                self._p = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_p", None):
            self.close()


def _absent(v):
    return None if v == -1 else v


def _gc(g):
    return GC(g.number, g.generation, _lib.text(lib.nt_gc_reason_name(g.reason)),
              _lib.text(lib.nt_gc_type_name(g.type)), g.thread_id,
              *(_absent(v) for v in (g.start_ns, g.end_ns, g.suspend_begin_ns, g.suspend_end_ns, g.restart_end_ns,
                                     g.suspension_ns, g.pause_ns, g.heap_before, g.heap_after, g.promoted)),
              tuple(_absent(v) for v in g.gen_size))
