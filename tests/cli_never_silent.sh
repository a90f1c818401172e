#!/bin/sh
# Never silent (issue 25, item 5): provider and event names match in any
# case, and a command that selects or finds nothing says so on standard
# error, naming what the trace holds and the `collect --profile` that
# records what is missing: events with a filter that keeps none, an event
# profile of a trace without its events, top/stacks/samples of a trace
# without thread samples, gc without GC events.
set -u
CHECKS_STOP=1
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
spin="$top_srcdir/corpus/spin-threads.nettrace"
alloc="$top_srcdir/corpus/profile-alloc.nettrace"
need_files "$spin" "$alloc"

# case: the same events whatever the case of the names
"$nt" events --provider Microsoft-Windows-DotNETRuntime "$spin" > "$tmp/exact" || fail "events --provider failed"
[ -s "$tmp/exact" ] || fail "no runtime events in $spin"
"$nt" events --provider microsoft-windows-dotnetruntime "$spin" | cmp -s - "$tmp/exact" || fail "--provider is case-sensitive"
"$nt" events --event threadsample "$spin" | wc -l > "$tmp/n1"
"$nt" events --event ThreadSample "$spin" | wc -l > "$tmp/n2"
cmp -s "$tmp/n1" "$tmp/n2" && [ "$(cat "$tmp/n1")" -gt 0 ] || fail "--event is case-sensitive"
"$nt" events --event methodloadverbose "$spin" | grep -q ' MethodLoadVerbose_V' || fail "--event in lower case misses the _V<n> names"
echo "ok: provider and event names match in any case"

# events: a filter that keeps nothing names what the trace holds
"$nt" events --event GCAllocationTick "$spin" > "$tmp/out" 2> "$tmp/err" || fail "events exit $?"
[ -s "$tmp/out" ] && fail "events printed events for a filter that should keep none"
grep -q 'no event matches the filter (--event GCAllocationTick)' "$tmp/err" || fail "no word on stderr: $(cat "$tmp/err")"
grep -q 'Microsoft-DotNETCore-SampleProfiler: 4,430 events (ThreadSample)' "$tmp/err" || fail "the trace's events are not named: $(cat "$tmp/err")"
grep -q "nettrace collect --profile alloc" "$tmp/err" || fail "no collect profile named: $(cat "$tmp/err")"
"$nt" events --provider No-Such-Provider "$spin" 2>&1 >/dev/null | grep -q "collect --providers No-Such-Provider" ||
    fail "an unknown provider gets no hint"
"$nt" events "$spin" 2> "$tmp/err" > /dev/null
[ -s "$tmp/err" ] && fail "events without a filter complained: $(cat "$tmp/err")"
echo "ok: events says what the trace holds when its filter keeps nothing"

# an event profile of a trace without those events
"$nt" top --profile exceptions "$alloc" > /dev/null 2> "$tmp/err" || fail "top --profile exceptions exit $?"
grep -q 'holds no ExceptionThrown events' "$tmp/err" && grep -q '840 allocation ticks' "$tmp/err" &&
    grep -q "nettrace collect --profile exceptions" "$tmp/err" || fail "top --profile exceptions is silent: $(cat "$tmp/err")"
"$nt" stacks --profile contention "$alloc" 2>&1 >/dev/null | grep -q 'holds no ContentionStart/Stop events' ||
    fail "stacks --profile contention is silent"
"$nt" top --profile alloc "$alloc" 2> "$tmp/err" > /dev/null
[ -s "$tmp/err" ] && fail "top --profile alloc on allocations complained: $(cat "$tmp/err")"
echo "ok: an empty event profile says what the trace holds"

# no thread samples, no GCs: a trace of one event (tests/strings_trace)
"$top_builddir/tests/strings_trace" "$tmp/one.nettrace" 6 || fail "strings_trace failed"
for c in top stacks samples; do
    "$nt" $c "$tmp/one.nettrace" > /dev/null 2> "$tmp/err"
    grep -q 'holds no thread samples' "$tmp/err" && grep -q "collect --profile thread-time" "$tmp/err" ||
        fail "$c on a trace without samples is silent: $(cat "$tmp/err")"
done
"$nt" gc "$tmp/one.nettrace" > /dev/null 2> "$tmp/err"
grep -q "holds no GC events" "$tmp/err" && grep -q "collect --profile gc" "$tmp/err" || fail "gc is silent: $(cat "$tmp/err")"
"$nt" gc "$alloc" 2> "$tmp/err" > /dev/null
[ -s "$tmp/err" ] && fail "gc on a trace with GCs complained: $(cat "$tmp/err")"
echo "ok: no samples and no GCs are said, with the profile that records them"
