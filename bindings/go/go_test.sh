#!/bin/sh
# make check: the Go package's tests (go test in bindings/go) on the library
# built for the bindings (bindings.mk), the corpus traces and a real .NET
# process (the LiveTarget workload), and the README's Go example as written.
set -u
. "$top_srcdir/bindings/env.sh"
if ! command -v go >/dev/null 2>&1; then
    echo "SKIP: go is not installed (CI installs golang-go)"
    exit 77
fi
nt_bind_live_target || exit 1
cd "$top_srcdir/bindings/go" || exit 1
go vet ./... || exit 1
# -race: Stop from several goroutines, the reader thread writing while the
# caller reads.
go test -race -count=1 -v ./... || exit 1
sh "$top_srcdir/bindings/readme_example.sh" go || exit 1
