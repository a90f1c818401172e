#!/usr/bin/env bash
# Prove that a change did not alter results: run two builds of nettrace over
# every trace of corpus/ and ../shared/corpus and compare, byte for byte, the
# outputs of samples, stacks (folded, speedscope, pprof, html; the thread
# samples and the event profiles), top, info --json and convert (to V4 and V6).
#
#   tools/compare-builds.sh OLD_NETTRACE NEW_NETTRACE [TRACE...]
#
# Exit 0 when every output is identical, 1 otherwise (each difference named).
# Exit statuses are compared too.  Outputs are kept in $COMPARE_OUT (default: a
# temporary folder, removed on success).
set -u
if [ $# -lt 2 ]; then
    echo "usage: $0 OLD_NETTRACE NEW_NETTRACE [TRACE...]" >&2
    exit 2
fi
old=$1 new=$2
shift 2
here=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -eq 0 ]; then
    set -- "$here"/corpus/*.nettrace "$here"/corpus/seeds/*.nettrace
    if [ -d "$here/../shared/corpus" ]; then
        set -- "$@" "$here"/../shared/corpus/*.nettrace "$here"/../shared/corpus/*.netperf
    else
        echo "compare-builds: ../shared/corpus absent; comparing the project's own traces only" >&2
    fi
fi
out=${COMPARE_OUT:-$(mktemp -d)}
mkdir -p "$out/old" "$out/new"

# Each job: a name and the arguments after the binary (@T is the trace, @O an
# output file).
jobs=(
    "samples|samples @T"
    "folded|stacks -f folded @T"
    "folded-time|stacks -f folded --weight time @T"
    "speedscope|stacks -f speedscope -o @O @T"
    "pprof|stacks -f pprof -o @O @T"
    "info|info --json @T"
    "top|top @T"
    "convert-v4|convert @T --to v4 -o @O"
    "convert-v6|convert @T --to v6 -o @O"
    # every exporter and the top tables' other modes
    "html|stacks -f html -o @O @T"
    "speedscope-samples|stacks -f speedscope --weight samples --managed-only -o @O @T"
    "pprof-wall|stacks -f pprof --profile wall -o @O @T"
    "top-threads|top --by-thread --inclusive -n 0 @T"
    "top-wall|top --profile wall --json @T"
    "alloc-folded|stacks --profile alloc -f folded --by-label @T"
    "alloc-speedscope|stacks --profile alloc -f speedscope -o @O @T"
    "alloc-pprof|stacks --profile alloc -f pprof -o @O @T"
    "alloc-html|stacks --profile alloc -f html -o @O @T"
    "exceptions-speedscope|stacks --profile exceptions -f speedscope --by-label -o @O @T"
    "exceptions-pprof|stacks --profile exceptions -f pprof -o @O @T"
    "contention-folded|stacks --profile contention -f folded --by-count @T"
    "contention-html|stacks --profile contention -f html --by-label -o @O @T"
)

run() { # BIN SIDE NAME ARGS TRACE
    local bin=$1 side=$2 name=$3 args=$4 trace=$5 base
    base="$out/$side/$(basename "$trace").$name"
    args=${args//@T/$trace}
    args=${args//@O/$base.file}
    # shellcheck disable=SC2086
    NETTRACE_NO_PROGRESS=1 "$bin" $args >"$base.out" 2>"$base.err"
    echo $? >"$base.rc"
}

differ=0 compared=0
for trace in "$@"; do
    [ -f "$trace" ] || continue
    for job in "${jobs[@]}"; do
        name=${job%%|*} args=${job#*|}
        run "$old" old "$name" "$args" "$trace"
        run "$new" new "$name" "$args" "$trace"
        base=$(basename "$trace").$name
        for ext in out rc file; do
            a="$out/old/$base.$ext" b="$out/new/$base.$ext"
            [ -e "$a" ] || [ -e "$b" ] || continue
            compared=$((compared + 1))
            if ! cmp -s "$a" "$b"; then
                echo "DIFFERS: $base.$ext"
                differ=1
            fi
        done
    done
done
echo "compare-builds: $compared outputs compared over $# traces: $([ $differ = 0 ] && echo identical || echo DIFFERENT)"
if [ $differ = 0 ] && [ -z "${COMPARE_OUT:-}" ]; then rm -rf "$out"; else echo "outputs kept in $out"; fi
exit $differ
