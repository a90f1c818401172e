import os
import tempfile
import unittest

import nettrace
from tests.support import LiveTarget, leaf_share


class NoEndpointTest(unittest.TestCase):
    def test_not_a_dotnet_process(self):
        # This Python process has no diagnostics endpoint.
        with self.assertRaises(nettrace.NoEndpointError) as cm:
            nettrace.collect(os.getpid(), 0.1)
        self.assertIsInstance(cm.exception, FileNotFoundError)
        self.assertEqual(cm.exception.status_name, "no_endpoint")


class LiveTest(unittest.TestCase):
    def setUp(self):
        self.target = LiveTarget()

    def tearDown(self):
        self.target.kill()

    def check_spinners(self, trace):
        for tid, method in ((self.target.alpha, "SpinAlpha"), (self.target.beta, "SpinBeta")):
            hits, total = leaf_share(trace, tid, method)
            self.assertTrue(total and hits * 2 >= total, "%s: %d of %d" % (method, hits, total))

    def test_collect_defaults(self):
        # Default providers, rundown on: methods compiled before the session are named.
        with nettrace.collect(self.target.pid, 1.5) as t:
            self.assertGreater(len(t), 0)
            self.check_spinners(t)

    def test_collect_to_file(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "live.nettrace")
            with nettrace.collect(self.target.pid, 1.0, output=out) as t:
                self.check_spinners(t)
                self.assertEqual(len(nettrace.open(out)), len(t))

    def test_watch_windows(self):
        windows = list(nettrace.watch(self.target.pid, interval=0.3, duration=1.5))
        self.assertGreaterEqual(len(windows), 5)  # every 0.3 s, then the last after the stop
        self.assertGreaterEqual(sum(1 for w in windows if len(w)), 3)
        # The rundown at the stop names the spinners in the last window.
        hits, total = leaf_share(windows[-1], self.target.alpha, "SpinAlpha")
        self.assertTrue(total == 0 or hits * 2 >= total, "%d of %d" % (hits, total))
        # The rundown-first session names them in the windows before, as
        # 'nettrace top -p' does (methods compiled before the watch began).
        named = [w for w in windows[1:-1]
                 if any(r.name.endswith("SpinAlpha") or r.name.endswith("SpinBeta") for r in w.top(5))]
        self.assertTrue(named, [[r.name for r in w.top(3)] for w in windows])
        # Without it they stay addresses until the stop.
        early = list(nettrace.watch(self.target.pid, interval=0.3, duration=0.9, rundown_first=False))[:-1]
        self.assertFalse([w for w in early if any(r.name.endswith("SpinAlpha") for r in w.top(5))])
        # Closing the generator early stops the session.
        gen = nettrace.watch(self.target.pid, interval=0.2)
        next(gen)
        gen.close()
        with nettrace.collect(self.target.pid, 0.5) as t:  # the process takes a new session
            self.assertGreater(len(t), 0)

    def test_refused_has_the_hresult(self):
        bad = [nettrace.Provider(nettrace.PROVIDER_RUNTIME, nettrace.KEYWORD_JIT, 9)]  # levels are 0..5
        with self.assertRaises(nettrace.RefusedError) as cm:
            nettrace.collect(self.target.pid, 0.5, providers=bad)
        self.assertEqual(cm.exception.hresult, 0x80131384)

    def test_stream_cap(self):
        with self.assertRaises(nettrace.StreamCapError) as cm:
            nettrace.collect(self.target.pid, 1.5, max_stream_bytes=16 << 10)
        self.assertIsNotNone(cm.exception.trace)


if __name__ == "__main__":
    unittest.main()
