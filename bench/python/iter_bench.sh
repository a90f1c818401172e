#!/bin/sh
# make bench: the Python module's cost per sample (bench/python/iter_bench.py)
# on the corpus/ traces and the ../shared/corpus ones with samples.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
. "$top_srcdir/bindings/env.sh"
PYTHON=${PYTHON:-python3}
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "iter_bench: skipped: $PYTHON is not installed"
    exit 0
fi
IFS='
'
# shellcheck disable=SC2046
set -- $(nt_bind_traces)
unset IFS
echo "iter_bench: $("$PYTHON" --version 2>&1), library $NETTRACE_LIBRARY"
"$PYTHON" "$top_srcdir/bench/python/iter_bench.py" --runs "${BENCH_PY_RUNS:-5}" "$@"
