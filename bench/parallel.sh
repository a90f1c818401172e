#!/usr/bin/env bash
# The parallel parse against one thread (bench/README.md, "Parallel parse"):
# `nettrace top` and `nettrace stacks -f pprof` with --jobs 1, 2 (and every
# count up to the processors online, at most 8) on each FILE, the runs of the
# job counts interleaved, in one run of this script.  Wall and CPU time
# (user + system, every thread) from bench_run; speedup = time with 1 job /
# time with N.  The outputs of every job count are compared byte for byte
# (the script fails on a difference).  The load average is printed before
# and after: on a shared machine the ratios are what the other processes left.
#
#   bench/parallel.sh FILE...
#
# Environment: NETTRACE, BENCH_RUN (the built programs), BENCH_RUNS (runs per
# job, default 3), BENCH_WORK (outputs under $BENCH_WORK/out/parallel),
# BENCH_CALLGRIND (a trace, best a small one: also count `top`'s instructions
# with valgrind --tool=callgrind --separate-threads=yes for 1 and 2 jobs, the
# load does not change them; prints each thread's count, the instructions
# outside nt_parallel_decode on the delivering thread -- the serial work --,
# those after nt_parse_parallel returns -- which overlap nothing -- and the
# bound on two idle cores: one job's count / max(serial, after + (all - after) / 2)).
# Takes about 45 s for the 100 MB and 1 GB traces with BENCH_RUNS=1 on a
# loaded 2-core machine (about 2.5 min with the default 3 runs).
set -euo pipefail

nettrace=${NETTRACE:-./nettrace}
bench_run=${BENCH_RUN:-./bench/bench_run}
runs=${BENCH_RUNS:-3}
out=${BENCH_WORK:-bench/work}/out/parallel
mkdir -p "$out"
cpus=$(getconf _NPROCESSORS_ONLN)
max=$((cpus < 8 ? cpus : 8))
[ "$max" -ge 2 ] || max=2
status=0

echo "parallel parse: $cpus processors online; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| trace | MiB | command | jobs | wall s | CPU s | speedup (wall) | CPU / 1 job |\n|---|---:|---|---:|---:|---:|---:|---:|\n'
for f in "$@"; do
    [ -f "$f" ] || { echo "bench/parallel.sh: $f: no such file" >&2; status=1; continue; }
    name=$(basename "$f" .nettrace)
    mib=$(awk -v b="$(stat -c %s "$f")" 'BEGIN { printf "%.1f", b / 1048576 }')
    cat "$f" >/dev/null # in the page cache for every job alike
    for cmd in top pprof; do
        declare -A wall=() cpu=()
        for round in $(seq 1 "$runs"); do
            for j in $(seq 1 "$max"); do
                o="$out/$name.$cmd.$j"
                if [ "$cmd" = top ]; then
                    line=$("$bench_run" -n 1 -o "$o" -- "$nettrace" top --jobs "$j" -n 50 "$f")
                else
                    line=$("$bench_run" -n 1 -o "$o" -- "$nettrace" stacks --jobs "$j" -f pprof "$f")
                fi
                w=$(echo "$line" | awk '{print $2}')
                c=$(echo "$line" | awk '{for (i = 1; i < NF; i++) if ($i == "cpu") print $(i + 1)}')
                if [ -z "${wall[$j]:-}" ] || awk -v a="$w" -v b="${wall[$j]}" 'BEGIN { exit !(a < b) }'; then wall[$j]=$w; fi
                if [ -z "${cpu[$j]:-}" ] || awk -v a="$c" -v b="${cpu[$j]}" 'BEGIN { exit !(a < b) }'; then cpu[$j]=$c; fi
                if [ "$round" = 1 ] && [ "$j" -gt 1 ] && ! cmp -s "$out/$name.$cmd.1" "$o"; then
                    echo "bench/parallel.sh: $name $cmd: the output with --jobs $j differs from --jobs 1" >&2
                    status=1
                fi
            done
        done
        for j in $(seq 1 "$max"); do
            printf '| %s | %s | %s | %d | %.3f | %.3f | %.2fx | %.2f |\n' "$name" "$mib" \
                "$([ "$cmd" = top ] && echo top || echo 'stacks -f pprof')" "$j" "${wall[$j]}" "${cpu[$j]}" \
                "$(awk -v a="${wall[1]}" -v b="${wall[$j]}" 'BEGIN { print a / b }')" \
                "$(awk -v a="${cpu[$j]}" -v b="${cpu[1]}" 'BEGIN { print a / b }')"
        done
        unset wall cpu
    done
done
if [ -n "${BENCH_CALLGRIND:-}" ]; then
    command -v valgrind >/dev/null || { echo "bench/parallel.sh: BENCH_CALLGRIND needs valgrind" >&2; exit 1; }
    cg=$out/callgrind
    mkdir -p "$cg"
    summary() { sed -n 's/^summary: //p' "$1" | head -1; }
    # Instructions of function $2 (inclusive) in callgrind file $1.
    incl() { callgrind_annotate --inclusive=yes "$1" 2>/dev/null | awk -v f=":$2 " '!n && index($0, f) { gsub(",", "", $1); print $1; n = 1 }'; }
    valgrind -q --tool=callgrind --separate-threads=yes --callgrind-out-file="$cg/one" "$nettrace" top --jobs 1 -n 50 \
        "$BENCH_CALLGRIND" >/dev/null
    valgrind -q --tool=callgrind --separate-threads=yes --callgrind-out-file="$cg/two" "$nettrace" top --jobs 2 -n 50 \
        "$BENCH_CALLGRIND" >/dev/null
    one=$(summary "$cg/one-01")
    all=0
    for f in "$cg"/two-*; do all=$((all + $(summary "$f"))); done
    main=$(summary "$cg/two-01")
    decode=$(incl "$cg/two-01" nt_parallel_decode)
    serial=$((main - ${decode:-0}))
    # The work after nt_parse_parallel returns (finish, tables, printing) overlaps nothing.
    parse=$(incl "$cg/two-01" nt_parse_parallel)
    post=$((main - ${parse:-0}))
    printf '\ninstructions of top on %s (callgrind):\n' "$(basename "$BENCH_CALLGRIND")"
    printf '| jobs | all threads | delivering thread | of it outside nt_parallel_decode (serial) | of it after the parse |\n|---:|---:|---:|---:|---:|\n'
    printf '| 1 | %d | %d | %d | - |\n' "$one" "$one" "$one"
    printf '| 2 | %d | %d | %d | %d |\n' "$all" "$main" "$serial" "$post"
    awk -v o="$one" -v s="$serial" -v a="$all" -v p="$post" 'BEGIN { e = p + (a - p) / 2; b = s > e ? s : e
        printf "bound on two idle cores: %.2fx (%d / max(%d, %d + (%d - %d) / 2))\n", o / b, o, s, p, a, p }'
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); outputs identical across job counts: $([ $status = 0 ] && echo yes || echo NO)"
exit $status
