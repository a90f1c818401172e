#!/bin/sh
# tools/check-cycles.sh on tiny made-up libraries: it must find a two-unit
# cycle and a three-unit loop (naming the loop and the symbols), and pass a
# chain and a unit calling itself.
set -u
SRC="${top_srcdir:-.}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || CC=gcc
fail=0

# lib NAME "unit:calls..." ...: one object per unit, each defining unit_fn and calling the others' fns
lib() {
    name=$1
    shift
    rm -f "$tmp"/*.o
    for spec in "$@"; do
        u=${spec%%:*} calls=${spec#*:}
        {
            for c in $calls; do echo "void ${c}_fn(void);"; done
            echo "void ${u}_fn(void) {"
            for c in $calls; do echo "    ${c}_fn();"; done
            echo "}"
        } > "$tmp/libnettrace_core_la-$u.c"
        "$CC" -c -o "$tmp/libnettrace_core_la-$u.o" "$tmp/libnettrace_core_la-$u.c" || exit 99
    done
    rm -f "$tmp/$name.a"
    ar rc "$tmp/$name.a" "$tmp"/*.o || exit 99
}

expect() { # NAME WANT_RC GREP...
    name=$1 want=$2
    shift 2
    "$SRC/tools/check-cycles.sh" "$tmp/$name.a" > "$tmp/out" 2>&1
    rc=$?
    [ $rc -eq "$want" ] || { echo "FAIL: $name: exit $rc, want $want"; cat "$tmp/out"; fail=1; }
    for pat in "$@"; do
        grep -q -- "$pat" "$tmp/out" || { echo "FAIL: $name: no '$pat' in:"; cat "$tmp/out"; fail=1; }
    done
}

lib pair "a:b" "b:a" "c:"
expect pair 1 "cycle among: a b" "a -> b (b_fn)" "b -> a (a_fn)"
lib loop "a:b" "b:c" "c:a" "d:a"
expect loop 1 "cycle among: a b c" "c -> a (a_fn)" "1 cycle(s) among 4 units"
lib chain "a:b c" "b:c" "c:" "d:a c"
expect chain 0 "no cycle among 4 units"
lib self "a:a b" "b:"
expect self 0 "no cycle among 2 units"
[ $fail = 0 ] && echo "PASS: check-cycles finds pairs and loops, passes chains"
exit $fail
