#!/bin/sh
# Run libFuzzer campaigns: fuzz/run.sh HARNESS...
# Each harness fuzzes a scratch copy of its committed corpus (libFuzzer adds
# files to the corpus it is given) with the format dictionary, for
# $FUZZ_SECONDS seconds (default 60), and prints the executions it made.
# FUZZ_WORK (default fuzz-work/) keeps the copies and logs; FUZZ_ARGS adds
# libFuzzer options.  New crashes land in $FUZZ_WORK/<harness>/crashes/.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
secs=${FUZZ_SECONDS:-60}
work=${FUZZ_WORK:-fuzz-work}
rc=0
for h in "$@"; do
    case $h in
    parser_limits) c=parser_limits ;;
    ipc_reply) c=ipc_reply ;;
    fields | heap | gcdump) c=$h ;;
    *) c=parser ;;
    esac
    w=$work/$h
    mkdir -p "$w/corpus" "$w/crashes"
    cp -n "$src/corpus/fuzz/$c"/* "$w/corpus/" 2>/dev/null
    [ -d "$src/corpus/fuzz/regressions/$c" ] && cp -n "$src/corpus/fuzz/regressions/$c"/* "$w/corpus/" 2>/dev/null
    log=$w/fuzz-$(date +%Y%m%d-%H%M%S).log
    ./fuzz/fuzz_$h -dict="$src/fuzz/nettrace.dict" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -max_len=${FUZZ_MAX_LEN:-4096} -print_final_stats=1 -artifact_prefix="$w/crashes/" ${FUZZ_ARGS:-} "$w/corpus" \
        >"$log" 2>&1
    r=$?
    runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 runs in \2 s/p' "$log" | tail -1)
    if [ $r -eq 0 ]; then
        echo "PASS: fuzz_$h: ${runs:-? runs} ($log)"
    else
        echo "FAIL: fuzz_$h exited $r; see $log and $w/crashes/" >&2
        rc=1
    fi
done
exit $rc
