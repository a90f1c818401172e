#!/bin/sh
# make bench: the Go package's Parse on the corpus/ and ../shared/corpus
# traces (bench/go/main.go), and against pyroscope-io/dotnetdiag's pure-Go
# reader in the same process when DOTNETDIAG_SRC names its source.
#
# DOTNETDIAG_SRC is a checkout of github.com/pyroscope-io/dotnetdiag kept
# outside this repository (its source never enters it).  Only its nettrace/
# packages are used (standard library only); they are copied into a scratch
# module under BENCH_WORK with a go.mod of our own, next to this program.
set -u
: "${top_srcdir:?}" "${top_builddir:?}"
. "$top_srcdir/bindings/env.sh"
if ! command -v go >/dev/null 2>&1; then
    echo "bench_go: skipped: go is not installed"
    exit 0
fi
work="${BENCH_WORK:-$top_builddir/bench/work}/go"
rm -rf "$work"
mkdir -p "$work/prog" || exit 1
cp "$top_srcdir/bench/go/main.go" "$work/prog/" || exit 1
tags=
dd_require=
dd_replace=
if [ -z "${DOTNETDIAG_SRC:-}" ]; then
    echo "bench_go: dotnetdiag comparison skipped: DOTNETDIAG_SRC is not set (a checkout of pyroscope-io/dotnetdiag)"
elif [ ! -f "$DOTNETDIAG_SRC/nettrace/nettrace.go" ]; then
    echo "bench_go: dotnetdiag comparison skipped: $DOTNETDIAG_SRC/nettrace/nettrace.go is missing"
else
    mkdir -p "$work/dotnetdiag" || exit 1
    cp -R "$DOTNETDIAG_SRC/nettrace" "$work/dotnetdiag/" || exit 1
    printf 'module github.com/pyroscope-io/dotnetdiag\n\ngo 1.16\n' > "$work/dotnetdiag/go.mod"
    cp "$top_srcdir/bench/go/dotnetdiag.go" "$work/prog/" || exit 1
    tags="-tags dotnetdiag"
    dd_require="require github.com/pyroscope-io/dotnetdiag v0.0.0"
    dd_replace="replace github.com/pyroscope-io/dotnetdiag => $work/dotnetdiag"
    echo "bench_go: dotnetdiag $(git -C "$DOTNETDIAG_SRC" rev-parse --short HEAD 2>/dev/null || echo "from $DOTNETDIAG_SRC")"
fi
cat > "$work/prog/go.mod" <<EOM
module benchgo

go 1.19

require libnettrace.dev/nettrace v0.0.0
$dd_require

replace libnettrace.dev/nettrace => $top_srcdir/bindings/go
$dd_replace
EOM
# shellcheck disable=SC2086
(cd "$work/prog" && go build $tags -o "$work/bench_go" .) || exit 1

IFS='
'
# shellcheck disable=SC2046
set -- $(nt_bind_traces)
unset IFS
echo "bench_go: $(go version), library $top_builddir/bindings/.libs"
"$work/bench_go" -runs "${BENCH_GO_RUNS:-5}" "$@"
