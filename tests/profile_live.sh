#!/bin/sh
# The live event profiles against a real .NET process with a known workload:
# `nettrace top -p PID --profile alloc|exceptions|contention|wall` on
# tests/workloads/ProfileLoad running its rounds in a loop.  Each refresh must
# show the workload's own sites with the shares its rounds fix: allocation
# bytes about 48 / 20 / 20 / 10 % (Node, byte[] small, large, pinned), throws
# 3 : 2 : 1 by type, lock waits of about 40 ms each; and by wall time the
# waiter, blocked on the lock all the time, weighs about the whole interval.  Skips with a message
# when dotnet is not on PATH.  The test starts and kills its processes.
set -u
CHECKS_STOP=1
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
need dotnet "the live profiles need a real .NET process"
work="$top_builddir/tests/profile-load-build"
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$work"
if ! DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build -c Release --nologo -v quiet -nodeReuse:false \
        -p:UseSharedCompilation=false --artifacts-path "$work" \
        "$top_srcdir/tests/workloads/ProfileLoad/ProfileLoad.csproj" >"$work/build.log" 2>&1; then
    cat "$work/build.log"
    fail "building ProfileLoad failed"
fi
dll="$work/bin/ProfileLoad/release/ProfileLoad.dll"
[ -f "$dll" ] || fail "$dll was not built"

# run MODE PROFILE: the workload in a loop, three refreshes of the live view.
run() {
    dotnet "$dll" "$1" --rounds 0 >"$tmp/load.log" 2>&1 &
    pid=$!
    i=0
    while ! grep -q '^ready' "$tmp/load.log"; do
        i=$((i + 1))
        [ $i -gt 300 ] && fail "ProfileLoad $1 did not start"
        sleep 0.1
    done
    # The runtime's diagnostics socket may appear a little after Main runs on a loaded machine.
    i=0
    while ! ls "${TMPDIR:-/tmp}"/dotnet-diagnostic-"$pid"-* >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -gt 100 ] && fail "ProfileLoad $1 has no diagnostics socket after 10 s"
        sleep 0.1
    done
    rc=0
    timeout 60 "$nt" top -p "$pid" --profile "$2" --interval 1.5 --duration 4.8 -n 10 >"$tmp/$2.txt" 2>"$tmp/$2.err" || rc=$?
    [ $rc -eq 0 ] || { cat "$tmp/$2.err"; fail "nettrace top -p --profile $2 exited $rc"; }
    kill "$pid"
    wait "$pid" 2>/dev/null
    pid=
    cat "$tmp/$2.txt"
    [ "$(grep -c '^nettrace top  pid' "$tmp/$2.txt")" -ge 2 ] || fail "$2: fewer than two refreshes"
}

# share LABEL SITE_REGEX FILE: the share (percent) of the rows with this label
# and a site matching the regex (tiering may inline a callee into its caller
# between refreshes, changing the leaf), summed per refresh and averaged over
# the refreshes after the first, each weighed by what it holds (the bytes of
# an alloc refresh, the events of the others): one 1.5 s refresh of a loaded
# machine can sit several points off the rounds' shares, and the last one,
# cut short by --duration, may hold a single round's allocations.
share() {
    awk -v l="$1" -v s="$2" '
        function num(x) { gsub(",", "", x); return x + 0 }
        function close_refresh() { if (r > 1 && n && w > 0) { sum += v * w; ws += w } }
        /^nettrace top  pid/ { close_refresh(); r++; v = 0; n = 0; w = 0; next }
        /^(alloc|exceptions|contention): / { w = num($2); for (i = 3; i <= NF; i++) if ($i ~ /^bytes/) w = num($(i - 1)) }
        $4 == l && $5 ~ s { x = $3; sub("%", "", x); v += x; n++ }
        END { close_refresh(); if (!ws && n) { sum = v; ws = 1 } print ws ? sum / ws : "" }' "$3"
}

# within VALUE LOW HIGH
within() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'; }

run alloc alloc
f="$tmp/alloc.txt"
v=$(share soh:Workloads.ProfileLoad.Node Allocs.AllocNodes "$f"); within "$v" 43 53 || fail "Node share $v%, expected ~48%"
v=$(share "soh:System.Byte[]" Allocs.AllocBuffers "$f"); within "$v" 16 25 || fail "small byte[] share $v%, expected ~20%"
v=$(share "loh:System.Byte[]" Allocs.AllocLarge "$f"); within "$v" 16 25 || fail "large byte[] share $v%, expected ~20%"
v=$(share "poh:System.Byte[]" "Allocs.AllocPinned|GC.AllocateArray" "$f"); within "$v" 7 13 || fail "pinned byte[] share $v%, expected ~10%"

run throw exceptions
f="$tmp/exceptions.txt"
# Rounds may be cut by the window's edges: a few throws either way.  The
# site is the workload's throwing method, not the runtime's dispatch.
grep -q 'EH.DispatchEx' "$f" && fail "a throw site is the runtime's System.Runtime.EH.DispatchEx"
v=$(share System.InvalidOperationException Throws.ThrowInvalid "$f"); within "$v" 47 53 || fail "InvalidOperationException share $v%, expected 50%"
v=$(share System.ArgumentException Throws.ThrowArgument "$f"); within "$v" 30 37 || fail "ArgumentException share $v%, expected 33.3%"
v=$(share Workloads.ProfileLoad.WorkloadException Throws.ThrowWorkload "$f"); within "$v" 14 20 || fail "WorkloadException share $v%, expected 16.7%"

run contention contention
f="$tmp/contention.txt"
# The last refresh: closed waits of ~40 ms each, at the workload's lock (the
# site outside Monitor.Enter).
row=$(awk '/^nettrace top  pid/ { r = "" } $4 == "managed" && $5 ~ /ProfileLoad\.Contention[.+]/ { gsub(",", "", $1); gsub(",", "", $2); r = $1 " " $2 } END { print r }' "$f")
[ -n "$row" ] || fail "no managed lock waits at the workload's Contention site"
set -- $row
mean=$(awk -v t="$1" -v n="$2" 'BEGIN { printf "%.0f", t / n }')
within "$mean" 35 60 || fail "mean wait $mean ms over $2 waits, expected about 40 ms"

run contention wall
f="$tmp/wall.txt"
grep -q 'exclusive_ms' "$f" || fail "wall: the columns are not in ms"
# The last refresh: the waiter spends its whole 1.5 s interval in Monitor.Enter_Slowpath
# (as cpu it would be about 1500 samples, whatever the interval's length in time).
v=$(awk '/^nettrace top  pid/ { v = "" } index($5, "Monitor.Enter_Slowpath") { v = $1; gsub(",", "", v) } END { print v }' "$f")
within "$v" 1000 2000 || fail "wall: the waiter weighs $v ms in a 1.5 s interval"
echo ok
