#!/bin/sh
# nettrace heap against dotnet-gcdump 10.0.750501 (tests/heap_conformance.py
# says what is compared): the HeapShape workload (tests/workloads/HeapShape)
# captured by `nettrace gcdump` and by `dotnet-gcdump collect`; our capture
# also converted by `dotnet-gcdump convert`; dotnet-gcdump's .gcdump read by
# `nettrace heap` against `dotnet-gcdump report` on it.  The tool is $DOTNET_GCDUMP, or
# dotnet-gcdump on PATH or in ~/.dotnet/tools (install it with
# `dotnet tool install --tool-path DIR dotnet-gcdump --version 10.0.750501`).
# As a `make check` test it skips (77) when dotnet, python3 or dotnet-gcdump is
# absent; `make heap-conformance` (HEAP_CONFORMANCE_REQUIRED=1) fails instead.
set -u
src=${top_srcdir:-.}
build=${top_builddir:-.}
nt="$build/nettrace"
missing() {
    echo "heap-conformance: $1"
    [ "${HEAP_CONFORMANCE_REQUIRED:-0}" = 1 ] && exit 1
    echo "SKIP: $1"
    exit 77
}
command -v dotnet >/dev/null 2>&1 || missing "dotnet is not on PATH: no workload to capture"
command -v python3 >/dev/null 2>&1 || missing "python3 is not on PATH: the comparer cannot run"
tool=${DOTNET_GCDUMP:-$(command -v dotnet-gcdump || echo "$HOME/.dotnet/tools/dotnet-gcdump")}
[ -x "$tool" ] || missing "dotnet-gcdump not found (set DOTNET_GCDUMP): nothing to compare with"
out="$build/tests/heap-conformance"
rm -rf "$out"
mkdir -p "$out"
dotnet build -c Release --nologo -v quiet -o "$out/bin" "$src/tests/workloads/HeapShape/HeapShape.csproj" \
    > "$out/build.log" 2>&1 || { cat "$out/build.log"; echo "FAIL: the workload did not build"; exit 1; }
dotnet "$out/bin/HeapShape.dll" 1 60000 > "$out/workload.log" &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
for _ in $(seq 1 300); do grep -q '^ready' "$out/workload.log" && break; sleep 0.1; done
grep -q '^ready' "$out/workload.log" || { echo "FAIL: the workload did not start"; exit 1; }
rc=0
"$tool" collect -p "$pid" -o "$out/theirs.gcdump" > "$out/collect.log" 2>&1 || { cat "$out/collect.log"; rc=1; }
"$nt" gcdump -q -p "$pid" -o "$out/ours.nettrace" || rc=1
"$tool" convert "$out/ours.nettrace" -o "$out/ours.gcdump" > "$out/convert.log" 2>&1 || { cat "$out/convert.log"; rc=1; }
[ $rc -eq 0 ] || { echo "FAIL: a capture failed"; exit 1; }
"$tool" report "$out/theirs.gcdump" > "$out/theirs.txt" && "$tool" report "$out/ours.gcdump" > "$out/ours-converted.txt" &&
    "$nt" heap --json "$out/ours.nettrace" > "$out/ours.json" || { echo "FAIL: a report failed"; exit 1; }
echo "heap-conformance: the same capture, every type:"
python3 "$src/tests/heap_conformance.py" same "$out/ours.json" "$out/ours-converted.txt" || rc=1
stable_types='HeapShape.Item|HeapShape.Item[] (Bytes > 1K)|HeapShape.ListNode|HeapShape.CycleA|HeapShape.CycleB|HeapShape.CwtKey|HeapShape.CwtValue|System.Byte[] (Bytes > 100K)'
IFS='|'
# shellcheck disable=SC2086
set -- $stable_types
unset IFS
echo "heap-conformance: two captures, the types the workload holds:"
python3 "$src/tests/heap_conformance.py" stable "$out/ours.json" "$out/theirs.txt" "$@" || rc=1
echo "heap-conformance: dotnet-gcdump's .gcdump read by nettrace heap, every type against its report:"
"$nt" heap --json "$out/theirs.gcdump" > "$out/theirs.json" || { echo "FAIL: nettrace heap did not read the .gcdump"; exit 1; }
python3 "$src/tests/heap_conformance.py" same "$out/theirs.json" "$out/theirs.txt" || rc=1
echo "heap-conformance: the two captures both read by nettrace heap, the types the workload holds (retained too):"
python3 "$src/tests/heap_conformance.py" pair "$out/ours.json" "$out/theirs.json" "$@" || rc=1
exit $rc
