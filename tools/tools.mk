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

EXTRA_DIST += corpus/seeds tools/compare-builds.sh
