#!/bin/sh
# nettrace convert: V4 -> V6 -> V4 (and V6 -> V4 -> V6) keeps everything
# 'nettrace info' reports except the format and the byte and block counts.
# Inputs: the writer-made seeds in corpus/seeds and the project's recorded
# traces in corpus/; with the argument "shared", the shared reference traces
# under 5 MB instead (SKIP, exit 77, when ../shared/corpus is absent:
# tests/v6_convert_shared.sh).
set -u
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
SRC=$top_srcdir
keys='"(events|samples|methods|modules|assemblies|sequence_points|events_dropped|sampled_threads|pointer_size|process_id|processor_count|qpc_frequency|sync_qpc|sync_time_utc|sampling_interval_ns)"'
count=0

summary() { # file -> the compared fields; the whole report stays in $tmp/info
    "$nt" info --json "$1" > "$tmp/info"
    grep -E "$keys" "$tmp/info"
}

check() { # input file
    f=$1
    b=$(basename "$f")
    count=$((count + 1))
    summary "$f" > "$tmp/want"
    want_rc=0
    if grep -q '"status": "truncated"' "$tmp/info"; then
        want_rc=15 # 10 + NT_ERR_TRUNCATED: the output holds what was read
    fi
    case "$b" in
    v6_field_types*) want_rc=3 ;; # a field list neither output can describe is left out
    esac
    for to in v6 v4; do
        "$nt" convert "$f" --to $to -o "$tmp/$b.$to" 2> "$tmp/err"
        rc=$?
        if [ $rc -ne $want_rc ]; then
            fail "convert $b --to $to exited $rc (want $want_rc): $(cat "$tmp/err")"
            continue
        fi
        summary "$tmp/$b.$to" > "$tmp/got"
        grep -q "\"format_version\": ${to#v}" "$tmp/info" || fail "$b.$to is not $to"
        if ! diff "$tmp/want" "$tmp/got" > "$tmp/diff"; then
            fail "$b --to $to changes what info reports: $(cat "$tmp/diff")"
        fi
        back=v4
        [ $to = v4 ] && back=v6
        "$nt" convert "$tmp/$b.$to" --to $back -o "$tmp/$b.$to.$back" 2> "$tmp/err" || {
            fail "convert $b.$to --to $back: $(cat "$tmp/err")"
            continue
        }
        summary "$tmp/$b.$to.$back" > "$tmp/got"
        if ! diff "$tmp/want" "$tmp/got" > "$tmp/diff"; then
            fail "$b --to $to --to $back changes what info reports: $(cat "$tmp/diff")"
        fi
    done
}

if [ "${1:-}" = shared ]; then
    shared=$(shared_corpus) || skip "the shared corpus (../shared/corpus) is absent: set NETTRACE_SHARED_CORPUS"
    for f in "$shared"/*.nettrace; do
        [ -f "$f" ] || continue
        size=$(wc -c < "$f")
        [ "$size" -le 5000000 ] || continue
        check "$f"
    done
    [ $count -gt 0 ] || fail "no trace under 5 MB in $shared"
    echo "checked $count traces"
    finish
fi

for f in "$SRC"/corpus/seeds/*.nettrace; do
    [ -f "$f" ] || { fail "no seeds in $SRC/corpus/seeds"; finish; }
    check "$f"
done

# the project's own recorded traces
for f in "$SRC"/corpus/*.nettrace; do
    [ -f "$f" ] && check "$f"
done

# usage errors
"$nt" convert "$SRC/corpus/seeds/v4_samples.nettrace" -o "$tmp/x" 2> /dev/null
[ $? -eq 2 ] || fail "convert without --to should be a usage error"
"$nt" convert "$SRC/corpus/seeds/v4_samples.nettrace" --to v9 -o "$tmp/x" 2> /dev/null
[ $? -eq 2 ] || fail "--to v9 should be a usage error"
"$nt" convert "$tmp/does-not-exist" --to v6 -o "$tmp/x" 2> /dev/null
[ $? -eq 1 ] || fail "a missing input should be an I/O error"

echo "checked $count traces"
finish
