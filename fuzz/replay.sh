#!/bin/sh
# make check: replay every committed seed and regression input through the
# plain (non-libFuzzer) build of each harness.  A broken invariant or a
# sanitizer report aborts the replay program and fails this test.
set -u
b=${top_builddir:-.}
s=${top_srcdir:-.}
rc=0
# harness -> the corpus its inputs come from
corpus_of() {
    case $1 in
    parser_limits) echo parser_limits ;;
    ipc_reply) echo ipc_reply ;;
    fields) echo fields ;;
    heap) echo heap ;;
    gcdump) echo gcdump ;;
    *) echo parser ;;
    esac
}
for h in parser parser_chunked parser_limits parser_alloc trace ipc_reply roundtrip fields index heap profile gcdump convert parallel window; do
    c=$(corpus_of "$h")
    set --
    for d in "$s/corpus/fuzz/$c" "$s/corpus/fuzz/regressions/$c"; do
        [ -d "$d" ] && set -- "$@" "$d"
    done
    # the gcdump harness also replays the real .gcdump files of corpus/heap/
    [ "$h" = gcdump ] && for f in "$s"/corpus/heap/*.gcdump; do [ -f "$f" ] && set -- "$@" "$f"; done
    if [ $# -eq 0 ]; then
        echo "FAIL: no corpus for $h under $s/corpus/fuzz" >&2
        rc=1
        continue
    fi
    if "$b/fuzz/replay_$h" "$@"; then
        echo "PASS: replay_$h"
    else
        echo "FAIL: replay_$h" >&2
        rc=1
    fi
done
exit $rc
