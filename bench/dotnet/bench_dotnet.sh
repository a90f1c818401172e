#!/bin/sh
# make bench-dotnet (part of make bench): the LibNetTrace package against
# TraceEvent 4.0.0, each pair in one run (bench/README.md, ".NET package").
#
#  1. files: the corpus traces, the shared corpus's, and the 100 MB trace
#     bench/traceevent.sh records ($BENCH_WORK/bench-100mb.nettrace, when
#     present), BENCH_DOTNET_RUNS (default 5) warm runs of each reader in one
#     process: wall and CPU per run, managed heap growth, native bytes held.
#  2. live: a churning workload profiled in-process for BENCH_DOTNET_SECONDS
#     (default 30; the target's figure is 600 and more) by nothing, by
#     LibNetTrace's ContinuousProfiler and by TraceEvent's real-time TraceLog,
#     each in a process of its own.
# Environment: top_srcdir, top_builddir (make sets them), BENCH_WORK.
set -eu
if ! command -v dotnet >/dev/null 2>&1; then
    echo "bench-dotnet: skipped: dotnet is not installed"
    exit 0
fi
. "$top_srcdir/bindings/dotnet/dotnet.sh"
work=${BENCH_WORK:-$top_builddir/bench/work}
out="$NT_DOTNET_WORK/bench"
dotnet build "$top_srcdir/bench/dotnet/BenchDotnet.csproj" -c Release $nt_dotnet_flags -v:q -o "$out" >/dev/null
bench="$out/BenchDotnet"
runs=${BENCH_DOTNET_RUNS:-5}
seconds=${BENCH_DOTNET_SECONDS:-30}

set --
for f in "$top_srcdir"/corpus/*.nettrace "$NETTRACE_SHARED_CORPUS"/*.nettrace "$work/bench-100mb.nettrace"; do
    [ -f "$f" ] && set -- "$@" "$f"
done
[ -f "$work/bench-100mb.nettrace" ] ||
    echo "bench-dotnet: no 100 MB trace yet ($work/bench-100mb.nettrace: make bench-traceevent records it)"
echo "== .NET: reading files, $runs warm runs each in one process (the first run is the cold one)"
"$bench" files "$runs" "$@" | tee "$out/files.txt"
# The ratios over the warm runs (run >= 1): CPU and memory, TraceEvent / LibNetTrace.
awk 'NR > 1 && $3 >= 1 { k = $1 " " $2; cpu[k] += $5; n[k]++; mem[k] = $8 + $9 }
     END { for (k in cpu) { split(k, a, " "); if (a[2] == "libnettrace") {
               t = a[1] " traceevent"; if (n[t] && cpu[k] > 0)
                   printf "%s: TraceEvent/LibNetTrace warm CPU %.1fx, memory (managed + native) %.1fx\n", a[1],
                       (cpu[t] / n[t]) / (cpu[k] / n[k]), (mem[k] > 0 ? mem[t] / mem[k] : 0) } } }' "$out/files.txt" | sort

echo "== .NET: in-process continuous profiling, $seconds s per reader"
for mode in none libnettrace traceevent; do
    "$bench" live "$seconds" "$mode"
done | tee "$out/live.txt"
awk '{ for (i = 1; i < NF; i++) v[$2, $i] = $(i + 1) }
     END { if (v["libnettrace", "reader_cpu_per_s_after_first_window"] > 0)
               printf "reader CPU per second of profiling: TraceEvent/LibNetTrace %.1fx; per sample read %.1f us / %.1f us; requests/s with LibNetTrace %.0f%%, with TraceEvent %.0f%% of none\n",
                   v["traceevent", "reader_cpu_per_s_after_first_window"] / v["libnettrace", "reader_cpu_per_s_after_first_window"],
                   1e6 * v["traceevent", "reader_cpu_s"] / (v["traceevent", "samples"] + 1),
                   1e6 * v["libnettrace", "reader_cpu_s"] / (v["libnettrace", "samples"] + 1),
                   100 * v["libnettrace", "requests_per_s"] / v["none", "requests_per_s"],
                   100 * v["traceevent", "requests_per_s"] / v["none", "requests_per_s"] }' "$out/live.txt"
