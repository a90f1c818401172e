import json
import unittest
import uuid

import nettrace
from nettrace.events import FileTime
from tests.support import cli, corpus


def as_cli_json(value):
    """A decoded value in the form 'nettrace events --json' prints it."""
    if isinstance(value, dict):
        return {k: as_cli_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_cli_json(v) for v in value]
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, FileTime):
        if value < 0:
            return int(value)
        d = value.datetime
        return "%04d-%02d-%02dT%02d:%02d:%02d.%07dZ" % (d.year, d.month, d.day, d.hour, d.minute, d.second,
                                                         value % 10000000)
    return value


class EventsTest(unittest.TestCase):
    def check_like_the_tool(self, name):
        events = []
        p = nettrace.Parser(on_event=events.append)
        with open(corpus(name), "rb") as f:
            p.feed(f.read())
        p.close()
        events.sort(key=lambda e: e.time_ns)  # the tool's order: time, ties in stream order
        want = [json.loads(line) for line in cli("events", "--json", corpus(name)).decode().splitlines()]
        self.assertEqual(len(events), len(want))
        self.assertGreater(len(want), 10)
        for e, w in zip(events, want):
            got = {"time_ns": e.time_ns, "thread": e.thread_id, "provider": e.provider, "event_id": e.event_id,
                   "version": e.version, "name": e.name, "fields": as_cli_json(e.fields)}
            if e.error is not None:
                got["error"], got["error_offset"] = e.error, e.error_offset
            elif e.leftover:
                got["leftover"] = e.leftover
            self.assertEqual(got, w)
        return events

    def test_event_fields_like_the_tool(self):
        events = self.check_like_the_tool("event-fields.nettrace")
        kinds = {type(v) for e in events for v in e.fields.values()}
        self.assertTrue({int, str} <= kinds, kinds)

    def test_gc_events_like_the_tool(self):
        events = self.check_like_the_tool("profile-gc.nettrace")
        starts = [e for e in events if e.name.startswith("GCStart")]
        self.assertTrue(starts and all("Count" in e.fields for e in starts))

    def test_events_function(self):
        # nettrace.events(): the same events, stream order, from a path,
        # bytes or a file; a truncated stream yields what came before, then
        # its error.
        path = corpus("event-fields.nettrace")
        streamed = []
        p = nettrace.Parser(on_event=streamed.append)
        with open(path, "rb") as f:
            data = f.read()
        p.feed(data)
        p.close()
        self.assertEqual(list(nettrace.events(path)), streamed)
        self.assertEqual(list(nettrace.events(data)), streamed)
        with open(path, "rb") as f:
            self.assertEqual(list(nettrace.events(f)), streamed)
        got = []
        with self.assertRaises(nettrace.TruncatedError) as cm:
            for e in nettrace.events(data[:len(data) // 2]):
                got.append(e)
        self.assertTrue(got)
        self.assertEqual(got, streamed[:len(got)])
        self.assertIsNotNone(cm.exception.offset)


if __name__ == "__main__":
    unittest.main()
