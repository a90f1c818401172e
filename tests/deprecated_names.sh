#!/bin/sh
# The deprecated public names (doc/abi.md "Deprecation") warn where a caller uses them, with gcc and
# with clang, while their replacements build clean; and nothing in the library, its tests, tools or
# bindings uses them.  To see it fail: drop an NT_DEPRECATED_ENUMERATOR mark in include/nettrace.h,
# or write NT_METHOD_LOAD in a file under src/.
set -u
src="${top_srcdir:-.}"
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# name used | its replacement
pairs='nt_method_event x = NT_RECORD_LOAD;|nt_record_event x = NT_RECORD_LOAD;
int x = NT_METHOD_LOAD;|int x = NT_RECORD_LOAD;
int x = NT_METHOD_UNLOAD;|int x = NT_RECORD_UNLOAD;
int x = NT_METHOD_DC_START;|int x = NT_RECORD_DC_START;
int x = NT_METHOD_DC_END;|int x = NT_RECORD_DC_END;'
compilers=0
for cc in gcc clang; do
    command -v "$cc" >/dev/null 2>&1 || { echo "note: no $cc on PATH"; continue; }
    compilers=$((compilers + 1))
    printf '%s\n' "$pairs" | while IFS='|' read -r old new; do
        printf '#include "nettrace.h"\nint f(void);\nint f(void) { %s return (int)x; }\n' "$old" >"$tmp/old.c"
        printf '#include "nettrace.h"\nint f(void);\nint f(void) { %s return (int)x; }\n' "$new" >"$tmp/new.c"
        if "$cc" -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$src/include" "$tmp/old.c" >"$tmp/old.err" 2>&1; then
            echo "FAIL: $cc takes '$old' without a deprecation warning"
            echo x >>"$tmp/failed"
        elif ! grep -q deprecated "$tmp/old.err"; then
            echo "FAIL: $cc refuses '$old', but not as deprecated:"; cat "$tmp/old.err"
            echo x >>"$tmp/failed"
        fi
        "$cc" -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$src/include" "$tmp/new.c" >"$tmp/new.err" 2>&1 ||
            { echo "FAIL: $cc refuses the replacement '$new':"; cat "$tmp/new.err"; echo x >>"$tmp/failed"; }
    done
done
[ -f "$tmp/failed" ] && fails=$((fails + $(wc -l <"$tmp/failed")))
if [ $compilers -eq 0 ]; then
    echo "SKIP: neither gcc nor clang on PATH"
    exit 77
fi
used=$(grep -rnE '\bNT_METHOD_(LOAD|UNLOAD|DC_START|DC_END)\b|\bnt_method_event\b' "$src/src" "$src/tests" "$src/tools" \
    "$src/bindings" --include='*.c' --include='*.h' --include='*.go' --include='*.py' --include='*.cs' 2>/dev/null |
    grep -v 'tests/deprecated_names.sh')
if [ -n "$used" ]; then
    echo "FAIL: deprecated names used inside:"; printf '%s\n' "$used"
    fails=$((fails + 1))
fi
[ $fails -eq 0 ] && echo "ok: every deprecated name warns with $compilers compiler(s); none is used inside"
exit $((fails > 0))
