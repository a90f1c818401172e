import os
import unittest

import nettrace
from tests.support import corpus, samples_text


class ParserTest(unittest.TestCase):
    def setUp(self):
        self.path = corpus("spin-threads-dotnet-trace.nettrace")
        with open(self.path, "rb") as f:
            self.data = f.read()
        self.want = nettrace.open(self.path)

    def test_any_chunking(self):
        for chunk in (1, 7, 4096, len(self.data)):
            seen = {"samples": 0, "ips": 0, "methods": 0, "headers": []}

            def on_sample(s):
                seen["samples"] += 1
                seen["ips"] += len(s.ips)
                self.assertIsInstance(s.managed, bool)
                self.assertGreaterEqual(s.offset, 0)

            def on_method(m):
                seen["methods"] += 1
                self.assertIn(m.event, nettrace.parser.RECORD_EVENTS)

            p = nettrace.Parser(on_header=seen["headers"].append, on_sample=on_sample, on_method=on_method,
                                keep_trace=True)
            for off in range(0, len(self.data), chunk):
                p.feed(self.data[off:off + chunk])
            t = p.close()
            self.assertEqual(seen["samples"], len(self.want))
            self.assertTrue(seen["ips"] and seen["methods"])
            self.assertEqual(seen["headers"][0].frequency, 1000000000)
            self.assertEqual(samples_text(t), samples_text(self.want))

    def test_windows(self):
        # The samples since the last window, named from every record seen;
        # together the windows hold every sample.
        with self.assertRaises(nettrace.InvalidArgumentError):
            nettrace.Parser(keep_trace=True, windows=True)
        count = [0]
        p = nettrace.Parser(windows=True, on_sample=lambda s: count.__setitem__(0, count[0] + 1))
        total, windows, last = 0, 0, None
        for off in range(0, len(self.data), 16 << 10):
            p.feed(self.data[off:off + (16 << 10)])
            w = p.take_window()
            times = [s.time_ns for s in w.samples()]
            self.assertEqual(times, sorted(times))
            if len(w):
                windows, last = windows + 1, w
            total += len(w)
        self.assertEqual(total, len(self.want))
        self.assertEqual(count[0], total)
        self.assertGreaterEqual(windows, 3)
        self.assertTrue(any("Spinner.Spin" in r.name for r in last.top(3)))
        p.close()
        with self.assertRaises(nettrace.BadStateError):
            p.take_window()

    def test_request_windows_and_recorder(self):
        # Each request window and cut holds exactly the samples of its span
        # on its threads that the whole trace has, named as it names them.
        want = list(self.want.samples())
        n = len(want)
        self.assertGreaterEqual(n, 30)
        lo, hi = want[n // 3].time_ns, want[2 * n // 3].time_ns
        tid = want[n // 2].thread_id
        in_span = [s for s in want if lo <= s.time_ns < hi]
        mine = [s for s in in_span if s.thread_id == tid]
        self.assertTrue(0 < len(mine) < len(in_span), "no test of the thread filter")
        with self.assertRaises(nettrace.InvalidArgumentError):
            nettrace.Parser(recorder_ns=10**9)
        p = nettrace.Parser(windows=True, recorder_ns=3600 * 10**9)
        every, one = p.open_request(lo), p.open_request(lo, threads=[tid])
        for off in range(0, len(self.data), 4096):
            p.feed(self.data[off:off + 4096])

        def check(what, t, expect):
            got = list(t.samples())
            self.assertEqual(len(got), len(expect), what)
            self.assertEqual([(s.time_ns, s.thread_id) for s in got], [(s.time_ns, s.thread_id) for s in expect], what)
            self.assertTrue(any("Spinner.Spin" in r.name for r in t.top(5)), what)

        check("every thread's request", every.close(hi), in_span)
        check("one thread's request", one.close(hi), mine)
        with self.assertRaises(nettrace.BadStateError):
            one.close(hi)
        check("a cut", p.cut(lo, hi, threads=[tid]), mine)
        check("the same cut again", p.cut(lo, hi, threads=[tid]), mine)
        p.close()
        with self.assertRaises(nettrace.BadStateError):
            p.open_request(lo)
        q = nettrace.Parser(windows=True)
        q.feed(self.data)
        with self.assertRaises(nettrace.InvalidArgumentError):
            q.cut(lo, hi)
        q.close()
        with self.assertRaises(nettrace.BadStateError):
            nettrace.Parser(keep_trace=True).open_request(lo)

    def test_events_dropped_are_said(self):
        # By the whole trace, and by a request window over the span the losses
        # fall in (the window counts each thread's gaps as the parser finds them).
        path = corpus(os.path.join("seeds", "v6_drops.nettrace"))
        whole = nettrace.open(path)
        self.assertEqual(whole.events_dropped, 7, "nettrace info says 7")
        self.assertEqual(nettrace.open(self.path).events_dropped, 0)
        p = nettrace.Parser(windows=True)
        r = p.open_request(-2**63)
        with open(path, "rb") as f:
            p.feed(f.read())
        t = r.close(2**63 - 1)
        p.close()
        self.assertEqual((len(t), t.events_dropped), (len(whole), whole.events_dropped))

    def test_window_stats(self):
        # The window object's counts follow what it was asked and what it holds.
        p = nettrace.Parser(windows=True, recorder_ns=3600 * 10**9)
        r = p.open_request(0)
        p.feed(self.data)
        st = p.window_stats()
        self.assertEqual((st.open_windows, st.windows, st.recorder_samples), (1, 0, len(self.want)), st)
        self.assertTrue(st.records_seen and st.records and 0 < st.memory <= st.memory_peak, st)
        self.assertTrue(0 < st.record_bytes <= st.record_budget, st)
        r.close(2**63 - 1)
        p.take_window()
        after = p.window_stats()
        self.assertEqual((after.open_windows, after.windows), (0, 2), after)
        self.assertGreaterEqual(after.memory_peak, st.memory_peak)
        p.close()
        with self.assertRaises(nettrace.BadStateError):
            p.window_stats()

    def test_record_budget(self):
        # A record budget bounds what the windows keep, and the stats say what it cost.
        with self.assertRaises(nettrace.InvalidArgumentError):
            nettrace.Parser(record_budget=1 << 20)

        def stats(budget):
            p = nettrace.Parser(windows=True, record_budget=budget)
            p.feed(self.data)
            st = p.window_stats()
            p.close()
            return st
        free = stats(0)
        budget = free.record_bytes // 4
        tight = stats(budget)
        self.assertEqual((free.records_evicted, tight.record_budget), (0, budget))
        self.assertTrue(tight.record_bytes <= budget and tight.records_evicted and tight.records < free.records,
                        (tight, free))

    def test_callback_exception_stops(self):
        class Enough(Exception):
            pass
        count = [0]

        def on_sample(s):
            count[0] += 1
            if count[0] == 10:
                raise Enough()
        p = nettrace.Parser(on_sample=on_sample)
        with self.assertRaises(Enough):
            p.feed(self.data)
        with self.assertRaises(Enough):  # sticky
            p.feed(self.data)
        self.assertEqual(count[0], 10)

    def test_errors_carry_the_offset(self):
        p = nettrace.Parser()
        p.feed(self.data[:1000])
        self.assertEqual(p.offset, 1000)
        with self.assertRaises(nettrace.TruncatedError) as cm:
            p.close()
        self.assertLessEqual(cm.exception.offset, 1000)
        with self.assertRaises(nettrace.BadStateError):
            p.feed(b"x")


if __name__ == "__main__":
    unittest.main()
