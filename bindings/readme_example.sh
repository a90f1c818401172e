#!/bin/sh
# Run the README's Go or Python example exactly as written: the fenced block
# after the line "<!-- example: go -->" (or python), in a scratch folder whose
# corpus/ is the repository's, and check what it prints.  The Go example is
# built by the README's "use it from your module" recipe (the block after
# "<!-- recipe: go -->"), run as written in a new module outside the
# repository, the library found through pkg-config alone.
# Usage: readme_example.sh go|python   (env.sh already sourced)
set -u
lang=$1
# A fresh folder each run (two tests may run the Python example at once).
work=$(mktemp -d "${TMPDIR:-/tmp}/nettrace-$lang-example-XXXXXX") || exit 1
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
ln -s "$top_srcdir/corpus" "$work/corpus" || exit 1
# The lines of the block after marker $1, between its opening and closing fences.
readme_block() {
    awk -v marker="$1" '
        $0 == marker { armed = 1; next }
        armed && /^```/ { if (inside) exit; inside = 1; next }
        inside { print }
    ' "$top_srcdir/README.md"
}
readme_block "<!-- example: $lang -->" > "$work/example.txt"
lines=$(wc -l < "$work/example.txt")
if [ "$lines" -lt 5 ]; then
    echo "FAIL: no $lang example after '<!-- example: $lang -->' in README.md"
    exit 1
fi
cd "$work" || exit 1
case $lang in
go)
    mv example.txt main.go
    readme_block "<!-- recipe: go -->" > recipe.sh
    [ "$(grep -c . recipe.sh)" -eq 3 ] || { echo "FAIL: the README's Go recipe is not three lines"; exit 1; }
    # Nothing but pkg-config tells cgo where the library is.
    if env CGO_LDFLAGS= LIBNETTRACE_SRC="$top_srcdir" sh -ex recipe.sh > err.txt 2>&1; then :; else
        cat err.txt; echo "FAIL: the README's Go recipe failed in a module outside the repository"; exit 1
    fi
    grep -q 'libnettrace.dev/nettrace' main.go || { echo "FAIL: the Go example does not import the module"; exit 1; }
    ./app > out.txt 2> err.txt || { cat err.txt; echo "FAIL: the README's Go example did not run"; exit 1; }
    ;;
python)
    mv example.txt example.py
    "${PYTHON:-python3}" example.py > out.txt 2> err.txt ||
        { cat err.txt; echo "FAIL: the README's Python example did not run"; exit 1; }
    [ -s spin-threads.speedscope.json ] || { echo "FAIL: the Python example wrote no speedscope file"; exit 1; }
    ;;
esac
cat out.txt
# Both print the sample count and the hottest methods of spin-threads.nettrace
# (corpus/README.md): the two spinners are among the top three.
grep -q '^4430 samples' out.txt || { echo "FAIL: the $lang example did not report the trace's 4430 samples"; exit 1; }
n=$(grep -c 'SpinThreads!Workloads.SpinThreads.*Spinner.Spin' out.txt)
[ "$n" -eq 2 ] || { echo "FAIL: the $lang example's top three lack the two spinners"; exit 1; }
echo "ok: the README's $lang example ($lines lines) ran as written"
