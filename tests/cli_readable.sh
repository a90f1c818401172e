#!/bin/sh
# Readable by default (issue 25, items 6, 8, 10, 13): gc counts from the
# trace's start (as --from/--to do; --absolute for the trace clock), labels
# its sizes MiB, takes --from/--to, and takes a GC's size before from its
# GCPerHeapHistory when the trace has no allocation ticks; top's labels are
# quoted, not \x20-escaped; usage errors are a line or two pointing to
# --help, and `nettrace help CMD` is `CMD --help`.
set -u
CHECKS_STOP=1
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
need python3
gc="$top_srcdir/corpus/profile-gc.nettrace"
exc="$top_srcdir/corpus/profile-exceptions.nettrace"
need_files "$gc" "$exc"

"$nt" gc "$gc" > "$tmp/gc.txt" || fail "gc failed"
"$nt" gc --absolute "$gc" > "$tmp/abs.txt" || fail "gc --absolute failed"
"$nt" gc --json "$gc" > "$tmp/gc.json" || fail "gc --json failed"
"$nt" info --json "$gc" > "$tmp/info.json" || fail "info --json failed"
python3 - "$tmp/gc.txt" "$tmp/abs.txt" "$tmp/gc.json" "$tmp/info.json" <<'PY' || exit 1
import json, sys
text, absolute = open(sys.argv[1]).read().split("\n"), open(sys.argv[2]).read().split("\n")
gcs = json.load(open(sys.argv[3]))["gcs"]
start = json.load(open(sys.argv[4]))["start_ns"]
head = text[0].split()
assert head[4] == "start_s" and head[7:10] == ["before_mib", "after_mib", "promo_mib"], head
assert absolute[0].split()[4] == "start_ns", absolute[0]
for i, g in enumerate(gcs):
    row, arow = text[1 + i].split(), absolute[1 + i].split()
    assert abs(float(row[4]) - (g["start_ns"] - start) / 1e9) < 1e-6, (row, g["start_ns"], start)
    assert int(arow[4]) == g["start_ns"], (arow, g["start_ns"])
    if g["heap_after"] is not None:
        assert abs(float(row[8]) - g["heap_after"] / 1048576) < 0.001, (row, g["heap_after"])
print(f"ok: gc's {len(gcs)} starts count from the trace's start (--absolute: the trace clock), sizes in MiB")
PY
# --from/--to: the GCs that start in the window, and the summary counts them
first=$(awk 'NR == 2 { print $5 }' "$tmp/gc.txt")
third=$(awk 'NR == 4 { print $5 }' "$tmp/gc.txt")
"$nt" gc --from "${first}s" --to "${third}s" "$gc" > "$tmp/win.txt" || fail "gc --from/--to failed"
[ "$(awk 'NR > 1 && NF == 10' "$tmp/win.txt" | wc -l)" -eq 2 ] || fail "gc --from $first --to $third: $(cat "$tmp/win.txt")"
grep -q '^GCs: 2 ' "$tmp/win.txt" || fail "the summary does not count the window's GCs: $(cat "$tmp/win.txt")"
"$nt" gc --from 1000s "$gc" 2>&1 >/dev/null | grep -q 'select none of the trace' || fail "an empty gc window is silent"
echo "ok: gc --from/--to select GCs by their start"

# GCPerHeapHistory: a trace without allocation ticks still has sizes before its GCs
shared=$(shared_corpus)
hrm="$shared/perfview__HeartRateMonitor.10068.nettrace"
if [ -f "$hrm" ]; then
    "$nt" gc --json "$hrm" > "$tmp/h.json"
    "$nt" events --json --event GCPerHeapHistory "$hrm" > "$tmp/phh.jsonl"
    python3 - "$tmp/h.json" "$tmp/phh.jsonl" <<'PY' || exit 1
import json, sys
gcs = json.load(open(sys.argv[1]))["gcs"]
phh = [json.loads(l) for l in open(sys.argv[2])]
want = sum(v["SizeBefore"] for e in phh for v in e["fields"]["Values"])
assert len(gcs) == 1 and gcs[0]["heap_before"] == want, (gcs, want)
print(f"ok: a GC's size before without allocation ticks: {want} bytes, GCPerHeapHistory's SizeBefore")
PY
else
    echo "note: ../shared/corpus absent: GCPerHeapHistory sizes not checked"
fi

# quoted labels in top's table; the dump keeps its escaping
"$nt" top --profile exceptions --messages "$exc" > "$tmp/msg.txt" || fail "top --messages failed"
grep -q '"System.InvalidOperationException:invalid 0"' "$tmp/msg.txt" || fail "a label with a space is not quoted: $(cat "$tmp/msg.txt")"
grep -q 'x20' "$tmp/msg.txt" && fail "top still writes \\x20"
"$nt" samples --profile exceptions --messages "$exc" | grep -q 'invalid\\x200' || fail "samples lost its escaping"
echo "ok: top quotes labels with spaces; samples keeps \\x20"

# usage errors: getopt's line and one hint; help CMD
"$nt" top --bogus "$exc" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 2 ] && grep -q "'nettrace top --help' lists the options" "$tmp/err" ||
    fail "an unknown option: exit $rc, $(cat "$tmp/err")"
for c in top stacks samples info gc events convert; do
    "$nt" $c > /dev/null 2> "$tmp/err"; rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q -- "--help" "$tmp/err" ||
        fail "$c without FILE: exit $rc, $(cat "$tmp/err")"
done
"$nt" help top > "$tmp/h1" && "$nt" top --help > "$tmp/h2" && cmp -s "$tmp/h1" "$tmp/h2" || fail "help top is not top --help"
"$nt" nosuch 2> "$tmp/err"; [ $? -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "an unknown command: $(cat "$tmp/err")"
echo "ok: usage errors are one hint line; help CMD is CMD --help"

# numbers (nettrace(1) NUMBERS): counts grouped by three with commas, sizes
# also in KiB/MiB, waits in ms; JSON and samples stay raw
spin="$top_srcdir/corpus/spin-threads.nettrace"
alloc="$top_srcdir/corpus/profile-alloc.nettrace"
lock="$top_srcdir/corpus/profile-contention.nettrace"
"$nt" info "$spin" > "$tmp/info.txt" && "$nt" info --json "$spin" > "$tmp/info2.json" || fail "info failed"
"$nt" top "$spin" > "$tmp/top.txt" || fail "top failed"
"$nt" top --profile alloc "$alloc" > "$tmp/alloc.txt" && "$nt" top --profile contention "$lock" > "$tmp/lock.txt" ||
    fail "top --profile failed"
"$nt" samples --profile alloc "$alloc" > "$tmp/alloc.samples" || fail "samples failed"
python3 - "$tmp/info.txt" "$tmp/info2.json" "$tmp/top.txt" "$tmp/alloc.txt" "$tmp/lock.txt" "$tmp/alloc.samples" <<'PY' || exit 1
import json, re, sys
info, j, top, alloc, lock = (open(p).read() for p in sys.argv[1:6])
j = json.loads(j)
g = lambda n: f"{n:,}"
assert j["bytes"] >= 1000 and j["samples"] >= 1000, j  # so the groups show
b = j["bytes"]
unit = f"{b / 1024:.1f} KiB" if b < 1 << 20 else f"{b / 1048576:.1f} MiB"
assert f"bytes:             {g(b)} ({unit}) in {g(j['blocks'])} blocks" in info, info
assert f"events:            {g(j['events'])} (" in info and f"samples:           {g(j['samples'])} on" in info, info
assert f"sampling interval: {j['sampling_interval_ns'] / 1e6:.3f} ms" in info, info
assert f"samples:  {g(j['samples'])} on " in top, top
first = re.search(r"^ exclusive.*\n\s*([\d,]+) ", top, re.M).group(1)
assert re.fullmatch(r"\d{1,3}(,\d{3})*", first), first
m = re.match(r"alloc: ([\d,]+) events, ([\d,]+) bytes \(([\d.]+) MiB\)", alloc)
assert m, alloc[:200]
rows = [l.split(" ", 3) for l in open(sys.argv[6])]
total = sum(int(r[2]) for r in rows)
assert m.group(1) == g(len(rows)) and m.group(2) == g(total), (m.groups(), len(rows), total)
assert abs(float(m.group(3)) - total / 1048576) < 0.06, (m.group(3), total)
assert all(re.fullmatch(r"-?\d+", r[0]) and re.fullmatch(r"-?\d+", r[2]) for r in rows), "samples lost its raw numbers"
m = re.match(r"contention: (\d+) events, ([\d.]+) ms waiting", lock)
assert m and "wait_ms" in lock.split("\n")[1], lock[:300]
row = lock.split("\n")[2].split()
assert abs(float(row[0].replace(",", "")) - float(m.group(2))) < 0.002, (row, m.groups())
print(f"ok: grouped counts ({g(j['samples'])} samples, {g(total)} bytes), sizes in KiB/MiB, waits in ms; samples raw")
PY
"$nt" top --json "$spin" | grep -Eq '"samples": [0-9]{4,},' || fail "top --json lost its raw count"
