#!/usr/bin/env bash
# Record a large NetTrace file from a real multi-threaded workload on this
# machine, for the TraceEvent benchmark (bench/traceevent.sh, `make bench`).
#
#   bench/record-large.sh SIZE_MB OUT
#
# Builds tests/workloads/BenchLoad (Release; outputs under $BENCH_WORK/dotnet,
# never in the source tree), starts it with $BENCH_THREADS workers (default
# 24), attaches `nettrace collect` (our own IPC client) with the sample
# profiler and the runtime's GC + loader + JIT + contention keywords at
# verbose level, and stops the session -- cleanly, so rundown follows -- once
# the file holds SIZE_MB MiB.  The file is written as OUT.tmp and renamed when
# complete.  Prints the recording time.
#
# Environment: NETTRACE (default: ./nettrace, the tool in the build tree),
# BENCH_WORK (default: the directory of OUT), BENCH_THREADS.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 SIZE_MB OUT" >&2
    exit 2
fi
size_mb=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
work=${BENCH_WORK:-$(dirname "$out")}
nettrace=${NETTRACE:-./nettrace}
threads=${BENCH_THREADS:-24}
target=$((size_mb * 1024 * 1024))

# Sample profiler (every thread, 1 ms); runtime keywords GC 0x1 + Loader 0x8 +
# JIT 0x10 + Contention 0x4000 + Exception 0x8000 at Verbose (MethodLoadVerbose,
# GC start/end, allocation ticks, lock contention, exceptions thrown): a
# profiler's usual choice, and every event profile of `--profile`.
providers='Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:0xC019:5'

mkdir -p "$work"
dotnet build -c Release --nologo -v quiet --artifacts-path "$work/dotnet" \
    "$top/tests/workloads/BenchLoad/BenchLoad.csproj" >/dev/null
dll="$work/dotnet/bin/BenchLoad/release/BenchLoad.dll"

log=$(mktemp)
load_pid=
collect_pid=
cleanup() {
    [ -n "$collect_pid" ] && kill "$collect_pid" 2>/dev/null || true
    [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null || true
    rm -f "$log"
}
trap cleanup EXIT

dotnet "$dll" "$threads" >"$log" 2>&1 &
load_pid=$!
for _ in $(seq 1 300); do
    grep -q '^ready' "$log" && break
    kill -0 "$load_pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
done
grep -q '^ready' "$log" || { echo "record-large.sh: BenchLoad did not start" >&2; exit 1; }

rm -f "$out.tmp"
start=$(date +%s.%N)
# --max-bytes: above the target (collect's default cap is 1 GiB), so the
# session is stopped by us, cleanly, with rundown.
# -o -: collect names a file only when it is complete (a temporary file until
# then); on standard output the trace grows where the loop below watches it.
"$nettrace" collect -q -p "$load_pid" -o - --providers "$providers" \
    --max-bytes $((target + 512 * 1024 * 1024)) > "$out.tmp" &
collect_pid=$!
while kill -0 "$collect_pid" 2>/dev/null; do
    size=$(stat -c %s "$out.tmp" 2>/dev/null || echo 0)
    [ "$size" -ge "$target" ] && break
    sleep 0.2
done
# Ctrl-C: nettrace collect stops the session and waits for the rundown.
kill -INT "$collect_pid" 2>/dev/null || true
rc=0
wait "$collect_pid" || rc=$?
collect_pid=
end=$(date +%s.%N)
if [ "$rc" -ne 0 ]; then
    echo "record-large.sh: nettrace collect failed ($rc)" >&2
    exit 1
fi
mv "$out.tmp" "$out"
awk -v b="$(stat -c %s "$out")" -v s="$start" -v e="$end" -v f="$out" -v t="$threads" \
    'BEGIN { printf "recorded %s: %.1f MiB in %.1f s (%.2f MiB/s, BenchLoad %d threads)\n", f, b / 1048576, e - s, b / 1048576 / (e - s), t }'
