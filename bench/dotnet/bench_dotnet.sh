#!/bin/sh
# make bench-dotnet (part of make bench): the LibNetTrace package against
# TraceEvent 4.0.0, each pair in one run (bench/README.md, ".NET package").
#
#  1. files: the corpus traces, the shared corpus's, and the 100 MB trace
#     bench/traceevent.sh records ($BENCH_WORK/bench-100mb.nettrace, when
#     present), BENCH_DOTNET_RUNS (default 5) warm runs of each reader in one
#     process, each of K reads (at least BENCH_DOTNET_RUN_MS, 200, of wall
#     time) after BENCH_DOTNET_WARM_MS (2000) of warm-up reads: per read wall,
#     process and thread CPU; memory held with the result, peak, bytes allocated.
#  2. live: a churning workload profiled in-process for BENCH_DOTNET_SECONDS
#     (default 30; the target's figure is 600 and more) by nothing, by
#     LibNetTrace's ContinuousProfiler (pumped every BENCH_DOTNET_PUMP_MS, 1000;
#     it prints its thread's CPU per pump and per window) and by TraceEvent's
#     real-time TraceLog, each in a process of its own.
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
echo "== .NET: reading files, $runs warm runs of K reads each in one process (run 0 is the cold read)"
"$bench" files "$runs" "$@" | tee "$out/files.txt"
# The ratios over the warm runs (run >= 1), per read: the medians of process CPU, of the
# reading thread's CPU and of the peak memory (managed high mark + native), TraceEvent / LibNetTrace.
awk 'NR > 1 && $3 >= 1 { k = $1 " " $2; n[k]++; cpu[k, n[k]] = $6; thr[k, n[k]] = $7; held[k] = $10; mem[k, n[k]] = $11 }
     function median(a, k, m,    i, j, t, v) {
         for (i = 1; i <= m; i++) v[i] = a[k, i]
         for (i = 2; i <= m; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
         return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2 }
     END { for (k in n) { split(k, a, " "); if (a[2] == "libnettrace") {
               t = a[1] " traceevent"; if (!n[t]) continue
               c = median(cpu, k, n[k]); h = median(thr, k, n[k])
               m = median(mem, k, n[k])
               printf "%s: per read, CPU %.3f / %.3f ms = %.1fx (thread %.1fx); peak memory %d / %d KB = %.1fx (held %d / %d KB)\n", a[1],
                   median(cpu, t, n[t]), c, (c > 0 ? median(cpu, t, n[t]) / c : 0), (h > 0 ? median(thr, t, n[t]) / h : 0),
                   median(mem, t, n[t]), m, (m > 0 ? median(mem, t, n[t]) / m : 0), held[t], held[k] } } }' "$out/files.txt" | sort

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
