"""top()'s wall weight and time window, and wall_ns(), against 'nettrace top --json'."""
import json
import unittest

import nettrace
from tests.support import cli, corpus


def tool_top(path, *args):
    """The tool's rows (name, exclusive, inclusive) and its table's total."""
    out = json.loads(cli("top", "--json", "-n", "0", *(args + (path,))).decode())
    table = out["tables"][0]
    return [(m["name"], m["exclusive"], m["inclusive"]) for m in table["methods"]], table["samples"]


class TopWindowTest(unittest.TestCase):
    path = corpus("spin-threads.nettrace")

    def rows(self, entries):
        return [(r.name, r.exclusive, r.inclusive) for r in entries]

    def test_wall_weight_is_the_tools(self):
        with nettrace.open(self.path) as t:
            rows, total = tool_top(self.path, "--profile", "wall")
            self.assertEqual(self.rows(t.top(0, weight="wall")), rows)
            # ns, not samples: the weights are the samples' wall_ns, summed.
            wall = t.wall_ns()
            self.assertEqual(len(wall), len(t))
            self.assertEqual(sum(wall), total)
            self.assertGreater(total, len(t))
            by_samples, count = tool_top(self.path)
            self.assertEqual(self.rows(t.top(0)), by_samples)
            self.assertNotEqual(by_samples, rows)
            with self.assertRaises(ValueError):
                t.top(weight="time")

    def test_wall_ns_is_the_gap_to_the_threads_next_sample(self):
        with nettrace.open(self.path) as t:
            samples, wall = list(t.samples()), t.wall_ns()
            nxt = {}
            for i in range(len(samples) - 1, -1, -1):
                s = samples[i]
                if s.thread_id in nxt:
                    self.assertEqual(wall[i], nxt[s.thread_id] - s.time_ns, i)
                else:
                    self.assertEqual(wall[i], t.sampling_interval_ns, i)
                nxt[s.thread_id] = s.time_ns

    def test_window_is_the_tools(self):
        with nettrace.open(self.path) as t:
            for frm, to in (("1s", "2500ms"), ("+500ms", None), (None, "1.5s")):
                args = ()
                if frm:
                    args += ("--from", frm)
                if to:
                    args += ("--to", to)
                for weight in ("samples", "wall"):
                    rows, total = tool_top(self.path, "--profile", "wall" if weight == "wall" else "cpu", *args)
                    got = t.top(0, weight=weight, from_=frm, to=to)
                    self.assertEqual(self.rows(got), rows, (frm, to, weight))
                    self.assertEqual(sum(r.exclusive for r in got), total)
            # The window selects by sample time: its totals are those samples'.
            lo, hi = t.time_ns("1s"), t.time_ns("2500ms")
            inside = [(s, w) for s, w in zip(t.samples(), t.wall_ns()) if lo <= s.time_ns < hi and s.frames]
            self.assertTrue(0 < len(inside) < len(t))
            self.assertEqual(sum(r.exclusive for r in t.top(0, from_="1s", to="2500ms")), len(inside))
            self.assertEqual(sum(r.exclusive for r in t.top(0, weight="wall", from_="1s", to="2500ms")),
                             sum(w for _, w in inside))

    def test_absolute_and_relative_ends_agree(self):
        with nettrace.open(self.path) as t:
            lo = t.time_ns("1s")
            self.assertEqual(lo - t.time_ns("0s"), 1000000000)
            self.assertEqual(t.time_ns("@%d" % lo), lo)
            self.assertEqual(t.time_ns(lo), lo)
            self.assertEqual(t.time_ns("+1000ms"), lo)
            relative = self.rows(t.top(0, from_="1s"))
            self.assertEqual(self.rows(t.top(0, from_="@%d" % lo)), relative)
            self.assertEqual(self.rows(t.top(0, from_=lo)), relative)
            rows, _ = tool_top(self.path, "--from", "@%d" % lo)
            self.assertEqual(relative, rows)
            for bad in ("2", "-1s", "1 s", "1h", "@", "", "@1x"):
                with self.assertRaises(ValueError, msg=bad):
                    t.top(from_=bad)
            with self.assertRaises(TypeError):
                t.top(to=1.5)


if __name__ == "__main__":
    unittest.main()
