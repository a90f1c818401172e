#!/usr/bin/env bash
# The block index and windowed reads (issue 27), as ratios measured in one run:
#   index build (nettrace index --no-sidecar: headers; nettrace index: every
#   event header walked and the sidecar written) against reading the file's
#   bytes once from the page cache (cat);
#   a 1-second window (top and stacks -f pprof, --from MID --to MID+1s)
#   through the sidecar against the same query reading the whole file
#   (NETTRACE_NO_INDEX=1), with the bytes the windowed read touched.
# Traces: $BENCH_WORK/bench-100mb.nettrace and bench-1000mb.nettrace (recorded
# by bench/record-large.sh; traceevent.sh records them), those present.  The
# sidecar is written beside them (in BENCH_WORK, never the source tree).
# Each figure is the median of REPS runs (default 5), warm page cache.
set -euo pipefail
work=${BENCH_WORK:-$PWD/bench/work}
nettrace=${NETTRACE:-./nettrace}
reps=${REPS:-5}
export NETTRACE_NO_PROGRESS=1

ms() { # median wall ms of reps runs of "$@" (output discarded)
    local t=()
    for _ in $(seq "$reps"); do
        local s e
        s=$(date +%s%N)
        "$@" > /dev/null 2>&1 || true
        e=$(date +%s%N)
        t+=($(( (e - s) / 1000 )))
    done
    printf '%s\n' "${t[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", a[int((NR + 1) / 2)] / 1000 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

found=0
printf '%-22s %9s %9s %9s %9s %9s %12s %10s %10s %8s\n' trace cat_ms hdr_ms walk_ms full_ms win_ms "bytes_read" "%file" speedup idx/cat
for f in "$work"/bench-100mb.nettrace "$work"/bench-1000mb.nettrace; do
    [ -s "$f" ] || continue
    found=1
    cat "$f" > /dev/null
    c=$(ms cat "$f")
    h=$(ms "$nettrace" index --no-sidecar "$f")
    w=$(ms "$nettrace" index "$f")
    "$nettrace" index "$f" > /dev/null
    start=$("$nettrace" index --json --no-sidecar "$f" | sed -n 's/.*"min_ticks":\([0-9]*\).*"max_ticks":\([0-9]*\).*/\1 \2/p')
    freq=$("$nettrace" index --json --no-sidecar "$f" | sed -n 's/.*"qpc_frequency":\([0-9]*\).*/\1/p')
    from=$(echo "$start" | awk -v q="$freq" '{ printf "%.0f", ($1 + ($2 - $1) / 2) * 1e9 / q }')
    to=$((from + 1000000000))
    for q in "top" "stacks -f pprof -o /dev/null"; do
        # shellcheck disable=SC2086
        full=$(ms env NETTRACE_NO_INDEX=1 "$nettrace" $q --from "@$from" --to "@$to" "$f")
        # shellcheck disable=SC2086
        win=$(ms "$nettrace" $q --from "@$from" --to "@$to" "$f")
        # shellcheck disable=SC2086
        rep=$(NETTRACE_READ_REPORT=1 "$nettrace" $q --from "@$from" --to "@$to" "$f" 2>&1 > /dev/null | grep 'through the sidecar' || true)
        read_b=$(echo "$rep" | sed -n 's/.*read \([0-9]*\) of \([0-9]*\) bytes.*/\1/p')
        size=$(echo "$rep" | sed -n 's/.*read \([0-9]*\) of \([0-9]*\) bytes.*/\2/p')
        printf '%-22s %9s %9s %9s %9s %9s %12s %10s %10s %8s\n' "$(basename "$f" .nettrace) ${q%% *}" "$c" "$h" "$w" "$full" "$win" \
            "${read_b:-?}" "$(awk -v a="${read_b:-0}" -v b="${size:-1}" 'BEGIN { printf "%.1f", 100 * a / b }')" \
            "$(ratio "$full" "$win")x" "$(ratio "$c" "$w")x"
        echo "  $rep"
    done
done
if [ $found -eq 0 ]; then
    echo "bench/window.sh: no bench-100mb.nettrace or bench-1000mb.nettrace in $work (bench/record-large.sh records them): skipped"
fi
