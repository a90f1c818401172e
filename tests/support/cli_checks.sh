# Sourced by the shell tests of the nettrace tool (tests/README): the tool's
# path ($nt), a scratch folder removed on exit ($tmp), no progress lines,
# the ok/fail reporters, the skips and the shared corpus's lookup.
#
# fail counts a failure and the test goes on; `finish` ends it with the count.
# A test whose checks build on each other sets CHECKS_STOP=1 before sourcing
# this file: then the first failure ends it at once (exit 1).  A failure in a
# subshell (a pipeline's loop) is counted too: it is written to the scratch
# folder, which finish reads.
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
nt="$top_builddir/nettrace"
tmp=$(mktemp -d) || exit 99
checks_tmp=$tmp # (a test may point $tmp into a folder of its own inside it)
trap 'rm -rf "$checks_tmp"' EXIT
export NETTRACE_NO_PROGRESS=1
fails=0
checks_failed="$tmp/.failed"
fail() {
    echo "FAIL: $*"
    [ "${CHECKS_STOP:-0}" = 1 ] && exit 1
    fails=$((fails + 1))
    echo x >> "$checks_failed"
}
ok() { echo "ok: $*"; }
finish() {
    n=0
    [ -f "$checks_failed" ] && n=$(wc -l < "$checks_failed")
    [ "$n" -eq 0 ] || { echo "$n failures"; exit 1; }
    exit 0
}

# skip REASON: the test reports SKIP (exit 77), saying why.
skip() { echo "SKIP: $*"; exit 77; }
# need PROGRAM [WHAT IT IS FOR]: skip unless PROGRAM is on PATH.
need() { command -v "$1" > /dev/null 2>&1 || skip "$1 is not on PATH${2:+: $2}"; }
# need_files FILE...: skip unless every FILE is there.
need_files() {
    for f in "$@"; do
        [ -f "$f" ] || skip "$f is absent"
    done
}
# shared_corpus: the reference traces' folder (NETTRACE_SHARED_CORPUS, else
# ../shared/corpus beside the source tree or its parent) on stdout; false,
# printing nothing, when it is absent (never copied into the repository).
shared_corpus() {
    for d in "${NETTRACE_SHARED_CORPUS:-}" "$top_srcdir/../shared/corpus" "$top_srcdir/../../shared/corpus"; do
        [ -n "$d" ] && [ -d "$d" ] && { (cd "$d" && pwd); return 0; }
    done
    return 1
}
# workload_dll PROJECT ASSEMBLY: tests/workloads/PROJECT built once per tree
# (tests/workloads-build/PROJECT, under a lock the tests running side by
# side share; again when its Program.cs is newer), its ASSEMBLY.dll's path
# on stdout; false, the build log named, when it did not build (the caller
# exits 1).
workload_dll() {
    wdir="$top_builddir/tests/workloads-build/$1"
    wdll="$wdir/out/$2.dll"
    mkdir -p "$wdir"
    flock "$wdir/.lock" sh -c "[ -f '$wdll' ] && [ '$wdll' -nt '$top_srcdir/tests/workloads/$1/Program.cs' ] ||
        { cp '$top_srcdir/tests/workloads/$1/Program.cs' '$top_srcdir/tests/workloads/$1/$1.csproj' '$wdir/' &&
          cd '$wdir' && DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build -c Release -o out \
              -nodeReuse:false -p:UseSharedCompilation=false > build.log 2>&1; }"
    # (said on stderr: stdout is the caller's $(...))
    [ -f "$wdll" ] || { echo "FAIL: the $1 workload did not build (see $wdir/build.log)" >&2; return 1; }
    echo "$wdll"
}

# wait_ready LOG WHAT: wait up to 30 s until a workload's LOG has a line
# starting "ready"; otherwise show the log and fail the test, naming WHAT.
wait_ready() {
    wr=0
    until grep -q '^ready' "$1"; do
        wr=$((wr + 1))
        [ $wr -gt 300 ] && { cat "$1"; echo "FAIL: $2 did not start"; exit 1; }
        sleep 0.1
    done
}
