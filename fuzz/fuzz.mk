# libFuzzer harnesses (./configure CC=clang --enable-fuzzing), their plain
# replay builds (make check, any compiler), and the
# fuzz-seeds / fuzz-smoke / fuzz-coverage targets.  See fuzz/README.md.

FUZZ_HARNESSES = parser parser_chunked parser_limits parser_alloc trace ipc_reply roundtrip fields index heap profile gcdump convert parallel window
FUZZ_COMMON = fuzz/fuzz.h fuzz/peak_bound.h fuzz/fuzz_common.c
# The walk of a built trace, for the trace and window harnesses.
FUZZ_TRACE_CHECKS = fuzz/trace_checks.c fuzz/trace_checks.h
# The heap graph's invariants, for the heap and gcdump harnesses.
FUZZ_HEAP_CHECKS = fuzz/heap_checks.c fuzz/heap_checks.h
# The tool's commands without its main(), for fuzz_profile.
FUZZ_CLI = src/cli/cli.h src/cli/io.c src/cli/out_file.c src/cli/out_file.h src/cli/progress.c src/cli/progress.h src/cli/opts.c src/cli/opts.h \
	src/cli/time_opt.c src/cli/time_opt.h src/cli/select.c src/cli/select.h src/cli/trace_load.c src/cli/trace_load.h src/cli/stream_read.c src/cli/stream_read.h src/cli/io_window.c \
	src/cli/cmd_info.c src/cli/event_types.c src/cli/event_types.h src/cli/cmd_events.c src/cli/event_census.c src/cli/event_census.h src/cli/event_format.c \
	src/cli/event_format.h src/cli/event_lines.c src/cli/event_lines.h src/cli/event_stacks.c src/cli/event_stacks.h \
	src/cli/stack_texts.c src/cli/stack_texts.h src/cli/cmd_samples.c src/cli/cmd_profile.c src/cli/profile_cli.h \
	src/cli/cmd_gc.c src/cli/site.c src/cli/site.h src/cli/human.c src/cli/human.h

# ---- replay builds: every harness + replay_main.c, run by fuzz/replay.sh ----
check_PROGRAMS += fuzz/replay_parser fuzz/replay_parser_chunked fuzz/replay_parser_limits fuzz/replay_parser_alloc \
	fuzz/replay_trace fuzz/replay_ipc_reply fuzz/replay_roundtrip fuzz/replay_fields fuzz/replay_index fuzz/replay_heap \
	fuzz/replay_profile fuzz/replay_gcdump fuzz/replay_convert fuzz/replay_parallel fuzz/replay_window
TESTS += fuzz/replay.sh
FUZZ_REPLAY_LIBS = tests/libtestsupport.la libnettrace_core.la $(ZLIB_LIBS) $(PTHREAD_LIBS)

fuzz_replay_parser_SOURCES = fuzz/replay_main.c fuzz/fuzz_parser.c $(FUZZ_COMMON)
fuzz_replay_parser_CPPFLAGS = $(T_CPP)
fuzz_replay_parser_LDADD = $(FUZZ_REPLAY_LIBS)
fuzz_replay_parser_LDFLAGS = $(AM_LDFLAGS) -no-install

fuzz_replay_parser_chunked_SOURCES = fuzz/replay_main.c fuzz/fuzz_parser_chunked.c $(FUZZ_COMMON)
fuzz_replay_parser_chunked_CPPFLAGS = $(T_CPP)
fuzz_replay_parser_chunked_LDADD = $(FUZZ_REPLAY_LIBS)
fuzz_replay_parser_chunked_LDFLAGS = $(AM_LDFLAGS) -no-install

fuzz_replay_parser_limits_SOURCES = fuzz/replay_main.c fuzz/fuzz_parser_limits.c $(FUZZ_COMMON)
fuzz_replay_parser_limits_CPPFLAGS = $(T_CPP)
fuzz_replay_parser_limits_LDADD = $(FUZZ_REPLAY_LIBS)
fuzz_replay_parser_limits_LDFLAGS = $(AM_LDFLAGS) -no-install

fuzz_replay_parser_alloc_SOURCES = fuzz/replay_main.c fuzz/fuzz_parser_alloc.c $(FUZZ_COMMON)
fuzz_replay_parser_alloc_CPPFLAGS = $(T_CPP)
fuzz_replay_parser_alloc_LDADD = $(FUZZ_REPLAY_LIBS)
fuzz_replay_parser_alloc_LDFLAGS = $(AM_LDFLAGS) -no-install

fuzz_replay_index_SOURCES = fuzz/replay_main.c fuzz/fuzz_index.c $(FUZZ_COMMON)
fuzz_replay_index_CPPFLAGS = $(T_CPP)
fuzz_replay_index_LDADD = $(FUZZ_REPLAY_LIBS)
fuzz_replay_index_LDFLAGS = $(AM_LDFLAGS) -no-install

fuzz_replay_profile_SOURCES = fuzz/replay_main.c fuzz/fuzz_profile.c $(FUZZ_COMMON) $(FUZZ_CLI)
fuzz_replay_profile_CPPFLAGS = $(T_CPP)
fuzz_replay_profile_LDADD = $(FUZZ_REPLAY_LIBS)
fuzz_replay_profile_LDFLAGS = $(AM_LDFLAGS) -no-install

fuzz_replay_trace_SOURCES = fuzz/replay_main.c fuzz/fuzz_trace.c $(FUZZ_COMMON) $(FUZZ_TRACE_CHECKS)
fuzz_replay_trace_CPPFLAGS = $(T_CPP)
fuzz_replay_trace_LDADD = $(FUZZ_REPLAY_LIBS)
fuzz_replay_trace_LDFLAGS = $(AM_LDFLAGS) -no-install

fuzz_replay_window_SOURCES = fuzz/replay_main.c fuzz/fuzz_window.c $(FUZZ_COMMON) $(FUZZ_TRACE_CHECKS)
fuzz_replay_window_CPPFLAGS = $(T_CPP)
fuzz_replay_window_LDADD = $(FUZZ_REPLAY_LIBS)
fuzz_replay_window_LDFLAGS = $(AM_LDFLAGS) -no-install

fuzz_replay_ipc_reply_SOURCES = fuzz/replay_main.c fuzz/fuzz_ipc_reply.c $(FUZZ_COMMON)
fuzz_replay_ipc_reply_CPPFLAGS = $(T_CPP)
fuzz_replay_ipc_reply_LDADD = $(FUZZ_REPLAY_LIBS)
fuzz_replay_ipc_reply_LDFLAGS = $(AM_LDFLAGS) -no-install

fuzz_replay_convert_SOURCES = fuzz/replay_main.c fuzz/fuzz_convert.c $(FUZZ_COMMON)
fuzz_replay_convert_CPPFLAGS = $(T_CPP)
fuzz_replay_convert_LDADD = $(FUZZ_REPLAY_LIBS)
fuzz_replay_convert_LDFLAGS = $(AM_LDFLAGS) -no-install

fuzz_replay_parallel_SOURCES = fuzz/replay_main.c fuzz/fuzz_parallel.c $(FUZZ_COMMON)
fuzz_replay_parallel_CPPFLAGS = $(T_CPP)
fuzz_replay_parallel_LDADD = $(FUZZ_REPLAY_LIBS)
fuzz_replay_parallel_LDFLAGS = $(AM_LDFLAGS) -no-install

fuzz_replay_roundtrip_SOURCES = fuzz/replay_main.c fuzz/fuzz_roundtrip.c $(FUZZ_COMMON)
fuzz_replay_roundtrip_CPPFLAGS = $(T_CPP)
fuzz_replay_roundtrip_LDADD = $(FUZZ_REPLAY_LIBS)
fuzz_replay_roundtrip_LDFLAGS = $(AM_LDFLAGS) -no-install

fuzz_replay_fields_SOURCES = fuzz/replay_main.c fuzz/fuzz_fields.c $(FUZZ_COMMON)
fuzz_replay_fields_CPPFLAGS = $(T_CPP)
fuzz_replay_fields_LDADD = $(FUZZ_REPLAY_LIBS)
fuzz_replay_fields_LDFLAGS = $(AM_LDFLAGS) -no-install

fuzz_replay_heap_SOURCES = fuzz/replay_main.c fuzz/fuzz_heap.c $(FUZZ_COMMON) $(FUZZ_HEAP_CHECKS)
fuzz_replay_heap_CPPFLAGS = $(T_CPP)
fuzz_replay_heap_LDADD = $(FUZZ_REPLAY_LIBS)
fuzz_replay_heap_LDFLAGS = $(AM_LDFLAGS) -no-install

fuzz_replay_gcdump_SOURCES = fuzz/replay_main.c fuzz/fuzz_gcdump.c $(FUZZ_COMMON) $(FUZZ_HEAP_CHECKS)
fuzz_replay_gcdump_CPPFLAGS = $(T_CPP)
fuzz_replay_gcdump_LDADD = $(FUZZ_REPLAY_LIBS)
fuzz_replay_gcdump_LDFLAGS = $(AM_LDFLAGS) -no-install

# The seed corpus is written by tools/make_seeds ('make fuzz-seeds', tools/tools.mk).

# ---- libFuzzer targets ----
if FUZZING
FUZZ_SAN = -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1
FUZZ_CPP = $(T_CPP)
FUZZ_CC = -std=c11 $(WARN_CFLAGS) $(PTHREAD_CFLAGS) $(ZLIB_CFLAGS) $(FUZZ_SAN)
# The library sources are compiled into each target so they are instrumented.
FUZZ_LIB = $(libnettrace_core_la_SOURCES) tests/support/support.c tests/support/support.h $(FUZZ_COMMON)
FUZZ_LIBS = $(ZLIB_LIBS) $(PTHREAD_LIBS)
noinst_PROGRAMS += fuzz/fuzz_parser fuzz/fuzz_parser_chunked fuzz/fuzz_parser_limits fuzz/fuzz_parser_alloc \
	fuzz/fuzz_trace fuzz/fuzz_ipc_reply fuzz/fuzz_roundtrip fuzz/fuzz_fields fuzz/fuzz_index fuzz/fuzz_heap fuzz/fuzz_profile \
	fuzz/fuzz_gcdump fuzz/fuzz_convert fuzz/fuzz_parallel fuzz/fuzz_window

fuzz_fuzz_heap_SOURCES = fuzz/fuzz_heap.c $(FUZZ_LIB) $(FUZZ_HEAP_CHECKS)
fuzz_fuzz_heap_CPPFLAGS = $(FUZZ_CPP)
fuzz_fuzz_heap_CFLAGS = $(FUZZ_CC)
fuzz_fuzz_heap_LDFLAGS = $(FUZZ_SAN)
fuzz_fuzz_heap_LDADD = $(FUZZ_LIBS)

fuzz_fuzz_gcdump_SOURCES = fuzz/fuzz_gcdump.c $(FUZZ_LIB) $(FUZZ_HEAP_CHECKS)
fuzz_fuzz_gcdump_CPPFLAGS = $(FUZZ_CPP)
fuzz_fuzz_gcdump_CFLAGS = $(FUZZ_CC)
fuzz_fuzz_gcdump_LDFLAGS = $(FUZZ_SAN)
fuzz_fuzz_gcdump_LDADD = $(FUZZ_LIBS)

fuzz_fuzz_profile_SOURCES = fuzz/fuzz_profile.c $(FUZZ_LIB) $(FUZZ_CLI)
fuzz_fuzz_profile_CPPFLAGS = $(FUZZ_CPP)
fuzz_fuzz_profile_CFLAGS = $(FUZZ_CC)
fuzz_fuzz_profile_LDFLAGS = $(FUZZ_SAN)
fuzz_fuzz_profile_LDADD = $(FUZZ_LIBS)

fuzz_fuzz_fields_SOURCES = fuzz/fuzz_fields.c $(FUZZ_LIB)
fuzz_fuzz_fields_CPPFLAGS = $(FUZZ_CPP)
fuzz_fuzz_fields_CFLAGS = $(FUZZ_CC)
fuzz_fuzz_fields_LDFLAGS = $(FUZZ_SAN)
fuzz_fuzz_fields_LDADD = $(FUZZ_LIBS)

fuzz_fuzz_parser_SOURCES = fuzz/fuzz_parser.c $(FUZZ_LIB)
fuzz_fuzz_parser_CPPFLAGS = $(FUZZ_CPP)
fuzz_fuzz_parser_CFLAGS = $(FUZZ_CC)
fuzz_fuzz_parser_LDFLAGS = $(FUZZ_SAN)
fuzz_fuzz_parser_LDADD = $(FUZZ_LIBS)

fuzz_fuzz_parser_chunked_SOURCES = fuzz/fuzz_parser_chunked.c $(FUZZ_LIB)
fuzz_fuzz_parser_chunked_CPPFLAGS = $(FUZZ_CPP)
fuzz_fuzz_parser_chunked_CFLAGS = $(FUZZ_CC)
fuzz_fuzz_parser_chunked_LDFLAGS = $(FUZZ_SAN)
fuzz_fuzz_parser_chunked_LDADD = $(FUZZ_LIBS)

fuzz_fuzz_parser_limits_SOURCES = fuzz/fuzz_parser_limits.c $(FUZZ_LIB)
fuzz_fuzz_parser_limits_CPPFLAGS = $(FUZZ_CPP)
fuzz_fuzz_parser_limits_CFLAGS = $(FUZZ_CC)
fuzz_fuzz_parser_limits_LDFLAGS = $(FUZZ_SAN)
fuzz_fuzz_parser_limits_LDADD = $(FUZZ_LIBS)

fuzz_fuzz_parser_alloc_SOURCES = fuzz/fuzz_parser_alloc.c $(FUZZ_LIB)
fuzz_fuzz_parser_alloc_CPPFLAGS = $(FUZZ_CPP)
fuzz_fuzz_parser_alloc_CFLAGS = $(FUZZ_CC)
fuzz_fuzz_parser_alloc_LDFLAGS = $(FUZZ_SAN)
fuzz_fuzz_parser_alloc_LDADD = $(FUZZ_LIBS)

fuzz_fuzz_index_SOURCES = fuzz/fuzz_index.c $(FUZZ_LIB)
fuzz_fuzz_index_CPPFLAGS = $(FUZZ_CPP)
fuzz_fuzz_index_CFLAGS = $(FUZZ_CC)
fuzz_fuzz_index_LDFLAGS = $(FUZZ_SAN)
fuzz_fuzz_index_LDADD = $(FUZZ_LIBS)

fuzz_fuzz_trace_SOURCES = fuzz/fuzz_trace.c $(FUZZ_LIB) $(FUZZ_TRACE_CHECKS)
fuzz_fuzz_trace_CPPFLAGS = $(FUZZ_CPP)
fuzz_fuzz_trace_CFLAGS = $(FUZZ_CC)
fuzz_fuzz_trace_LDFLAGS = $(FUZZ_SAN)
fuzz_fuzz_trace_LDADD = $(FUZZ_LIBS)

fuzz_fuzz_window_SOURCES = fuzz/fuzz_window.c $(FUZZ_LIB) $(FUZZ_TRACE_CHECKS)
fuzz_fuzz_window_CPPFLAGS = $(FUZZ_CPP)
fuzz_fuzz_window_CFLAGS = $(FUZZ_CC)
fuzz_fuzz_window_LDFLAGS = $(FUZZ_SAN)
fuzz_fuzz_window_LDADD = $(FUZZ_LIBS)

fuzz_fuzz_ipc_reply_SOURCES = fuzz/fuzz_ipc_reply.c $(FUZZ_LIB)
fuzz_fuzz_ipc_reply_CPPFLAGS = $(FUZZ_CPP)
fuzz_fuzz_ipc_reply_CFLAGS = $(FUZZ_CC)
fuzz_fuzz_ipc_reply_LDFLAGS = $(FUZZ_SAN)
fuzz_fuzz_ipc_reply_LDADD = $(FUZZ_LIBS)

fuzz_fuzz_convert_SOURCES = fuzz/fuzz_convert.c $(FUZZ_LIB)
fuzz_fuzz_convert_CPPFLAGS = $(FUZZ_CPP)
fuzz_fuzz_convert_CFLAGS = $(FUZZ_CC)
fuzz_fuzz_convert_LDFLAGS = $(FUZZ_SAN)
fuzz_fuzz_convert_LDADD = $(FUZZ_LIBS)

fuzz_fuzz_parallel_SOURCES = fuzz/fuzz_parallel.c $(FUZZ_LIB)
fuzz_fuzz_parallel_CPPFLAGS = $(FUZZ_CPP)
fuzz_fuzz_parallel_CFLAGS = $(FUZZ_CC)
fuzz_fuzz_parallel_LDFLAGS = $(FUZZ_SAN)
fuzz_fuzz_parallel_LDADD = $(FUZZ_LIBS)

fuzz_fuzz_roundtrip_SOURCES = fuzz/fuzz_roundtrip.c $(FUZZ_LIB)
fuzz_fuzz_roundtrip_CPPFLAGS = $(FUZZ_CPP)
fuzz_fuzz_roundtrip_CFLAGS = $(FUZZ_CC)
fuzz_fuzz_roundtrip_LDFLAGS = $(FUZZ_SAN)
fuzz_fuzz_roundtrip_LDADD = $(FUZZ_LIBS)

fuzz-smoke: $(noinst_PROGRAMS)
	FUZZ_SECONDS=$${FUZZ_SECONDS:-60} $(SHELL) $(srcdir)/fuzz/run.sh $(FUZZ_HARNESSES)
else
fuzz-smoke:
	@echo "fuzz-smoke needs: ./configure CC=clang --enable-fuzzing" >&2; exit 1
endif

fuzz-coverage:
	CC_COV=clang top_srcdir=$(abs_top_srcdir) $(SHELL) $(srcdir)/fuzz/coverage.sh $(FUZZ_HARNESSES)

.PHONY: fuzz-seeds fuzz-smoke fuzz-coverage
EXTRA_DIST += fuzz/replay.sh fuzz/run.sh fuzz/coverage.sh fuzz/tally.sh fuzz/nettrace.dict fuzz/README.md corpus/fuzz
