#!/bin/sh
# Runs one test program for automake's TAP driver (tests/tests.mk sets it as
# the LOG_COMPILER of every test without an extension).  A Criterion suite:
# each test case becomes one TAP result, so a case that skips (cr_skip_test:
# the shared corpus, dotnet or a live process is absent) is a SKIP in the
# summary with its reason, and a suite whose other cases pass is not reported
# as one PASS that hides it; the suite's own output (failure details, the
# Synthesis line .ci/run prints) goes to the log first (the driver runs with
# --merge).  Any other program: its exit status is one result (77 = SKIP).
set -u
name=$(basename "$1")
if ! grep -q 'criterion_internal_test_main' "$1" 2>/dev/null; then
    "$@"
    rc=$?
    echo "1..1"
    case $rc in
        0) echo "ok 1 - $name" ;;
        77) echo "ok 1 - $name # SKIP (exit status 77)" ;;
        *) echo "not ok 1 - $name (exit status $rc)" ;;
    esac
    exit 0
fi
tap=$(mktemp) || exit 99
trap 'rm -f "$tap"' EXIT
"$@" --tap="$tap" >&2
rc=$?
cat "$tap"
# A suite that died before Criterion wrote its report still fails visibly.
if [ $rc -ne 0 ] && ! grep -q '^not ok' "$tap"; then
    grep -q '^1\.\.' "$tap" || echo "1..1"
    echo "not ok - $name exited with status $rc"
fi
exit $rc
