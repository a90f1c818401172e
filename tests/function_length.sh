#!/bin/sh
# No function in src/ is longer than 120 lines (tools/function-lengths.py),
# and the checker itself on made-up files: a 121-line function fails and is
# named, a 120-line one passes, and braces in strings, character literals,
# comments, macros and initializers are not taken for functions.
set -u
SRC="${top_srcdir:-.}"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
tool="$SRC/tools/function-lengths.py"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0

# body NAME LINES: a function of LINES lines in all (name line to closing brace)
body() {
    printf 'static int %s(int x)\n{\n' "$1"
    i=3
    while [ "$i" -lt "$2" ]; do
        printf '    x += %d; /* { */\n' "$i"
        i=$((i + 1))
    done
    printf '}\n'
}

{
    echo '#define BLOCK(x) { \'
    echo '    x; }'
    echo 'static const char *const braces[] = { "{", "}}", "\"{" };'
    echo "static const char open = '{';"
    body fits 120
    echo 'static const int table[] = {'
    i=0
    while [ $i -lt 200 ]; do echo "    $i,"; i=$((i + 1)); done
    echo '};'
    echo 'struct s { int a; };'
} > "$tmp/ok.c"
out=$(python3 "$tool" "$tmp/ok.c"); rc=$?
[ $rc -eq 0 ] || { echo "FAIL: a 120-line function and long initializers: exit $rc"; echo "$out"; fail=1; }
echo "$out" | grep -q '1 functions, 0 over 120' || { echo "FAIL: not one function found in ok.c:"; echo "$out"; fail=1; }

{ body fits 120; body too_long 121; } > "$tmp/long.c"
out=$(python3 "$tool" "$tmp/long.c"); rc=$?
[ $rc -eq 1 ] || { echo "FAIL: a 121-line function: exit $rc, want 1"; echo "$out"; fail=1; }
echo "$out" | grep -q 'long.c:121: too_long: 121 lines (over 120)' ||
    { echo "FAIL: the 121-line function is not named with its line:"; echo "$out"; fail=1; }
echo "$out" | grep -q 'fits' && { echo "FAIL: the 120-line function was reported:"; echo "$out"; fail=1; }

out=$(python3 "$tool" "$SRC/src"); rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: functions in src/ over 120 lines (split them into named steps)"; fail=1; }
[ $fail -eq 0 ] && echo "function lengths: PASS"
exit $fail
