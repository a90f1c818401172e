#!/bin/sh
# The README starts with the user (issue 25, item 13): its first section is
# "Profile your app", it keeps to using the tool (the library's internals,
# benchmarks, conformance, robustness, testing and design notes are in doc/,
# and it links them), and every relative link of README.md and doc/*.md
# names a file that exists.
set -u
src=${top_srcdir:-.}
fail=0
first=$(grep -m1 '^## ' "$src/README.md")
[ "$first" = "## Profile your app" ] || { echo "FAIL: the README's first section is '$first'"; fail=1; }
for h in '## The library in brief' '## Performance' '## Conformance with TraceEvent' '## Robustness' '## Testing' \
         '## Design' '## Layout'; do
    grep -qx "$h" "$src/README.md" && { echo "FAIL: the README still holds the internals section '$h'"; fail=1; }
done
for d in doc/library.md doc/performance.md doc/quality.md doc/internals.md doc/design.md; do
    grep -q "]($d)" "$src/README.md" || { echo "FAIL: the README does not link $d"; fail=1; }
done
for f in "$src/README.md" "$src"/doc/*.md; do
    dir=$(dirname "$f")
    for t in $(grep -o '](\([^)#: ]*\))' "$f" | sed 's/^](//; s/)$//' | sort -u); do
        [ -e "$dir/$t" ] || { echo "FAIL: ${f#"$src"/} links $t, which does not exist"; fail=1; }
    done
done
[ $fail -eq 0 ] && echo "ok: the README starts with the user and its links and doc/'s resolve"
exit $fail
