#!/bin/sh
# make check: the Python module's tests (unittest) on the library built for
# the bindings (bindings.mk), the corpus traces and a real .NET process (the
# LiveTarget workload), and the README's Python example as written.
set -u
. "$top_srcdir/bindings/env.sh"
PYTHON=${PYTHON:-python3}
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "SKIP: $PYTHON is not installed"
    exit 77
fi
live=$("$top_builddir/bindings/live_prepare")
case $? in
0) NETTRACE_LIVE_TARGET=$live; export NETTRACE_LIVE_TARGET ;;
77) echo "live tests will skip: $live" ;;
*) echo "FAIL: $live"; exit 1 ;;
esac
"$PYTHON" -m unittest discover -v -s "$top_srcdir/bindings/python/tests" -t "$top_srcdir/bindings/python" || exit 1
sh "$top_srcdir/bindings/readme_example.sh" python || exit 1
