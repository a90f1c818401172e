# Sourced by the shell tests of the nettrace tool that report every check and
# fail at the end (trace_cli.sh, cli_profiles.sh): the tool's path, a scratch
# folder removed on exit, no progress lines, and the ok/fail reporters.
# `finish` ends the test with the count of failed checks.
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
NT="$top_builddir/nettrace"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export NETTRACE_NO_PROGRESS=1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
finish() { [ "$fails" -eq 0 ] || { echo "$fails failures"; exit 1; }; exit 0; }
