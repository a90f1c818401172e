#!/bin/sh
# pprof output read back by Go's own pprof tool (an independent consumer):
# the sample total matches the trace and the three hot methods of the
# spin-threads trace come out on top.  .ci/deps installs Go; elsewhere this
# skips with a message when Go is absent.
set -u
if ! command -v go >/dev/null 2>&1; then
    echo "SKIP: 'go' is not installed (apt-get install golang-go), so 'go tool pprof' cannot read our output here"
    exit 77
fi
CHECKS_STOP=1
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
trace="$top_srcdir/corpus/spin-threads.nettrace"
export HOME="$tmp" GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath" GOFLAGS= GOTOOLCHAIN=local

"$nt" stacks -f pprof -o "$tmp/p.pb.gz" "$trace" || fail "stacks -f pprof exited $?"
samples=$("$nt" info --json "$trace" | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])')
go tool pprof -sample_index=0 -top -nodecount=3 "$tmp/p.pb.gz" > "$tmp/top.txt" 2>&1 || { cat "$tmp/top.txt"; fail "go tool pprof failed"; }
cat "$tmp/top.txt"
grep -q "Total samples = $samples\b" "$tmp/top.txt" || fail "go tool pprof does not see $samples samples"
for m in 'Threading.Thread.Join' 'BetaSpinner.SpinBeta' 'AlphaSpinner.SpinAlpha'; do
    tail -n 3 "$tmp/top.txt" | grep -q "$m" || fail "$m is not among the top three"
done
# no warning: every location has a mapping with a file (a module record's path), every function a file name
if grep -qi "warning\|not available" "$tmp/top.txt"; then fail "go tool pprof warns: $(grep -i 'warning\|not available' "$tmp/top.txt")"; fi
go tool pprof -raw "$tmp/p.pb.gz" 2>/dev/null | grep -q 'SpinThreads.dll' || fail "no mapping names the program's module file"
# the wall-time sample type is there too and adds up to more than the samples' count
go tool pprof -sample_index=1 -top -nodecount=1 "$tmp/p.pb.gz" 2>&1 | grep -q "Type: wall" || fail "no wall-time sample type"
# --profile wall: the wall time is the profile's default sample type (the CPU
# profile names none), and its values are the wall weights of the samples
go tool pprof -raw "$tmp/p.pb.gz" 2>/dev/null | grep -q '\[dflt\]' && fail "the cpu profile names a default sample type"
"$nt" stacks --profile wall -f pprof -o "$tmp/w.pb.gz" "$trace" || fail "stacks --profile wall -f pprof exited $?"
go tool pprof -raw "$tmp/w.pb.gz" 2>/dev/null | grep -q '^samples/count wall/nanoseconds\[dflt\]' || fail "wall is not the default sample type"
go tool pprof -top -nodecount=1 "$tmp/w.pb.gz" 2>&1 | grep -q "^Type: wall" || fail "go tool pprof does not open the wall profile on wall"
raw_wall=$(go tool pprof -raw "$tmp/w.pb.gz" 2>/dev/null | awk '/^Samples:/ {on = 1; next} /^Locations/ {on = 0} on && $2 ~ /^[0-9]+:$/ {sub(":", "", $2); s += $2} END {printf "%.0f", s}')
want_wall=$("$nt" samples --profile wall "$trace" | awk '{s += $3} END {printf "%.0f", s}')
[ "$raw_wall" = "$want_wall" ] || fail "pprof wall total $raw_wall, samples --profile wall says $want_wall"

# Each event profile's export carries Go's sample types, and the workload's
# own sites are on top (corpus/profile-*.nettrace, see corpus/README.md).
check_profile() { # KIND TRACE SAMPLE_INDEX UNIT_PATTERN TOTAL_PATTERN TOP_METHOD
    "$nt" stacks --profile "$1" -f pprof -o "$tmp/$1.pb.gz" "$top_srcdir/corpus/$2.nettrace" || fail "stacks --profile $1 exited $?"
    go tool pprof -sample_index="$3" -top -nodecount=4 "$tmp/$1.pb.gz" > "$tmp/$1.txt" 2>&1 || { cat "$tmp/$1.txt"; fail "go tool pprof failed on $1"; }
    cat "$tmp/$1.txt"
    grep -q "^Type: $3\$" "$tmp/$1.txt" || fail "$1: no sample type $3"
    grep -Eq "Total samples = $5" "$tmp/$1.txt" || fail "$1: total is not $5"
    grep -q "$6" "$tmp/$1.txt" || fail "$1: $6 is not among the top rows"
    # the mappings as for the CPU profile: no warning, the workload's module file named
    if grep -qi "warning\|not available" "$tmp/$1.txt"; then fail "$1: go tool pprof warns"; fi
    go tool pprof -raw "$tmp/$1.pb.gz" 2>/dev/null | grep -q 'ProfileLoad.dll' || fail "$1: no mapping names ProfileLoad.dll"
}
check_profile alloc profile-alloc alloc_space MB '9[0-9]\.[0-9]+MB' 'Allocs.AllocNodes'
check_profile alloc profile-alloc alloc_objects count '840\b' 'Allocs.AllocNodes'
check_profile exceptions profile-exceptions exceptions count '600\b' 'EH.DispatchEx'
check_profile contention profile-contention delay ns '8[0-9][0-9]\.[0-9]+ms' 'Monitor.Enter_Slowpath'
check_profile contention profile-contention contentions count '20\b' 'Monitor.Enter_Slowpath'
echo ok
