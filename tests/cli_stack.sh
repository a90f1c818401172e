#!/bin/sh
# nettrace stack -p PID | -n NAME (issue 25): every thread's current managed
# stack of a real .NET process, streamed from the session into the parser
# with no temporary file.  The LiveTarget workload (built as StackTarget and
# run as StackTarget-PID.dll, so -n finds it alone beside the other live
# tests' targets and another tree's run of this test) spins on two
# threads, each in a method of its own, and prints their OS thread ids: each
# thread's stack must hold its spinning method, and nothing may be written to
# $TMPDIR.  Skips when dotnet is not on PATH.
set -u
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
if ! command -v dotnet >/dev/null 2>&1; then
    echo "SKIP: dotnet is not on PATH: nettrace stack needs a real .NET process"
    exit 77
fi
work="$top_builddir/tests/stack-target-build"
mkdir -p "$work"
if ! DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build -c Release --nologo -v quiet -nodeReuse:false \
        -p:UseSharedCompilation=false -p:AssemblyName=StackTarget --artifacts-path "$work" \
        "$top_srcdir/tests/workloads/LiveTarget/LiveTarget.csproj" >"$work/build.log" 2>&1; then
    cat "$work/build.log"
    echo "FAIL: building the LiveTarget workload failed"
    exit 1
fi
built=$(ls "$work"/bin/*/release/StackTarget.dll 2>/dev/null | head -1)
[ -f "$built" ] || { echo "FAIL: no StackTarget.dll under $work/bin"; exit 1; }
# Run under a name of this run's own: -n matches a program's file name (or
# its assembly's, StackTarget, which no test asks for), so that -n finds this
# test's target alone even beside another tree's run of this test.
name="StackTarget-$$"
for f in "${built%.dll}".*; do cp "$f" "$tmp/$name${f##*/StackTarget}"; done
dll="$tmp/$name.dll"

pid= twin=
trap 'for p in $pid $twin; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
# start SECONDS LOG: a target that lives SECONDS, in $started once it said
# ready and its runtime listens (a name lookup asks every listening runtime)
start() {
    dotnet "$dll" "$1" > "$2" 2>&1 &
    started=$!
    wait_ready "$2" "the target"
    i=0
    while ! ls "${TMPDIR:-/tmp}"/dotnet-diagnostic-"$started"-* >/dev/null 2>&1; do
        i=$((i + 1))
        [ $i -gt 100 ] && { echo "FAIL: the target has no diagnostics socket after 10 s"; exit 1; }
        sleep 0.1
    done
}
start 120 "$tmp/target.log"
pid=$started
alpha=$(awk '/^thread alpha/ { print $3 }' "$tmp/target.log")
beta=$(awk '/^thread beta/ { print $3 }' "$tmp/target.log")

# the block of thread TID in FILE: from its "Thread TID (0x...):" line to the blank line
block() { awk -v t="$1" '$1 == "Thread" && $2 == t { on = 1; next } on && /^$/ { exit } on' "$2"; }

mkdir "$tmp/tmpdir"
TMPDIR="$tmp/tmpdir" timeout 60 "$nt" stack -p "$pid" > "$tmp/stack.txt" 2> "$tmp/stack.err"; rc=$?
[ $rc -eq 0 ] && ok "stack -p exits 0" || fail "stack -p exited $rc: $(cat "$tmp/stack.err")"
[ -z "$(ls -A "$tmp/tmpdir")" ] && ok "no temporary file" || fail "stack left files in TMPDIR: $(ls -A "$tmp/tmpdir")"
block "$alpha" "$tmp/stack.txt" > "$tmp/alpha.txt"
block "$beta" "$tmp/stack.txt" > "$tmp/beta.txt"
grep -q '^  StackTarget!LiveTarget.Alpha.SpinAlpha$' "$tmp/alpha.txt" && grep -q 'LiveTarget.Alpha.Run$' "$tmp/alpha.txt" &&
    ok "thread $alpha: SpinAlpha under Alpha.Run" || fail "thread $alpha's stack: $(cat "$tmp/alpha.txt") (all: $(head -40 "$tmp/stack.txt"))"
grep -q '^  StackTarget!LiveTarget.Beta.SpinBeta$' "$tmp/beta.txt" &&
    ok "thread $beta: SpinBeta" || fail "thread $beta's stack: $(cat "$tmp/beta.txt")"
grep -q 'SpinBeta' "$tmp/alpha.txt" && fail "thread $alpha's stack holds beta's method"
# innermost first: the spinning method comes before its caller
awk '/SpinAlpha$/ { a = NR } /Alpha.Run$/ { r = NR } END { exit !(a && r && a < r) }' "$tmp/alpha.txt" &&
    ok "innermost frame first" || fail "SpinAlpha is not above Alpha.Run: $(cat "$tmp/alpha.txt")"
threads=$(grep -c '^Thread [0-9]* (0x[0-9a-f]*):$' "$tmp/stack.txt")
[ "$threads" -ge 3 ] && ok "$threads threads" || fail "only $threads threads: $(cat "$tmp/stack.txt")"

# by name, as collect and gcdump take it
timeout 60 "$nt" stack -n "$name" > "$tmp/byname.txt" 2> "$tmp/byname.err" &&
    block "$alpha" "$tmp/byname.txt" | grep -q 'Alpha.SpinAlpha$' && ok "stack -n NAME" ||
    fail "stack -n $name: $(cat "$tmp/byname.err") $(head -20 "$tmp/byname.txt")"
"$nt" stack > /dev/null 2> "$tmp/err"; [ $? -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && ok "no process: usage error" ||
    fail "stack without -p: $(cat "$tmp/err")"

# EventCounters from the same process: events names their payload's fields
# (Name=, Mean=, DisplayUnits=) instead of one unnamed ?={"Payload":{...}}
timeout 60 "$nt" collect -q -p "$pid" --providers 'System.Runtime:0:5:EventCounterIntervalSec=1' --duration 2.5s \
    -o "$tmp/counters.nettrace" 2> "$tmp/collect.err" || fail "collect counters: $(cat "$tmp/collect.err")"
"$nt" events --event EventCounters "$tmp/counters.nettrace" > "$tmp/counters.txt" || fail "events on the counters"
[ -s "$tmp/counters.txt" ] && ok "$(wc -l < "$tmp/counters.txt") EventCounters events" || fail "no EventCounters events"
grep -q ' ?=' "$tmp/counters.txt" && fail "an EventCounters payload is still unnamed: $(head -1 "$tmp/counters.txt")"
grep -q ' Name="cpu-usage" DisplayName="CPU Usage" Mean=' "$tmp/counters.txt" && grep -q ' DisplayUnits="%"' "$tmp/counters.txt" &&
    ok "EventCounters fields are named" || fail "EventCounters fields: $(head -1 "$tmp/counters.txt")"
"$nt" events --json --event EventCounters "$tmp/counters.nettrace" | head -1 | grep -q '"Payload":{"Name":"' ||
    fail "--json lost the payload's structure"

# top attached by name (-n NAME, as collect takes it), on the long-lived
# target: a name lookup asks every runtime on the machine (nettrace ps),
# which takes seconds on a loaded one
timeout 90 "$nt" top -n "$name" --duration 2 --interval 1 --top 3 --no-rundown-first > "$tmp/top.txt" 2> "$tmp/top.err"
grep -q "^nettrace top  pid $pid" "$tmp/top.txt" && ok "top -n NAME attaches by name" ||
    fail "top -n $name: $(head -3 "$tmp/top.txt") $(cat "$tmp/top.err")"

# two processes of one name: refused (exit 2) with both pids listed, neither attached
start 60 "$tmp/twin.log"
twin=$started
timeout 60 "$nt" stack -n "$name" > "$tmp/amb.txt" 2> "$tmp/amb.err"
rc=$?
[ $rc -eq 2 ] && grep -q "2 processes are named '$name' (pids .*): pick one with -p" "$tmp/amb.err" &&
    grep -qw "$pid" "$tmp/amb.err" && grep -qw "$twin" "$tmp/amb.err" && [ ! -s "$tmp/amb.txt" ] &&
    ok "stack -n NAME refuses two processes of that name, listing both" ||
    fail "stack -n $name with two such processes: exit $rc: $(cat "$tmp/amb.err") $(head -3 "$tmp/amb.txt")"
kill "$twin"; wait "$twin" 2>/dev/null; twin=

# the target's end, seen live: "process N exited" on standard error from
# top -p and collect -p
kill "$pid"; wait "$pid" 2>/dev/null; pid=
short() { # start a target that lives 5 s; $pid
    start 5 "$tmp/short.log"
    pid=$started
}
short
timeout 60 "$nt" top -p "$pid" --interval 1 --top 3 --no-rundown-first > "$tmp/top.txt" 2> "$tmp/top.err"
grep -q "^nettrace top: process $pid exited$" "$tmp/top.err" && ok "top -p says the process exited" ||
    fail "top -p at the target's end: $(cat "$tmp/top.err")"
wait "$pid" 2>/dev/null; pid=
short
timeout 60 "$nt" collect -p "$pid" -o "$tmp/short.nettrace" > /dev/null 2> "$tmp/collect.err"
grep -q "^nettrace collect: process $pid exited$" "$tmp/collect.err" && ok "collect -p says the process exited" ||
    fail "collect at the target's end: $(cat "$tmp/collect.err")"
wait "$pid" 2>/dev/null; pid=
finish
