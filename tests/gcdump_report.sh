#!/bin/sh
# nettrace heap on the committed .gcdump files (corpus/heap/*.gcdump, written
# by dotnet-gcdump 10.0.750501) equals `dotnet-gcdump report` on them: every
# type's count and one-object size, and the heap's total bytes
# (tests/heap_conformance.py says why the report's bytes column is compared
# that way).  Skips (77) when dotnet-gcdump ($DOTNET_GCDUMP, on PATH or in
# ~/.dotnet/tools) or python3 is absent; test_heap_corpus asserts the
# workload's figures on the same files without it.
set -u
src=${top_srcdir:-.}
build=${top_builddir:-.}
nt="$build/nettrace"
skip() { echo "SKIP: $1"; exit 77; }
command -v python3 >/dev/null 2>&1 || skip "python3 is not on PATH: the comparer cannot run"
tool=${DOTNET_GCDUMP:-$(command -v dotnet-gcdump || echo "$HOME/.dotnet/tools/dotnet-gcdump")}
[ -x "$tool" ] || skip "dotnet-gcdump not found (set DOTNET_GCDUMP): nothing to compare with"
out="$build/tests/gcdump-report"
rm -rf "$out"
mkdir -p "$out"
rc=0 n=0
for f in "$src"/corpus/heap/*.gcdump; do
    [ -f "$f" ] || continue
    b=$(basename "$f" .gcdump)
    "$tool" report "$f" > "$out/$b.txt" 2>&1 || { cat "$out/$b.txt"; echo "FAIL: dotnet-gcdump report $f"; rc=1; continue; }
    "$nt" heap --json "$f" > "$out/$b.json" || { echo "FAIL: nettrace heap $f"; rc=1; continue; }
    printf '%s: ' "$b"
    python3 "$src/tests/heap_conformance.py" same "$out/$b.json" "$out/$b.txt" || rc=1
    n=$((n + 1))
done
[ $n -ge 2 ] || { echo "FAIL: corpus/heap/*.gcdump missing"; exit 1; }
exit $rc
