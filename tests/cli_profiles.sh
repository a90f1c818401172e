#!/bin/sh
# The profile selections of samples/top/stacks on the project's own traces
# (corpus/): --from/--to on the event profiles give exactly the events whose
# times (a wait: its start) lie in the window, by every command and in both
# spellings of a time; --profile wall weighs each sample by the ns to its
# thread's next one, alike in samples, top and stacks; --messages labels
# throws by their messages.
set -u
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
ALLOC="$top_srcdir/corpus/profile-alloc.nettrace"
CONT="$top_srcdir/corpus/profile-contention.nettrace"
EXC="$top_srcdir/corpus/profile-exceptions.nettrace"
SPIN="$top_srcdir/corpus/spin-threads.nettrace"
for f in "$ALLOC" "$CONT" "$EXC" "$SPIN"; do
    if [ ! -f "$f" ]; then
        echo "SKIP: $f is absent"
        exit 77
    fi
done

# --- windows on the event profiles -------------------------------------------
# The window's events by hand: the full dump (relative times) cut with awk.
"$NT" samples --profile alloc --relative "$ALLOC" > "$TMP/all" || fail "samples --profile alloc"
first=$(awk 'NR == 1 {print $1}' "$TMP/all")
mid=$(awk -v n="$(wc -l < "$TMP/all")" 'NR == int(n / 2) {print $1}' "$TMP/all")
from=$(( mid - 5000000 ))   # 10 ms around the middle tick
to=$(( from + 10000000 ))
awk -v f="$from" -v t="$to" '$1 >= f && $1 < t' "$TMP/all" > "$TMP/want"
n_want=$(wc -l < "$TMP/want")
bytes_want=$(awk '{s += $3} END {printf "%.0f", s}' "$TMP/want")
[ "$n_want" -gt 0 ] && [ "$n_want" -lt "$(wc -l < "$TMP/all")" ] && ok "the window cuts the ticks ($n_want)" \
    || fail "the test window holds $n_want ticks"
"$NT" samples --profile alloc --relative --from "${from}ns" --to "${to}ns" "$ALLOC" > "$TMP/got" || fail "samples window"
cmp -s "$TMP/want" "$TMP/got" && ok "samples --profile alloc --from/--to: the window's lines" \
    || fail "samples window: $(wc -l < "$TMP/got") lines, want $n_want"
# the same window on the trace clock ('@' ns)
start=$(( $("$NT" samples --profile alloc "$ALLOC" | awk 'NR == 1 {print $1}') - first ))
"$NT" samples --profile alloc --relative --from "@$((start + from))" --to "@$((start + to))" "$ALLOC" > "$TMP/got_abs"
cmp -s "$TMP/want" "$TMP/got_abs" && ok "the window on the trace clock" || fail "@ns window differs"
# the merged records of stacks and top hold the same ticks
folded=$("$NT" stacks --profile alloc --from "${from}ns" --to "${to}ns" "$ALLOC" | awk '{s += $NF} END {printf "%.0f", s}')
[ "$folded" = "$bytes_want" ] && ok "stacks --profile alloc window: $folded bytes" || fail "stacks window: $folded, want $bytes_want"
"$NT" stacks --profile alloc --by-count --from "${from}ns" --to "${to}ns" "$ALLOC" | awk '{s += $NF} END {print s}' > "$TMP/cnt"
[ "$(cat "$TMP/cnt")" = "$n_want" ] && ok "stacks --by-count window: $n_want ticks" || fail "stacks --by-count window: $(cat "$TMP/cnt")"
"$NT" top --profile alloc --from "${from}ns" --to "${to}ns" "$ALLOC" > "$TMP/top"
head -n 1 "$TMP/top" | sed 's/\([0-9]\),\([0-9]\)/\1\2/g' | grep -q "^alloc: $n_want events, $bytes_want bytes" && ok "top --profile alloc window" \
    || fail "top window: $(head -n 1 "$TMP/top"), want $n_want events, $bytes_want bytes"
# contention: a wait counts by its start, whole
"$NT" samples --profile contention --relative "$CONT" > "$TMP/call"
cf=$(awk 'NR == 3 {print $1}' "$TMP/call")
awk -v f="$cf" '$1 >= f' "$TMP/call" > "$TMP/cwant"
"$NT" samples --profile contention --relative --from "${cf}ns" "$CONT" > "$TMP/cgot"
cmp -s "$TMP/cwant" "$TMP/cgot" && [ -s "$TMP/cgot" ] && ok "contention window by the waits' starts, whole waits" \
    || fail "contention window"
# a window with none of the profile's events says where they are
"$NT" samples --profile alloc --from 10m "$ALLOC" 2>"$TMP/err" >"$TMP/none"
[ ! -s "$TMP/none" ] && grep -q "select no alloc events; the trace's events lie between" "$TMP/err" \
    && ok "an empty window is explained" || fail "empty window: $(cat "$TMP/err")"
# usage errors
"$NT" samples --profile alloc --managed-only "$ALLOC" >/dev/null 2>&1; [ $? -eq 2 ] \
    && ok "--managed-only on an event profile: usage error" || fail "--managed-only with --profile alloc"
"$NT" top --profile alloc --from 2 "$ALLOC" >/dev/null 2>&1; [ $? -eq 2 ] \
    && ok "a time without a unit: usage error" || fail "--from 2"

# --- the wall profile ------------------------------------------------------
"$NT" samples --profile wall "$SPIN" > "$TMP/wall" || fail "samples --profile wall"
interval=$("$NT" info --json "$SPIN" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sampling_interval_ns"] or 1000000)')
# each weight is the gap to the same thread's next sample; a thread's last weighs the interval
awk -v iv="$interval" '
    { t[NR] = $1; th[NR] = $2; v[NR] = $3 }
    END {
        for (i = NR; i >= 1; i--) {
            want = (th[i] in nxt) ? nxt[th[i]] - t[i] : iv
            if (v[i] != want) { print "line " i ": " v[i] " want " want; bad = 1; exit 1 }
            nxt[th[i]] = t[i]
        }
    }' "$TMP/wall" && ok "samples --profile wall: gaps to the thread's next sample" || fail "wall weights"
awk '$4 != "managed" && $4 != "external" && $4 != "other" {exit 1}' "$TMP/wall" && ok "wall labels" || fail "wall labels"
[ "$(wc -l < "$TMP/wall")" -eq "$("$NT" samples "$SPIN" | wc -l)" ] && ok "one wall line per sample" || fail "wall line count"
wall_total=$(awk '{s += $3} END {printf "%.0f", s}' "$TMP/wall")
folded_total=$("$NT" stacks --profile wall "$SPIN" | awk '{s += $NF} END {printf "%.0f", s}')
top_total=$("$NT" top --profile wall --json "$SPIN" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["weight"] == "wall_ns"; print(d["tables"][0]["samples"])')
[ "$wall_total" = "$folded_total" ] && [ "$wall_total" = "$top_total" ] && ok "wall totals agree: $wall_total ns" \
    || fail "wall totals: samples $wall_total, stacks $folded_total, top $top_total"
"$NT" stacks --profile wall -f speedscope -o "$TMP/w.json" "$SPIN" && python3 - "$TMP/w.json" "$wall_total" <<'PY' \
    && ok "speedscope --profile wall: nanoseconds, the wall total" || fail "speedscope --profile wall"
import json, sys
d = json.load(open(sys.argv[1]))
assert all(p["unit"] == "nanoseconds" for p in d["profiles"]), "units"
total = sum(sum(p["weights"]) for p in d["profiles"])
assert total == int(sys.argv[2]), (total, sys.argv[2])
PY
"$NT" stacks --profile wall --weight samples "$SPIN" >/dev/null 2>&1; [ $? -eq 2 ] \
    && ok "--profile wall --weight samples: usage error" || fail "--profile wall with --weight samples"
cpu_total=$("$NT" top --json "$SPIN" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tables"][0]["samples"])')
[ "$cpu_total" -lt "$top_total" ] && ok "cpu counts samples ($cpu_total), wall ns" || fail "cpu $cpu_total vs wall $top_total"
"$NT" top --profile wall "$SPIN" | grep -q "exclusive_ms" && ok "top --profile wall columns in ms" || fail "top wall header"

# --- exception messages --------------------------------------------------------
"$NT" top --profile exceptions "$EXC" | grep -c 'InvalidOperationException' > "$TMP/n1"
"$NT" top --profile exceptions --messages "$EXC" | grep -c 'InvalidOperationException:invalid' > "$TMP/n2"
[ "$(cat "$TMP/n1")" -eq 1 ] && [ "$(cat "$TMP/n2")" -gt 1 ] && ok "--messages splits throws by message" \
    || fail "--messages: $(cat "$TMP/n1") rows by type, $(cat "$TMP/n2") by message"
"$NT" samples --profile alloc --messages "$ALLOC" >/dev/null 2>&1; [ $? -eq 2 ] \
    && ok "--messages on alloc: usage error" || fail "--messages with --profile alloc"

finish
