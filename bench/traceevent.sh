#!/usr/bin/env bash
# libnettrace against TraceEvent on the same files in the same run (part of
# `make bench`; see bench/README.md).
#
# For each file, three pairs of jobs, each job a separate process measured by
# bench_run (wall time fork..wait4, peak RSS from wait4's rusage; best time
# of BENCH_RUNS runs, largest peak), the file in the page cache first:
#   read       bench_ours parse       vs BenchTraceEvent read (EventPipeEventSource)
#   resolved   bench_ours trace       vs BenchTraceEvent tracelog (TraceLog)
#   speedscope nettrace stacks -f speedscope  vs dotnet-trace convert --format Speedscope
# and checks that both sides counted the same events, samples and frames.
#
# Files: large traces of tests/workloads/BenchLoad recorded on demand by
# bench/record-large.sh into $BENCH_WORK (kept there and reused), and
# perfview__HeartRateMonitor.10068.nettrace from the shared corpus if present.
#
# Environment (make passes the first four):
#   BENCH_WORK        cache and output folder (build tree's bench/work)
#   NETTRACE, BENCH_RUN, BENCH_OURS   the built programs
#   BENCH_SIZES       trace sizes in MiB to record and compare (default "100 1024";
#                     "100" skips the 1 GB trace, "" compares no recorded trace)
#   BENCH_RUNS        runs per job (default 3)
#   BENCH_RUNS_LARGE  runs per job for files over 500 MiB (default 1)
#   BENCH_TRACEEVENT  0 skips the TraceEvent side (ours only)
#   NETTRACE_SHARED_CORPUS  the shared corpus (default ../shared/corpus)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
work=${BENCH_WORK:-$PWD/bench/work}
nettrace=${NETTRACE:-$PWD/nettrace}
run=${BENCH_RUN:-$PWD/bench/bench_run}
ours=${BENCH_OURS:-$PWD/bench/bench_ours}
sizes=${BENCH_SIZES-100 1024}
runs=${BENCH_RUNS:-3}
runs_large=${BENCH_RUNS_LARGE:-1}
with_te=${BENCH_TRACEEVENT:-1}
shared=${NETTRACE_SHARED_CORPUS:-$top/../shared/corpus}
dotnet_trace_version=10.0.750501
out="$work/out"
mkdir -p "$work" "$out"

if ! command -v dotnet >/dev/null; then
    echo "bench/traceevent.sh: skipped: dotnet is not installed (needed to record traces and run TraceEvent)"
    exit 0
fi

# TraceEvent's side: our C# program on TraceEvent 4.0.0, and a pinned
# dotnet-trace installed into the build tree.
te=
dtrace=
if [ "$with_te" != 0 ]; then
    dotnet build -c Release --nologo -v quiet --artifacts-path "$work/dotnet" \
        "$here/traceevent/BenchTraceEvent.csproj" >"$out/build.log" 2>&1 ||
        { cat "$out/build.log" >&2; exit 1; }
    te="$work/dotnet/bin/BenchTraceEvent/release/BenchTraceEvent"
    dtrace="$work/tools/dotnet-trace"
    if [ ! -x "$dtrace" ] || ! "$dtrace" --version | grep -q "^$dotnet_trace_version"; then
        rm -rf "$work/tools"
        dotnet tool install dotnet-trace --version "$dotnet_trace_version" --tool-path "$work/tools" >/dev/null
    fi
fi

files=()
for mb in $sizes; do
    f="$work/bench-${mb}mb.nettrace"
    if [ ! -s "$f" ]; then
        echo "recording $f (${mb} MiB; cached for later runs)..."
        BENCH_WORK="$work" NETTRACE="$nettrace" "$here/record-large.sh" "$mb" "$f" | tee "$f.recording.txt"
    elif [ -s "$f.recording.txt" ]; then
        echo "reusing $(cat "$f.recording.txt")"
    fi
    files+=("$f")
done
hrm="$shared/perfview__HeartRateMonitor.10068.nettrace"
[ -f "$hrm" ] && files+=("$hrm")
if [ ${#files[@]} -eq 0 ]; then
    echo "bench/traceevent.sh: no file to compare (BENCH_SIZES is empty and $hrm is absent)"
    exit 0
fi

# measure NAME N COMMAND...: sets the globals T (best seconds) and M (peak
# MiB); the command's output is in $out/NAME.txt.
measure() {
    local name=$1 n=$2 line
    shift 2
    line=$("$run" -n "$n" -o "$out/$name.txt" -- "$@") || { echo "FAILED: $*" >&2; exit 1; }
    echo "$name $line" >>"$out/runs.txt"
    T=$(awk '{ print $2 }' <<<"$line")
    M=$(awk '{ printf "%.1f", $6 / 1024 }' <<<"$line")
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'; }
# verdict TIME_RATIO TIME_GOAL MEM_RATIO
verdict() {
    awk -v t="$1" -v g="$2" -v m="$3" 'BEGIN {
        ok = t >= g && m >= 10
        printf "%s (goal %dx time, 10x memory)", ok ? "PASS" : "MISS", g }'
}
same() {
    if [ "$1" = "$2" ]; then echo "counts agree: $1"; else echo "COUNTS DIFFER: ours '$1', TraceEvent '$2'"; fi
}

summary=()
machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM"
echo
echo "libnettrace vs TraceEvent -- $(date -u +%Y-%m-%d), $machine"
echo "  .NET $(dotnet --list-runtimes | awk '/NETCore.App/ { v = $2 } END { print v }'), TraceEvent 4.0.0, dotnet-trace $dotnet_trace_version"
for f in "${files[@]}"; do
    size=$(stat -c %s "$f")
    mib=$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }')
    n=$runs
    [ "$size" -gt $((500 * 1024 * 1024)) ] && n=$runs_large
    cat "$f" >/dev/null # page cache
    name=$(basename "$f" .nettrace)
    echo
    echo "$name ($mib MiB), best of $n runs:"
    printf '  %-32s %9s %9s   %-32s %9s %9s   %7s %7s\n' "ours" "s" "peak MiB" "TraceEvent" "s" "peak MiB" "time" "memory"

    measure "$name.parse" "$n" "$ours" parse "$f"; pt=$T; pm=$M
    measure "$name.trace" "$n" "$ours" trace "$f"; tt=$T; tm=$M
    measure "$name.stacks" "$n" "$nettrace" stacks -f speedscope -o "$out/$name.ours.speedscope.json" "$f"; st=$T; sm=$M
    if [ -z "$te" ]; then
        printf '  %-32s %9.3f %9.1f\n' "parser, every event" "$pt" "$pm" "resolved trace" "$tt" "$tm" \
            "stacks -f speedscope" "$st" "$sm"
        continue
    fi
    measure "$name.read" "$n" "$te" read "$f"; rt=$T; rm_=$M
    measure "$name.tracelog" "$n" "$te" tracelog "$f"; lt=$T; lm=$M
    measure "$name.convert" "$n" "$dtrace" convert --format Speedscope -o "$out/$name.te.speedscope.json" "$f"; ct=$T; cm=$M

    r1t=$(ratio "$rt" "$pt"); r1m=$(ratio "$rm_" "$pm")
    r2t=$(ratio "$lt" "$tt"); r2m=$(ratio "$lm" "$tm")
    r3t=$(ratio "$ct" "$st"); r3m=$(ratio "$cm" "$sm")
    printf '  %-32s %9.3f %9.1f   %-32s %9.3f %9.1f   %6.1fx %6.1fx  %s\n' \
        "parser, every event" "$pt" "$pm" "EventPipeEventSource" "$rt" "$rm_" "$r1t" "$r1m" "$(verdict "$r1t" 20 "$r1m")" \
        "resolved trace" "$tt" "$tm" "TraceLog + CallStack names" "$lt" "$lm" "$r2t" "$r2m" "$(verdict "$r2t" 50 "$r2m")"
    printf '  %-32s %9.3f %9.1f   %-32s %9.3f %9.1f   %6.1fx %6.1fx\n' \
        "stacks -f speedscope" "$st" "$sm" "dotnet-trace convert" "$ct" "$cm" "$r3t" "$r3m"
    echo "  read:     $(same "$(cat "$out/$name.parse.txt")" "$(cat "$out/$name.read.txt")")"
    echo "  resolved: $(same "$(cat "$out/$name.trace.txt")" "$(cat "$out/$name.tracelog.txt")")"
    summary+=("| $name | $mib | $pt / $rt s | **${r1t}x** | $pm / $rm_ MiB | **${r1m}x** | $tt / $lt s | **${r2t}x** | $tm / $lm MiB | **${r2m}x** | $st / $ct s | ${r3t}x | $sm / $cm MiB | ${r3m}x |")
done

if [ ${#summary[@]} -gt 0 ]; then
    echo
    echo "Summary (ours / TraceEvent; ratio = TraceEvent / ours) -- for README.md:"
    echo
    echo "| trace | MiB | read time | ratio | read peak | ratio | resolved time | ratio | resolved peak | ratio | speedscope time | ratio | speedscope peak | ratio |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    printf '%s\n' "${summary[@]}"
fi
