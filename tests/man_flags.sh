#!/bin/sh
# Every flag that 'nettrace CMD --help' lists appears in nettrace(1), and
# every command of 'nettrace --help' has its own entry there.
set -u
nt="${top_builddir:-.}/nettrace"
man="${top_srcdir:-.}/doc/nettrace.1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the page's text with groff's escaped minus signs made plain
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$man" > "$tmp/man"
fails=0
commands=$("$nt" --help | awk '/^Commands:/ {on = 1; next} on && /^  [a-z]/ {print $1}')
[ -n "$commands" ] || { echo "FAIL: nettrace --help lists no commands"; exit 1; }
for c in $commands; do
    grep -q "^\.B $c\b\|^\.B .*\b$c \\\\\?-p\|^\.B $c " "$tmp/man" || grep -q "^.B $c" "$tmp/man" ||
        { echo "FAIL: command '$c' has no entry in nettrace(1)"; fails=$((fails + 1)); }
    "$nt" "$c" --help > "$tmp/help" 2>&1 || { echo "FAIL: nettrace $c --help exited $?"; fails=$((fails + 1)); }
    for f in $(grep -oE '(^|[ [,|(])--?[a-zA-Z][a-zA-Z0-9-]*' "$tmp/help" | sed 's/^[ [,|(]//' | sort -u); do
        case "$f" in --) continue ;; esac
        grep -qe "$f\b" "$tmp/man" || { echo "FAIL: nettrace $c --help lists $f, nettrace(1) does not"; fails=$((fails + 1)); }
    done
done
[ $fails -eq 0 ] && echo "ok: every command and --help flag is in nettrace(1)"
exit $((fails > 0))
