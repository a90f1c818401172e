#!/bin/sh
# corpus/seeds is what tools/make_seeds writes today (run 'make seeds' after
# changing the writer), and every seed reads as its name says.
set -u
SRC="${top_srcdir:-.}"
BLD="${top_builddir:-.}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
"$BLD/tools/make_seeds" writer "$tmp" || { echo "FAIL: make_seeds exited $?"; exit 1; }
for f in "$tmp"/*.nettrace; do
    b=$(basename "$f")
    if ! cmp -s "$f" "$SRC/corpus/seeds/$b"; then
        echo "FAIL: corpus/seeds/$b is stale or missing (run 'make seeds')"
        fail=1
    fi
    "$BLD/nettrace" info --json "$f" > "$tmp/info"
    rc=$?
    case "$b" in
    *truncated*) want=15 ;;
    *) want=0 ;;
    esac
    [ $rc -eq $want ] || { echo "FAIL: $b: info exited $rc, want $want"; fail=1; }
    case "$b" in
    v6_*) grep -q '"format_version": 6' "$tmp/info" || { echo "FAIL: $b is not V6"; fail=1; } ;;
    v4_*) grep -q '"format_version": 4' "$tmp/info" || { echo "FAIL: $b is not V4"; fail=1; } ;;
    esac
    case "$b" in
    *32bit*) grep -q '"pointer_size": 4' "$tmp/info" || { echo "FAIL: $b is not 32-bit"; fail=1; } ;;
    esac
done
for f in "$SRC"/corpus/seeds/*.nettrace; do
    [ -f "$tmp/$(basename "$f")" ] || { echo "FAIL: $f is no longer made by make_seeds"; fail=1; }
done
exit $fail
