# trace component: the aggregator (nt_trace), its exporters, the samples/top/
# stacks commands, their tests, the man pages and the aggregator benchmark.
include_HEADERS += include/nettrace_trace.h
libnettrace_core_la_SOURCES += \
	src/trace_internal.h \
	src/trace_tables.c \
	src/symbols.c \
	src/trace.c \
	src/trace_io.c \
	src/export_common.c \
	src/export_folded.c \
	src/export_names.c src/export_names.h \
	src/export_speedscope.c \
	src/export_gzip.c src/export_gzip.h \
	src/export_pprof.c
nettrace_SOURCES += src/cli/trace_load.c src/cli/trace_load.h src/cli/cmd_samples.c src/cli/cmd_top.c src/cli/cmd_stacks.c

if HAVE_CRITERION
check_PROGRAMS += tests/test_trace
TESTS += tests/test_trace
endif
tests_test_trace_SOURCES = tests/test_trace.c tests/test_trace_build.c tests/test_trace_build.h \
	tests/support/streams.c tests/support/streams.h
tests_test_trace_CPPFLAGS = $(T_CPP)
tests_test_trace_CFLAGS = $(T_CC)
tests_test_trace_LDADD = $(T_LIBS)
tests_test_trace_LDFLAGS = $(T_LINK)

if HAVE_CRITERION
check_PROGRAMS += tests/test_trace_corpus
TESTS += tests/test_trace_corpus
endif
tests_test_trace_corpus_SOURCES = tests/test_trace_corpus.c
tests_test_trace_corpus_CPPFLAGS = $(T_CPP)
tests_test_trace_corpus_CFLAGS = $(T_CC)
tests_test_trace_corpus_LDADD = $(T_LIBS)
tests_test_trace_corpus_LDFLAGS = $(T_LINK)

# The commands end to end on corpus/ traces (skips when they are absent).
TESTS += tests/trace_cli.sh
EXTRA_DIST += tests/trace_cli.sh tests/speedscope_check.py tests/data/profile.proto \
	tests/test_trace_build.h

# make bench-trace: the aggregator and the exporters against the parser alone.
# (built with the checks: bench.mk owns EXTRA_PROGRAMS, which must be set before +=)
bench_bench_trace_SOURCES = bench/bench_trace.c
bench_bench_trace_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE
bench_bench_trace_LDADD = libnettrace_core.la
.PHONY: bench-trace
bench-trace: bench/bench_trace$(EXEEXT)
	top_srcdir='$(abs_top_srcdir)' ./bench/bench_trace$(EXEEXT)

dist_man_MANS += doc/nettrace.1 doc/libnettrace.3
