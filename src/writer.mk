# writer component: library sources, tool commands and tests
libnettrace_core_la_SOURCES += \
	src/writer_internal.h \
	src/writer.c \
	src/writer_encode.c \
	src/writer_typed.c \
	src/blocks_v6.c src/blocks_v6.h
include_HEADERS += include/nettrace_writer.h
nettrace_SOURCES += src/cli/cmd_convert.c

if HAVE_CRITERION
check_PROGRAMS += tests/test_writer tests/test_v6
TESTS += tests/test_writer tests/test_v6
endif
tests_test_writer_SOURCES = tests/test_writer.c tests/test_writer_rec.c tests/test_writer_rec.h
tests_test_writer_CPPFLAGS = $(T_CPP)
tests_test_writer_CFLAGS = $(T_CC)
tests_test_writer_LDADD = $(T_LIBS)
tests_test_writer_LDFLAGS = $(T_LINK)

tests_test_v6_SOURCES = tests/test_v6.c tests/test_writer_rec.c tests/test_writer_rec.h
tests_test_v6_CPPFLAGS = $(T_CPP)
tests_test_v6_CFLAGS = $(T_CC)
tests_test_v6_LDADD = $(T_LIBS)
tests_test_v6_LDFLAGS = $(T_LINK)

# Small writer-made seed traces (fuzzing corpus, conversion tests):
# 'make seeds' regenerates corpus/seeds/.
noinst_PROGRAMS += tools/make_seeds
tools_make_seeds_SOURCES = tools/make_seeds.c
tools_make_seeds_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE
tools_make_seeds_LDADD = libnettrace_core.la

seeds: tools/make_seeds$(EXEEXT)
	$(MKDIR_P) $(srcdir)/corpus/seeds
	./tools/make_seeds$(EXEEXT) $(srcdir)/corpus/seeds
.PHONY: seeds

EXTRA_DIST += corpus/seeds

# nettrace convert round trips over the seeds (and the shared corpus when present)
TESTS += tests/test_v6_convert.sh tests/test_writer_seeds.sh
EXTRA_DIST += tests/test_v6_convert.sh tests/test_writer_seeds.sh
