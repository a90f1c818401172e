#!/bin/sh
# Parser instructions per event (callgrind: exact counts, no timing noise),
# printed by `make bench` beside the times: bench_ours parses each trace with
# every callback set (eager names: the parser converts every record name to
# UTF-8) and with lazy names (nt_parser_set_lazy_names: names handed out as
# UTF-16 spans), and with no callback at all (the parser's own cost: the
# callbacks' share is the difference).  Counts cover the whole process
# (start-up is ~0.1 M).
#
#   bench/instructions.sh BENCH_OURS [TRACE...]
#
# Without TRACE: objver4, webapp and HeartRateMonitor from ../shared/corpus,
# and $BENCH_WORK/bench-100mb.nettrace when bench/record-large.sh made it.
set -u
ours=$1
shift
if ! command -v valgrind >/dev/null 2>&1; then
    echo "instructions per event: skipped (valgrind is not installed)"
    exit 0
fi
here=$(cd "$(dirname "$0")/.." && pwd)
shared=${NETTRACE_SHARED_CORPUS:-$here/../shared/corpus}
if [ $# -eq 0 ]; then
    for t in perfview__eventpipe-dotnetcore3.0-win-x64-objver4 dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden \
             perfview__HeartRateMonitor.10068; do
        [ -f "$shared/$t.nettrace" ] && set -- "$@" "$shared/$t.nettrace"
    done
    big=${BENCH_WORK:-$PWD/bench/work}/bench-100mb.nettrace
    [ -f "$big" ] && set -- "$@" "$big"
    [ $# -eq 0 ] && { echo "instructions per event: skipped (no ../shared/corpus and no recorded trace)"; exit 0; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-58s %10s %14s %14s %14s\n' "instructions per event (callgrind)" events "eager names" "lazy names" \
    "no callbacks"
for f in "$@"; do
    row=""
    events=""
    for mode in parse parse-lazy parse-bare; do
        out=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$ours" "$mode" "$f" 2>"$tmp/err")
        ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/err")
        events=$(echo "$out" | sed -n 's/^events \([0-9]*\)$/\1/p')
        if [ -z "$ir" ] || [ -z "$events" ] || [ "$events" -eq 0 ]; then
            row="$row $(printf '%14s' failed)"
        else
            row="$row $(awk -v i="$ir" -v e="$events" 'BEGIN { printf "%14.1f", i / e }')"
        fi
    done
    printf '%-58s %10s%s\n' "$(basename "$f")" "$events" "$row"
done
