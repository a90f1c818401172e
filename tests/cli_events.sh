#!/bin/sh
# nettrace events and the event names of nettrace info: on every trace of
# corpus/ and ../shared/corpus every line of events --json is valid JSON in
# valid UTF-8, one per event, and info names every event type; filters
# select what they say; hostile names and strings stay valid JSON.
set -u
CHECKS_STOP=1
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
need python3

check_trace() {
    "$nt" events --json "$1" > "$tmp/ev.jsonl"
    rc=$?
    "$nt" info --json "$1" > "$tmp/info.json"
    python3 - "$tmp/ev.jsonl" "$tmp/info.json" "$1" "$rc" <<'PY' || exit 1
import json, sys
raw = open(sys.argv[1], "rb").read()
text = raw.decode("utf-8")  # strict: fails on any invalid UTF-8
lines = text.split("\n")[:-1]
for n, line in enumerate(lines, 1):
    o = json.loads(line)
    assert isinstance(o["fields"], dict) and "name" in o and "time_ns" in o, f"line {n}"
info = json.load(open(sys.argv[2]))
assert len(lines) == info["events"], f"{sys.argv[3]}: {len(lines)} lines for {info['events']} events"
unnamed = [t for t in info["event_types"] if not t["name"]]
assert not unnamed, f"{sys.argv[3]}: unnamed event types {unnamed}"
print(f"ok {sys.argv[3].rsplit('/', 1)[-1]}: {len(lines)} events, {len(info['event_types'])} named types (exit {sys.argv[4]})")
PY
}

for f in "$top_srcdir"/corpus/*.nettrace; do check_trace "$f"; done
if shared=$(shared_corpus); then
    for f in "$shared"/*.nettrace; do check_trace "$f"; done
else
    echo "note: ../shared/corpus absent, only corpus/ checked"
fi

# filters, on a trace of our own
trace="$top_srcdir/corpus/spin-threads.nettrace"
samples=$("$nt" info --json "$trace" | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])')
n=$("$nt" events --event ThreadSample "$trace" | wc -l)
[ "$n" -eq "$samples" ] || fail "--event ThreadSample gave $n lines for $samples samples"
n=$("$nt" events --event 0 --provider Microsoft-DotNETCore-SampleProfiler "$trace" | wc -l)
[ "$n" -eq "$samples" ] || fail "--event 0 --provider gave $n lines"
"$nt" events --event MethodLoadVerbose "$trace" | grep -v ' MethodLoadVerbose_V[0-9]* ' && fail "--event MethodLoadVerbose let other events through"
tid=$("$nt" events --event ThreadSample "$trace" | awk 'NR == 1 { print $2 }')
"$nt" events --thread "$tid" "$trace" | awk -v t="$tid" '$2 != t { exit 1 }' || fail "--thread $tid let other threads through"
first=$("$nt" events "$trace" | awk 'NR == 10 { print $1 }')
last=$("$nt" events "$trace" | awk 'NR == 20 { print $1 }')
# the text's times are s since the trace's start, as --from/--to count
"$nt" events --from "${first}s" --to "${last}s" "$trace" > "$tmp/win.txt" || fail "events --from ${first}s failed"
[ -s "$tmp/win.txt" ] || fail "--from ${first}s --to ${last}s kept nothing"
awk -v a="$first" -v b="$last" '$1 < a || $1 >= b { exit 1 }' "$tmp/win.txt" \
    || fail "--from/--to let events outside [$first, $last) through"
head -1 "$tmp/win.txt" | awk -v a="$first" '$1 != a { exit 1 }' || fail "--from ${first}s missed the event at $first s"
# --absolute: the trace clock, which --json's time_ns also gives
"$nt" events --absolute "$trace" | awk 'NR == 10 { print $1 }' > "$tmp/abs10"
"$nt" events --json "$trace" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readlines()[9])["time_ns"])' |
    cmp -s - "$tmp/abs10" || fail "events --absolute is not the trace clock of --json"
start=$("$nt" info --json "$trace" | python3 -c 'import json,sys; print(json.load(sys.stdin)["start_ns"])')
python3 -c "import sys; a, s, r = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]; sys.exit(f'{(a - s) // 10**9}.{(a - s) % 10**9:09d}' != r)" \
    "$(cat "$tmp/abs10")" "$start" "$first" || fail "events' time $first s is not --absolute $(cat "$tmp/abs10") less the start $start"
"$nt" events --event NoSuchEvent "$trace" | grep -q . && fail "--event NoSuchEvent printed events"
"$nt" events --thread x "$trace" 2>/dev/null; [ $? -eq 2 ] || fail "a bad --thread is not a usage error"

# --stacks names frames as nettrace samples does: the sample events' stacks
# are the samples' frames, line for line
"$nt" events --stacks --absolute --event ThreadSample "$trace" > "$tmp/ev_stacks.txt" || fail "events --stacks"
"$nt" samples "$trace" > "$tmp/samples.txt" || fail "samples"
python3 - "$tmp/ev_stacks.txt" "$tmp/samples.txt" <<'PY' || exit 1
import sys
ev = []
for line in open(sys.argv[1], encoding="utf-8"):
    head, _, stack = line.rstrip("\n").partition(" stack=")
    t, thread = head.split(" ")[:2]
    ev.append((t, thread, stack or "-"))
sm = [tuple(l.rstrip("\n").split(" ", 3)[i] for i in (0, 1, 3)) for l in open(sys.argv[2], encoding="utf-8")]
assert len(ev) == len(sm), (len(ev), len(sm))
bad = [(a, b) for a, b in zip(ev, sm) if a != b]
assert not bad, bad[:3]
print(f"ok --stacks: {len(ev)} sample events carry the samples' stacks")
PY
"$nt" events --stacks --json "$trace" | python3 -c 'import json, sys; [json.loads(l) for l in sys.stdin]' \
    || fail "events --stacks --json is not JSON"

# hostile strings, V4 and V6: valid JSON, decoded as written, in time order
for v in 4 6; do
    "$top_builddir/tests/strings_trace" "$tmp/s$v.nettrace" $v || fail "strings_trace $v"
    "$nt" events --json "$tmp/s$v.nettrace" > "$tmp/s$v.jsonl" || fail "events on the V$v strings trace"
    python3 - "$tmp/s$v.jsonl" "$v" <<'PY' || exit 1
import json, sys
lines = open(sys.argv[1], "rb").read().decode("utf-8").split("\n")[:-1]
assert len(lines) == 3, lines
objs = [json.loads(l) for l in lines]
assert [o["time_ns"] for o in objs] == sorted(o["time_ns"] for o in objs), "not in time order"
o = objs[0]
assert o["name"] == "Ev\t1", o["name"]
assert o["fields"]["Text \"q\"\n"] == "a\"b\\c\t\x01\ufffdz", o["fields"]
assert o["fields"]["N"] == 7
if sys.argv[2] == "6":
    assert o["provider"] == "Bad\ufffd\ufffd-Provider\x01", o["provider"]
print(f"ok hostile strings V{sys.argv[2]}")
PY
done
# pointers and HRESULTs in hex in the text (as people read them); JSON keeps numbers
alloc="$top_srcdir/corpus/profile-alloc.nettrace"
exc="$top_srcdir/corpus/profile-exceptions.nettrace"
"$nt" events --event GCAllocationTick "$alloc" | head -1 > "$tmp/tick.txt"
grep -Eq ' Address=0x[0-9a-f]+ ' "$tmp/tick.txt" || fail "a pointer is not hex: $(cat "$tmp/tick.txt")"
"$nt" events --json --event GCAllocationTick "$alloc" | head -1 | grep -Eq '"Address":[0-9]+,' ||
    fail "--json lost the pointer's number"
"$nt" events --event ExceptionThrown "$exc" | head -1 | grep -q ' ExceptionHRESULT=0x80131509 ' ||
    fail "an HRESULT is not hex: $("$nt" events --event ExceptionThrown "$exc" | head -1)"
"$nt" events --json --event ExceptionThrown "$exc" | head -1 | grep -q '"ExceptionHRESULT":2148734217' ||
    fail "--json lost the HRESULT's number"
echo "ok: events and names"
