# tools/make_seeds: the one generator of the project's made-up traces (see
# tools/seeds/seeds.h).  'make seeds' regenerates corpus/seeds/ (writer-made
# traces for the conversion tests), 'make fuzz-seeds' the fuzzers' corpora.
noinst_PROGRAMS += tools/make_seeds
tools_make_seeds_SOURCES = tools/seeds/seeds.h tools/seeds/main.c tools/seeds/writer_seeds.c \
	tools/seeds/fuzz_out.c tools/seeds/fuzz_streams.c tools/seeds/fuzz_writer.c \
	tests/support/streams.c tests/support/streams.h \
	tools/seeds/heap_seeds.c tests/support/heap_writer.c tests/support/heap_writer.h
tools_make_seeds_CPPFLAGS = $(T_CPP)
tools_make_seeds_LDADD = tests/libtestsupport.la libnettrace_core.la $(ZLIB_LIBS) $(PTHREAD_LIBS)

seeds: tools/make_seeds$(EXEEXT)
	$(MKDIR_P) $(srcdir)/corpus/seeds
	./tools/make_seeds$(EXEEXT) writer $(srcdir)/corpus/seeds
fuzz-seeds: tools/make_seeds$(EXEEXT)
	$(MKDIR_P) $(srcdir)/corpus/fuzz/parser $(srcdir)/corpus/fuzz/parser_limits $(srcdir)/corpus/fuzz/ipc_reply
	./tools/make_seeds$(EXEEXT) fuzz $(srcdir)/corpus/fuzz/parser $(srcdir)/corpus/fuzz/parser_limits \
		$(srcdir)/corpus/fuzz/ipc_reply $(srcdir)/corpus
	$(MKDIR_P) $(srcdir)/corpus/fuzz/heap
	./tools/make_seeds$(EXEEXT) heap $(srcdir)/corpus/fuzz/heap
.PHONY: seeds fuzz-seeds

EXTRA_DIST += corpus/seeds tools/compare-builds.sh tools/check-cycles.sh

# No cycle among the library's units (symbol level); also run by make check.
check-cycles: libnettrace_core.la
	top_builddir=$(top_builddir) $(SHELL) $(srcdir)/tools/check-cycles.sh
.PHONY: check-cycles
