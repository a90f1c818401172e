#!/bin/sh
# nettrace heap and gcdump on the project's own snapshots (.nettrace and
# .gcdump alike): the JSON shape outside programs rely on, the workload's
# known types, paths, the diff, the flame graphs (an existing output is never
# overwritten), a truncated copy (an incomplete graph is said to be one), a
# trace without a heap dump, and gcdump's usage errors.
set -u
CHECKS_STOP=1
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
# Every check below runs on the NetTrace snapshots and on the .gcdump files
# dotnet-gcdump wrote of the same workload (the diff across the two kinds too).
root=$tmp # each snapshot's checks in a folder of their own in it ($tmp while they run)
need python3 "the JSON cannot be checked"

# check_snapshot SNAPSHOT GROWN (not indented: its here-documents end at the line start)
check_snapshot() {
snap=$1 grown=$2 round=$((${round:-0} + 1))
tmp="$root/$round"
mkdir "$tmp"
echo "checking $snap"
"$nt" heap --json "$snap" > "$tmp/heap.json" || fail "heap --json exited $?"
python3 - "$tmp/heap.json" <<'PY' || exit 1
import json, sys
j = json.load(open(sys.argv[1]))
assert j["complete"] is True, j
assert j["format"] == ("gcdump" if j["file"].endswith(".gcdump") else "nettrace"), j["format"]
rows = {t["type"]: t for t in j["types"]}
for t in j["types"]:
    assert set(["type", "count", "shallow_bytes", "retained_bytes"]) <= set(t), t
assert sum(t["count"] for t in j["types"]) == j["objects"]
assert sum(t["shallow_bytes"] for t in j["types"]) == j["total_bytes"]
assert rows["HeapShape.Item"]["count"] == 1000 and rows["HeapShape.Item"]["shallow_bytes"] == 24000
assert rows["HeapShape.Item[] (Bytes > 1K)"]["retained_bytes"] == 32024
assert rows["HeapShape.ListNode"]["retained_bytes"] == 16000
assert rows["System.Byte[] (Bytes > 100K)"]["shallow_bytes"] == 100024
PY

"$nt" heap -s retained -n 5 "$snap" > "$tmp/table.txt" || fail "heap -s retained exited $?"
grep -q '^heap: 1775 objects' "$tmp/table.txt" || fail "no summary line: $(head -1 "$tmp/table.txt")"
[ "$(grep -c '  \[' "$tmp/table.txt")" -eq 5 ] || fail "-n 5 did not print 5 rows"

"$nt" heap --paths HeapShape.CwtValue "$snap" > "$tmp/paths.txt" || fail "--paths TYPE exited $?"
grep -q '^\[Dependent Handles\] (1 objects)' "$tmp/paths.txt" || fail "the CWT value's root: $(cat "$tmp/paths.txt")"
addr=$(awk '/HeapShape.CycleB/ {print $1; exit}' "$tmp/paths.txt")
"$nt" heap --paths HeapShape.CycleB "$snap" > "$tmp/cycle.txt" || fail "--paths CycleB exited $?"
grep -q 'HeapShape.CycleA.Cycle (2 objects)' "$tmp/cycle.txt" || fail "the cycle's path: $(cat "$tmp/cycle.txt")"
addr=$(awk '/HeapShape.CycleB/ {print $1; exit}' "$tmp/cycle.txt")
"$nt" heap --paths "$addr" "$snap" > "$tmp/addr.txt" || fail "--paths $addr exited $?"
cmp -s "$tmp/cycle.txt" "$tmp/addr.txt" || fail "--paths by address differs from by type"
"$nt" heap --paths 0x1 "$snap" > /dev/null 2>&1 && fail "--paths of no object succeeded"

"$nt" heap --diff --json "$snap" "$grown" > "$tmp/diff.json" || fail "--diff exited $?"
python3 - "$tmp/diff.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
first = d["types"][0]
assert first["type"] == "HeapShape.Item" and first["count_delta"] == 1000 and first["bytes_delta"] == 24000, first
PY

"$nt" heap -f folded -o "$tmp/heap.folded" "$snap" || fail "-f folded exited $?"
grep -q '^\[static vars\];HeapShape.Item\[\];HeapShape.Item 24000$' "$tmp/heap.folded" ||
    grep -q ';HeapShape.Item\[\];HeapShape.Item 24000$' "$tmp/heap.folded" || fail "no folded stack for the items"
awk '{ if ($NF !~ /^[0-9]+$/) exit 1 }' "$tmp/heap.folded" || fail "a folded line does not end in a weight"
echo keep > "$tmp/exists"
"$nt" heap -f speedscope -o "$tmp/exists" "$snap" 2> /dev/null && fail "an existing output was overwritten"
[ "$(cat "$tmp/exists")" = keep ] || fail "the existing file changed"
# the output rules are out_file.c's, as for every command: the input is never
# the output (even with --force), --force replaces another existing file
cp "$snap" "$tmp/snap.nettrace"
"$nt" heap -f folded --force -o "$tmp/snap.nettrace" "$tmp/snap.nettrace" 2> "$tmp/err" && fail "heap wrote over its input"
grep -q 'is the input' "$tmp/err" || fail "writing over the input: $(cat "$tmp/err")"
cmp -s "$snap" "$tmp/snap.nettrace" || fail "the snapshot read changed"
"$nt" heap -f folded --force -o "$tmp/exists" "$snap" || fail "heap --force exited $?"
[ "$(cat "$tmp/exists")" != keep ] && [ -s "$tmp/exists" ] || fail "--force did not replace the existing file"
"$nt" heap -f speedscope -o "$tmp/heap.speedscope.json" "$snap" || fail "-f speedscope exited $?"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/heap.speedscope.json" || fail "speedscope is not JSON"
"$nt" heap -f pprof -o "$tmp/heap.pb.gz" "$snap" || fail "-f pprof exited $?"
[ "$(head -c 2 "$tmp/heap.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "pprof is not gzip"

"$nt" heap -f html -o "$tmp/heap.html" "$snap" || fail "-f html exited $?"
grep -q 'HeapShape.ListNode' "$tmp/heap.html" && grep -q '</html>' "$tmp/heap.html" || fail "the HTML page lacks the types or its end"

# a cut copy: the heap dump's end is lost, the graph is incomplete and says so
size=$(wc -c < "$snap")
head -c $((size / 2)) "$snap" > "$tmp/cut.nettrace"
"$nt" heap --json "$tmp/cut.nettrace" > "$tmp/cut.json" 2> "$tmp/cut.err"
rc=$?
[ $rc -eq 15 ] || fail "a truncated snapshot exited $rc, not 15"
grep -q '"complete":false' "$tmp/cut.json" || fail "a truncated snapshot is not marked incomplete"
grep -q 'what was read before' "$tmp/cut.err" || fail "no warning: $(cat "$tmp/cut.err")"

}

h="$top_srcdir/corpus/heap"
check_snapshot "$h/shape.nettrace" "$h/shape-grown.nettrace"
check_snapshot "$h/shape.gcdump" "$h/shape-grown.gcdump"
check_snapshot "$h/shape.nettrace" "$h/shape-grown.gcdump"
tmp=$root

# a trace without a heap dump
"$nt" heap "$top_srcdir/corpus/call-tree.nettrace" > /dev/null 2> "$tmp/none.err" && fail "a trace without a heap dump succeeded"
grep -q 'holds no heap snapshot' "$tmp/none.err" || fail "$(cat "$tmp/none.err")"

# gcdump's usage errors
"$nt" gcdump > /dev/null 2>&1; [ $? -eq 2 ] || fail "gcdump without -p or -n is not a usage error"
"$nt" gcdump -p 1 -n x > /dev/null 2>&1; [ $? -eq 2 ] || fail "gcdump with -p and -n is not a usage error"
"$nt" gcdump -p abc > /dev/null 2>&1; [ $? -eq 2 ] || fail "gcdump -p abc is not a usage error"
echo keep > "$tmp/dump.nettrace"
"$nt" gcdump -p 1 -o "$tmp/dump.nettrace" > /dev/null 2>&1 && fail "gcdump overwrote or succeeded"
[ "$(cat "$tmp/dump.nettrace")" = keep ] || fail "gcdump changed an existing file"
echo "ok: nettrace heap and gcdump"
