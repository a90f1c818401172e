# Heap snapshots: nt_heap over generated streams (tests/support/heap_writer.c),
# checked against an independent dominator algorithm (tests/support/heap_ref.c).
HEAP_TEST_SUPPORT = tests/support/heap_writer.c tests/support/heap_writer.h tests/support/heap_ref.c tests/support/heap_ref.h
if HAVE_CRITERION
check_PROGRAMS += tests/test_heap
TESTS += tests/test_heap
endif
tests_test_heap_SOURCES = tests/test_heap.c $(HEAP_TEST_SUPPORT)
tests_test_heap_CPPFLAGS = $(T_CPP)
tests_test_heap_CFLAGS = $(T_CC)
tests_test_heap_LDADD = $(T_LIBS)
tests_test_heap_LDFLAGS = $(T_LINK)

if HAVE_CRITERION
check_PROGRAMS += tests/test_heap_corpus
TESTS += tests/test_heap_corpus
endif
tests_test_heap_corpus_SOURCES = tests/test_heap_corpus.c tests/support/heap_ref.c tests/support/heap_ref.h
tests_test_heap_corpus_CPPFLAGS = $(T_CPP)
tests_test_heap_corpus_CFLAGS = $(T_CC)
tests_test_heap_corpus_LDADD = $(T_LIBS)
tests_test_heap_corpus_LDFLAGS = $(T_LINK)
EXTRA_DIST += corpus/heap/shape.nettrace corpus/heap/shape-grown.nettrace \
	tests/workloads/HeapShape/HeapShape.csproj tests/workloads/HeapShape/Program.cs

# nettrace gc's summary on a written trace of many GCs (the heap-dump writer makes the GCs).
if HAVE_CRITERION
check_PROGRAMS += tests/test_cli_gc
TESTS += tests/test_cli_gc
endif
tests_test_cli_gc_SOURCES = tests/test_cli_gc.c tests/support/heap_writer.c tests/support/heap_writer.h
tests_test_cli_gc_CPPFLAGS = $(T_CPP)
tests_test_cli_gc_CFLAGS = $(T_CC)
tests_test_cli_gc_LDADD = $(T_LIBS)
tests_test_cli_gc_LDFLAGS = $(T_LINK)

# nettrace heap against dotnet-gcdump (skips without it; see the script).
TESTS += tests/heap_conformance.sh
EXTRA_DIST += tests/heap_conformance.sh tests/heap_conformance.py
heap-conformance: nettrace$(EXEEXT)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' HEAP_CONFORMANCE_REQUIRED=1 \
	  $(SHELL) '$(abs_top_srcdir)/tests/heap_conformance.sh'
heap-conformance-clean:
	-rm -rf tests/heap-conformance
clean-local: heap-conformance-clean
.PHONY: heap-conformance heap-conformance-clean

TESTS += tests/cli_heap.sh
EXTRA_DIST += tests/cli_heap.sh
# gcdump's buffering on a real runtime: Block asked, the runtime's answer said (skips without dotnet).
TESTS += tests/cli_gcdump_buffering.sh
EXTRA_DIST += tests/cli_gcdump_buffering.sh

# The .gcdump reader on damaged and hostile input (corpus/heap/*.gcdump and graphs the test writes).
CRITERION_TESTS += tests/test_gcdump
EXTRA_DIST += corpus/heap/shape.gcdump corpus/heap/shape-grown.gcdump
# nettrace heap on corpus/heap/*.gcdump against dotnet-gcdump report (skips without it).
TESTS += tests/gcdump_report.sh
EXTRA_DIST += tests/gcdump_report.sh
