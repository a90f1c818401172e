#!/usr/bin/env bash
# The block index and windowed reads (issue 27), as ratios measured in one run:
#   index build (nettrace index --no-sidecar: headers; nettrace index: every
#   event header walked, the method records kept and the sidecar written)
#   against reading the file's bytes once from the page cache (cat);
#   a 1-second window (top and stacks -f pprof, --from MID --to MID+1s)
#   through the sidecar against the same query reading the whole file
#   (NETTRACE_NO_INDEX=1), with the bytes of the trace the windowed read
#   touched (its blocks and the sidecar's checks, as NETTRACE_READ_REPORT
#   counts them) and the sidecar's size.
# Times: the median of REPS runs (default 5) of wall time and of CPU time
# (user + sys, from /usr/bin/time), warm page cache; the load average is
# printed, since the machine may be shared.
# Traces: $BENCH_WORK/bench-100mb.nettrace and bench-1gb.nettrace (or
# bench-1000mb.nettrace; recorded by bench/record-large.sh), those present,
# or the files named in BENCH_WINDOW_TRACES.  Each is linked into
# $BENCH_WORK/window/ and its sidecar written there, beside the link: the
# traces' own directory is never written.
set -euo pipefail
work=${BENCH_WORK:-$PWD/bench/work}
nettrace=${NETTRACE:-./nettrace}
reps=${REPS:-5}
export NETTRACE_NO_PROGRESS=1
scratch="$work/window"
mkdir -p "$scratch"

# "wall_ms cpu_ms": medians over reps runs of "$@" (output discarded).
measure() {
    local w=() c=()
    for _ in $(seq "$reps"); do
        local s e t
        s=$(date +%s%N)
        /usr/bin/time -o "$scratch/time" -f '%U %S' "$@" > /dev/null 2> /dev/null || true
        t=$(tail -1 "$scratch/time")
        e=$(date +%s%N)
        w+=($(( (e - s) / 1000 )))
        c+=("$(echo "$t" | awk '{ printf "%d", ($1 + $2) * 1000000 }')")
    done
    local wm cm
    wm=$(printf '%s\n' "${w[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", a[int((NR + 1) / 2)] / 1000 }')
    cm=$(printf '%s\n' "${c[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.0f", a[int((NR + 1) / 2)] / 1000 }')
    echo "$wm $cm"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'; }

traces=()
if [ -n "${BENCH_WINDOW_TRACES:-}" ]; then
    read -r -a traces <<< "$BENCH_WINDOW_TRACES"
else
    for n in bench-100mb bench-1gb bench-1000mb; do
        [ -s "$work/$n.nettrace" ] && traces+=("$work/$n.nettrace")
    done
fi
if [ ${#traces[@]} -eq 0 ]; then
    echo "bench/window.sh: no bench-100mb.nettrace or bench-1gb.nettrace in $work (bench/record-large.sh records them): skipped"
    exit 0
fi
echo "load: $(uptime | sed 's/.*load average/load average/')"
printf '%-20s %8s %8s %8s %9s %9s %7s %7s %12s %6s %9s %9s %8s\n' trace cat_ms hdr_ms walk_ms full_ms win_ms \
    full_cpu win_cpu touched %file sidecar wall_x cpu_x
for src in "${traces[@]}"; do
    [ -s "$src" ] || continue
    f="$scratch/$(basename "$src")"
    ln -sfn "$(cd "$(dirname "$src")" && pwd)/$(basename "$src")" "$f"
    cat "$f" > /dev/null
    read -r c _ <<< "$(measure cat "$f")"
    read -r h _ <<< "$(measure "$nettrace" index --no-sidecar "$f")"
    read -r w _ <<< "$(measure "$nettrace" index "$f")"
    "$nettrace" index "$f" > /dev/null
    json=$("$nettrace" index --json --no-sidecar "$f")
    span=$(echo "$json" | sed -n 's/.*"min_ticks":\([0-9]*\).*"max_ticks":\([0-9]*\).*/\1 \2/p')
    freq=$(echo "$json" | sed -n 's/.*"qpc_frequency":\([0-9]*\).*/\1/p')
    from=$(echo "$span" | awk -v q="$freq" '{ printf "%.0f", ($1 + ($2 - $1) / 2) * 1e9 / q }')
    to=$((from + 1000000000))
    side=$(wc -c < "$f.ntidx")
    for q in "top" "stacks -f pprof -o /dev/null"; do
        # shellcheck disable=SC2086
        read -r full full_cpu <<< "$(measure env NETTRACE_NO_INDEX=1 "$nettrace" $q --from "@$from" --to "@$to" "$f")"
        # shellcheck disable=SC2086
        read -r win win_cpu <<< "$(measure "$nettrace" $q --from "@$from" --to "@$to" "$f")"
        # shellcheck disable=SC2086
        rep=$(NETTRACE_READ_REPORT=1 "$nettrace" $q --from "@$from" --to "@$to" "$f" 2>&1 > /dev/null | grep 'through the sidecar' || true)
        read_b=$(echo "$rep" | sed -n 's/.*read \([0-9]*\) of \([0-9]*\) bytes.*/\1/p')
        size=$(echo "$rep" | sed -n 's/.*read \([0-9]*\) of \([0-9]*\) bytes.*/\2/p')
        printf '%-20s %8s %8s %8s %9s %9s %7s %7s %12s %6s %9s %9s %8s\n' "$(basename "$f" .nettrace) ${q%% *}" "$c" "$h" "$w" \
            "$full" "$win" "$full_cpu" "$win_cpu" "${read_b:-?}" \
            "$(awk -v a="${read_b:-0}" -v b="${size:-1}" 'BEGIN { printf "%.2f", 100 * a / b }')" "$side" \
            "$(ratio "$full" "$win")x" "$(ratio "$full_cpu" "$win_cpu")x"
        echo "  $rep"
    done
done
echo "(ms: median wall time and CPU time, user + sys; touched: bytes of the trace read by the windowed query;"
echo " sidecar: its bytes, read whole by the query; index: cat/hdr/walk wall ms)"
