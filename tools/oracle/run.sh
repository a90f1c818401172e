#!/usr/bin/env bash
# Regenerate tests/expected/ from TraceEvent's reading of every trace in
# ../shared/corpus (reference traces) and corpus/ (the project's own):
#   tests/expected/traceevent-counts.tsv        event counts, header, methods
#   tests/expected/traceevent-top.tsv           top methods by resolved stacks
# Needs the .NET SDK (dotnet) and NuGet access for the TraceEvent package.
# SHARED_CORPUS overrides the location of the shared traces.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
shared=${SHARED_CORPUS:-$top/../shared/corpus}
out="$top/tests/expected"

if [ ! -d "$shared" ]; then
    echo "run.sh: $shared is absent: the expected files cover both corpora, refusing to write half of them" >&2
    exit 1
fi

dotnet build -c Release --nologo -v quiet "$here/Oracle.csproj"
oracle=(dotnet "$here/bin/Release/net10.0/Oracle.dll")

inputs=()
for f in "$shared"/*.nettrace "$shared"/*.netperf; do
    [ -e "$f" ] && inputs+=("shared/$(basename "$f")=$f")
done
for f in "$top"/corpus/*.nettrace; do
    [ -e "$f" ] && inputs+=("corpus/$(basename "$f")=$f")
done

mkdir -p "$out"
"${oracle[@]}" counts "$out/traceevent-counts.tsv" "${inputs[@]}"
"${oracle[@]}" top "$out/traceevent-top.tsv" "${inputs[@]}"
