#!/bin/sh
# nettrace slice: for every trace and windows cut at random (and open-ended
# ones), 'samples' of the slice is 'samples --from --to' of the original (the
# same samples, with the same frame names) and so is the hot-method table of
# 'top --json -n 0' (its rows as a set: ties are in first-seen order).  The
# traces of corpus/ and corpus/seeds; with the argument "shared", those of
# ../shared/corpus instead (exit 77 when it is absent: tests/slice_shared.sh).  The windows' seed is printed, and
# SLICE_SEED replays one.
set -u
N="${top_builddir:-.}/nettrace"
SRC="${top_srcdir:-.}"
export NETTRACE_NO_PROGRESS=1
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
if [ "${1:-}" = shared ]; then
    shared="${NETTRACE_SHARED_CORPUS:-$SRC/../shared/corpus}"
    if [ ! -d "$shared" ]; then
        echo "SKIP: the shared corpus ($shared) is absent: set NETTRACE_SHARED_CORPUS"
        exit 77
    fi
    set -- "$shared"/*.nettrace
else
    set -- "$SRC"/corpus/*.nettrace "$SRC"/corpus/seeds/*.nettrace
fi
seed=${SLICE_SEED:-$(date +%s)}
echo "windows from seed $seed (SLICE_SEED=$seed replays them)"
fail=0 count=0 nonempty=0

json_num() { # KEY FILE
    sed -n "s/^  \"$1\": \(-\{0,1\}[0-9]*\),*$/\1/p" "$2"
}

compare() { # TRACE FROM TO (each "" for an open end, else an option value)
    t=$1 from=$2 to=$3
    set --
    [ -n "$from" ] && set -- "$@" --from "$from"
    [ -n "$to" ] && set -- "$@" --to "$to"
    what="$(basename "$t") $*"
    count=$((count + 1))
    "$N" slice "$t" "$@" -o "$tmp/slice.nettrace" --force 2> "$tmp/err"
    rc=$?
    # 3: something left out, which the slice says on stderr; 15: a cut trace, sliced as far as it reads
    if [ $rc -ne 0 ] && [ $rc -ne 3 ] && [ $rc -ne 15 ]; then
        echo "FAIL: slice $what exited $rc: $(cat "$tmp/err")"
        fail=1
        return
    fi
    "$N" samples "$@" "$t" > "$tmp/want" 2> /dev/null
    "$N" samples "$tmp/slice.nettrace" > "$tmp/got" 2> "$tmp/err"
    if ! cmp -s "$tmp/want" "$tmp/got"; then
        echo "FAIL: samples of the slice $what differ from the window's ($(wc -l < "$tmp/want") lines, the slice $(wc -l < "$tmp/got")):"
        diff "$tmp/want" "$tmp/got" | head -5
        fail=1
        return
    fi
    [ -s "$tmp/want" ] && nonempty=$((nonempty + 1))
    # the rows in order of their counts; rows that tie are in the order their frames were first seen in the
    # whole trace, which a slice does not hold: compared as sorted lines
    "$N" top --json -n 0 "$@" "$t" 2> /dev/null | sed -n '/"tables"/,$p' | sed 's/,$//' | sort > "$tmp/want"
    "$N" top --json -n 0 "$tmp/slice.nettrace" 2> /dev/null | sed -n '/"tables"/,$p' | sed 's/,$//' | sort > "$tmp/got"
    if ! cmp -s "$tmp/want" "$tmp/got"; then
        echo "FAIL: top of the slice $what differs from the window's:"
        diff "$tmp/want" "$tmp/got" | head -5
        fail=1
    fi
}

i=0
for t in "$@"; do
    [ -f "$t" ] || continue
    "$N" info --json "$t" > "$tmp/info" 2> /dev/null
    start=$(json_num start_ns "$tmp/info") end=$(json_num end_ns "$tmp/info")
    [ -n "$start" ] && [ -n "$end" ] || { echo "note: $(basename "$t"): no time span, not sliced"; continue; }
    i=$((i + 1))
    # three windows at random inside [start, end], one from the start and one to the end
    # (a header's start can be after events: the span is from the earlier to the later)
    awk -v s="$start" -v e="$end" -v seed=$((seed + i)) 'BEGIN {
        srand(seed); if (e < s) { x = s; s = e; e = x }; span = e - s
        for (k = 0; k < 3; k++) { a = s + int(rand() * span); b = a + int(rand() * (e - a)) + 1; printf "@%.0f @%.0f\n", a, b }
        printf "- @%.0f\n", s + int(rand() * span); printf "@%.0f -\n", s + int(rand() * span) }' > "$tmp/windows"
    while read -r a b; do
        [ "$a" = - ] && a=
        [ "$b" = - ] && b=
        compare "$t" "$a" "$b"
    done < "$tmp/windows"
    compare "$t" 0s 250ms # relative to the trace's start
done
echo "compared $count slices ($nonempty with samples)"
[ $count -gt 0 ] || { echo "FAIL: no trace sliced"; exit 1; }
exit $fail
