#!/bin/sh
# Runs one Criterion suite for automake's TAP driver (tests/tests.mk sets it as
# the LOG_COMPILER of every test without an extension): each test case becomes
# one TAP result, so a case that skips (cr_skip_test: the shared corpus, dotnet
# or a live process is absent) is a SKIP in the summary with its reason, and a
# suite whose other cases pass is not reported as one PASS that hides it.  The
# suite's own output (failure details, the Synthesis line .ci/run prints) goes
# to the log first; the driver is run with --merge.
set -u
tap=$(mktemp) || exit 99
trap 'rm -f "$tap"' EXIT
"$@" --tap="$tap" >&2
rc=$?
cat "$tap"
# A suite that died before Criterion wrote its report still fails visibly.
if [ $rc -ne 0 ] && ! grep -q '^not ok' "$tap"; then
    grep -q '^1\.\.' "$tap" || echo "1..1"
    echo "not ok - $1 exited with status $rc"
fi
exit $rc
