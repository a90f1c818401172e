# The .NET package (bindings/dotnet): its tests in make check (skipped
# without dotnet), make nuget, and the benchmark against TraceEvent.
# Everything dotnet builds goes to the build tree's bindings/dotnet-work;
# the package to bindings/dotnet/artifacts/LibNetTrace.<version>.nupkg.
TESTS += bindings/dotnet/dotnet_test.sh
EXTRA_DIST += bindings/dotnet/README.md bindings/dotnet/Directory.Build.props bindings/dotnet/dotnet.sh \
	bindings/dotnet/dotnet_test.sh bindings/dotnet/LibNetTrace bindings/dotnet/LibNetTrace.Tests

nuget: bindings/libnettrace.la
	@top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)'; export top_srcdir top_builddir; \
		. '$(abs_top_srcdir)/bindings/dotnet/dotnet.sh' && nt_dotnet_pack
.PHONY: nuget

clean-local: dotnet-clean-local
dotnet-clean-local:
	-rm -rf bindings/dotnet-work bindings/dotnet/artifacts
.PHONY: dotnet-clean-local

# make bench-dotnet (in make bench): the package against TraceEvent 4.0.0
# (bench/dotnet/bench_dotnet.sh; BENCH_DOTNET_SECONDS, BENCH_DOTNET_RUNS).
bench: bench-dotnet
bench-dotnet: bindings/libnettrace.la
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' BENCH_WORK='$(BENCH_WORK)' \
		$(SHELL) '$(abs_top_srcdir)/bench/dotnet/bench_dotnet.sh'
.PHONY: bench-dotnet
EXTRA_DIST += bench/dotnet/bench_dotnet.sh bench/dotnet/BenchDotnet.csproj bench/dotnet/Program.cs bench/dotnet/Directory.Build.props
