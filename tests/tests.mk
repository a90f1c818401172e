# Criterion suites.  Every test program links the convenience library (so
# internals can be tested) and the shared test support.
noinst_LTLIBRARIES += tests/libtestsupport.la
tests_libtestsupport_la_SOURCES = tests/support/support.c tests/support/support.h tests/support/leakcheck.c tests/support/ltest.h
tests_libtestsupport_la_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_libtestsupport_la_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE

T_CPP = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support -D_GNU_SOURCE
T_CC = $(AM_CFLAGS) $(CRITERION_CFLAGS)
T_LIBS = tests/libtestsupport.la libnettrace_core.la $(CRITERION_LIBS)
T_LINK = $(AM_LDFLAGS) -no-install

if HAVE_CRITERION
check_PROGRAMS += tests/test_parser tests/test_corpus
TESTS += tests/test_parser tests/test_corpus
endif

tests_test_parser_SOURCES = tests/test_parser.c tests/support/streams.c tests/support/streams.h
tests_test_parser_CPPFLAGS = $(T_CPP)
tests_test_parser_CFLAGS = $(T_CC)
tests_test_parser_LDADD = $(T_LIBS)
tests_test_parser_LDFLAGS = $(T_LINK)

tests_test_corpus_SOURCES = tests/test_corpus.c
tests_test_corpus_CPPFLAGS = $(T_CPP)
tests_test_corpus_CFLAGS = $(T_CC)
tests_test_corpus_LDADD = $(T_LIBS)
tests_test_corpus_LDFLAGS = $(T_LINK)


TESTS += tests/exported_symbols.sh tests/cli_info.sh
EXTRA_DIST += tests/exported_symbols.sh tests/cli_info.sh
TESTS += tests/pprof_go.sh
EXTRA_DIST += tests/pprof_go.sh
