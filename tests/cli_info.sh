#!/bin/sh
# nettrace info on the project's own traces: JSON keys and values, standard
# input, truncated and foreign input with their exit codes.
set -u
CHECKS_STOP=1
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
trace="$top_srcdir/corpus/spin-threads.nettrace"

"$nt" info --json "$trace" > "$tmp/full.json" || fail "info --json exited $?"
python3 - "$tmp/full.json" <<'PY' || exit 1
import json, sys
j = json.load(open(sys.argv[1]))
keys = ["status", "format_version", "pointer_size", "process_id", "processor_count", "qpc_frequency",
        "sync_qpc", "sampling_interval_ns", "events", "metadata", "stacks", "sequence_points", "samples",
        "methods", "sampled_threads", "event_types", "truncated_at"]
missing = [k for k in keys if k not in j]
assert not missing, f"missing keys {missing}"
assert j["status"] == "ok" and j["truncated_at"] is None, j["status"]
assert j["format_version"] == 4 and j["pointer_size"] == 8
assert j["samples"] > 1000 and j["methods"] > 100 and j["sampled_threads"] >= 3, j
types = [(t["provider"], t["event_id"], t["version"]) for t in j["event_types"]]
assert types == sorted(types), "event_types not sorted"
assert sum(t["count"] for t in j["event_types"]) == j["events"], "event type counts do not add up"
sp = [t for t in j["event_types"] if t["provider"] == "Microsoft-DotNETCore-SampleProfiler" and t["event_id"] == 0]
assert sp and sp[0]["count"] == j["samples"], "sample count differs from the SampleProfiler event count"
PY

# standard input gives the same answer
"$nt" info --json - < "$trace" > "$tmp/stdin.json" || fail "info - exited $?"
cmp -s "$tmp/full.json" "$tmp/stdin.json" || fail "standard input differs from the file"

# a truncated copy: exit 15, counts still printed, truncated_at set
size=$(wc -c < "$trace")
head -c $((size / 3)) "$trace" > "$tmp/cut.nettrace"
"$nt" info --json "$tmp/cut.nettrace" > "$tmp/cut.json"
rc=$?
[ $rc -eq 15 ] || fail "truncated input exited $rc, not 15"
python3 - "$tmp/cut.json" "$tmp/full.json" <<'PY' || exit 1
import json, sys
cut, full = (json.load(open(p)) for p in sys.argv[1:])
assert cut["status"] == "truncated", cut["status"]
assert isinstance(cut["truncated_at"], int) and 0 < cut["truncated_at"] <= full["bytes"] // 3 + 1
assert 0 < cut["samples"] <= full["samples"] and cut["events"] < full["events"], (cut["events"], full["events"])
PY

# not a trace: exit 11
printf 'hello, world, this is not a trace' > "$tmp/junk"
"$nt" info --json "$tmp/junk" > "$tmp/junk.json"
rc=$?
[ $rc -eq 11 ] || fail "junk exited $rc, not 11"
grep -q '"status": "not_nettrace"' "$tmp/junk.json" || fail "junk status"

# a NetPerf stream (its head written here: the length-prefixed FastSerialization
# header, then the Trace object's type with version 3): refused (exit 12) with
# the version its header says
printf '\024\000\000\000!FastSerialization.1\004\004\001\003\000\000\000\000\000\000\000\005\000\000\000Trace\006' \
    > "$tmp/head.netperf"
"$nt" info --json "$tmp/head.netperf" > "$tmp/netperf.json"
rc=$?
[ $rc -eq 12 ] || fail "NetPerf exited $rc, not 12"
python3 - "$tmp/netperf.json" <<'PY' || exit 1
import json, sys
j = json.load(open(sys.argv[1]))
assert j["status"] == "unsupported_version" and j["format_version"] == 3, (j["status"], j["format_version"])
assert j["pointer_size"] is None and "format version 3" in j["message"], j["message"]
PY
"$nt" info "$tmp/head.netperf" 2>/dev/null | grep -q '^format: *version 3, not read' || fail "NetPerf text: no format line"

# a missing file is an I/O error (1), a bad option a usage error (2)
"$nt" info "$tmp/nope" 2>/dev/null; [ $? -eq 1 ] || fail "missing file"
"$nt" info --bogus "$trace" 2>/dev/null; [ $? -eq 2 ] || fail "bad option"
echo "ok"
