#!/bin/sh
# No command destroys a user's file (issue 25, item 1): an output that is the
# input (by name, symbolic or hard link, or standard input) is refused and the
# input stays byte for byte; an existing trace is replaced only with --force;
# a failed run leaves an existing output as it was and no temporary file
# behind; collect never overwrites an earlier trace, names its default output
# after the program and the time, and writes to standard output for '-' (so
# `collect -o - | top -` works).  The collect part skips, saying so, without
# dotnet.
set -u
CHECKS_STOP=1
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
trace="$top_srcdir/corpus/spin-threads.nettrace"
need_files "$trace"
cd "$tmp" || exit 1
cp "$trace" a.nettrace
cp "$trace" orig.nettrace

# refused: exit 1, the reason on stderr, the input unchanged
refused() { # WHAT COMMAND...
    what=$1; shift
    "$@" > out.txt 2> err.txt
    rc=$?
    [ $rc -eq 1 ] || fail "$what: exit $rc, not 1 ($(cat err.txt))"
    grep -q "$what" err.txt || fail "expected '$what' on stderr, got: $(cat err.txt)"
    cmp -s a.nettrace orig.nettrace || fail "$* changed the input"
}
refused "is the input" "$nt" convert a.nettrace --to v6 -o a.nettrace
refused "is the input" "$nt" convert a.nettrace --to v6 -o a.nettrace --force
refused "is the input" "$nt" stacks -o a.nettrace a.nettrace
refused "is the input" "$nt" stacks --profile alloc -o a.nettrace a.nettrace
ln -s a.nettrace sym.nettrace
refused "is the input" "$nt" stacks -o sym.nettrace a.nettrace
ln a.nettrace hard.nettrace
refused "is the input" "$nt" convert hard.nettrace --to v4 -o a.nettrace
refused "is the input" sh -c "'$nt' convert - --to v6 -o a.nettrace < a.nettrace"
echo "ok: an output that is the input is refused, the input intact"

# an existing trace: refused without --force, replaced with it
"$nt" convert a.nettrace --to v6 -o b.nettrace || fail "convert to a new file failed"
cp b.nettrace b.orig
refused "is a trace already" "$nt" convert a.nettrace --to v4 -o b.nettrace
cmp -s b.nettrace b.orig || fail "a refused convert changed the existing trace"
refused "is a trace already" "$nt" stacks -o b.nettrace a.nettrace
cmp -s b.nettrace b.orig || fail "a refused stacks changed the existing trace"
"$nt" convert a.nettrace --to v4 -o b.nettrace --force || fail "convert --force failed"
cmp -s b.nettrace b.orig && fail "convert --force did not replace the trace"
"$nt" info b.nettrace | grep -q 'V4' || fail "the forced output is not the V4 conversion"
# a non-trace output (folded text from an earlier run) is replaced as before
echo old > f.txt
"$nt" stacks -o f.txt a.nettrace || fail "stacks -o f.txt over a text file failed"
grep -q 'old' f.txt && fail "stacks did not replace f.txt"
echo "ok: an existing trace is replaced only with --force"

# a failed run leaves the existing output whole and no temporary file
echo keep > keep.txt
head -c 100 /dev/urandom > garbage.nettrace
"$nt" convert garbage.nettrace --to v6 -o keep.txt 2>/dev/null && fail "convert of garbage succeeded"
[ "$(cat keep.txt)" = keep ] || fail "a failed convert changed its existing output"
"$nt" stacks -o keep.txt garbage.nettrace 2>/dev/null && fail "stacks of garbage succeeded"
[ "$(cat keep.txt)" = keep ] || fail "a failed stacks changed its existing output"
"$nt" stacks -o nodir/x.txt a.nettrace 2>err.txt && fail "stacks into a missing directory succeeded"
grep -q 'nodir/x.txt' err.txt || fail "the failure does not name the output: $(cat err.txt)"
ls ./*.tmp-* 2>/dev/null && fail "temporary files were left behind"
# a truncated input still delivers what was read
head -c 200000 a.nettrace > cut.nettrace
"$nt" convert cut.nettrace --to v6 -o cut6.nettrace 2>/dev/null
[ -s cut6.nettrace ] || fail "the conversion of a truncated trace was not kept"
# a device is written in place, never renamed over (that would replace the device node)
if [ -c /dev/full ]; then
    "$nt" convert a.nettrace --to v6 -o /dev/full 2> err.txt && fail "convert -o /dev/full succeeded"
    grep -q 'No space left on device' err.txt || fail "convert -o /dev/full: $(cat err.txt)"
    [ -c /dev/full ] || fail "convert -o /dev/full replaced the device node"
    ls /dev/full.tmp-* 2>/dev/null && fail "a temporary file was left in /dev"
fi
"$nt" stacks -o /dev/stdout a.nettrace | grep -q 'SpinAlpha' || fail "stacks -o /dev/stdout wrote nothing to the pipe"
echo "ok: a failed output leaves the old file as it was"

# collect: refused before anything runs when the output is an existing trace
refused "is a trace already" "$nt" collect -p 2147483 -o a.nettrace
"$nt" collect -p 2147483 -o never.nettrace 2>/dev/null && fail "collect from no process succeeded"
[ -e never.nettrace ] && fail "a collect that wrote nothing left a file"
echo "ok: collect refuses to overwrite a trace"

if ! command -v dotnet >/dev/null 2>&1; then
    echo "SKIP (part): dotnet is not on PATH: collect's default name and -o - not run"
    exit 0
fi
# the StartupTarget workload, built once per tree (the live tests share it)
dll=$(workload_dll StartupTarget StartupTarget) || exit 1

mkdir run && cd run || exit 1
"$nt" collect -q -- dotnet "$dll" 300 > child.txt 2> err.txt || fail "collect -- dotnet failed: $(cat err.txt)"
made=$(ls)
echo "$made" | grep -qE '^StartupTarget_[0-9]{8}_[0-9]{6}\.nettrace$' || fail "default name: got '$made'"
first=$(echo "$made" | grep nettrace)
cp "$first" ../first.nettrace
"$nt" collect -q -o "$first" -- dotnet "$dll" 100 2> err.txt && fail "a second collect overwrote $first"
grep -q "is a trace already" err.txt || fail "the refusal does not say why: $(cat err.txt)"
cmp -s "$first" ../first.nettrace || fail "the refused collect changed $first"
echo "ok: collect names its output StartupTarget_DATE_TIME.nettrace and never overwrites it"

"$nt" collect -q -o - -- dotnet "$dll" 500 2> err.txt | "$nt" top - > top.txt 2> toperr.txt
grep -q 'SpinInMain' top.txt || fail "collect -o - | top - does not show SpinInMain: $(cat top.txt toperr.txt err.txt)"
[ -e ./- ] && fail "collect -o - wrote a file named '-'"
echo "ok: collect -o - | top - reads the trace from the pipe"
