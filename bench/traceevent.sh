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
#   fields     bench_ours fields, nettrace events --json  vs BenchTraceEvent fields
#              (every PayloadValue(i) of every event)
#   profiles   bench_ours profiles    vs BenchTraceEvent profiles (allocation
#              ticks, exceptions, contention merged per stack with TraceLog)
# and checks that both sides counted the same events, samples and frames.
#
# Then the resolved job warm: bench_ours trace-warm and BenchTraceEvent
# tracelog-warm each run it BENCH_WARM_RUNS times in one process and print
# every run's wall and CPU time (so .NET's start and the first, JIT-compiling
# run are left out); the two sides' processes alternate BENCH_WARM_ROUNDS
# times, and the best and median of runs 2..N of all rounds are compared.
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
#   BENCH_WARM_RUNS   runs of the resolved job in one process (default 10, at least 2)
#   BENCH_WARM_RUNS_LARGE  the same for files over 500 MiB (default 3)
#   BENCH_WARM_ROUNDS processes of each side for the warm job, alternating (default 2)
#   BENCH_WARM_ONLY   1 runs only the warm resolved job (no cold jobs, no dotnet-trace)
#   BENCH_TRACEEVENT  0 skips the TraceEvent side (ours only)
#   BENCH_TE_HEAP_GIB GC heap cap for TraceLog on files over 500 MiB (default 12)
#   BENCH_CONVERT_LARGE  1 also runs dotnet-trace convert on files over
#                     500 MiB (about 20 times the file in memory)
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
warm_runs=${BENCH_WARM_RUNS:-10}
warm_runs_large=${BENCH_WARM_RUNS_LARGE:-3}
warm_rounds=${BENCH_WARM_ROUNDS:-2}
warm_only=${BENCH_WARM_ONLY:-0}
with_te=${BENCH_TRACEEVENT:-1}
heap_gib=${BENCH_TE_HEAP_GIB:-12}
convert_large=${BENCH_CONVERT_LARGE:-0}
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
    if [ "$warm_only" = 1 ]; then
        dtrace=
    elif [ ! -x "$dtrace" ] || ! "$dtrace" --version | grep -q "^$dotnet_trace_version"; then
        rm -rf "$work/tools"
        if ! dotnet tool install dotnet-trace --version "$dotnet_trace_version" --tool-path "$work/tools" >/dev/null 2>&1; then
            echo "bench/traceevent.sh: dotnet-trace $dotnet_trace_version could not be installed (no registry access?): the speedscope comparison is skipped"
            dtrace=
        fi
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

# measure NAME N COMMAND...: sets the globals T (best wall seconds), C
# (least CPU seconds) and M (peak MiB); the command's output is in
# $out/NAME.txt.
measure() {
    local name=$1 n=$2 line
    shift 2
    if ! line=$("$run" -n "$n" -o "$out/$name.txt" -- "$@"); then
        echo "  $name failed: $*" >&2
        T=- C=- M=-
        return 0
    fi
    echo "$name $line" >>"$out/runs.txt"
    T=$(awk '{ printf "%.3f", $2 }' <<<"$line")
    C=$(awk '{ printf "%.3f", $10 }' <<<"$line")
    M=$(awk '{ printf "%.1f", $6 / 1024 }' <<<"$line")
}

# warm_measure NAME COMMAND...: one process running the job several times
# (measured by bench_run too, for its peak: sets M); its per-run lines are
# appended to $out/NAME.txt and, tagged with NAME, to runs.txt.
warm_measure() {
    local name=$1
    shift
    measure "$name.round" 1 "$@"
    cat "$out/$name.round.txt" >>"$out/$name.txt"
    sed "s/^/$name /" "$out/$name.round.txt" >>"$out/runs.txt"
}

# warm_stats FILE FIELD: "best median" of FIELD (wall or cpu) over runs 2..N
# of every process whose lines FILE holds.
warm_stats() {
    awk -v f="$2" '$1 == "run" && $2 >= 2 { for (i = 3; i < NF; i += 2) if ($i == f) print $(i + 1) }' "$1" |
        sort -g | awk '{ v[NR] = $1 }
            END { if (NR == 0) { print "- -"; exit }
                  printf "%.5f %.5f\n", v[1], NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# warm_counts FILE: the distinct "samples N frames N" of every run
warm_counts() { awk '$1 == "run" { print $7, $8, $9, $10 }' "$1" | sort -u | paste -sd';'; }

ratio() { if [ "$1" = - ] || [ "$2" = - ]; then echo -; else awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'; fi; }
# verdict TIME_RATIO TIME_GOAL MEM_RATIO
verdict() {
    if [ "$1" = - ]; then echo "no result"; return; fi
    awk -v t="$1" -v g="$2" -v m="$3" 'BEGIN { print (t >= g && m >= 10) ? "PASS" : "MISS" }'
}
same() {
    if [ "$1" = "$2" ]; then echo "counts agree: $1"; else echo "COUNTS DIFFER: ours '$1', TraceEvent '$2'"; fi
}
# row JOB OURS_LABEL T C M TE_LABEL T C M GOAL: one line of the table
row() {
    local rt rc rm v=""
    rt=$(ratio "$7" "$3"); rc=$(ratio "$8" "$4"); rm=$(ratio "$9" "$5")
    # The targets are set on the 100 MB trace; other files show ratios only.
    local goal=${10}
    [ "$name" != bench-100mb ] && goal=-
    [ "$goal" != - ] && v="$(verdict "$rt" "$goal" "$rm") (goal ${goal}x time, 10x memory)"
    printf '  %-10s %-22s %7s %7s %8s   %-22s %8s %8s %8s   %6sx %6sx %6sx  %s\n' \
        "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "$rt" "$rc" "$rm" "$v"
    summary+=("| $name | $mib | $1 | $3 s, $5 MiB | $7 s, $9 MiB | **${rt}x** | ${rc}x | **${rm}x** | $([ "$goal" = - ] && echo - || echo "$(verdict "$rt" "$goal" "$rm") (${goal}x, 10x)") |")
}

# warm SIZE [TE_COMMAND...]: the resolved job warm on $f, ours and (with a
# command) TraceEvent's processes alternating; prints and adds to the summary
# the best and median of runs 2..N.  Targets (issue 12): 20x on
# HeartRateMonitor, 100x on the 100 MB trace, judged on the ratio of the
# best CPU times: a process the other jobs of a shared machine hold back
# loses wall time more than CPU time, and TraceLog's CPU time rises more
# under load than ours (its GC and JIT threads), which flatters the medians.
warm() {
    local size=$1 wn=$warm_runs r goal=- om tm_ k ow_best ow_med oc_best oc_med tw_best tw_med tc_best tc_med
    shift
    [ "$size" -gt $((500 * 1024 * 1024)) ] && wn=$warm_runs_large
    [ "$wn" -lt 2 ] && wn=2
    rm -f "$out/$name.trace-warm.txt" "$out/$name.tracelog-warm.txt"
    for ((r = 1; r <= warm_rounds; r++)); do
        warm_measure "$name.trace-warm" "$ours" trace-warm "$f" "$wn"; om=$M
        [ $# -gt 0 ] && { warm_measure "$name.tracelog-warm" "$@" tracelog-warm "$f" "$wn"; tm_=$M; }
    done
    read -r ow_best ow_med <<<"$(warm_stats "$out/$name.trace-warm.txt" wall)"
    read -r oc_best oc_med <<<"$(warm_stats "$out/$name.trace-warm.txt" cpu)"
    local what="runs 2..$wn of $warm_rounds processes"
    if [ $# -eq 0 ]; then
        printf '  %-10s %-22s best %s s wall, %s s CPU; median %s s wall, %s s CPU (%s)\n' warm "trace, in one process" \
            "$ow_best" "$oc_best" "$ow_med" "$oc_med" "$what"
        return 0
    fi
    read -r tw_best tw_med <<<"$(warm_stats "$out/$name.tracelog-warm.txt" wall)"
    read -r tc_best tc_med <<<"$(warm_stats "$out/$name.tracelog-warm.txt" cpu)"
    case $name in
        bench-100mb) goal=100 ;;
        perfview__HeartRateMonitor.10068) goal=20 ;;
    esac
    echo "  warm resolved job, $what (TraceLog in-process, JIT warm; .NET start not counted):"
    printf '  %-10s %-22s %7s %7s %8s   %-22s %8s %8s %8s   %6sx %6sx %6sx  %s\n' \
        "warm best" "trace, in one process" "$ow_best" "$oc_best" "$om" "TraceLog, in one proc." \
        "$tw_best" "$tc_best" "$tm_" "$(ratio "$tw_best" "$ow_best")" "$(ratio "$tc_best" "$oc_best")" \
        "$(ratio "$tm_" "$om")" \
        "$([ "$goal" = - ] || echo "$(warm_verdict "$(ratio "$tc_best" "$oc_best")" "$goal") (goal ${goal}x, best CPU)")" \
        "warm med." "" "$ow_med" "$oc_med" "" "" "$tw_med" "$tc_med" "" \
        "$(ratio "$tw_med" "$ow_med")" "$(ratio "$tc_med" "$oc_med")" - ""
    for k in best median; do
        local a b c d
        if [ $k = best ]; then a=$ow_best b=$oc_best c=$tw_best d=$tc_best; else a=$ow_med b=$oc_med c=$tw_med d=$tc_med; fi
        summary+=("| $name | $mib | resolved warm, $k of $what | $a s, $b s CPU | $c s, $d s CPU | **$(ratio "$c" "$a")x** | **$(ratio "$d" "$b")x** | $(ratio "$tm_" "$om")x (process peaks) | $([ "$goal" = - ] || [ $k = median ] && echo - || echo "$(warm_verdict "$(ratio "$d" "$b")" "$goal") (${goal}x, best CPU)") |")
    done
    echo "  warm:     $(same "$(warm_counts "$out/$name.trace-warm.txt")" "$(warm_counts "$out/$name.tracelog-warm.txt")")"
    local ph=""
    for k in parse resolve walk bare; do ph+=" $k $(warm_stats "$out/$name.trace-warm.txt" $k | cut -d' ' -f2) s"; done
    echo "  warm, our phases (median CPU of runs 2..$wn; bare: the parser alone, no callbacks, after each run):$ph"
}
warm_verdict() { awk -v r="$1" -v g="$2" 'BEGIN { print (r != "-" && r >= g) ? "PASS" : "MISS" }'; }

# new_paths N TE_T TE_C TE_M (issue 27): top on one thread and on two
# (--jobs), against TraceLog + CallStack (measured just before: the same
# question, every sample named); then a 1-second window in the middle of a
# recorded trace through its sidecar (nettrace index, timed apart) against
# TraceLog, which has no windowed read: it converts the whole file, then
# walks the window's samples (BenchTraceEvent tracelog-window).  The window
# job runs on the recorded traces only: the sidecar is written beside a link
# in $out/window/, never into the shared corpus.
new_paths() {
    local n=$1 tlt=$2 tlc=$3 tlm=$4 j it ic im lo hi q sync from to
    for j in 1 2; do
        measure "$name.top-j$j" "$n" "$nettrace" top -n 50 --jobs "$j" "$f"
        row "top -j$j" "nettrace top --jobs $j" "$T" "$C" "$M" "TraceLog + CallStack" "$tlt" "$tlc" "$tlm" -
    done
    case "$f" in "$work"/*) ;; *) return 0 ;; esac
    mkdir -p "$out/window"
    local wf="$out/window/$name.nettrace"
    ln -sfn "$f" "$wf"
    measure "$name.index" 1 "$nettrace" index "$wf"; it=$T; ic=$C; im=$M
    read -r lo hi q <<<"$("$nettrace" index --json --no-sidecar "$wf" |
        sed -n 's/.*"qpc_frequency":\([0-9]*\).*"min_ticks":\([0-9]*\).*"max_ticks":\([0-9]*\).*/\2 \3 \1/p')"
    sync=$("$nettrace" info --json "$wf" 2>/dev/null | sed -n 's/.*"sync_qpc": *\([0-9]*\).*/\1/p' | head -1)
    if [ -z "$lo" ] || [ -z "$sync" ] || [ "${q:-0}" -le 0 ]; then
        echo "  window:   skipped (no time span or clock in $name)"
        return 0
    fi
    from=$(awk -v l="$lo" -v h="$hi" -v s="$sync" -v q="$q" 'BEGIN { printf "%.3f", ((l + h) / 2 - s) * 1000 / q }')
    to=$(awk -v a="$from" 'BEGIN { printf "%.3f", a + 1000 }')
    measure "$name.window" "$n" "$nettrace" top -n 50 --from "${from}ms" --to "${to}ms" "$wf"
    local wt=$T wc=$C wm=$M
    measure "$name.te-window" 1 "${te_tracelog[@]}" tracelog-window "$f" "$from" "$to"
    row window "top, 1 s, sidecar" "$wt" "$wc" "$wm" "TraceLog, the window" "$T" "$C" "$M" -
    printf '  %-10s %-22s %7s %7s %8s   (once per trace; the window query above does not include it)\n' \
        index "nettrace index (sidecar)" "$it" "$ic" "$im"
    echo "  window:   $(same "$(sed -n 's/^samples: *\([0-9,]*\) selected.*/\1/p' "$out/$name.window.txt" | tr -d ,)" \
        "$(sed -n 's/^samples \([0-9]*\) .*/\1/p' "$out/$name.te-window.txt")") (samples in [${from}, ${to}) ms)"
}

summary=()
machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM"
echo
echo "libnettrace vs TraceEvent -- $(date -u +%Y-%m-%d), $machine"
echo "  .NET $(dotnet --list-runtimes | awk '/NETCore.App/ { v = $2 } END { print v }'), TraceEvent 4.0.0, dotnet-trace $dotnet_trace_version"
for f in "${files[@]}"; do
    size=$(stat -L -c %s "$f")
    mib=$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }')
    n=$runs
    [ "$size" -gt $((500 * 1024 * 1024)) ] && n=$runs_large
    cat "$f" >/dev/null # page cache
    name=$(basename "$f" .nettrace)
    echo
    echo "$name ($mib MiB): best wall time of $n runs, least CPU time, largest peak RSS; ratio = TraceEvent / ours"
    printf '  %-10s %-22s %7s %7s %8s   %-22s %8s %8s %8s   %7s %7s %7s\n' "job" "ours" "wall s" "cpu s" "peak MiB" \
        "TraceEvent" "wall s" "cpu s" "peak MiB" "wall" "cpu" "memory"

    te_tracelog=("$te")
    [ "$size" -gt $((500 * 1024 * 1024)) ] &&
        te_tracelog=(env DOTNET_GCHeapHardLimit="$(printf '0x%x' $((heap_gib << 30)))" "$te")
    if [ "$warm_only" = 1 ]; then
        if [ -n "$te" ]; then warm "$size" "${te_tracelog[@]}"; else warm "$size"; fi
        continue
    fi
    measure "$name.parse" "$n" "$ours" parse "$f"; pt=$T; pc=$C; pm=$M
    measure "$name.trace" "$n" "$ours" trace "$f"; tt=$T; tc=$C; tm=$M
    measure "$name.stacks" "$n" "$nettrace" stacks -f speedscope -o "$out/$name.ours.speedscope.json" "$f"
    st=$T; sc=$C; sm=$M
    measure "$name.profiles" "$n" "$ours" profiles "$f"; prt=$T; prc=$C; prm=$M
    measure "$name.fields" "$n" "$ours" fields "$f"; ft=$T; fc=$C; fm=$M
    measure "$name.events" "$n" sh -c '"$1" events --json "$2" > /dev/null' - "$nettrace" "$f"; et=$T; ec=$C; em=$M
    if [ -z "$te" ]; then
        printf '  %-10s %-22s %7.3f %7.3f %8.1f\n' read "parser, all callbacks" "$pt" "$pc" "$pm" \
            resolved "trace + frame names" "$tt" "$tc" "$tm" speedscope "nettrace stacks" "$st" "$sc" "$sm" \
            fields "every field value" "$ft" "$fc" "$fm" events "nettrace events --json" "$et" "$ec" "$em" \
            profiles "nt_profile (events)" "$prt" "$prc" "$prm"
        warm "$size"
        continue
    fi
    measure "$name.read" "$n" "$te" read "$f"
    row read "parser, all callbacks" "$pt" "$pc" "$pm" "EventPipeEventSource" "$T" "$C" "$M" 20
    # TraceLog holds about 12 times the file in memory: on a large file, cap
    # its GC heap so a shared machine is not driven out of memory.
    measure "$name.tracelog" "$n" "${te_tracelog[@]}" tracelog "$f"
    row resolved "trace + frame names" "$tt" "$tc" "$tm" "TraceLog + CallStack" "$T" "$C" "$M" 50
    new_paths "$n" "$T" "$C" "$M"
    warm "$size" "${te_tracelog[@]}"
    if [ -z "$dtrace" ]; then
        printf '  %-10s %-22s %7s %7s %8s   %s\n' speedscope "nettrace stacks" "$st" "$sc" "$sm" "(dotnet-trace unavailable)"
    elif [ "$size" -le $((500 * 1024 * 1024)) ] || [ "$convert_large" = 1 ]; then
        measure "$name.convert" "$n" "$dtrace" convert --format Speedscope -o "$out/$name.te.speedscope.json" "$f"
        row speedscope "nettrace stacks" "$st" "$sc" "$sm" "dotnet-trace convert" "$T" "$C" "$M" -
    else
        printf '  %-10s %-22s %7s %7s %8s   %s\n' speedscope "nettrace stacks" "$st" "$sc" "$sm" \
            "(dotnet-trace convert skipped on files over 500 MiB: BENCH_CONVERT_LARGE=1 runs it)"
    fi
    measure "$name.tefields" "$n" "$te" fields "$f"
    row fields "every field value" "$ft" "$fc" "$fm" "AllEvents+PayloadValue" "$T" "$C" "$M" 10
    row events "nettrace events --json" "$et" "$ec" "$em" "AllEvents+PayloadValue" "$T" "$C" "$M" -
    echo "  read:     $(same "$(cat "$out/$name.parse.txt")" "$(cat "$out/$name.read.txt")")"
    echo "  fields:   $(same "$(cut -d' ' -f1,2 "$out/$name.fields.txt")" "$(cut -d' ' -f1,2 "$out/$name.tefields.txt")") (values: ours $(cut -d' ' -f4 "$out/$name.fields.txt"), TraceEvent $(cut -d' ' -f4 "$out/$name.tefields.txt"): the two count differently, see README)"
    measure "$name.te-profiles" "$n" "$te" profiles "$f"
    row profiles "nt_profile (events)" "$prt" "$prc" "$prm" "TraceLog + typed events" "$T" "$C" "$M" 20
    echo "  profiles: $(same "$(cat "$out/$name.profiles.txt")" "$(cat "$out/$name.te-profiles.txt")")"
    echo "  resolved: $(same "$(cat "$out/$name.trace.txt")" "$(cat "$out/$name.tracelog.txt")")"
done

if [ ${#summary[@]} -gt 0 ]; then
    echo
    echo "Summary for README.md ($(date -u +%Y-%m-%d), $machine):"
    echo
    echo "| trace | MiB | job | libnettrace | TraceEvent | time ratio | CPU ratio | memory ratio | target |"
    echo "|---|---:|---|---:|---:|---:|---:|---:|---|"
    printf '%s\n' "${summary[@]}"
fi
