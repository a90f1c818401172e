#!/bin/sh
# make bench-heap: `nettrace heap FILE` (read + dominators + type table) on a
# made-up snapshot of HEAP_OBJECTS objects (default 5,000,000; bench/heap_snapshot.c),
# against `dotnet-gcdump convert FILE` + `dotnet-gcdump report` (10.0.750501:
# $DOTNET_GCDUMP, on PATH or in ~/.dotnet/tools) on the same file, timed by
# bench_run in the same run: the ratios are the result, never a wall-clock limit.
# Ratios are of CPU time (user + system, the least of HEAP_RUNS runs) and of
# peak resident memory; wall times are printed too, but on a shared machine
# they measure the neighbours.  bench/heap_phases first splits our time and
# memory by phase and states the bytes per object and per reference.
# Then the .gcdump dotnet-gcdump converted, read by `nettrace heap` against
# `dotnet-gcdump report` on it.
set -u
work=${BENCH_WORK:?}
nt=${NETTRACE:?}
run=${BENCH_RUN:?}
gen=${HEAP_SNAPSHOT:?}
phases=${HEAP_PHASES:?}
n=${HEAP_OBJECTS:-5000000}
runs=${HEAP_RUNS:-3}
mkdir -p "$work/heap"
file="$work/heap/heap-$n.nettrace"
[ -f "$file" ] || "$gen" "$n" "$file" || exit 1
echo "bench-heap: $file ($(stat -L -c %s "$file") bytes)"
"$nt" heap --json "$file" -n 1 > "$work/heap/ours.json" || exit 1
"$phases" "$file" || exit 1
ours=$("$run" -n "$runs" -- "$nt" heap -n 20 "$file") || exit 1
echo "nettrace heap:                   $ours"
tool=${DOTNET_GCDUMP:-$(command -v dotnet-gcdump || echo "$HOME/.dotnet/tools/dotnet-gcdump")}
if [ ! -x "$tool" ]; then
    echo "bench-heap: dotnet-gcdump not found (set DOTNET_GCDUMP): no comparison"
    exit 0
fi
rm -f "$work/heap/theirs.gcdump"
conv=$("$run" -n 1 -- "$tool" convert "$file" -o "$work/heap/theirs.gcdump") || exit 1
rep=$("$run" -n "$runs" -- "$tool" report "$work/heap/theirs.gcdump") || exit 1
echo "dotnet-gcdump convert:           $conv"
echo "dotnet-gcdump report:            $rep"
# CPU: convert once plus report's least; wall: the same with best times; peaks: the larger
echo "$ours|$conv|$rep" | awk -F'|' '{
    split($1, a, " "); split($2, b, " "); split($3, c, " ");
    t = b[10] + c[10]; w = b[2] + c[2]; p = b[6] > c[6] ? b[6] : c[6];
    printf "bench-heap: CPU time ratio %.2fx (dotnet-gcdump %.2f s / nettrace %.2f s; target 10x), peak memory %.2f of dotnet-gcdump'"'"'s (%d KiB / %d KiB; target 0.25); wall %.2f s / %.2f s\n",
        t / a[10], t, a[10], a[6] / p, a[6], p, w, a[2] }'
# The same .gcdump read by both: nettrace heap (read + dominators + type table) against dotnet-gcdump report.
gd=$("$run" -n "$runs" -- "$nt" heap -n 20 "$work/heap/theirs.gcdump") || exit 1
echo "nettrace heap on the .gcdump:    $gd"
echo "$gd|$rep" | awk -F'|' '{
    split($1, a, " "); split($2, c, " ");
    printf "bench-heap: the .gcdump: nettrace heap %.2f s CPU, dotnet-gcdump report %.2f s CPU (%.1fx), peak memory %.2f of its (%d KiB / %d KiB)\n",
        a[10], c[10], c[10] / a[10], a[6] / c[6], a[6], c[6] }'
