#!/bin/sh
# libnettrace against TraceEvent on every trace of corpus/ and ../shared/corpus
# (or $NETTRACE_SHARED_CORPUS): builds tests/conformance/Conformance.csproj into
# the build tree and runs tests/conformance/compare.py, which fails on any
# difference README.md there does not document.
#
# As a `make check` test it skips (77) when dotnet or python3 is absent; run
# by `make conformance` (CONFORMANCE_REQUIRED=1) their absence is an error.
set -u
src=${top_srcdir:-.}
build=${top_builddir:-.}
nt="$build/nettrace"
out="$build/tests/conformance-build"

missing() {
    echo "conformance: $1"
    if [ "${CONFORMANCE_REQUIRED:-0}" = 1 ]; then
        exit 1
    fi
    echo "SKIP: $1"
    exit 77
}
command -v dotnet >/dev/null 2>&1 || missing "dotnet is not on PATH: TraceEvent cannot be run, nothing compared"
command -v python3 >/dev/null 2>&1 || missing "python3 is not on PATH: the comparer cannot run"

python3 "$src/tests/conformance/compare.py" --self-test || exit 1

# Restores TraceEvent 4.0.0 from NuGet the first time; the source folder stays
# untouched (bin/ and obj/ go under --artifacts-path), so a read-only srcdir works.
echo "conformance: building the TraceEvent side into $out"
if ! dotnet build "$src/tests/conformance/Conformance.csproj" -c Release --nologo -v quiet \
        --artifacts-path "$out" >"$out.log" 2>&1; then
    cat "$out.log"
    echo "conformance: dotnet build failed"
    exit 1
fi
dll="$out/bin/Conformance/release/Conformance.dll"
[ -f "$dll" ] || { echo "conformance: $dll was not built"; exit 1; }

set --
for f in "$src"/corpus/*.nettrace; do
    [ -e "$f" ] && set -- "$@" "corpus/$(basename "$f")=$f"
done
# The made-up trace with the cases real traces lack (tests/conformance/edges.c).
if ! "$build/tests/conformance_edges" "$out/edges.nettrace"; then
    echo "conformance: tests/conformance_edges failed (make check builds it)"
    exit 1
fi
set -- "$@" "generated/edges.nettrace=$out/edges.nettrace"
# The same traces rewritten as NetTrace V6 by `nettrace convert`: the corpus
# has no V6 trace, and TraceEvent 4.0.0 reads V6.
for f in "$src"/corpus/*.nettrace "$out/edges.nettrace"; do
    [ -e "$f" ] || continue
    v6="$out/$(basename "$f" .nettrace).v6.nettrace"
    if ! "$nt" convert "$f" --to v6 --force -o "$v6"; then
        echo "conformance: nettrace convert $f --to v6 failed"
        exit 1
    fi
    set -- "$@" "generated/$(basename "$v6")=$v6"
done
# Slices of the middle third of each corpus trace (`nettrace slice`): TraceEvent reads the window's samples
# from them as we do (and tests/slice_windows.sh holds our reading of a slice to the original's window).
for f in "$src"/corpus/*.nettrace; do
    [ -e "$f" ] || continue
    window=$("$nt" info --json "$f" | awk -F'[:,]' '/"start_ns"/ { s = $2 } /"end_ns"/ { e = $2 }
        END { if (e > s) printf "@%.0f @%.0f", s + (e - s) / 3, s + 2 * (e - s) / 3 }')
    [ -n "$window" ] || continue
    cut="$out/$(basename "$f" .nettrace).slice.nettrace"
    if ! "$nt" slice "$f" --from "${window% *}" --to "${window#* }" --force -o "$cut"; then
        echo "conformance: nettrace slice $f --from ${window% *} --to ${window#* } failed"
        exit 1
    fi
    set -- "$@" "generated/$(basename "$cut")=$cut"
done
shared=${NETTRACE_SHARED_CORPUS:-$src/../shared/corpus}
if [ -d "$shared" ]; then
    for f in "$shared"/*.nettrace "$shared"/*.netperf; do
        [ -e "$f" ] && set -- "$@" "shared/$(basename "$f")=$f"
    done
else
    echo "conformance: $shared is absent (set NETTRACE_SHARED_CORPUS): comparing corpus/ only"
fi
rc=0
python3 "$src/tests/conformance/compare.py" --nettrace "$nt" --conformance "$dll" "$@" || rc=$?
# The event profiles and the GC timeline (tests/conformance/compare_profiles.py).
python3 "$src/tests/conformance/compare_profiles.py" --nettrace "$nt" --conformance "$dll" "$@" || rc=$?
exit $rc
