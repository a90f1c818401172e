#!/bin/sh
# Honest thread-sample profiles (issue 25, item 2): the default profile is
# named thread-time (the sample profiler samples blocked threads too), `cpu`
# still works with a note, managed-cpu counts only managed samples, and the
# top header gives the managed / external shares, the measured sample rate
# (checked against the samples' own times) and a hint when external samples
# dominate.
set -u
CHECKS_STOP=1
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
need python3
trace="$top_srcdir/corpus/spin-threads.nettrace"
need_files "$trace"

"$nt" top "$trace" > "$tmp/top.txt" || fail "top failed"
"$nt" samples "$trace" > "$tmp/samples.txt" || fail "samples failed"
grep -q '^profile:  thread-time: every thread sampled, running or blocked' "$tmp/top.txt" ||
    fail "the header does not name the thread-time profile: $(head -8 "$tmp/top.txt")"
# the shares and the rate, from the canonical dump
python3 - "$tmp/top.txt" "$tmp/samples.txt" <<'PY' || exit 1
import re, sys
top = open(sys.argv[1]).read()
# counts are grouped by three with commas (nettrace(1) NUMBERS)
top = re.sub(r"(?<=\d),(?=\d)", "", top)
m = re.search(r"^kinds:    (\d+) managed \(([\d.]+)%\), (\d+) external \(([\d.]+)%", top, re.M)
assert m, "no kinds line:\n" + top[:600]
kinds = {"M": 0, "E": 0, "?": 0}
times = {}
for line in open(sys.argv[2]):
    ts, tid, k = line.split(" ", 3)[:3]
    kinds[k] += 1
    times.setdefault(tid, []).append(int(ts))
assert int(m.group(1)) == kinds["M"] and int(m.group(3)) == kinds["E"], (m.groups(), kinds)
total = sum(kinds.values())
assert abs(float(m.group(2)) - 100 * kinds["M"] / total) < 0.06, m.group(2)
# rate: samples per second of each thread's sampled time (the gaps to its next
# sample, the last one weighing the nominal 1 ms)
span = sum(t[-1] - t[0] + 1_000_000 for t in (sorted(v) for v in times.values()))
want = total * 1e9 / span
r = re.search(r"^rate:     (\d+) samples per thread per second measured \(one every ([\d.]+) ms; "
              r"the trace's nominal interval: 1\.00 ms\)", top, re.M)
assert r, "no rate line:\n" + top[:600]
assert abs(int(r.group(1)) - want) <= max(1, want * 0.005), (r.group(1), want)
assert "note:     most samples are external" not in top, "a hint where external samples are a third"
print(f"ok: kinds {kinds['M']} managed / {kinds['E']} external and {r.group(1)} samples per thread-second"
      f" (the samples say {want:.1f})")
PY

# cpu: the old name, with a note; the same table
"$nt" top --profile cpu "$trace" > "$tmp/cpu.txt" 2> "$tmp/cpu.err" || fail "--profile cpu failed"
grep -q 'now called thread-time' "$tmp/cpu.err" || fail "--profile cpu gives no note: $(cat "$tmp/cpu.err")"
cmp -s "$tmp/top.txt" "$tmp/cpu.txt" || fail "--profile cpu differs from the default"
"$nt" top --profile thread-time "$trace" 2> "$tmp/tt.err" | cmp -s - "$tmp/top.txt" || fail "--profile thread-time differs"
[ -s "$tmp/tt.err" ] && fail "--profile thread-time printed: $(cat "$tmp/tt.err")"
# managed-cpu: only managed samples, as --managed-only counts them
"$nt" top --profile managed-cpu "$trace" > "$tmp/mc.txt" || fail "--profile managed-cpu failed"
"$nt" top --managed-only "$trace" > "$tmp/mo.txt" || fail "--managed-only failed"
cmp -s "$tmp/mc.txt" "$tmp/mo.txt" || fail "--profile managed-cpu differs from --managed-only"
grep -q '^profile:  managed-cpu' "$tmp/mc.txt" || fail "managed-cpu is not named in its header"
awk '/^ exclusive/ { on = 1; next } on && n++ < 3' "$tmp/mc.txt" | grep -q 'Thread.Join' &&
    fail "managed-cpu ranks the blocked Thread.Join among its top rows"
"$nt" samples --profile managed-cpu "$trace" | awk '$3 != "M" { exit 1 }' || fail "samples --profile managed-cpu kept external samples"
"$nt" stacks --profile managed-cpu "$trace" > "$tmp/mc.folded" || fail "stacks --profile managed-cpu failed"
"$nt" stacks --managed-only "$trace" | cmp -s - "$tmp/mc.folded" || fail "stacks --profile managed-cpu differs from --managed-only"
"$nt" top --profile wall "$trace" | grep -q '^profile:  wall' || fail "the wall header does not say so"
"$nt" collect --help | grep -q '^  thread-time ' || fail "collect --help does not list the thread-time profile"
echo "ok: thread-time, cpu (noted), managed-cpu and wall are named for what they count"

# a trace of blocked threads: the hint
shared=$(shared_corpus)
web="$shared/dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace"
if [ -f "$web" ]; then
    "$nt" top -n 3 "$web" 2>/dev/null > "$tmp/web.txt"
    grep -q '^note:     most samples are external' "$tmp/web.txt" || fail "no hint on the webapp trace: $(head -9 "$tmp/web.txt")"
    grep -q 'managed-cpu' "$tmp/web.txt" || fail "the hint does not name managed-cpu"
    echo "ok: the webapp trace (external samples) gets the hint"
else
    echo "note: ../shared/corpus absent: the hint on a blocked trace not checked"
fi
