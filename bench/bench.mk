# make bench: throughput and memory, as ratios against a baseline measured in
# the same run (see README "Performance"), then libnettrace against TraceEvent
# on large traces recorded on this machine (bench/README.md).
EXTRA_PROGRAMS = bench/bench_parse bench/bench_trace bench/bench_run bench/bench_ours bench/live_window
bench_live_window_SOURCES = bench/live_window.c
bench_live_window_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE
bench_live_window_LDADD = libnettrace_core.la $(PTHREAD_LIBS)
bench_bench_parse_SOURCES = bench/bench_parse.c bench/touch_callbacks.c bench/touch_callbacks.h tests/support/support.c tests/support/streams.c
bench_bench_parse_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support -D_GNU_SOURCE
bench_bench_parse_LDADD = libnettrace_core.la
bench_bench_run_SOURCES = bench/bench_run.c
bench_bench_run_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE
bench_bench_ours_SOURCES = bench/bench_ours.c bench/touch_callbacks.c bench/touch_callbacks.h
bench_bench_ours_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE
bench_bench_ours_LDADD = libnettrace_core.la
CLEANFILES += $(EXTRA_PROGRAMS)
EXTRA_DIST += bench/live_soak.sh bench/live_soak/ChurnService/ChurnService.csproj bench/live_soak/ChurnService/Program.cs \
	bench/live_soak/TraceLogReader/TraceLogReader.csproj bench/live_soak/TraceLogReader/Program.cs
EXTRA_DIST += bench/window.sh
EXTRA_DIST += bench/README.md bench/traceevent.sh bench/record-large.sh bench/instructions.sh \
	bench/traceevent/BenchTraceEvent.csproj bench/traceevent/Program.cs \
	tests/workloads/BenchLoad/BenchLoad.csproj tests/workloads/BenchLoad/Program.cs

# Generated on demand: large traces, .NET build outputs, the pinned
# dotnet-trace.  Never part of the source tree or the distribution.
BENCH_WORK = $(abs_top_builddir)/bench/work

# All programs are built before anything is measured (make -j must not
# compile while a benchmark runs).
BENCH_TE_CMD = BENCH_WORK='$(BENCH_WORK)' NETTRACE='$(abs_top_builddir)/nettrace$(EXEEXT)' \
	BENCH_RUN='$(abs_top_builddir)/bench/bench_run$(EXEEXT)' \
	BENCH_OURS='$(abs_top_builddir)/bench/bench_ours$(EXEEXT)' \
	$(SHELL) '$(abs_top_srcdir)/bench/traceevent.sh'
BENCH_TE_DEPS = bench/bench_run$(EXEEXT) bench/bench_ours$(EXEEXT) nettrace$(EXEEXT)

.PHONY: bench bench-traceevent
bench: bench/bench_parse$(EXEEXT) bench/bench_trace$(EXEEXT) $(BENCH_TE_DEPS) tests/window_soak$(EXEEXT) bench/live_window$(EXEEXT)
	BENCH_WORK='$(BENCH_WORK)' top_srcdir='$(abs_top_srcdir)' ./bench/bench_parse$(EXEEXT)
	BENCH_WORK='$(BENCH_WORK)' $(SHELL) '$(abs_top_srcdir)/bench/instructions.sh' ./bench/bench_ours$(EXEEXT)
	top_srcdir='$(abs_top_srcdir)' ./bench/bench_trace$(EXEEXT)
	$(BENCH_TE_CMD)
	BENCH_WORK='$(BENCH_WORK)' NETTRACE='$(abs_top_builddir)/nettrace$(EXEEXT)' bash '$(abs_top_srcdir)/bench/window.sh'
	$(BENCH_LIVE_SOAK_CMD)
	$(BENCH_HEAP_CMD)

bench-traceevent: $(BENCH_TE_DEPS)
	$(BENCH_TE_CMD)

# The always-on soaks: the generated one (tests/window_soak, 10,000 windows;
# make check runs it too) and the live one against a churning .NET service,
# LIVE_SOAK_MINUTES long (default 10), beside TraceEvent's real-time TraceLog.
BENCH_LIVE_SOAK_CMD = ./tests/window_soak$(EXEEXT) 10000 && \
	NETTRACE='$(abs_top_builddir)/nettrace$(EXEEXT)' LIVE_WINDOW='$(abs_top_builddir)/bench/live_window$(EXEEXT)' \
	BENCH_WORK='$(BENCH_WORK)' \
	$(SHELL) '$(abs_top_srcdir)/bench/live_soak.sh'; rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 77 ]
.PHONY: bench-live-soak
bench-live-soak: nettrace$(EXEEXT) tests/window_soak$(EXEEXT) bench/live_window$(EXEEXT)
	$(BENCH_LIVE_SOAK_CMD)

# make clean drops the .NET build outputs; the recorded traces (minutes to
# record) go only with make distclean.
clean-local: bench-clean-local
bench-clean-local:
	-rm -rf '$(BENCH_WORK)/dotnet' '$(BENCH_WORK)/live_soak' '$(BENCH_WORK)/tools' '$(BENCH_WORK)/out'
distclean-local: bench-distclean-local
bench-distclean-local:
	-rm -rf '$(BENCH_WORK)'
.PHONY: bench-clean-local bench-distclean-local

# make bench-trace: the aggregator and the exporters against the parser alone.
bench_bench_trace_SOURCES = bench/bench_trace.c
bench_bench_trace_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE
bench_bench_trace_LDADD = libnettrace_core.la
.PHONY: bench-trace
bench-trace: bench/bench_trace$(EXEEXT)
	top_srcdir='$(abs_top_srcdir)' ./bench/bench_trace$(EXEEXT)

# make bench-heap: nettrace heap on a made-up 5M-object snapshot against
# dotnet-gcdump convert + report (bench/heap.sh).
EXTRA_PROGRAMS += bench/heap_snapshot
bench_heap_snapshot_SOURCES = bench/heap_snapshot.c tests/support/heap_writer.c tests/support/heap_writer.h
bench_heap_snapshot_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support -D_GNU_SOURCE
bench_heap_snapshot_LDADD = libnettrace_core.la
EXTRA_PROGRAMS += bench/heap_phases
bench_heap_phases_SOURCES = bench/heap_phases.c
bench_heap_phases_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE
bench_heap_phases_LDADD = libnettrace_core.la
EXTRA_DIST += bench/heap.sh
BENCH_HEAP_DEPS = bench/heap_snapshot$(EXEEXT) bench/heap_phases$(EXEEXT) bench/bench_run$(EXEEXT) nettrace$(EXEEXT)
BENCH_HEAP_CMD = BENCH_WORK='$(BENCH_WORK)' NETTRACE='$(abs_top_builddir)/nettrace$(EXEEXT)' \
	BENCH_RUN='$(abs_top_builddir)/bench/bench_run$(EXEEXT)' \
	HEAP_SNAPSHOT='$(abs_top_builddir)/bench/heap_snapshot$(EXEEXT)' \
	HEAP_PHASES='$(abs_top_builddir)/bench/heap_phases$(EXEEXT)' \
	$(SHELL) '$(abs_top_srcdir)/bench/heap.sh'
.PHONY: bench-heap
bench-heap: $(BENCH_HEAP_DEPS)
	$(BENCH_HEAP_CMD)
# make bench ends with it (its programs built before anything is measured).
bench: $(BENCH_HEAP_DEPS)

# make bench-parallel: top and stacks -f pprof on 1, 2, ... threads (bench/parallel.sh) on the
# recorded traces bench-traceevent uses (BENCH_SIZES; recorded first when absent).
EXTRA_DIST += bench/parallel.sh
BENCH_PARALLEL_CMD = NETTRACE='$(abs_top_builddir)/nettrace$(EXEEXT)' BENCH_RUN='$(abs_top_builddir)/bench/bench_run$(EXEEXT)' \
	BENCH_WORK='$(BENCH_WORK)' $(SHELL) '$(abs_top_srcdir)/bench/parallel.sh' \
	$$(for mb in $${BENCH_SIZES-100 1024}; do f='$(BENCH_WORK)'/bench-$${mb}mb.nettrace; \
	   [ -f "$$f" ] || BENCH_WORK='$(BENCH_WORK)' NETTRACE='$(abs_top_builddir)/nettrace$(EXEEXT)' \
	     '$(abs_top_srcdir)/bench/record-large.sh' "$$mb" "$$f" >&2; echo "$$f"; done)
.PHONY: bench-parallel
bench-parallel: bench/bench_run$(EXEEXT) nettrace$(EXEEXT)
	$(BENCH_PARALLEL_CMD)
bench: bench-parallel
