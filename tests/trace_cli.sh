#!/bin/sh
# The samples/top/stacks commands on the project's own traces (corpus/):
# formats, exit codes, truncation, speedscope against the file-format schema's
# structure (tests/speedscope_check.py) and pprof read back by protoc with the
# published profile.proto field numbers (tests/data/profile.proto).
set -u
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
TRACE="$top_srcdir/corpus/call-tree.nettrace"
SPIN="$top_srcdir/corpus/spin-threads.nettrace"

need_files "$TRACE" "$SPIN"

# --- help, version, usage errors -------------------------------------------
"$nt" --help | grep -q '^  samples' && ok "--help lists samples" || fail "--help"
"$nt" --version | grep -q '^nettrace ' && ok "--version" || fail "--version"
for c in samples top stacks; do
    "$nt" $c --help >/dev/null 2>&1 && ok "$c --help" || fail "$c --help exit code"
done
"$nt" samples >/dev/null 2>&1; [ $? -eq 2 ] && ok "usage error exits 2" || fail "usage error exit code"
"$nt" stacks --format nope "$TRACE" >/dev/null 2>&1; [ $? -eq 2 ] && ok "bad format exits 2" || fail "bad format"
"$nt" samples "$tmp/missing.nettrace" >/dev/null 2>&1; [ $? -eq 1 ] && ok "missing file exits 1" || fail "missing file"
printf 'not a trace at all, just text\n' > "$tmp/text"
"$nt" samples "$tmp/text" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 11 ] && ok "not a trace exits 11" || fail "not a trace exit $rc"

# --- samples -----------------------------------------------------------------
"$nt" samples "$TRACE" > "$tmp/samples" || fail "samples exit code"
n=$(wc -l < "$tmp/samples")
[ "$n" -eq 1609 ] && ok "1609 samples" || fail "samples: $n lines, expected 1609"
bad=$(grep -cvE '^-?[0-9]+ [0-9]+ [ME?] ([^ ;]+(;[^ ;]+)*|-)$' "$tmp/samples")
[ "$bad" -eq 0 ] && ok "every line has the canonical format" || fail "$bad lines break the format"
sort -s -n -k1,1 "$tmp/samples" | cmp -s - "$tmp/samples" && ok "time order" || fail "not in time order"
leaf=$(awk '{n = split($4, f, ";"); print f[n]}' "$tmp/samples" | sort | uniq -c | sort -rn | head -1)
case "$leaf" in *'CallTree!Workloads.CallTree.Tree.Leaf') ok "hottest leaf is Tree.Leaf";;
    *) fail "hottest leaf: $leaf";; esac
grep -q ' CallTree!Workloads.CallTree.Program.Main;CallTree!Workloads.CallTree.Tree.Run;CallTree!Workloads.CallTree.Tree.Outer;CallTree!Workloads.CallTree.Tree.Inner;CallTree!Workloads.CallTree.Tree.Leaf$' "$tmp/samples" \
    && ok "root-first stack Main;Run;Outer;Inner;Leaf" || fail "the Main..Leaf stack is missing"
grep -q '0x' "$tmp/samples" && fail "unresolved frames in call-tree" || ok "every frame resolved"

# --- truncation: every sample before the cut, said on stderr, exit 15 --------
size=$(wc -c < "$TRACE")
head -c $((size * 2 / 3)) "$TRACE" > "$tmp/cut.nettrace"
"$nt" samples "$tmp/cut.nettrace" > "$tmp/cut.samples" 2> "$tmp/cut.err"; rc=$?
[ $rc -eq 15 ] && ok "truncated exits 15" || fail "truncated exit $rc"
grep -q truncated "$tmp/cut.err" && ok "says truncated" || fail "no truncation message: $(cat "$tmp/cut.err")"
m=$(wc -l < "$tmp/cut.samples")
[ "$m" -gt 0 ] && [ "$m" -le 1609 ] && ok "$m samples before the cut" || fail "truncated samples: $m"
"$nt" top "$tmp/cut.nettrace" 2>/dev/null | grep -q truncated && ok "top says truncated" || fail "top on truncated"
head -c $((size / 3)) "$TRACE" > "$tmp/cut3.nettrace"
"$nt" top "$tmp/cut3.nettrace" 2>"$tmp/cut3.err" >/dev/null
grep -q 'no rundown' "$tmp/cut3.err" && ok "warns that the rundown is missing" \
    || fail "no rundown warning: $(cat "$tmp/cut3.err")"
"$nt" samples - < "$TRACE" | cmp -s - "$tmp/samples" && ok "standard input" || fail "samples - differs"

# --- top ---------------------------------------------------------------------
"$nt" top -n 2 "$TRACE" > "$tmp/top" || fail "top exit code"
awk '/^ exclusive/ { getline; print; exit }' "$tmp/top" | grep -q 'Tree.Leaf$' && ok "top: Leaf first" || fail "top: $(cat "$tmp/top")"
grep -q '100.0%' "$tmp/top" && ok "top: resolution share" || fail "top: no resolution share"
[ "$("$nt" top --by-thread -n 1 "$SPIN" | grep -c '^thread ')" -eq 3 ] && ok "top --by-thread: 3 threads" \
    || fail "top --by-thread"

# --- times relative to the trace's start, units, validation (issue 16) ------
start=$("$nt" info --json "$TRACE" | sed -n 's/.*"start_ns": \([0-9]*\).*/\1/p')
"$nt" samples --relative "$TRACE" | cut -d' ' -f1 > "$tmp/rel"
cut -d' ' -f1 "$tmp/samples" | awk -v s="$start" '{print $1 - s}' | cmp -s - "$tmp/rel" \
    && ok "samples --relative = trace clock - start" || fail "samples --relative"
want=$(awk '$1 < 1000000000' "$tmp/rel" | wc -l)
got=$("$nt" stacks --to 1s "$TRACE" | awk '{s += $NF} END {print s + 0}')
[ "$got" -eq "$want" ] && [ "$want" -gt 0 ] && ok "--to 1s: $want samples" || fail "--to 1s: $got vs $want"
got=$("$nt" stacks --from +500ms --to 1500000us "$TRACE" | awk '{s += $NF} END {print s + 0}')
want=$(awk '$1 >= 500000000 && $1 < 1500000000' "$tmp/rel" | wc -l)
[ "$got" -eq "$want" ] && ok "--from +500ms --to 1500000us: $want samples" || fail "--from/--to with units: $got vs $want"
"$nt" stacks --to 2 "$TRACE" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "nettrace stacks: --to: bad time '2'" "$tmp/err" && ok "a time without a unit is refused" \
    || fail "--to 2: exit $rc: $(cat "$tmp/err")"
"$nt" stacks --from 1h "$TRACE" > /dev/null 2>&1; [ $? -eq 2 ] && ok "unknown unit refused" || fail "--from 1h accepted"
"$nt" top -n -3 "$TRACE" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "nettrace top: -n wants a number from 0" "$tmp/err" && ok "top -n -3 refused" || fail "top -n -3: $rc"
"$nt" events --thread -3 "$TRACE" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "nettrace events: --thread wants a thread id, not '-3'" "$tmp/err" && ok "events --thread -3 refused" \
    || fail "events --thread -3: $rc: $(cat "$tmp/err")"
"$nt" collect -p 1 -o "$tmp/never.nettrace" --providers 'Microsoft-Windows-DotNETRuntime:-1' > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "unknown keyword '-1'" "$tmp/err" && ok "provider keywords -1 refused" \
    || fail "--providers keywords -1: $rc: $(cat "$tmp/err")"
"$nt" top --thread 999 "$TRACE" > "$tmp/out" 2> "$tmp/err"
grep -q "selects none of the trace's 1609 samples: thread 999 has none" "$tmp/err" && ok "an empty filter says so" \
    || fail "--thread 999: $(cat "$tmp/err")"
grep -q "^samples:  0 selected of 1,609 (on 0 of 1 thread)" "$tmp/out" && ok "filtered header counts the selection" \
    || fail "filtered header: $(head -1 "$tmp/out")"
"$nt" stacks --from 10s "$TRACE" 2>&1 >/dev/null | grep -q "its samples lie between" && ok "an empty window says so" \
    || fail "--from 10s said nothing"
"$nt" top --bogus "$TRACE" 2>&1 >/dev/null | grep -q "^nettrace top: unrecognized option" && ok "option errors name nettrace top" \
    || fail "option error prefix"
"$nt" info "$TRACE" > "$tmp/info"
grep -q '^start: .*Z (trace clock' "$tmp/info" && grep -q '^end: *+2' "$tmp/info" && grep -q '^duration: *2\.[0-9]* s' "$tmp/info" \
    && ok "info: start, end, duration" || fail "info times: $(grep -E '^(start|end|duration)' "$tmp/info")"
"$nt" collect --duration bogus -p 1 > /dev/null 2>&1; [ $? -eq 2 ] && ok "collect --duration bogus refused" || fail "--duration bogus"
"$nt" collect --duration 1s -p 2147483000 -q -o "$tmp/none" > /dev/null 2>&1; rc=$?
[ $rc -eq 30 ] && ok "collect --duration 1s accepted (no such process: 30)" || fail "collect --duration 1s: exit $rc"
samples_n=$("$nt" top --json "$TRACE" | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])' 2>/dev/null)
[ "$samples_n" = 1609 ] && ok "top --json" || fail "top --json: $samples_n"

# --- --signatures: parameter lists tell overloads apart, everywhere ----------
"$nt" top -n 3 --signatures "$SPIN" | grep -q 'BetaSpinner.SpinBeta(int64)$' && ok "top --signatures" \
    || fail "top --signatures: $("$nt" top -n 3 --signatures "$SPIN" | tail -3)"
"$nt" top -n 3 "$SPIN" | grep -q 'SpinBeta(' && fail "top without --signatures shows a signature" || ok "no signature by default"
"$nt" stacks --signatures "$SPIN" | grep -q 'SpinBeta(int64) [0-9]*$' && ok "folded --signatures" || fail "folded --signatures"
"$nt" samples --signatures "$TRACE" | grep -q 'Tree.Run(int64);' && ok "samples --signatures" || fail "samples --signatures"

# --- folded ------------------------------------------------------------------
"$nt" stacks "$TRACE" > "$tmp/folded" || fail "folded exit code"
grep -qvE '^[^ ]+ [0-9]+$' "$tmp/folded" && fail "folded line format" || ok "folded line format"
total=$(awk '{s += $NF} END {print s}' "$tmp/folded")
[ "$total" -eq 1609 ] && ok "folded weights add up to the samples" || fail "folded total $total"
[ "$(cut -d' ' -f1 "$tmp/folded" | sort | uniq -d | wc -l)" -eq 0 ] && ok "identical stacks merged" \
    || fail "duplicate folded stacks"
mo=$("$nt" stacks --managed-only "$TRACE" | awk '{s += $NF} END {print s}')
managed=$(grep -c ' M ' "$tmp/samples")
[ "$mo" -eq "$managed" ] && ok "--managed-only: $managed samples" || fail "--managed-only $mo vs $managed"
t0=$(head -1 "$tmp/samples" | cut -d' ' -f1)
win=$("$nt" stacks --from @$t0 --to @$((t0 + 1000000000)) "$TRACE" | awk '{s += $NF} END {print s + 0}')
want=$(awk -v a=$t0 -v b=$((t0 + 1000000000)) '$1 >= a && $1 < b' "$tmp/samples" | wc -l)
[ "$win" -eq "$want" ] && ok "--from/--to: $want samples" || fail "--from/--to $win vs $want"
th=$(awk '{print $2}' "$tmp/samples" | sort | uniq -c | sort -rn | head -1)
thn=$(echo $th | cut -d' ' -f1); thid=$(echo $th | cut -d' ' -f2)
tw=$("$nt" stacks --thread "$thid" "$TRACE" | awk '{s += $NF} END {print s}')
[ "$tw" -eq "$thn" ] && ok "--thread" || fail "--thread $tw vs $thn"
"$nt" stacks --weight time "$TRACE" | grep -qvE '^[^ ]+ [0-9]+$' && fail "time-weighted format" || ok "--weight time"

# --- speedscope --------------------------------------------------------------
if command -v python3 >/dev/null 2>&1; then
    "$nt" stacks -f speedscope --weight samples -o "$tmp/s.json" "$SPIN" || fail "speedscope exit code"
    spin_n=$("$nt" samples "$SPIN" | wc -l)
    python3 "$top_srcdir/tests/speedscope_check.py" "$tmp/s.json" "$spin_n" && ok "speedscope valid, weights = $spin_n" \
        || fail "speedscope check"
    "$nt" stacks -f speedscope -o "$tmp/st.json" "$SPIN" && \
        python3 "$top_srcdir/tests/speedscope_check.py" "$tmp/st.json" && ok "speedscope by time (the default) valid" \
        || fail "speedscope by time"
    # by default: real time units, the busiest thread first, the trace's file name as the profile's name
    python3 - "$tmp/st.json" <<'PY' && ok "speedscope: nanoseconds, busiest first, named for the trace" \
        || fail "speedscope defaults"
import json, sys
d = json.load(open(sys.argv[1]))
ends = [p["endValue"] for p in d["profiles"]]
assert all(p["unit"] == "nanoseconds" for p in d["profiles"]), "units"
assert ends == sorted(ends, reverse=True), ends
assert d["activeProfileIndex"] == 0 and d["name"] == "spin-threads.nettrace", d["name"]
PY
    n_prof=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["profiles"]))' "$tmp/s.json")
    [ "$n_prof" -eq 3 ] && ok "one profile per thread" || fail "$n_prof profiles"
    # an event profile the same way: valid, in bytes, the busiest thread first, weights = the events' bytes
    ALLOC="$top_srcdir/corpus/profile-alloc.nettrace"
    alloc_bytes=$("$nt" samples --profile alloc "$ALLOC" | awk '{s += $3} END {print s}')
    "$nt" stacks --profile alloc --by-label -f speedscope -o "$tmp/sa.json" "$ALLOC" &&
        python3 "$top_srcdir/tests/speedscope_check.py" "$tmp/sa.json" "$alloc_bytes" &&
        python3 - "$tmp/sa.json" <<'PY' && ok "speedscope --profile alloc: valid, bytes, busiest first" \
        || fail "speedscope --profile alloc"
import json, sys
d = json.load(open(sys.argv[1]))
ends = [p["endValue"] for p in d["profiles"]]
assert all(p["unit"] == "bytes" for p in d["profiles"]), "units"
assert len(ends) > 1 and ends == sorted(ends, reverse=True), ends
PY
else
    echo "SKIP (part): python3 absent, speedscope output not checked"
fi

# --- pprof -------------------------------------------------------------------
"$nt" stacks -f pprof -o "$tmp/p.pb.gz" "$TRACE" || fail "pprof exit code"
gzip -t "$tmp/p.pb.gz" && ok "pprof is valid gzip" || fail "pprof gzip"
if command -v protoc >/dev/null 2>&1; then
    gzip -dc "$tmp/p.pb.gz" | protoc --decode=perftools.profiles.Profile -I "$top_srcdir/tests/data" \
        "$top_srcdir/tests/data/profile.proto" > "$tmp/p.txt" && ok "protoc decodes pprof" || fail "protoc --decode"
    # The first value of every sample is its count: they add up to the samples.
    cnt=$(awk '/^sample \{/ {s = 1; v = 0} s && /^  value:/ {v++; if (v == 1) c += $2} /^\}/ {s = 0} END {print c + 0}' "$tmp/p.txt")
    [ "$cnt" -eq 1609 ] && ok "pprof sample counts add up to 1609" || fail "pprof counts $cnt"
    grep -q 'string_table: "CallTree!Workloads.CallTree.Tree.Leaf"' "$tmp/p.txt" && ok "pprof names Tree.Leaf" \
        || fail "pprof function names"
    nfun=$(grep -c '^function {' "$tmp/p.txt"); nloc=$(grep -c '^location {' "$tmp/p.txt")
    [ "$nfun" -gt 0 ] && [ "$nfun" -eq "$nloc" ] && ok "pprof: $nfun functions and locations" || fail "pprof tables"
else
    echo "SKIP (part): protoc absent, pprof not decoded"
fi

finish
