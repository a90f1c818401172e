import io
import os
import tempfile
import unittest

import nettrace
from tests.support import cli, corpus, corpus_files, samples_text


class TraceTest(unittest.TestCase):
    def test_samples_match_the_library(self):
        # Time, 64-bit thread id, managed flag and every frame, innermost
        # first, as the library's own tool prints them.
        for path in corpus_files():
            with nettrace.open(path) as t:
                self.assertEqual(samples_text(t), cli("samples", path), path)

    def test_header_and_tables(self):
        with nettrace.open(corpus("call-tree.nettrace")) as t:
            # corpus/README.md: V4 framing, Linux clock in ns, 64-bit, 1 ms sampling.
            self.assertEqual((t.format_major, t.frequency, t.pointer_size, t.sampling_interval_ns),
                             (4, 1000000000, 8, 1000000))
            self.assertGreaterEqual(t.sync_time.year, 2020)
            self.assertGreater(len(t), 1000)
            methods, asm, mods = t.methods(), t.assemblies, t.modules
            self.assertTrue(methods and asm and mods)
            for m in methods:
                if m.module_id in mods:
                    self.assertEqual(asm[mods[m.module_id]], m.assembly)

    def test_frames_are_named_and_shared(self):
        with nettrace.open(corpus("spin-threads.nettrace")) as t:
            leaves = {}
            by_stack = {}
            for s in t.samples():
                if s.managed and s.frames and s.frames[0].method in ("SpinAlpha", "SpinBeta"):
                    f = s.frames[0]
                    self.assertTrue(f.type.endswith("Spinner"))
                    self.assertTrue(f.assembly.startswith("SpinThreads,"))
                    leaves[f.method] = s.thread_id
                if s.frames:
                    by_stack.setdefault(s.frames, s.frames)
                    # Samples on one stack share one frames tuple.
                    self.assertIs(by_stack[s.frames], s.frames)
            self.assertEqual(len(leaves), 2)
            self.assertNotEqual(leaves["SpinAlpha"], leaves["SpinBeta"])
            self.assertIn(leaves["SpinAlpha"], t.threads)
            # Stacks hold the library's frame ids: one Frame object per distinct
            # frame, however many stacks hold it.
            made = {id(f): f for st in by_stack for f in st}
            self.assertLessEqual(len(made), nettrace._lib.lib.nt_trace_frame_count(t._handle()))
            self.assertLess(len(made), sum(len(st) for st in by_stack))

    def test_exports_match_the_tool(self):
        path = corpus("spin-threads.nettrace")
        with nettrace.open(path) as t:
            for fmt, write in (("folded", t.write_folded), ("speedscope", t.write_speedscope),
                               ("pprof", t.write_pprof)):
                b = io.BytesIO()
                write(b, name=os.path.basename(path))
                # the library's default weight is the sample count; the tool's speedscope default is time
                self.assertEqual(b.getvalue(), cli("stacks", "-f", fmt, "--weight", "samples", path), fmt)
            with tempfile.TemporaryDirectory() as d:
                out = os.path.join(d, "x.folded")
                t.write_folded(out, managed_only=True, by_time=True)
                with open(out, "rb") as f:
                    self.assertEqual(f.read(), cli("stacks", "--managed-only", "--weight", "time", path))

            class Failing:
                def write(self, data):
                    raise OSError("disk full")
            with self.assertRaisesRegex(OSError, "disk full"):
                t.write_speedscope(Failing())
        with self.assertRaises(nettrace.BadStateError):
            t.write_folded(io.BytesIO())

    def test_top(self):
        with nettrace.open(corpus("spin-threads.nettrace")) as t:
            rows = t.top(0)
            with_frames = sum(1 for s in t.samples() if s.frames)
            self.assertEqual(sum(r.exclusive for r in rows), with_frames)
            three = t.top(3)
            self.assertEqual(len(three), 3)
            self.assertEqual(sum("Spinner.Spin" in r.name for r in three), 2)
            # One thread, by inclusive samples: each sample with frames counts once as exclusive.
            tid = t.threads[-1]
            rows = t.top(0, by_inclusive=True, thread_id=tid)
            self.assertEqual(sum(r.exclusive for r in rows),
                             sum(1 for s in t.samples() if s.thread_id == tid and s.frames))
            self.assertEqual([r.inclusive for r in rows], sorted((r.inclusive for r in rows), reverse=True))
            table = cli("top", "-n", "3", corpus("spin-threads.nettrace")).decode()
            for r in three:
                self.assertIn(r.name, table)
                self.assertGreaterEqual(r.inclusive, r.exclusive)

    def test_sources(self):
        path = corpus("call-tree.nettrace")
        with open(path, "rb") as f:
            data = f.read()
        n = len(nettrace.open(path))
        self.assertEqual(len(nettrace.open(data)), n)
        self.assertEqual(len(nettrace.open(bytearray(data))), n)
        self.assertEqual(len(nettrace.open(io.BytesIO(data))), n)
        with open(path, "rb") as f:
            self.assertEqual(len(nettrace.open(f)), n)


class ErrorTest(unittest.TestCase):
    def setUp(self):
        with open(corpus("spin-threads.nettrace"), "rb") as f:
            self.data = f.read()

    def test_status_classes(self):
        cases = [
            (b"this is not a trace at all", nettrace.NotNettraceError, 0),
            (b"", nettrace.NotNettraceError, 0),
            # The Trace object asks for reader version 5.
            (self.data[:39] + b"\x05" + self.data[40:4096], nettrace.UnsupportedVersionError, 39),
            (b"Nettrace\0\0\0\0\x07\0\0\0\0\0\0\0" + self.data[40:200], nettrace.UnsupportedVersionError, None),
        ]
        for data, cls, offset in cases:
            with self.assertRaises(cls) as cm:
                nettrace.open(data)
            e = cm.exception
            self.assertIsInstance(e, nettrace.NettraceError)
            self.assertEqual(e.status, cls.status)
            self.assertTrue(e.status_name)
            self.assertIsNone(e.trace)
            if offset is not None:
                self.assertEqual(e.offset, offset)
            self.assertIn("byte %d" % e.offset, str(e))

    def test_truncated_keeps_what_was_read(self):
        full = len(nettrace.open(self.data))
        # Samples fill the stream's first fifth; the rundown follows them.
        cut = len(self.data) // 6
        with self.assertRaises(nettrace.TruncatedError) as cm:
            nettrace.open(self.data[:cut])
        e = cm.exception
        self.assertTrue(0 < e.offset <= cut)
        self.assertIn(str(e.offset), str(e))
        self.assertTrue(0 < len(e.trace) < full)
        t = nettrace.open(self.data[:cut], partial=True)
        self.assertEqual(len(t), len(e.trace))
        self.assertIsInstance(t.error, nettrace.TruncatedError)

    def test_damage_never_crashes(self):
        for at in (len(self.data) // 6, len(self.data) // 3, len(self.data) - 200):
            bad = bytearray(self.data)
            for i in range(at, min(at + 64, len(bad))):
                bad[i] ^= 0xA5
            try:
                nettrace.open(bad)
            except nettrace.NettraceError as e:
                self.assertIsNotNone(e.offset)

    def test_no_endpoint_is_file_not_found(self):
        self.assertTrue(issubclass(nettrace.NoEndpointError, FileNotFoundError))
        self.assertTrue(issubclass(nettrace.DeadlineError, TimeoutError))


if __name__ == "__main__":
    unittest.main()
