#!/bin/sh
# Windowed reads through the sidecar (nettrace index FILE -> FILE.ntidx) give
# what the full read gives: top (by samples and by wall time), folded stacks,
# samples, events and an event profile, on every trace of corpus/ (with the
# argument "shared", of ../shared/corpus under 5 MB instead: SKIP when it is
# absent, tests/cli_window_shared.sh; each also converted to V6, a writer-built
# trace), over windows cut at random (the seed is printed; WINDOW_SEED repeats
# a run) and one open at its end.  top's "samples:", "frames:" and "methods:"
# lines count the trace as read (the whole file, or the blocks the window
# needed) and are left out of the comparison; so is pprof, whose string and
# function tables list every frame read (its samples are the folded ones).
# Folded lines are compared sorted: their order follows the order in which
# the read met the names.  Then a
# stale, damaged, symlinked or directory sidecar is said so once and not used, and
# `nettrace index` never replaces a file that is not its sidecar.
set -u
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
seed=${WINDOW_SEED:-$$}
echo "seed $seed (WINDOW_SEED=$seed repeats these windows)"
traces=0
windows=0

# awk's random numbers from the seed: "a b" permille pairs, a <= b.
cuts() {
    awk -v s="$1" 'BEGIN { srand(s); for (i = 0; i < 2; i++) { a = int(rand() * 1000); b = int(rand() * 1000);
                          if (a > b) { t = a; a = b; b = t } print a, b } }'
}

json_num() { # key file
    sed -n "s/.*\"$1\":\(-\{0,1\}[0-9]*\).*/\1/p" "$2" | head -1
}

compare() { # trace label args...
    f=$1
    what=$2
    shift 2
    for cmd in "top" "stacks -f folded" "samples" "events" "top --profile wall" \
        "stacks --profile alloc -f folded"; do
        # shellcheck disable=SC2086
        NETTRACE_NO_INDEX=1 "$nt" $cmd "$@" "$f" > "$tmp/full" 2> /dev/null
        full_rc=$?
        # shellcheck disable=SC2086
        NETTRACE_READ_REPORT=1 "$nt" $cmd "$@" "$f" > "$tmp/win" 2> "$tmp/win.err"
        win_rc=$?
        if ! grep -q "through the sidecar" "$tmp/win.err"; then
            fail "$what: $cmd $*: the sidecar was not used: $(head -3 "$tmp/win.err")"
            continue
        fi
        case "$cmd" in
        stacks*) for o in full win; do sort "$tmp/$o" > "$tmp/$o.cut"; mv "$tmp/$o.cut" "$tmp/$o"; done ;;
        top*) for o in full win; do grep -v -E '^(samples|frames|methods):' "$tmp/$o" > "$tmp/$o.cut"; mv "$tmp/$o.cut" "$tmp/$o"; done ;;
        esac
        if [ $full_rc -ne $win_rc ] || ! cmp -s "$tmp/full" "$tmp/win"; then
            fail "$what: $cmd $*: exit $win_rc (full read: $full_rc), output differs:"
            diff "$tmp/full" "$tmp/win" | head -8
        fi
    done
    windows=$((windows + 1))
}

check() { # trace file (in $tmp, beside its sidecar)
    f=$1
    label=$(basename "$f")
    if ! "$nt" index "$f" > /dev/null 2> "$tmp/index.err"; then
        echo "note: $label: not indexed ($(head -1 "$tmp/index.err")): a damaged trace has no sidecar"
        return
    fi
    [ -f "$f.ntidx" ] || { fail "$label: nettrace index wrote no $f.ntidx"; return; }
    traces=$((traces + 1))
    "$nt" index --json --no-sidecar "$f" > "$tmp/ix.json"
    lo=$(json_num min_ticks "$tmp/ix.json")
    hi=$(json_num max_ticks "$tmp/ix.json")
    freq=$(json_num qpc_frequency "$tmp/ix.json")
    [ -n "$lo" ] && [ -n "$hi" ] && [ -n "$freq" ] && [ "$freq" -gt 0 ] || return
    compare "$f" "$label" --from 500ms
    cuts "$seed$traces" > "$tmp/cuts"
    while read -r a b; do
        from=$(awk -v l="$lo" -v h="$hi" -v q="$freq" -v p="$a" 'BEGIN { printf "%.0f", (l + (h - l) * p / 1000) * 1e9 / q }')
        to=$(awk -v l="$lo" -v h="$hi" -v q="$freq" -v p="$b" 'BEGIN { printf "%.0f", (l + (h - l) * p / 1000) * 1e9 / q }')
        compare "$f" "$label [$a..$b permille]" --from "@$from" --to "@$to"
    done < "$tmp/cuts"
}

add() { # a trace: linked into $tmp (the sidecar goes beside the link), and its V6 conversion
    b=$(basename "$1")
    ln -s "$1" "$tmp/$b"
    check "$tmp/$b"
    if "$nt" convert "$1" --to v6 -o "$tmp/$b.v6.nettrace" 2> /dev/null; then
        check "$tmp/$b.v6.nettrace"
    fi
}

if [ "${1:-}" = shared ]; then
    # The shared reference traces under 5 MB (tests/cli_window_shared.sh): SKIP when absent.
    shared=$(shared_corpus) || skip "the shared corpus (../shared/corpus) is absent: set NETTRACE_SHARED_CORPUS"
    for f in "$shared"/*.nettrace; do
        [ -f "$f" ] && [ "$(wc -c < "$f")" -lt 5000000 ] && add "$f"
    done
    [ $traces -gt 0 ] || { fail "no trace under 5 MB in $shared"; finish; }
    ok "$traces shared traces read alike through their sidecars (seed $seed)"
    finish
fi
for f in "$top_srcdir"/corpus/*.nettrace; do [ -f "$f" ] && add "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")"; done
[ $traces -gt 0 ] || { fail "no trace in corpus/ to compare"; finish; }

# A sidecar that does not describe the trace: said once, not used, the output the full read's.
small="$tmp/own.nettrace"
cp "$top_srcdir/corpus/call-tree.nettrace" "$small" || exit 1
"$nt" index "$small" > "$tmp/index.txt"
# The report counts the records the sidecar keeps (call-tree's rundown: some), never a 0 it did not count.
kept=$(sed -n 's/^method, module and assembly events kept for windowed reads: \([0-9]*\) .*/\1/p' "$tmp/index.txt")
if [ -z "$kept" ] || [ "$kept" -eq 0 ]; then
    fail "nettrace index reports ${kept:-no} kept records for call-tree: $(cat "$tmp/index.txt")"
fi
NETTRACE_NO_INDEX=1 "$nt" samples --from 1ms "$small" > "$tmp/want" 2> /dev/null
expect_unused() { # what reason
    "$nt" samples --from 1ms "$small" > "$tmp/got" 2> "$tmp/err"
    n=$(grep -c "not used" "$tmp/err")
    if [ "$n" -ne 1 ] || ! grep -q "$2" "$tmp/err" || ! cmp -s "$tmp/want" "$tmp/got"; then
        fail "$1: want one 'not used ($2...)' and the full read's output; stderr: $(cat "$tmp/err")"
    fi
}
cp "$small.ntidx" "$tmp/good.ntidx"
touch -d '2001-01-01' "$small"
expect_unused "a trace modified after its sidecar" "stale"
"$nt" index "$small" > /dev/null
cp "$small.ntidx" "$tmp/good.ntidx"
printf '\377' | dd of="$small.ntidx" bs=1 seek=200 conv=notrunc 2> /dev/null
expect_unused "a damaged sidecar" "checksum"
head -c 100 "$tmp/good.ntidx" > "$small.ntidx"
expect_unused "a cut sidecar" "not an index sidecar\|does not fit\|checksum"
rm -f "$small.ntidx"
ln -s "$tmp/good.ntidx" "$small.ntidx"
expect_unused "a sidecar that is a symbolic link" "symbolic link"
rm -f "$small.ntidx"
echo "my notes" > "$small.ntidx"
if "$nt" index "$small" > /dev/null 2> "$tmp/err" || [ "$(cat "$small.ntidx")" != "my notes" ]; then
    fail "nettrace index replaced a file that is not its sidecar: $(cat "$tmp/err")"
fi
expect_unused "a file of the sidecar's name that is not one" "not an index sidecar"
rm -f "$small.ntidx"
mkdir "$small.ntidx"
expect_unused "a directory of the sidecar's name" "not a regular file"
rmdir "$small.ntidx"

ok "$windows windows of $traces traces read through their sidecars as in full"
finish
