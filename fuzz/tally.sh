#!/bin/sh
# Sum the campaigns fuzz/run.sh logged under $FUZZ_WORK (default fuzz-work/):
# executions per harness, runs, the longest run, and any crash artifacts.
work=${FUZZ_WORK:-fuzz-work}
total=0
for d in "$work"/*/; do
    h=$(basename "$d")
    set -- "$d"fuzz-*.log
    [ -f "$1" ] || continue
    execs=0 runs=0 longest=0
    for log in "$@"; do
        n=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -1)
        s=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
        [ -n "$n" ] || n=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
        execs=$((execs + ${n:-0}))
        runs=$((runs + 1))
        [ -n "$s" ] && [ "$s" -gt "$longest" ] && longest=$s
    done
    crashes=$(ls "$d"crashes 2>/dev/null | wc -l)
    echo "$h: $execs executions in $runs runs, longest clean run ${longest} s, $crashes crash artifacts"
    total=$((total + execs))
done
echo "total: $total executions"
