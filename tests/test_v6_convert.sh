#!/bin/sh
# nettrace convert: V4 -> V6 -> V4 (and V6 -> V4 -> V6) keeps everything
# 'nettrace info' reports except the format and the byte and block counts.
# Inputs: the writer-made seeds in corpus/seeds, the project's recorded
# traces in corpus/, and the shared reference traces under 5 MB when
# ../shared/corpus is present.
set -u
N="${top_builddir:-.}/nettrace"
SRC="${top_srcdir:-.}"
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
keys='"(events|samples|methods|modules|assemblies|sequence_points|events_dropped|sampled_threads|pointer_size|process_id|processor_count|qpc_frequency|sync_qpc|sync_time_utc|sampling_interval_ns)"'
fail=0
count=0

summary() { # file -> the compared fields; the whole report stays in $tmp/info
    "$N" info --json "$1" > "$tmp/info"
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
        "$N" convert "$f" --to $to -o "$tmp/$b.$to" 2> "$tmp/err"
        rc=$?
        if [ $rc -ne $want_rc ]; then
            echo "FAIL: convert $b --to $to exited $rc (want $want_rc): $(cat "$tmp/err")"
            fail=1
            continue
        fi
        summary "$tmp/$b.$to" > "$tmp/got"
        grep -q "\"format_version\": ${to#v}" "$tmp/info" || { echo "FAIL: $b.$to is not $to"; fail=1; }
        if ! diff "$tmp/want" "$tmp/got" > "$tmp/diff"; then
            echo "FAIL: $b --to $to changes what info reports:"
            cat "$tmp/diff"
            fail=1
        fi
        back=v4
        [ $to = v4 ] && back=v6
        "$N" convert "$tmp/$b.$to" --to $back -o "$tmp/$b.$to.$back" 2> "$tmp/err" || {
            echo "FAIL: convert $b.$to --to $back: $(cat "$tmp/err")"
            fail=1
            continue
        }
        summary "$tmp/$b.$to.$back" > "$tmp/got"
        if ! diff "$tmp/want" "$tmp/got" > "$tmp/diff"; then
            echo "FAIL: $b --to $to --to $back changes what info reports:"
            cat "$tmp/diff"
            fail=1
        fi
    done
}

for f in "$SRC"/corpus/seeds/*.nettrace; do
    [ -f "$f" ] || { echo "FAIL: no seeds in $SRC/corpus/seeds"; exit 1; }
    check "$f"
done

# the project's own recorded traces
for f in "$SRC"/corpus/*.nettrace; do
    [ -f "$f" ] && check "$f"
done

shared="${NETTRACE_SHARED_CORPUS:-$SRC/../shared/corpus}"
if [ -d "$shared" ]; then
    for f in "$shared"/*.nettrace; do
        [ -f "$f" ] || continue
        size=$(wc -c < "$f")
        [ "$size" -le 5000000 ] || continue
        check "$f"
    done
else
    echo "shared corpus absent ($shared): checked the seeds and corpus/ only"
fi

# usage errors
"$N" convert "$SRC/corpus/seeds/v4_samples.nettrace" -o "$tmp/x" 2> /dev/null
[ $? -eq 2 ] || { echo "FAIL: convert without --to should be a usage error"; fail=1; }
"$N" convert "$SRC/corpus/seeds/v4_samples.nettrace" --to v9 -o "$tmp/x" 2> /dev/null
[ $? -eq 2 ] || { echo "FAIL: --to v9 should be a usage error"; fail=1; }
"$N" convert "$tmp/does-not-exist" --to v6 -o "$tmp/x" 2> /dev/null
[ $? -eq 1 ] || { echo "FAIL: a missing input should be an I/O error"; fail=1; }

echo "checked $count traces"
exit $fail
