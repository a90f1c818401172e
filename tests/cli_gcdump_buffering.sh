#!/bin/sh
# nettrace gcdump asks for non-lossy buffering (CollectTracing6, .NET 11+) and
# says which buffering the runtime gave (issue 26).  On a real runtime: one
# older than .NET 11 answers UNKNOWN_COMMAND, the session falls back to the
# lossy command and the tool says so; a .NET 11 runtime takes Block.  The
# HeapShape workload holds a known heap, so the dump must still be whole.
# collect --buffering block says the same of its session.
# Skips when dotnet is not on PATH.
set -u
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
need dotnet "gcdump's buffering needs a real .NET process"
dll=$(workload_dll HeapShape HeapShape) || exit 1
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$checks_tmp"' EXIT
dotnet "$dll" 1 60000 > "$tmp/workload.log" 2>&1 &
pid=$!
wait_ready "$tmp/workload.log" "the workload"
# The runtime the workload runs on: its major version decides what it must say.
major=$(dotnet --list-runtimes | sed -n 's/^Microsoft.NETCore.App \([0-9]*\)\..*/\1/p' | sort -n | tail -1)
"$nt" gcdump -p "$pid" -o "$tmp/dump.nettrace" > "$tmp/out" 2> "$tmp/err"
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/err" "$tmp/out"; fail "gcdump exited $rc on a steady heap"; }
if [ "${major:-0}" -lt 11 ]; then
    grep -q 'buffering: lossy: the runtime does not support CollectTracing6 (.NET 11+); the graph may be incomplete on large heaps' "$tmp/out" &&
        ok "a .NET $major runtime: the summary says the session fell back to lossy buffering" ||
        { cat "$tmp/out"; fail "the summary does not say the .NET $major runtime's buffering was lossy"; }
    grep -q '(lossy: the runtime does not support CollectTracing6' "$tmp/err" &&
        ok "the progress line says it too" || { cat "$tmp/err"; fail "the progress line does not name the buffering"; }
else
    grep -q 'buffering: non-lossy (blocking buffers)' "$tmp/out" &&
        ok "a .NET $major runtime: non-lossy buffering" || { cat "$tmp/out"; fail "no non-lossy buffering on .NET $major"; }
fi
"$nt" heap --json "$tmp/dump.nettrace" > "$tmp/heap.json" && ok "the snapshot reads back" ||
    fail "nettrace heap could not read the snapshot"
# collect --buffering block: the same answer, said on its own line; a bad value is a usage error.
"$nt" collect -p "$pid" --buffering block -d 1s -o "$tmp/c.nettrace" > /dev/null 2> "$tmp/cerr" ||
    { cat "$tmp/cerr"; fail "collect --buffering block failed"; }
if [ "${major:-0}" -lt 11 ]; then
    grep -q '^nettrace collect: buffering: lossy: the runtime does not support CollectTracing6' "$tmp/cerr" &&
        ok "collect --buffering block says the .NET $major runtime gave lossy buffering" ||
        { cat "$tmp/cerr"; fail "collect does not say the buffering was lossy"; }
fi
# -- PROGRAM: the runtime connects to collect's diagnostic port; refused there, CollectTracing6 cannot be
# asked again on that connection, so collect takes the runtime's next one with the lossy buffer.
"$nt" collect --buffering block -d 1s -o "$tmp/l.nettrace" -- dotnet "$dll" 1 3000 > /dev/null 2> "$tmp/lerr"
[ -s "$tmp/l.nettrace" ] && ok "collect --buffering block -- PROGRAM recorded" ||
    { cat "$tmp/lerr"; fail "collect --buffering block -- PROGRAM recorded nothing"; }
if [ "${major:-0}" -lt 11 ]; then
    grep -q '^nettrace collect: buffering: lossy: the runtime does not support CollectTracing6' "$tmp/lerr" &&
        ok "a launched .NET $major program falls back on its next connection, and says so" ||
        { cat "$tmp/lerr"; fail "a launched program's fallback is not said"; }
fi
"$nt" collect -p "$pid" --buffering sometimes -o "$tmp/d.nettrace" > /dev/null 2>&1
[ $? -eq 2 ] && ok "--buffering sometimes is a usage error" || fail "--buffering sometimes is not a usage error"
finish
