# make bench: throughput and memory, as ratios against a baseline measured in
# the same run (see README "Performance").
EXTRA_PROGRAMS = bench/bench_parse bench/bench_trace
bench_bench_parse_SOURCES = bench/bench_parse.c tests/support/support.c tests/support/streams.c
bench_bench_parse_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support -D_GNU_SOURCE
bench_bench_parse_LDADD = libnettrace_core.la
CLEANFILES += $(EXTRA_PROGRAMS)

.PHONY: bench
bench: bench/bench_parse$(EXEEXT) bench/bench_trace$(EXEEXT)
	top_srcdir='$(abs_top_srcdir)' ./bench/bench_parse$(EXEEXT)
	top_srcdir='$(abs_top_srcdir)' ./bench/bench_trace$(EXEEXT)
