"""Misuse of the binding's objects raises instead of touching freed memory.

Each case here freed or corrupted the library's objects before the guards:
python_test.sh also runs this file over the AddressSanitizer build of the
library (when the tree is configured with --enable-sanitizers), where a
use-after-free aborts the process instead of passing by luck.
"""
import io
import threading
import unittest

import nettrace
from tests.support import corpus


def _data(name="spin-threads-dotnet-trace.nettrace"):
    with open(corpus(name), "rb") as f:
        return f.read()


class ParserMisuseTest(unittest.TestCase):
    def setUp(self):
        self.data = _data()

    def test_close_inside_a_callback(self):
        # close() from a callback would free the parser under its own feed.
        seen = []
        p = None

        def on_sample(s):
            seen.append(s)
            p.close()

        p = nettrace.Parser(on_sample=on_sample, keep_trace=True)
        with self.assertRaises(nettrace.BadStateError) as cm:
            p.feed(self.data)
        self.assertIn("callback", str(cm.exception))
        self.assertEqual(len(seen), 1)  # the parse stopped at the misuse
        # The parser is still whole: the same error again, then a clean close.
        with self.assertRaises(nettrace.BadStateError):
            p.feed(self.data)
        with self.assertRaises(nettrace.BadStateError):
            p.close()
        self.assertTrue(p._closed)

    def test_feed_inside_a_callback(self):
        # A re-entrant feed() would push bytes into the middle of a block.
        p = None
        raised = []

        def on_sample(s):
            try:
                p.feed(b"\0" * 64)
            except nettrace.BadStateError as e:
                raised.append(e)
                raise

        p = nettrace.Parser(on_sample=on_sample)
        with self.assertRaises(nettrace.BadStateError):
            p.feed(self.data)
        self.assertEqual(len(raised), 1)
        self.assertIn("callback", str(raised[0]))

    def test_take_window_inside_a_callback(self):
        p = None

        def on_sample(s):
            p.take_window()

        p = nettrace.Parser(on_sample=on_sample, windows=True)
        with self.assertRaises(nettrace.BadStateError):
            p.feed(self.data)
        with self.assertRaises(nettrace.BadStateError):
            p.feed(self.data)  # the same error again, nothing fed

    def test_request_windows_inside_a_callback(self):
        # Opening, closing and cutting windows from a callback would change the
        # window object the parser is feeding: refused like take_window.
        for name in ("open_request", "close", "cut"):
            p, r = None, None

            def on_sample(s):
                {"open_request": lambda: p.open_request(0), "close": lambda: r.close(1),
                 "cut": lambda: p.cut(0, 1)}[name]()

            p = nettrace.Parser(on_sample=on_sample, windows=True, recorder_ns=10**9)
            r = p.open_request(0)
            with self.assertRaises(nettrace.BadStateError, msg=name):
                p.feed(self.data)
            # A request whose close was refused is still open: it closes now.
            self.assertIsNotNone(r.close(1), name)

    def test_offset_inside_a_callback_is_allowed(self):
        # Reading the offset changes nothing: it stays allowed.
        offsets = []
        p = None
        p = nettrace.Parser(on_sample=lambda s: offsets.append(p.offset))
        p.feed(self.data)
        p.close()
        self.assertTrue(offsets)
        self.assertEqual(offsets, sorted(offsets))

    def test_two_threads_feeding_one_parser(self):
        # ctypes lets go of the GIL inside nt_parser_feed: a second thread
        # feeding (or closing) meanwhile is refused, never run concurrently.
        entered, release = threading.Event(), threading.Event()

        def on_sample(s):
            if not entered.is_set():
                entered.set()
                release.wait(10)

        p = nettrace.Parser(on_sample=on_sample)
        errors = []
        worker = threading.Thread(target=lambda: p.feed(self.data))
        worker.start()
        try:
            self.assertTrue(entered.wait(10))
            for call in (lambda: p.feed(self.data), p.close, p.take_window):
                try:
                    call()
                except nettrace.BadStateError as e:
                    errors.append(e)
        finally:
            release.set()
            worker.join(30)
        self.assertEqual(len(errors), 3)
        self.assertIn("another thread", str(errors[0]))
        p.close()


class TraceMisuseTest(unittest.TestCase):
    def test_iterator_outliving_close(self):
        t = nettrace.open(corpus("spin-threads-dotnet-trace.nettrace"))
        it = t.samples()
        next(it)
        t.close()
        with self.assertRaises(nettrace.BadStateError):
            list(it)

    def test_iterator_outliving_the_profile(self):
        prof = nettrace.open_profile(corpus("spin-threads-dotnet-trace.nettrace"))
        it = prof.trace.samples()
        next(it)
        prof.close()
        with self.assertRaises(nettrace.BadStateError):
            list(it)
        with self.assertRaises(nettrace.BadStateError):
            prof.trace.top(3)

    def test_close_inside_an_export(self):
        # The writer closing the trace under the export is refused; the
        # export finishes on a whole trace.
        t = nettrace.open(corpus("spin-threads-dotnet-trace.nettrace"))

        class Closer(io.BytesIO):
            def write(self, b):
                t.close()

        with self.assertRaises(nettrace.BadStateError):
            t.write_speedscope(Closer())
        self.assertGreater(len(t.top(3)), 0)
        t.close()

    def test_profile_close_inside_its_trace_export(self):
        prof = nettrace.open_profile(corpus("spin-threads-dotnet-trace.nettrace"))

        class Closer(io.BytesIO):
            def write(self, b):
                prof.close()

        with self.assertRaises(nettrace.BadStateError):
            prof.trace.write_folded(Closer())
        self.assertGreater(len(prof.records()) + len(prof.trace), 0)
        prof.close()
        with self.assertRaises(nettrace.BadStateError):
            prof.records()


if __name__ == "__main__":
    unittest.main()
