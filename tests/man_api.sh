#!/bin/sh
# libnettrace(3) names every public function (NT_API in include/*.h) and every
# member of nt_callbacks.
set -u
src="${top_srcdir:-.}"
page=$(sed 's/\\-/-/g' "$src/doc/libnettrace.3")
fails=0
for f in $(grep -ho 'NT_API [^(]*(' "$src"/include/*.h | sed -E 's/.*[ *]([a-z_0-9]+)\($/\1/' | sort -u) \
         $(sed -n '/^typedef struct nt_callbacks/,/} nt_callbacks;/p' "$src/include/nettrace.h" |
           sed -n 's/.*(\*\([a-z_]*\))(.*/\1/p'); do
    case "$f" in nt_*|[a-z]*) ;; *) continue ;; esac
    printf '%s\n' "$page" | grep -q "\b$f\b" || { echo "FAIL: libnettrace(3) does not mention $f"; fails=$((fails + 1)); }
done
[ $fails -eq 0 ] && echo "ok: every public function and callback is in libnettrace(3)"
exit $((fails > 0))
