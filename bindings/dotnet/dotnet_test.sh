#!/bin/sh
# make check: the .NET package (bindings/dotnet).  Its xunit tests against
# the CLI's outputs on the corpus traces, misuse, and live sessions to a
# child process (LiveTarget) and to the test process itself; then the
# package: dotnet pack, installed from a local folder source into a fresh
# console project whose program is the README's first example as written
# (the other two compiled beside it), run, then published with NativeAOT and
# run.  Skips (exit 77) when dotnet is not installed.
set -u
if ! command -v dotnet >/dev/null 2>&1; then
    echo "SKIP: dotnet is not installed: the .NET package's tests cannot run"
    exit 77
fi
. "$top_srcdir/bindings/dotnet/dotnet.sh"
nt_bind_live_target || exit 1
mkdir -p "$NT_DOTNET_WORK" || exit 1
# A step's output is kept and shown when it fails. Steps that restore packages
# from the registry (a fresh machine has none cached) are tried twice: a
# registry's transient refusal is not the package's failure.
nt_dotnet_step() {
    what=$1; shift
    "$@" >"$NT_DOTNET_WORK/step.log" 2>&1 && return 0
    [ "$what" = restore ] && { echo "retrying once after a failed restore: $*"; sleep 5; "$@" >"$NT_DOTNET_WORK/step.log" 2>&1 && return 0; }
    tail -30 "$NT_DOTNET_WORK/step.log"; echo "FAIL: $*"
    return 1
}
NETTRACE_ABI_LAYOUT="$top_builddir/bindings/python/abi_layout"
NETTRACE_SRCDIR="$top_srcdir"
export NETTRACE_ABI_LAYOUT NETTRACE_SRCDIR
[ -d "$NETTRACE_SHARED_CORPUS" ] ||
    echo "$NETTRACE_SHARED_CORPUS is absent (set NETTRACE_SHARED_CORPUS): the CLI comparisons run on corpus/ only"

nt_dotnet_step restore dotnet restore "$nt_dotnet_src/LibNetTrace.Tests/LibNetTrace.Tests.csproj" $nt_dotnet_flags || exit 1
dotnet test "$nt_dotnet_src/LibNetTrace.Tests/LibNetTrace.Tests.csproj" -c Release $nt_dotnet_flags \
    --logger "console;verbosity=normal" || exit 1

# The package as a user gets it: no NETTRACE_LIBRARY, the native library
# from the package's runtimes/linux-x64/native.
nt_dotnet_pack || exit 1
unset NETTRACE_LIBRARY
app="$NT_DOTNET_WORK/consumer"
rm -rf "$app"
mkdir -p "$app" && cd "$app" || exit 1
nt_dotnet_step new dotnet new console -n Consumer -o . --force || exit 1
cat > nuget.config <<CONFIG
<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <packageSources>
    <add key="libnettrace-local" value="$nt_dotnet_out/artifacts" />
  </packageSources>
</configuration>
CONFIG
# A copy of the global package cache would hide a stale LibNetTrace: the
# consumer restores it into a cache of its own, LibNetTrace removed first.
NUGET_PACKAGES="$NT_DOTNET_WORK/consumer-packages"
export NUGET_PACKAGES
rm -rf "$NUGET_PACKAGES/libnettrace"
nt_dotnet_step restore dotnet add package LibNetTrace --version "$nt_dotnet_version" || exit 1
# The fenced block after "<!-- example: NAME -->" in the package's README.
nt_dotnet_example() {
    awk -v marker="<!-- example: $1 -->" '
        $0 == marker { armed = 1; next }
        armed && /^```/ { if (inside) exit; inside = 1; next }
        inside { print }' "$nt_dotnet_src/README.md"
}
nt_dotnet_example dotnet-hot-methods > Program.cs
nt_dotnet_example dotnet-continuous > Continuous.cs
nt_dotnet_example dotnet-request > Request.cs
[ "$(wc -l < Program.cs)" -gt 10 ] && [ "$(wc -l < Continuous.cs)" -gt 10 ] && [ "$(wc -l < Request.cs)" -gt 10 ] ||
    { echo "FAIL: the examples are missing from $nt_dotnet_src/README.md"; exit 1; }
trace="$top_srcdir/corpus/call-tree.nettrace"
want=$("$NETTRACE_CLI" samples "$trace" | wc -l)

# Prints "samples N" and the top row; checks N against the tool's count.
nt_dotnet_consumer_check() {
    out=$("$@" "$trace") || { echo "FAIL: $* exited $?: $out"; return 1; }
    echo "$out"
    case "$out" in
    *"samples $want"*) ;;
    *) echo "FAIL: the consumer did not count the tool's $want samples"; return 1 ;;
    esac
}
nt_dotnet_step restore dotnet build -c Release $nt_dotnet_flags -v:q -o out || exit 1
[ -f out/runtimes/linux-x64/native/libnettrace.so ] || [ -f out/libnettrace.so ] ||
    { echo "FAIL: the package brought no native library into the consumer's output"; exit 1; }
nt_dotnet_consumer_check dotnet out/Consumer.dll || exit 1
echo "ok: LibNetTrace $nt_dotnet_version installed from a local folder source into a fresh console project"

nt_dotnet_step restore dotnet publish -c Release -r linux-x64 -p:PublishAot=true $nt_dotnet_flags -v:q -o aot ||
    { echo "FAIL: the NativeAOT publish failed"; exit 1; }
grep -i "warning IL" "$NT_DOTNET_WORK/step.log" && { echo "FAIL: trimming or AOT warnings in the package"; exit 1; }
nt_dotnet_consumer_check ./aot/Consumer || exit 1
echo "ok: the NativeAOT-published consumer ran"
