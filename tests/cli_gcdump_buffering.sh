#!/bin/sh
# nettrace gcdump asks for non-lossy buffering (CollectTracing6, .NET 11+) and
# says which buffering the runtime gave (issue 26).  On a real runtime: one
# older than .NET 11 answers UNKNOWN_COMMAND, the session falls back to the
# lossy command and the tool says so; a .NET 11 runtime takes Block.  The
# HeapShape workload holds a known heap, so the dump must still be whole.
# Skips when dotnet is not on PATH.
set -u
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
if ! command -v dotnet >/dev/null 2>&1; then
    echo "SKIP: dotnet is not on PATH: gcdump's buffering needs a real .NET process"
    exit 77
fi
work="$top_builddir/tests/gcdump-buffering-build"
mkdir -p "$work"
if ! DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build -c Release --nologo -v quiet -nodeReuse:false \
        -p:UseSharedCompilation=false -o "$work/bin" \
        "$top_srcdir/tests/workloads/HeapShape/HeapShape.csproj" >"$work/build.log" 2>&1; then
    cat "$work/build.log"
    echo "FAIL: building the HeapShape workload failed"
    exit 1
fi
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$TMP"' EXIT
dotnet "$work/bin/HeapShape.dll" 1 60000 > "$TMP/workload.log" 2>&1 &
pid=$!
i=0
until grep -q '^ready' "$TMP/workload.log"; do
    i=$((i + 1))
    [ $i -gt 300 ] && { cat "$TMP/workload.log"; echo "FAIL: the workload did not start"; exit 1; }
    sleep 0.1
done
# The runtime the workload runs on: its major version decides what it must say.
major=$(dotnet --list-runtimes | sed -n 's/^Microsoft.NETCore.App \([0-9]*\)\..*/\1/p' | sort -n | tail -1)
"$NT" gcdump -p "$pid" -o "$TMP/dump.nettrace" > "$TMP/out" 2> "$TMP/err"
rc=$?
[ $rc -eq 0 ] || { cat "$TMP/err" "$TMP/out"; fail "gcdump exited $rc on a steady heap"; }
if [ "${major:-0}" -lt 11 ]; then
    grep -q 'buffering: lossy: the runtime does not support CollectTracing6 (.NET 11+); the graph may be incomplete on large heaps' "$TMP/out" &&
        ok "a .NET $major runtime: the summary says the session fell back to lossy buffering" ||
        { cat "$TMP/out"; fail "the summary does not say the .NET $major runtime's buffering was lossy"; }
    grep -q '(lossy: the runtime does not support CollectTracing6' "$TMP/err" &&
        ok "the progress line says it too" || { cat "$TMP/err"; fail "the progress line does not name the buffering"; }
else
    grep -q 'buffering: non-lossy (blocking buffers)' "$TMP/out" &&
        ok "a .NET $major runtime: non-lossy buffering" || { cat "$TMP/out"; fail "no non-lossy buffering on .NET $major"; }
fi
"$NT" heap --json "$TMP/dump.nettrace" > "$TMP/heap.json" && ok "the snapshot reads back" ||
    fail "nettrace heap could not read the snapshot"
finish
