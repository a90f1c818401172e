#!/bin/sh
# The README's first section, "Profile your app", run as written (issue 25,
# item 13): its shell block, taken from README.md, runs on a real .NET
# program -- tests/workloads/ReadmeApp built as app.dll, which burns CPU in
# Checksum.Compute, allocates Order objects in Orders.Create and throws from
# Parser.Parse -- and each step shows what the README says it shows.  Skips,
# saying so, without dotnet.
set -u
CHECKS_STOP=1
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
need dotnet "the README's first section needs a real .NET program"
need bash "the README's block uses its job control"
nt_dir=$(cd "$top_builddir" && pwd)

# the workload, built once per tree
dll=$(workload_dll ReadmeApp app) || exit 1
# The program under a name of this run's own: -n matches a program's file
# name (or its assembly's, app, which no test asks for), so that this test,
# running beside another tree's, attaches to its own program and never finds
# two.  The block below runs with 'app.dll' and '-n app' renamed to it; the
# rest (outputs, module names: the assembly's) is as written.
name="app-$$"
for f in "$(dirname "$dll")"/app.*; do cp "$f" "$tmp/$name${f##*/app}"; done

# the first sh block after the section's heading, as written
awk '/^## Profile your app/ { on = 1; next } on && /^```sh$/ { inb = 1; next } inb && /^```$/ { exit } inb' \
    "$top_srcdir/README.md" > "$tmp/block.sh"
[ -s "$tmp/block.sh" ] || fail "README.md has no sh block under '## Profile your app'"
grep -q '^nettrace collect' "$tmp/block.sh" || fail "the README's block does not collect: $(cat "$tmp/block.sh")"
grep -q 'dotnet app\.dll ' "$tmp/block.sh" && grep -q ' -n app ' "$tmp/block.sh" ||
    fail "the README's block no longer runs app.dll and attaches with -n app: this test renames those"
sed -i "s/dotnet app\.dll /dotnet $name.dll /; s/ -n app / -n $name /g; s/ -n app\$/ -n $name/" "$tmp/block.sh"
# the background program never outlives the block (read once: a job that ends between two reads of
# jobs -p left a bare `kill`, whose usage error under -e failed a block that had passed)
{ echo 'trap '\''rc=$?; left=$(jobs -p); [ -z "$left" ] || kill $left 2>/dev/null || true; exit $rc'\'' EXIT'; cat "$tmp/block.sh"; } > "$tmp/run.sh"
(cd "$tmp" && PATH="$nt_dir:$PATH" bash -e -x "$tmp/run.sh" > "$tmp/out.txt" 2> "$tmp/err.txt") ||
    fail "the README's block failed (exit $?; its trace, the failing command last): $(tail -30 "$tmp/err.txt")"

# (ps runs while the program's runtime may still be starting: its table, not the row, is checked)
grep -q 'PID  RUNTIME' "$tmp/out.txt" || fail "nettrace ps printed no table: $(head -5 "$tmp/out.txt")"
[ -s "$tmp/app.nettrace" ] || fail "collect wrote no app.nettrace"
grep -q '^profile:  thread-time' "$tmp/out.txt" || fail "top does not name its profile"
grep -q '^profile:  managed-cpu' "$tmp/out.txt" || fail "the managed-cpu view is missing"
awk '/^profile:  managed-cpu/ { on = 1 } on && /Checksum.Compute/ { f = 1 } END { exit !f }' "$tmp/out.txt" ||
    fail "managed-cpu does not show the burner Checksum.Compute: $(cat "$tmp/out.txt")"
grep -q 'System.InvalidOperationException  app!ReadmeApp.Parser.Parse$' "$tmp/out.txt" ||
    fail "the exceptions profile does not name Parser.Parse as the throw site: $(cat "$tmp/out.txt")"
grep -q 'soh:ReadmeApp.Order  app!ReadmeApp.Orders.Create$' "$tmp/out.txt" ||
    fail "the alloc profile does not name Orders.Create allocating Order: $(cat "$tmp/out.txt")"
grep -q 'Checksum.Compute' "$tmp/app.html" || fail "the flame graph app.html lacks Checksum.Compute"
grep -Eq '^Thread [0-9]+ \(0x[0-9a-f]+\):$' "$tmp/out.txt" && grep -q '^  app!ReadmeApp\.' "$tmp/out.txt" ||
    fail "stack -n app printed no thread stacks with the program's methods: $(tail -30 "$tmp/out.txt")"
grep -Eiq 'https?://' "$tmp/app.html" && fail "app.html refers to the network"
echo "ok: the README's first section ran as written: ps, collect -n app, top, managed-cpu, the flame graph, exceptions, alloc and stack"
