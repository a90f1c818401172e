import json
import unittest

import nettrace
from tests.support import cli, corpus, corpus_files


class FrameNameTest(unittest.TestCase):
    def test_frames_are_named_as_the_tool_names_them(self):
        # frame.name is the tool's own name (simple assembly name), so the
        # samples rendered from it are 'nettrace samples' byte for byte.
        for path in corpus_files()[:6]:
            with nettrace.open(path) as t:
                lines = []
                for s in t.samples():
                    stack = ";".join(f.name for f in reversed(s.frames)) or "-"
                    lines.append("%d %d %s %s\n" % (s.time_ns, s.thread_id, "M" if s.managed else "E", stack))
                self.assertEqual("".join(lines).encode(), cli("samples", path), path)
                named = [f for s in t.samples() for f in s.frames if f.method]
                self.assertTrue(named, path)
                for f in named[:50]:
                    self.assertNotIn(",", f.name.split("!")[0], f)  # simple, not "X, Version=..."
                    self.assertTrue(f.name.startswith(f.assembly.split(",")[0] + "!"), f)


class GCTimelineTest(unittest.TestCase):
    def test_gcs_are_the_tools(self):
        path = corpus("profile-gc.nettrace")
        want = json.loads(cli("gc", "--json", path))["gcs"]
        with nettrace.open_profile(path) as p:
            got = [g._asdict() for g in p.gcs()]
        self.assertGreaterEqual(len(got), 5)
        for g in got:
            g["generation_sizes"] = list(g["generation_sizes"])
        self.assertEqual(got, want)
        self.assertTrue(all(g["pause_ns"] and g["pause_ns"] > 0 for g in got))

    def test_no_gc_events_no_gcs(self):
        with nettrace.open_profile(corpus("spin-threads.nettrace")) as p:
            self.assertEqual(p.gcs(), [])


if __name__ == "__main__":
    unittest.main()
