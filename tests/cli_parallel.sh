#!/bin/sh
# The tool's output read on 2, 3 and 7 threads (--jobs, parts of 64 KiB so
# that small files are cut many times) is byte for byte what one thread
# gives: top, top --json, stacks -f folded / speedscope / pprof, samples and
# the alloc / exceptions / contention profiles, with the same exit code and
# messages, on every trace of corpus/ (with the argument "shared", of
# ../shared/corpus instead: SKIP when it is absent, tests/cli_parallel_shared.sh),
# and a trace cut in the middle.  A pipe is read by one thread.
set -u
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
src=$top_srcdir
export NETTRACE_PART_BYTES=65536
files=0
run() { # run OUT ARGS...: stdout to OUT, stderr to OUT.err, the exit code to OUT.rc
    out=$1; shift
    "$nt" "$@" > "$out" 2> "$out.err"; echo $? > "$out.rc"
}
check_file() {
    f=$1
    name=$(basename "$f")
    i=0
    for args in "top -n 0" "top --json" "stacks -f folded" "stacks -f speedscope" "stacks -f pprof -o -" \
                "samples" "top --profile alloc" "top --profile exceptions" "stacks --profile contention -f folded"; do
        i=$((i + 1))
        # shellcheck disable=SC2086
        run "$tmp/one" $args --jobs 1 "$f"
        for j in 2 3 7; do
            # shellcheck disable=SC2086
            run "$tmp/many" $args --jobs "$j" "$f"
            for x in "" .err .rc; do
                cmp -s "$tmp/one$x" "$tmp/many$x" ||
                    fail "$name: 'nettrace $args' with --jobs $j: ${x:-stdout} differs from --jobs 1"
            done
        done
    done
    files=$((files + 1))
}
if [ "${1:-}" = shared ]; then
    # The shared reference traces (tests/cli_parallel_shared.sh): SKIP when absent.
    dir=$(shared_corpus) || skip "the shared corpus (../shared/corpus) is absent: set NETTRACE_SHARED_CORPUS"
    for f in "$dir"/*.nettrace; do
        [ -f "$f" ] && check_file "$f"
    done
    [ $files -gt 0 ] || fail "no trace in $dir"
    ok "$files shared traces checked on 1, 2, 3 and 7 threads"
    finish
fi
for f in "$src"/corpus/*.nettrace; do
    [ -f "$f" ] && check_file "$f"
done
[ $files -gt 0 ] || { CHECKS_STOP=1 fail "no trace found in corpus/"; }
# A cut trace: the same samples before the cut, the same message.
big=$(ls -S "$src"/corpus/*.nettrace | head -1)
head -c $(( $(wc -c < "$big") / 2 )) "$big" > "$tmp/cut.nettrace"
check_file "$tmp/cut.nettrace"
# A pipe: one thread, the same output.
"$nt" top -n 0 --jobs 1 "$big" > "$tmp/file" 2>/dev/null
cat "$big" | "$nt" top -n 0 --jobs 4 - > "$tmp/pipe" 2>/dev/null
cmp -s "$tmp/file" "$tmp/pipe" || fail "top of a pipe differs"
ok "$files traces checked on 1, 2, 3 and 7 threads"
finish
