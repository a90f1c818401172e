# Go and Python bindings (bindings/go, bindings/python): their tests in
# make check, the Go reader's speed in make bench.
#
# Both load the library as a shared object into a process that is not built
# with sanitizers (the go tool's test binary, python3), where an
# AddressSanitizer-instrumented library cannot run.  So the bindings get a
# library of their own, built from the same sources without sanitizer flags:
# bindings/.libs/libnettrace.so, exporting the same nt_* symbols as the
# installed one.  It is built only for make check and make bench.
check_LTLIBRARIES = bindings/libnettrace.la
bindings_libnettrace_la_SOURCES = $(libnettrace_core_la_SOURCES)
bindings_libnettrace_la_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE
bindings_libnettrace_la_CFLAGS = -std=c11 $(WARN_CFLAGS) $(PTHREAD_CFLAGS) $(ZLIB_CFLAGS) -fvisibility=hidden
bindings_libnettrace_la_LDFLAGS = -rpath '$(libdir)' -version-info $(NT_LT_VERSION) \
	-export-symbols-regex '^nt_' -no-undefined
bindings_libnettrace_la_LIBADD = $(PTHREAD_LIBS) $(ZLIB_LIBS)

# The tests attach to the LiveTarget workload the session tests use; this
# helper builds it (or says why it cannot) and prints its path.
check_PROGRAMS += bindings/live_prepare
bindings_live_prepare_SOURCES = bindings/live_prepare.c tests/support/live_target.c tests/support/live_target.h
bindings_live_prepare_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support -D_GNU_SOURCE
bindings_live_prepare_LDADD = libnettrace_core.la

# The C layout of the structures the Python module mirrors with ctypes.
check_PROGRAMS += bindings/python/abi_layout
bindings_python_abi_layout_SOURCES = bindings/python/abi_layout.c

TESTS += bindings/go/go_test.sh bindings/python/python_test.sh bindings/python/install_test.sh
EXTRA_DIST += bindings/go bindings/python bindings/env.sh bindings/readme_example.sh

# make python-wheel: a wheel of the Python module with the library bundled
# (bindings/python/build_backend.py), which then needs no installed
# libnettrace.  The bundled copy is the bindings' library (no sanitizers).
python-wheel: bindings/libnettrace.la
	NETTRACE_BUNDLE_LIBRARY='$(abs_top_builddir)/bindings/.libs/libnettrace.so' \
		$${PYTHON:-python3} -m pip wheel --no-deps --no-index --no-cache-dir -w '$(abs_top_builddir)/dist-python' \
		'$(abs_top_srcdir)/bindings/python'
	@ls '$(abs_top_builddir)'/dist-python/nettrace-*.whl
.PHONY: python-wheel

# Go's build cache and module cache live in the build tree (a root CI user
# has no writable home cache), removed by make clean.
clean-local: bindings-clean-local
bindings-clean-local:
	-chmod -R u+w bindings/go-work 2>/dev/null; rm -rf bindings/go-work bindings/python-work bindings/pkgconfig dist-python
.PHONY: bindings-clean-local

# make bench (and make bench-go): the Go package's Parse on the corpus
# traces, against pyroscope-io/dotnetdiag when DOTNETDIAG_SRC names a
# checkout of it outside this tree (bench/README.md).
bench: bench-go
bench-go: bindings/libnettrace.la
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' BENCH_WORK='$(BENCH_WORK)' \
		$(SHELL) '$(abs_top_srcdir)/bench/go/bench_go.sh'
.PHONY: bench-go
EXTRA_DIST += bench/go/bench_go.sh bench/go/main.go bench/go/dotnetdiag.go

# make bench (and make bench-python): the Python module's cost per sample.
bench: bench-python
bench-python: bindings/libnettrace.la
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) '$(abs_top_srcdir)/bench/python/iter_bench.sh'
.PHONY: bench-python
EXTRA_DIST += bench/python/iter_bench.sh bench/python/iter_bench.py
