#!/bin/sh
# nettrace stack -p PID | -n NAME (issue 25): every thread's current managed
# stack of a real .NET process, streamed from the session into the parser
# with no temporary file.  The LiveTarget workload (built as StackTarget, so
# -n finds it alone beside the other live tests' targets) spins on two
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
dll=$(ls "$work"/bin/*/release/StackTarget.dll 2>/dev/null | head -1)
[ -f "$dll" ] || { echo "FAIL: no StackTarget.dll under $work/bin"; exit 1; }

pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$TMP"' EXIT
dotnet "$dll" 60 > "$TMP/target.log" 2>&1 &
pid=$!
i=0
until grep -q '^ready' "$TMP/target.log"; do
    i=$((i + 1))
    [ $i -gt 300 ] && { cat "$TMP/target.log"; echo "FAIL: the target did not start"; exit 1; }
    sleep 0.1
done
i=0
while ! ls "${TMPDIR:-/tmp}"/dotnet-diagnostic-"$pid"-* >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -gt 100 ] && { echo "FAIL: the target has no diagnostics socket after 10 s"; exit 1; }
    sleep 0.1
done
alpha=$(awk '/^thread alpha/ { print $3 }' "$TMP/target.log")
beta=$(awk '/^thread beta/ { print $3 }' "$TMP/target.log")

# the block of thread TID in FILE: from its "Thread TID (0x...):" line to the blank line
block() { awk -v t="$1" '$1 == "Thread" && $2 == t { on = 1; next } on && /^$/ { exit } on' "$2"; }

mkdir "$TMP/tmpdir"
TMPDIR="$TMP/tmpdir" timeout 60 "$NT" stack -p "$pid" > "$TMP/stack.txt" 2> "$TMP/stack.err"; rc=$?
[ $rc -eq 0 ] && ok "stack -p exits 0" || fail "stack -p exited $rc: $(cat "$TMP/stack.err")"
[ -z "$(ls -A "$TMP/tmpdir")" ] && ok "no temporary file" || fail "stack left files in TMPDIR: $(ls -A "$TMP/tmpdir")"
block "$alpha" "$TMP/stack.txt" > "$TMP/alpha.txt"
block "$beta" "$TMP/stack.txt" > "$TMP/beta.txt"
grep -q '^  StackTarget!LiveTarget.Alpha.SpinAlpha$' "$TMP/alpha.txt" && grep -q 'LiveTarget.Alpha.Run$' "$TMP/alpha.txt" &&
    ok "thread $alpha: SpinAlpha under Alpha.Run" || fail "thread $alpha's stack: $(cat "$TMP/alpha.txt") (all: $(head -40 "$TMP/stack.txt"))"
grep -q '^  StackTarget!LiveTarget.Beta.SpinBeta$' "$TMP/beta.txt" &&
    ok "thread $beta: SpinBeta" || fail "thread $beta's stack: $(cat "$TMP/beta.txt")"
grep -q 'SpinBeta' "$TMP/alpha.txt" && fail "thread $alpha's stack holds beta's method"
# innermost first: the spinning method comes before its caller
awk '/SpinAlpha$/ { a = NR } /Alpha.Run$/ { r = NR } END { exit !(a && r && a < r) }' "$TMP/alpha.txt" &&
    ok "innermost frame first" || fail "SpinAlpha is not above Alpha.Run: $(cat "$TMP/alpha.txt")"
threads=$(grep -c '^Thread [0-9]* (0x[0-9a-f]*):$' "$TMP/stack.txt")
[ "$threads" -ge 3 ] && ok "$threads threads" || fail "only $threads threads: $(cat "$TMP/stack.txt")"

# by name, as collect and gcdump take it
timeout 60 "$NT" stack -n StackTarget > "$TMP/byname.txt" 2> "$TMP/byname.err" &&
    block "$alpha" "$TMP/byname.txt" | grep -q 'Alpha.SpinAlpha$' && ok "stack -n NAME" ||
    fail "stack -n StackTarget: $(cat "$TMP/byname.err") $(head -20 "$TMP/byname.txt")"
"$NT" stack > /dev/null 2> "$TMP/err"; [ $? -eq 2 ] && [ "$(wc -l < "$TMP/err")" -eq 1 ] && ok "no process: usage error" ||
    fail "stack without -p: $(cat "$TMP/err")"

# EventCounters from the same process: events names their payload's fields
# (Name=, Mean=, DisplayUnits=) instead of one unnamed ?={"Payload":{...}}
timeout 60 "$NT" collect -q -p "$pid" --providers 'System.Runtime:0:5:EventCounterIntervalSec=1' --duration 2.5s \
    -o "$TMP/counters.nettrace" 2> "$TMP/collect.err" || fail "collect counters: $(cat "$TMP/collect.err")"
"$NT" events --event EventCounters "$TMP/counters.nettrace" > "$TMP/counters.txt" || fail "events on the counters"
[ -s "$TMP/counters.txt" ] && ok "$(wc -l < "$TMP/counters.txt") EventCounters events" || fail "no EventCounters events"
grep -q ' ?=' "$TMP/counters.txt" && fail "an EventCounters payload is still unnamed: $(head -1 "$TMP/counters.txt")"
grep -q ' Name="cpu-usage" DisplayName="CPU Usage" Mean=' "$TMP/counters.txt" && grep -q ' DisplayUnits="%"' "$TMP/counters.txt" &&
    ok "EventCounters fields are named" || fail "EventCounters fields: $(head -1 "$TMP/counters.txt")"
"$NT" events --json --event EventCounters "$TMP/counters.nettrace" | head -1 | grep -q '"Payload":{"Name":"' ||
    fail "--json lost the payload's structure"

# the target's end, seen live: "process N exited" on standard error, from
# top attached by name (-n NAME, as collect takes it) and from collect -p
kill "$pid"; wait "$pid" 2>/dev/null; pid=
short() { # start a target that lives 12 s; $pid
    dotnet "$dll" 12 > "$TMP/short.log" 2>&1 &
    pid=$!
    i=0
    until grep -q '^ready' "$TMP/short.log"; do
        i=$((i + 1)); [ $i -gt 300 ] && { echo "FAIL: the short target did not start"; exit 1; }; sleep 0.1
    done
}
short
# -n looks the name up as 'nettrace ps' lists processes; a runtime that answers
# its ProcessInfo late (a machine under heavy load) is not listed yet
i=0
until "$NT" ps 2>/dev/null | awk -v p="$pid" '$1 == p { f = 1 } END { exit !f }'; do
    i=$((i + 1)); [ $i -gt 10 ] && break; sleep 0.5
done
if [ $i -le 10 ]; then
    timeout 60 "$NT" top -n StackTarget --interval 1 --top 3 --no-rundown-first > "$TMP/top.txt" 2> "$TMP/top.err"
    grep -q "^nettrace top  pid $pid" "$TMP/top.txt" && ok "top -n NAME attaches by name" ||
        fail "top -n StackTarget: $(head -3 "$TMP/top.txt") $(cat "$TMP/top.err")"
else
    echo "note: nettrace ps did not list the target within 5 s (this machine's load): top -n NAME not checked; top -p instead"
    timeout 60 "$NT" top -p "$pid" --interval 1 --top 3 --no-rundown-first > "$TMP/top.txt" 2> "$TMP/top.err"
fi
grep -q "^nettrace top: process $pid exited$" "$TMP/top.err" && ok "top -p says the process exited" ||
    fail "top at the target's end: $(cat "$TMP/top.err")"
wait "$pid" 2>/dev/null; pid=
short
timeout 60 "$NT" collect -p "$pid" -o "$TMP/short.nettrace" > /dev/null 2> "$TMP/collect.err"
grep -q "^nettrace collect: process $pid exited$" "$TMP/collect.err" && ok "collect -p says the process exited" ||
    fail "collect at the target's end: $(cat "$TMP/collect.err")"
wait "$pid" 2>/dev/null; pid=
finish
