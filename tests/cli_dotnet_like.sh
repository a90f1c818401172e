#!/bin/sh
# The tool as dotnet users know it (issue 25, item 9): `nettrace profiles`
# lists the presets; --providers takes the runtime's keyword names
# (Microsoft-Windows-DotNETRuntime:gc+exception:5); collect prints the
# providers it enabled as a table and a counter with the elapsed time.  The
# collect part skips, saying so, without dotnet.
set -u
CHECKS_STOP=1
. "${top_srcdir:-.}/tests/support/cli_checks.sh"

"$nt" profiles > "$tmp/p.txt" || fail "nettrace profiles failed"
for p in thread-time wall alloc exceptions contention gc; do
    grep -q "^  $p " "$tmp/p.txt" || fail "nettrace profiles does not list $p: $(cat "$tmp/p.txt")"
done
grep -q 'Microsoft-Windows-DotNETRuntime:0x8018:5' "$tmp/p.txt" || fail "the exceptions preset's keywords are not shown"
"$nt" --help | grep -q '^  profiles ' || fail "nettrace --help does not list profiles"
echo "ok: nettrace profiles lists the presets"

# keyword names: a bad one is a usage error naming it; good ones get past the parsing
"$nt" collect -p 2147483 --providers 'Microsoft-Windows-DotNETRuntime:gc+nosuch:5' -o "$tmp/x.nettrace" 2> "$tmp/err"
[ $? -eq 2 ] && grep -q "unknown keyword 'nosuch'" "$tmp/err" || fail "a bad keyword name: $(cat "$tmp/err")"
"$nt" collect -p 2147483 --providers 'Microsoft-Windows-DotNETRuntime:GC+Exception:5' -o "$tmp/x.nettrace" 2> "$tmp/err"
[ $? -ne 2 ] || fail "keyword names in any case were refused: $(cat "$tmp/err")"
"$nt" collect -p 2147483 --providers 'Some-Provider:gc' -o "$tmp/x.nettrace" 2> "$tmp/err"
[ $? -eq 2 ] && grep -q "not a number" "$tmp/err" || fail "names for another provider: $(cat "$tmp/err")"
echo "ok: --providers takes the runtime's keyword names"

if ! command -v dotnet >/dev/null 2>&1; then
    echo "SKIP (part): dotnet is not on PATH: collect's provider table not checked"
    exit 0
fi
dll=$(workload_dll StartupTarget StartupTarget) || exit 1
"$nt" collect -o "$tmp/t.nettrace" --providers 'Microsoft-Windows-DotNETRuntime:gc+loader+jit+exception:5' \
    -- dotnet "$dll" 200 > /dev/null 2> "$tmp/err" || fail "collect failed: $(cat "$tmp/err")"
grep -q 'nettrace collect: enabled providers:' "$tmp/err" || fail "no provider table: $(cat "$tmp/err")"
grep -Eq '^  Microsoft-Windows-DotNETRuntime +0x8019 +5 \(Verbose\) +gc\+loader\+jit\+exception$' "$tmp/err" ||
    fail "the table does not show the keywords by value and name: $(cat "$tmp/err")"
"$nt" collect -o "$tmp/d.nettrace" -- dotnet "$dll" 200 > /dev/null 2> "$tmp/err" || fail "collect failed"
grep -q 'enabled providers (the default: --profile thread-time)' "$tmp/err" &&
    grep -Eq '^  Microsoft-DotNETCore-SampleProfiler ' "$tmp/err" || fail "the default providers are not shown: $(cat "$tmp/err")"
echo "ok: collect shows the providers it enabled"
