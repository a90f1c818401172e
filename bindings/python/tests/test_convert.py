import os
import subprocess
import tempfile
import unittest

import nettrace

from .support import corpus, corpus_files


def cli_convert(*args):
    """The tool's output file for 'nettrace convert|slice ARGS -o OUT'."""
    tool = os.environ.get("NETTRACE_CLI")
    if not tool:
        raise unittest.SkipTest("NETTRACE_CLI is not set (make check sets it to the build tree's nettrace)")
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.nettrace")
        subprocess.run([tool] + list(args) + ["-o", out], check=True, env=dict(os.environ, NETTRACE_NO_PROGRESS="1"))
        with open(out, "rb") as f:
            return f.read()


class ConvertTest(unittest.TestCase):
    def test_every_corpus_trace_converts_to_the_tools_bytes(self):
        for path in corpus_files():
            for fmt in (4, 6):
                with self.subTest(trace=os.path.basename(path), format=fmt):
                    try:
                        want = cli_convert("convert", path, "--to", "v%d" % fmt)
                    except subprocess.CalledProcessError:
                        continue  # the tool refuses it (exit 3: left out); the C tests cover those
                    self.assertEqual(nettrace.convert(path, format=fmt), want)

    def test_bytes_in_equal_a_path_in_and_a_slice_equals_the_tools(self):
        path = corpus("spin-threads.nettrace")
        with open(path, "rb") as f:
            data = f.read()
        self.assertEqual(nettrace.convert(data, format=6), nettrace.convert(path, format=6))
        want = cli_convert("slice", path, "--from", "100ms", "--to", "300ms")
        got = nettrace.convert(path, start="100ms", end="300ms")
        self.assertEqual(got, want)
        with nettrace.open(got) as s, nettrace.open(path) as t:
            lo, hi = t.time_ns("100ms"), t.time_ns("300ms")
            self.assertGreater(len(list(s.samples())), 0)
            self.assertEqual([x.time_ns for x in s.samples()],
                             [x.time_ns for x in t.samples() if lo <= x.time_ns < hi])

    def test_a_cut_input_raises_with_what_was_read(self):
        with open(corpus("spin-threads.nettrace"), "rb") as f:
            data = f.read()
        with self.assertRaises(nettrace.TruncatedError) as cm:
            nettrace.convert(data[: len(data) // 2], format=4)
        self.assertTrue(cm.exception.output.startswith(b"Nettrace"))
        self.assertGreater(cm.exception.conversion.events_written, 0)
        with nettrace.open(cm.exception.output) as t:
            self.assertGreater(len(list(t.samples())), 0)

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            nettrace.convert(b"", format=7)
        with self.assertRaises(nettrace.NotNettraceError):
            nettrace.convert(b"not a trace at all", format=6)


if __name__ == "__main__":
    unittest.main()
