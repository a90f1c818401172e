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
need_files "$ALLOC" "$CONT" "$EXC" "$SPIN"

# --- windows on the event profiles -------------------------------------------
# The window's events by hand: the full dump (relative times) cut with awk.
"$nt" samples --profile alloc --relative "$ALLOC" > "$tmp/all" || fail "samples --profile alloc"
first=$(awk 'NR == 1 {print $1}' "$tmp/all")
mid=$(awk -v n="$(wc -l < "$tmp/all")" 'NR == int(n / 2) {print $1}' "$tmp/all")
from=$(( mid - 5000000 ))   # 10 ms around the middle tick
to=$(( from + 10000000 ))
awk -v f="$from" -v t="$to" '$1 >= f && $1 < t' "$tmp/all" > "$tmp/want"
n_want=$(wc -l < "$tmp/want")
bytes_want=$(awk '{s += $3} END {printf "%.0f", s}' "$tmp/want")
[ "$n_want" -gt 0 ] && [ "$n_want" -lt "$(wc -l < "$tmp/all")" ] && ok "the window cuts the ticks ($n_want)" \
    || fail "the test window holds $n_want ticks"
"$nt" samples --profile alloc --relative --from "${from}ns" --to "${to}ns" "$ALLOC" > "$tmp/got" || fail "samples window"
cmp -s "$tmp/want" "$tmp/got" && ok "samples --profile alloc --from/--to: the window's lines" \
    || fail "samples window: $(wc -l < "$tmp/got") lines, want $n_want"
# the same window on the trace clock ('@' ns)
start=$(( $("$nt" samples --profile alloc "$ALLOC" | awk 'NR == 1 {print $1}') - first ))
"$nt" samples --profile alloc --relative --from "@$((start + from))" --to "@$((start + to))" "$ALLOC" > "$tmp/got_abs"
cmp -s "$tmp/want" "$tmp/got_abs" && ok "the window on the trace clock" || fail "@ns window differs"
# the merged records of stacks and top hold the same ticks
folded=$("$nt" stacks --profile alloc --from "${from}ns" --to "${to}ns" "$ALLOC" | awk '{s += $NF} END {printf "%.0f", s}')
[ "$folded" = "$bytes_want" ] && ok "stacks --profile alloc window: $folded bytes" || fail "stacks window: $folded, want $bytes_want"
"$nt" stacks --profile alloc --by-count --from "${from}ns" --to "${to}ns" "$ALLOC" | awk '{s += $NF} END {print s}' > "$tmp/cnt"
[ "$(cat "$tmp/cnt")" = "$n_want" ] && ok "stacks --by-count window: $n_want ticks" || fail "stacks --by-count window: $(cat "$tmp/cnt")"
"$nt" top --profile alloc --from "${from}ns" --to "${to}ns" "$ALLOC" > "$tmp/top"
head -n 1 "$tmp/top" | sed 's/\([0-9]\),\([0-9]\)/\1\2/g' | grep -q "^alloc: $n_want events, $bytes_want bytes" && ok "top --profile alloc window" \
    || fail "top window: $(head -n 1 "$tmp/top"), want $n_want events, $bytes_want bytes"
# contention: a wait counts by its start, whole
"$nt" samples --profile contention --relative "$CONT" > "$tmp/call"
cf=$(awk 'NR == 3 {print $1}' "$tmp/call")
awk -v f="$cf" '$1 >= f' "$tmp/call" > "$tmp/cwant"
"$nt" samples --profile contention --relative --from "${cf}ns" "$CONT" > "$tmp/cgot"
cmp -s "$tmp/cwant" "$tmp/cgot" && [ -s "$tmp/cgot" ] && ok "contention window by the waits' starts, whole waits" \
    || fail "contention window"
# a window with none of the profile's events says where they are
"$nt" samples --profile alloc --from 10m "$ALLOC" 2>"$tmp/err" >"$tmp/none"
[ ! -s "$tmp/none" ] && grep -q "select no alloc events; the trace's events lie between" "$tmp/err" \
    && ok "an empty window is explained" || fail "empty window: $(cat "$tmp/err")"
# usage errors
"$nt" samples --profile alloc --managed-only "$ALLOC" >/dev/null 2>&1; [ $? -eq 2 ] \
    && ok "--managed-only on an event profile: usage error" || fail "--managed-only with --profile alloc"
"$nt" top --profile alloc --from 2 "$ALLOC" >/dev/null 2>&1; [ $? -eq 2 ] \
    && ok "a time without a unit: usage error" || fail "--from 2"

# --- the wall profile ------------------------------------------------------
"$nt" samples --profile wall "$SPIN" > "$tmp/wall" || fail "samples --profile wall"
interval=$("$nt" info --json "$SPIN" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sampling_interval_ns"] or 1000000)')
# each weight is the gap to the same thread's next sample; a thread's last weighs the interval
awk -v iv="$interval" '
    { t[NR] = $1; th[NR] = $2; v[NR] = $3 }
    END {
        for (i = NR; i >= 1; i--) {
            want = (th[i] in nxt) ? nxt[th[i]] - t[i] : iv
            if (v[i] != want) { print "line " i ": " v[i] " want " want; bad = 1; exit 1 }
            nxt[th[i]] = t[i]
        }
    }' "$tmp/wall" && ok "samples --profile wall: gaps to the thread's next sample" || fail "wall weights"
awk '$4 != "managed" && $4 != "external" && $4 != "other" {exit 1}' "$tmp/wall" && ok "wall labels" || fail "wall labels"
[ "$(wc -l < "$tmp/wall")" -eq "$("$nt" samples "$SPIN" | wc -l)" ] && ok "one wall line per sample" || fail "wall line count"
wall_total=$(awk '{s += $3} END {printf "%.0f", s}' "$tmp/wall")
folded_total=$("$nt" stacks --profile wall "$SPIN" | awk '{s += $NF} END {printf "%.0f", s}')
top_total=$("$nt" top --profile wall --json "$SPIN" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["weight"] == "wall_ns"; print(d["tables"][0]["samples"])')
[ "$wall_total" = "$folded_total" ] && [ "$wall_total" = "$top_total" ] && ok "wall totals agree: $wall_total ns" \
    || fail "wall totals: samples $wall_total, stacks $folded_total, top $top_total"
"$nt" stacks --profile wall -f speedscope -o "$tmp/w.json" "$SPIN" && python3 - "$tmp/w.json" "$wall_total" <<'PY' \
    && ok "speedscope --profile wall: nanoseconds, the wall total" || fail "speedscope --profile wall"
import json, sys
d = json.load(open(sys.argv[1]))
assert all(p["unit"] == "nanoseconds" for p in d["profiles"]), "units"
total = sum(sum(p["weights"]) for p in d["profiles"])
assert total == int(sys.argv[2]), (total, sys.argv[2])
PY
"$nt" stacks --profile wall --weight samples "$SPIN" >/dev/null 2>&1; [ $? -eq 2 ] \
    && ok "--profile wall --weight samples: usage error" || fail "--profile wall with --weight samples"
cpu_total=$("$nt" top --json "$SPIN" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tables"][0]["samples"])')
[ "$cpu_total" -lt "$top_total" ] && ok "cpu counts samples ($cpu_total), wall ns" || fail "cpu $cpu_total vs wall $top_total"
"$nt" top --profile wall "$SPIN" | grep -q "exclusive_ms" && ok "top --profile wall columns in ms" || fail "top wall header"

# --- exception messages --------------------------------------------------------
"$nt" top --profile exceptions "$EXC" | grep -c 'InvalidOperationException' > "$tmp/n1"
"$nt" top --profile exceptions --messages "$EXC" | grep -c 'InvalidOperationException:invalid' > "$tmp/n2"
[ "$(cat "$tmp/n1")" -eq 1 ] && [ "$(cat "$tmp/n2")" -gt 1 ] && ok "--messages splits throws by message" \
    || fail "--messages: $(cat "$tmp/n1") rows by type, $(cat "$tmp/n2") by message"
"$nt" samples --profile alloc --messages "$ALLOC" >/dev/null 2>&1; [ $? -eq 2 ] \
    && ok "--messages on alloc: usage error" || fail "--messages with --profile alloc"

finish
