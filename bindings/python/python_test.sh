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
nt_bind_live_target || exit 1
NETTRACE_ABI_LAYOUT="$top_builddir/bindings/python/abi_layout"
export NETTRACE_ABI_LAYOUT
"$PYTHON" -m unittest discover -v -s "$top_srcdir/bindings/python/tests" -t "$top_srcdir/bindings/python" || exit 1
sh "$top_srcdir/bindings/readme_example.sh" python || exit 1

# The misuse tests (and the ones whose ctypes structures the library writes
# into: the field iterator, the GC timeline) again over the tree's own
# library when it is built with AddressSanitizer (configure
# --enable-sanitizers, as CI does): python3 is not instrumented, so the
# sanitizer runtimes are preloaded.  A use after free or a structure smaller
# than the library's there aborts instead of passing by luck.
asan_lib="$top_builddir/.libs/libnettrace.so"
# The runtimes to preload are the ones the library links (gcc's libasan.so.N).
preload=$(ldd "$asan_lib" 2>/dev/null | awk '/lib(asan|ubsan)\.so/ { printf "%s ", $3 }')
if [ -f "$asan_lib" ] && nm -D "$asan_lib" 2>/dev/null | grep -q __asan_init && [ -n "$preload" ]; then
    NETTRACE_LIBRARY="$asan_lib" LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
        "$PYTHON" -m unittest -v tests.test_misuse tests.test_events tests.test_names_gc 2>&1 || { echo "FAIL: the misuse tests over the ASan library"; exit 1; }
    echo "ok: the misuse tests passed over the AddressSanitizer library"
else
    echo "misuse tests under ASan skipped: $asan_lib is not built with --enable-sanitizers (or links no libasan)"
fi
