#!/bin/sh
# The shared library exports only nt_* symbols (everything else is hidden).
set -u
lib="$top_builddir/.libs/libnettrace.so"
if [ ! -f "$lib" ]; then
    echo "SKIP: no shared library was built ($lib)"
    exit 77
fi
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /[TDBR]/ {print $3}' | grep -v '^nt_' || true)
if [ -n "$bad" ]; then
    echo "FAIL: symbols outside the nt_ namespace: $bad"
    exit 1
fi
n=$(nm -D --defined-only "$lib" | awk '$2 ~ /T/' | grep -c '^.* nt_' || true)
[ "$n" -ge 10 ] || { echo "FAIL: only $n nt_ functions exported"; exit 1; }
echo "ok: $n functions exported, all nt_*"
