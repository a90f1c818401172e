#!/bin/sh
# Every public struct has its kind in doc/abi.md's table (sized, library-owned or frozen), and
# every sized one begins with uint32_t struct_size and has its first layout in src/common/abi.h.
# To see it fail: add a typedef struct to include/ without listing it, or remove struct_size
# from a sized struct.
set -u
src="${top_srcdir:-.}"
fails=0
table=$(grep '^| \(sized\|library-owned\|frozen\)' "$src/doc/abi.md")
for t in $(sed -n 's/^\(typedef \)\{0,1\}struct \(nt_[a-z_0-9]*\) {.*/\2/p' "$src"/include/*.h | sort -u); do
    printf '%s\n' "$table" | grep -q "\`$t\`" || { echo "FAIL: doc/abi.md does not say how $t grows"; fails=$((fails + 1)); }
done
for t in $(grep '^| sized' "$src/doc/abi.md" | grep -o '`nt_[a-z_0-9]*`' | tr -d '`'); do
    first=$(sed -n "/^typedef struct $t {/{n;p;q}" "$src"/include/*.h)
    case "$first" in
        *"uint32_t struct_size;"*) ;;
        *) echo "FAIL: $t is sized (doc/abi.md) but does not begin with uint32_t struct_size"; fails=$((fails + 1)) ;;
    esac
    grep -q "^#define ABI3_$t " "$src/src/common/abi.h" ||
        { echo "FAIL: src/common/abi.h has no first layout (ABI3_$t) for $t"; fails=$((fails + 1)); }
done
[ $fails -eq 0 ] && echo "ok: every public struct's kind is in doc/abi.md; every sized one begins with struct_size"
exit $((fails > 0))
