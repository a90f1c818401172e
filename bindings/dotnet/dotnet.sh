# Sourced by the .NET package's make targets and tests (dotnet.mk): where the
# dotnet tool builds (the build tree, never the source tree), the package's
# version (include/nettrace.h's, as configure reads it), and nt_dotnet_pack.
. "$top_srcdir/bindings/env.sh"
nt_dotnet_src="$top_srcdir/bindings/dotnet"
nt_dotnet_out="$top_builddir/bindings/dotnet"
NT_DOTNET_WORK="$top_builddir/bindings/dotnet-work"
export NT_DOTNET_WORK
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export MSBUILDDISABLENODEREUSE=1 DOTNET_CLI_UI_LANGUAGE=en
nt_dotnet_version=$(sed -n 's/^#define NT_VERSION_STRING "\(.*\)"/\1/p' "$top_srcdir/include/nettrace.h")
# One build node, no compiler server left running: the machine is small and shared.
nt_dotnet_flags="-nodeReuse:false -p:UseSharedCompilation=false -maxcpucount:1"

# dotnet pack: the package with this tree's native library (bindings/.libs,
# built without sanitizers) into $nt_dotnet_out/artifacts.
nt_dotnet_pack() {
    mkdir -p "$nt_dotnet_out/artifacts" || return 1
    rm -f "$nt_dotnet_out/artifacts/LibNetTrace.$nt_dotnet_version.nupkg"
    dotnet pack "$nt_dotnet_src/LibNetTrace/LibNetTrace.csproj" -c Release $nt_dotnet_flags -v:q \
        -p:NetTraceNativeLibrary="$nt_bind_libdir/libnettrace.so" -p:NetTraceVersion="$nt_dotnet_version" \
        -o "$nt_dotnet_out/artifacts" || return 1
    echo "wrote $nt_dotnet_out/artifacts/LibNetTrace.$nt_dotnet_version.nupkg"
}
