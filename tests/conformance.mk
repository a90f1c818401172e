# Conformance with TraceEvent (tests/conformance/README.md): `make conformance`
# compares `nettrace info --json` and `nettrace samples` with what TraceEvent
# and its TraceLog read, trace by trace, over corpus/ and ../shared/corpus.
# The same script is a `make check` test that skips only when dotnet (or
# python3) is absent.  The C# program is built under tests/conformance-build
# in the build tree.
# tests/conformance_edges writes a small trace with the cases the corpus lacks
# (return addresses on method boundaries, reused code memory, ...).
check_PROGRAMS += tests/conformance_edges
tests_conformance_edges_SOURCES = tests/conformance/edges.c
tests_conformance_edges_CPPFLAGS = $(AM_CPPFLAGS)
tests_conformance_edges_LDADD = libnettrace_core.la
TESTS += tests/conformance.sh
EXTRA_DIST += tests/conformance.sh tests/conformance/README.md tests/conformance/compare.py tests/traceevent-shared/Parsers.cs \
	tests/conformance/Conformance.csproj tests/conformance/Program.cs \
	tests/conformance/Fields.cs tests/conformance/compare_fields.py \
	tests/conformance/Profiles.cs tests/conformance/compare_profiles.py

.PHONY: conformance
conformance: nettrace$(EXEEXT) tests/conformance_edges$(EXEEXT)
	@time_start=$$(date +%s); \
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' CONFORMANCE_REQUIRED=1 \
	  $(SHELL) '$(abs_top_srcdir)/tests/conformance.sh'; rc=$$?; \
	echo "conformance: $$(( $$(date +%s) - time_start )) s"; exit $$rc

clean-local: conformance-clean
conformance-clean:
	-rm -rf tests/conformance-build tests/conformance-build.log
.PHONY: conformance-clean
