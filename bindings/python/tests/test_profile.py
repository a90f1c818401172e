"""Event profiles: records with exception messages and a time window, against 'nettrace stacks --profile'."""
import collections
import unittest

import nettrace
from tests.support import cli, corpus


def frame_name(f):
    if not (f.method or f.type or f.assembly):
        return "0x%x" % f.ip
    return "%s!%s.%s" % (f.assembly.split(",")[0] or "?", f.type, f.method)


def folded(records, label):
    """The records as 'nettrace stacks --profile K --by-label' folds them: label root, stack, weight."""
    weights = collections.Counter()
    for r in records:
        weights[";".join([label(r)] + [frame_name(f) for f in reversed(r.frames)])] += r.value
    return sorted("%s %d" % kv for kv in weights.items())


def tool_folded(path, kind, *args):
    out = cli("stacks", "--profile", kind, "--by-label", *(args + (path,))).decode()
    return sorted(out.splitlines())


class ProfileTest(unittest.TestCase):
    def test_exception_messages(self):
        path = corpus("profile-exceptions.nettrace")
        with nettrace.open_profile(path, exception_messages=True) as p:
            recs = p.records("exceptions")
            self.assertTrue(recs)
            self.assertTrue(all(r.kind == "exceptions" and r.message for r in recs))
            self.assertEqual(folded(recs, lambda r: "%s: %s" % (r.label, r.message)),
                             tool_folded(path, "exceptions", "--messages"))
            by_message = len({(r.label, r.message) for r in recs})
            self.assertEqual(sum(r.value for r in recs), p.totals("exceptions").value)
        with nettrace.open_profile(path) as p:
            recs = p.records("exceptions")
            self.assertTrue(all(r.message == "" for r in recs))
            # without messages, throws of one type merge: fewer labels
            self.assertLess(len({r.label for r in recs}), by_message)
            self.assertEqual(folded(recs, lambda r: r.label), tool_folded(path, "exceptions"))

    def test_window(self):
        path = corpus("profile-exceptions.nettrace")
        with nettrace.open_profile(path, exception_messages=True) as whole:
            times = sorted(r.time_ns for r in whole.records("exceptions"))
            everything = whole.totals("exceptions").events
        # an absolute window from the middle event, and one relative to the trace's start
        mid = times[len(times) // 2]
        with nettrace.open_profile(path, from_="@%d" % mid, exception_messages=True) as p:
            recs = p.records("exceptions")
            events = p.totals("exceptions").events
            self.assertTrue(0 < events < everything)
            self.assertTrue(all(r.time_ns >= mid for r in recs))
            self.assertEqual(folded(recs, lambda r: "%s: %s" % (r.label, r.message)),
                             tool_folded(path, "exceptions", "--messages", "--from", "@%d" % mid))
            rel = "%dns" % (mid - p.trace.time_ns("0s"))
        with nettrace.open_profile(path, to=rel) as p:
            self.assertEqual(p.totals("exceptions").events, everything - events)
            self.assertEqual(folded(p.records("exceptions"), lambda r: r.label),
                             tool_folded(path, "exceptions", "--to", rel))
        with self.assertRaises(ValueError):
            nettrace.open_profile(path, from_="2")

    def test_alloc_and_contention(self):
        for kind, name in (("alloc", "profile-alloc.nettrace"), ("contention", "profile-contention.nettrace")):
            path = corpus(name)
            with open(path, "rb") as f:
                data = f.read()
            with nettrace.open_profile(data) as p:
                recs = p.records(kind)
                self.assertTrue(recs, kind)
                self.assertEqual(sum(r.value for r in recs if not r.open), p.totals(kind).value)
                self.assertGreater(p.memory_peak, 0)
                first, last = p.span
                self.assertLessEqual(first, last)
                trace = p.trace
            with self.assertRaises(nettrace.BadStateError):
                trace.top()
        with self.assertRaises(nettrace.NotNettraceError):
            nettrace.open_profile(b"not a trace")


if __name__ == "__main__":
    unittest.main()
