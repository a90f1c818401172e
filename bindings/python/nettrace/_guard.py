"""Who is inside the library with an object right now.

ctypes lets go of the GIL for every C call and runs Python callbacks from
inside them, so without a record of the calls under way a callback (or
another thread) can free a parser or a trace while the library is still
using it, or push bytes into the middle of a block.  A Guard records each
call under way; a call that would conflict with one is refused with
BadStateError, never queued: a callback waiting for its own caller would
wait forever.
"""
import threading
from contextlib import contextmanager

from . import errors


class Guard:
    """Calls under way on one library object (a parser, or a trace and the
    profile that owns it).  Shared calls (reading a trace) may overlap;
    an exclusive call (feeding, closing) runs alone."""

    def __init__(self, kind):
        self._kind = kind
        self._lock = threading.Lock()
        self._calls = []  # (thread ident, what) of each call under way
        self._exclusive = False

    def _refusal(self, what, me):
        inside = [w for tid, w in self._calls if tid == me]
        if inside:
            return errors.BadStateError("%s called from inside a callback of this %s's %s: the %s is in use"
                                        % (what, self._kind, inside[-1], self._kind))
        return errors.BadStateError("%s while another thread is inside this %s's %s: a %s is used by one "
                                    "thread at a time" % (what, self._kind, self._calls[-1][1], self._kind))

    def inside(self):
        """Whether this thread has a call under way (so runs in its callback)."""
        me = threading.get_ident()
        with self._lock:
            return any(tid == me for tid, _ in self._calls)

    def enter(self, what, exclusive=False):
        me = threading.get_ident()
        with self._lock:
            if self._calls and (exclusive or self._exclusive):
                raise self._refusal(what, me)
            self._calls.append((me, what))
            self._exclusive = exclusive

    def leave(self):
        me = threading.get_ident()
        with self._lock:
            for i in range(len(self._calls) - 1, -1, -1):
                if self._calls[i][0] == me:
                    del self._calls[i]
                    break
            if not self._calls:
                self._exclusive = False

    @contextmanager
    def __call__(self, what, exclusive=False):
        self.enter(what, exclusive)
        try:
            yield
        finally:
            self.leave()
