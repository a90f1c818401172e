#!/bin/sh
# Sites that name the user's code (issue 25, item 3): on .NET 9+ every throw's
# leaf is System.Runtime.EH.DispatchEx and every lock wait's
# Monitor.Enter_Slowpath; `top --profile` names the innermost frame outside
# that machinery (--raw-leaf keeps the leaf), --inclusive counts each method
# anywhere on the events' stacks, and the alloc flame graph's leaf is the
# allocated type.  On the traces of tests/workloads/ProfileLoad (corpus/).
set -u
CHECKS_STOP=1
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
exc="$top_srcdir/corpus/profile-exceptions.nettrace"
lock="$top_srcdir/corpus/profile-contention.nettrace"
alloc="$top_srcdir/corpus/profile-alloc.nettrace"
need_files "$exc" "$lock" "$alloc"

# row VALUE LABEL SITE FILE: a table row with exactly this value, label and site
row() { awk -v v="$1" -v l="$2" -v s="$3" '$1 == v && $4 == l && $5 == s { f = 1 } END { exit !f }' "$4"; }

"$nt" top --profile exceptions "$exc" > "$tmp/exc.txt" || fail "top --profile exceptions failed"
row 300 System.InvalidOperationException 'ProfileLoad!Workloads.ProfileLoad.Throws.ThrowInvalid' "$tmp/exc.txt" &&
    row 200 System.ArgumentException 'ProfileLoad!Workloads.ProfileLoad.Throws.ThrowArgument' "$tmp/exc.txt" &&
    row 100 Workloads.ProfileLoad.WorkloadException 'ProfileLoad!Workloads.ProfileLoad.Throws.ThrowWorkload' "$tmp/exc.txt" ||
    fail "the throw sites are not the workload's throwing methods: $(cat "$tmp/exc.txt")"
grep -q 'DispatchEx' "$tmp/exc.txt" && fail "a throw site is still the runtime's dispatch"
"$nt" top --profile exceptions --raw-leaf "$exc" > "$tmp/raw.txt" || fail "--raw-leaf failed"
[ "$(grep -c 'System.Private.CoreLib!System.Runtime.EH.DispatchEx$' "$tmp/raw.txt")" -eq 3 ] ||
    fail "--raw-leaf does not keep the leaf: $(cat "$tmp/raw.txt")"
echo "ok: throw sites name the throwing methods; --raw-leaf the dispatch"

"$nt" top --profile contention "$lock" > "$tmp/lock.txt" || fail "top --profile contention failed"
awk '$4 == "managed" { print $5 }' "$tmp/lock.txt" | grep -qx 'ProfileLoad!Workloads.ProfileLoad.Contention.WaitForGate' ||
    fail "the lock site is not the workload's WaitForGate: $(cat "$tmp/lock.txt")"
grep -q 'Monitor.Enter' "$tmp/lock.txt" && fail "a lock site is still Monitor.Enter"
"$nt" top --profile contention --raw-leaf "$lock" | grep -q 'Monitor.Enter_Slowpath$' || fail "--raw-leaf lost Enter_Slowpath"
echo "ok: lock sites name the waiting method"

"$nt" top --profile alloc "$alloc" > "$tmp/alloc.txt" || fail "top --profile alloc failed"
awk '$4 == "poh:System.Byte[]" { print $5 }' "$tmp/alloc.txt" | grep -qx 'ProfileLoad!Workloads.ProfileLoad.Allocs.AllocPinned' ||
    fail "the pinned array's site is not AllocPinned: $(cat "$tmp/alloc.txt")"
echo "ok: a pinned allocation's site is its caller of GC.AllocateArray"

# --inclusive: each method with every event that has it on its stack
"$nt" top --profile exceptions --inclusive -n 0 "$exc" > "$tmp/inc.txt" || fail "--inclusive refused for an event profile"
awk '$4 == "ProfileLoad!Workloads.ProfileLoad.Program.Main" && $1 == 600' "$tmp/inc.txt" | grep -q . ||
    fail "--inclusive: Main does not carry all 600 throws: $(cat "$tmp/inc.txt")"
awk '$4 == "ProfileLoad!Workloads.ProfileLoad.Throws.ThrowArgument" && $1 == 200' "$tmp/inc.txt" | grep -q . ||
    fail "--inclusive: ThrowArgument does not carry its 200 throws"
echo "ok: --inclusive counts each method anywhere on the events' stacks"

# the alloc flame graph: the type is the leaf, spelt heap:Type as top's label
# column and samples spell it (one spelling), the bytes unchanged
"$nt" stacks --profile alloc "$alloc" > "$tmp/alloc.folded" || fail "stacks --profile alloc failed"
awk '{ n = split($0, f, ";"); leaf = f[n]; sub(/ [0-9]+$/, "", leaf); if (leaf !~ /^(soh|loh|poh|other):/) { print; exit 1 } }' \
    "$tmp/alloc.folded" || fail "an alloc stack's leaf is not its type"
grep -q ';poh:System.Byte\[\] 10032184$' "$tmp/alloc.folded" || fail "no 'poh:System.Byte[]' leaf with the pinned bytes"
want=$("$nt" top --profile alloc "$alloc" | awk 'NR == 1 { gsub(",", "", $4); print $4 }')
got=$(awk '{ s += $NF } END { printf "%.0f", s }' "$tmp/alloc.folded")
[ "$got" = "$want" ] || fail "the folded bytes $got differ from the profile's $want"
"$nt" stacks --profile alloc --by-label "$alloc" | grep -q '^poh:System.Byte\[\];' || fail "--by-label lost its root label"
echo "ok: the alloc flame graph's leaf is the allocated type"
