#!/bin/sh
# The shared library exports exactly the functions listed in doc/abi-symbols.txt
# (the ABI's committed symbol list, doc/abi.md), every one of them is declared
# NT_API in include/, and every nt_ function the Go, Python and .NET bindings
# call is in it.  A symbol added, removed or leaked fails here with the difference.
#
# To see it fail: delete a line of doc/abi-symbols.txt (or add NT_API to a new
# function without listing it) and run `make check TESTS=tests/exported_symbols.sh`.
# After an intended change, `make abi-symbols` rewrites the list from the built
# library; commit it with the change (and follow doc/abi.md for the soname).
set -u
LC_ALL=C; export LC_ALL
lib="$top_builddir/.libs/libnettrace.so"
list="$top_srcdir/doc/abi-symbols.txt"
if [ ! -f "$lib" ]; then
    echo "SKIP: no shared library was built ($lib)"
    exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0

nm -D --defined-only "$lib" | awk '$2 ~ /^[A-Za-z]$/ {print $3}' | sort -u >"$tmp/built"
grep -v '^#' "$list" | sed '/^$/d' | sort -u >"$tmp/listed"
if ! cmp -s "$tmp/built" "$tmp/listed"; then
    echo "FAIL: the library's exports differ from doc/abi-symbols.txt (- listed only, + exported only):"
    diff "$tmp/listed" "$tmp/built" | sed -n 's/^</  -/p; s/^>/  +/p'
    fails=$((fails + 1))
fi

grep -h '^NT_API ' "$top_srcdir"/include/*.h | grep -o '^NT_API [^(]*(' | sed -E 's/.*[ *]([a-z_0-9]+)\($/\1/' | sort -u >"$tmp/declared"
if ! cmp -s "$tmp/declared" "$tmp/listed"; then
    echo "FAIL: NT_API declarations in include/ differ from doc/abi-symbols.txt (- listed only, + declared only):"
    diff "$tmp/listed" "$tmp/declared" | sed -n 's/^</  -/p; s/^>/  +/p'
    fails=$((fails + 1))
fi

# What the bindings call: C.nt_x( in Go, nt_x( in the cgo glue, _proto("nt_x" / lib.nt_x in Python.
{
    grep -ho 'C\.nt_[a-z_0-9]*(' "$top_srcdir"/bindings/go/*.go | sed 's/^C\.//; s/($//'
    grep -ho '\bnt_[a-z_0-9]*(' "$top_srcdir"/bindings/go/glue.c | sed 's/($//'
    grep -ho '_proto("nt_[a-z_0-9]*"' "$top_srcdir"/bindings/python/nettrace/*.py | sed 's/^_proto("//; s/"$//'
    grep -ho '\blib\.nt_[a-z_0-9]*' "$top_srcdir"/bindings/python/nettrace/*.py | sed 's/^lib\.//'
    # .NET: the LibraryImport declarations, and the export it looks up by name (nt_sink_parser).
    grep -ho 'partial [^(]* nt_[a-z_0-9]*(' "$top_srcdir"/bindings/dotnet/LibNetTrace/Native/*.cs | sed -E 's/.* (nt_[a-z_0-9]*)\($/\1/'
    grep -ho 'GetExport([^"]*"nt_[a-z_0-9]*"' "$top_srcdir"/bindings/dotnet/LibNetTrace/Native/*.cs | sed -E 's/.*"(nt_[a-z_0-9]*)"$/\1/'
} | sort -u >"$tmp/bound"
# nt_ names in the bindings that are types or macros, not functions, are filtered by the header declarations.
grep -ho 'typedef [^;]* \(nt_[a-z_0-9]*\);\|} nt_[a-z_0-9]*;' "$top_srcdir"/include/*.h | sed -E 's/.*(nt_[a-z_0-9]*);$/\1/' |
    sort -u >"$tmp/types"
comm -23 "$tmp/bound" "$tmp/types" | comm -23 - "$tmp/listed" >"$tmp/unlisted"
if [ -s "$tmp/unlisted" ]; then
    echo "FAIL: the bindings call functions the library does not export:"
    sed 's/^/  /' "$tmp/unlisted"
    fails=$((fails + 1))
fi

[ $fails -eq 0 ] || exit 1
echo "ok: $(wc -l <"$tmp/built") functions exported, as doc/abi-symbols.txt lists and include/ declares;" \
    "the bindings call $(comm -12 "$tmp/bound" "$tmp/listed" | wc -l) of them"
