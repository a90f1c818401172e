# Sourced by the bindings' tests and benchmark: the environment in which the
# Go package and the Python module use the library built in this tree
# (bindings/.libs, see bindings.mk) instead of an installed one.
: "${top_srcdir:?top_srcdir is not set}" "${top_builddir:?top_builddir is not set}"
nt_bind_libdir="$top_builddir/bindings/.libs"
export NETTRACE_LIBRARY="$nt_bind_libdir/libnettrace.so"
export CGO_ENABLED=1
# The go tool's cache does not hash headers outside the package: the public
# headers' checksum in the flags makes a changed struct layout rebuild the
# cgo code (a cached build against the old layout read garbage options).
nt_bind_headers_sum=$(cat "$top_srcdir"/include/*.h | cksum | cut -d' ' -f1)
export CGO_CFLAGS="-g -O2 -DNT_HEADERS_SUM=$nt_bind_headers_sum"
export CGO_LDFLAGS=
# The Go package finds the library through pkg-config (#cgo pkg-config:
# nettrace), the Python module too when NETTRACE_LIBRARY is unset: a
# nettrace.pc for this build tree (the installed one's fields; an rpath so
# that programs run uninstalled), written to a temporary name and renamed
# since the Go and Python tests source this file at the same time.
nt_bind_pcdir="$top_builddir/bindings/pkgconfig"
mkdir -p "$nt_bind_pcdir" &&
printf '%s\n' "libdir=$nt_bind_libdir" "includedir=$top_srcdir/include" "" \
    "Name: libnettrace" "Description: libnettrace, uninstalled (the build tree's bindings/.libs)" \
    "Version: $(sed -n 's/^#define NT_VERSION_STRING "\(.*\)"/\1/p' "$top_srcdir/include/nettrace.h")" \
    'Libs: -L${libdir} -Wl,-rpath,${libdir} -lnettrace' 'Cflags: -I${includedir}' \
    > "$nt_bind_pcdir/nettrace.pc.$$" && mv -f "$nt_bind_pcdir/nettrace.pc.$$" "$nt_bind_pcdir/nettrace.pc"
export PKG_CONFIG_PATH="$nt_bind_pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
# The go tool's caches in the build tree: CI runs as root without a usable
# home cache; no module is ever downloaded (the package needs none).
export GOCACHE="$top_builddir/bindings/go-work/cache"
export GOPATH="$top_builddir/bindings/go-work/path"
export GOTOOLCHAIN=local GOPROXY=off GOFLAGS= GO111MODULE=on GOTELEMETRY=off
export PYTHONPATH="$top_srcdir/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
export NETTRACE_CLI="$top_builddir/nettrace"
# The reference corpus beside the source tree, when present.
NETTRACE_SHARED_CORPUS="${NETTRACE_SHARED_CORPUS:-$top_srcdir/../shared/corpus}"
export NETTRACE_SHARED_CORPUS

# The traces of corpus/ and, when present, of the shared corpus, one path a
# line (for a loop or set -- with IFS set to a newline); says when the
# shared corpus is absent.
nt_bind_traces() {
    for f in "$top_srcdir"/corpus/*.nettrace "$NETTRACE_SHARED_CORPUS"/*.nettrace; do
        [ -e "$f" ] && printf '%s\n' "$f"
    done
    [ -d "$NETTRACE_SHARED_CORPUS" ] ||
        echo "$NETTRACE_SHARED_CORPUS is absent (set NETTRACE_SHARED_CORPUS): corpus/ only" >&2
}

# Build the LiveTarget workload (bindings/live_prepare) and export its path
# as NETTRACE_LIVE_TARGET; without dotnet say that the live tests will skip.
# Fails when the build failed.
nt_bind_live_target() {
    nt_live=$("$top_builddir/bindings/live_prepare")
    case $? in
    0) NETTRACE_LIVE_TARGET=$nt_live; export NETTRACE_LIVE_TARGET ;;
    77) echo "live tests will skip: $nt_live" ;;
    *) echo "FAIL: $nt_live"; return 1 ;;
    esac
}
