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
check_PROGRAMS += tests/test_parser tests/test_event_runs tests/test_header_room tests/test_corpus tests/test_feed_fd tests/test_time_ns tests/test_utf8 tests/test_hash_flood tests/test_lazy_names tests/test_v6_utf8 tests/test_utf16 tests/test_index
TESTS += tests/test_parser tests/test_event_runs tests/test_header_room tests/test_corpus tests/test_feed_fd tests/test_time_ns tests/test_utf8 tests/test_hash_flood tests/test_lazy_names tests/test_v6_utf8 tests/test_utf16 tests/test_index
endif

tests_test_parser_SOURCES = tests/test_parser.c tests/support/streams.c tests/support/streams.h
tests_test_parser_CPPFLAGS = $(T_CPP)
tests_test_parser_CFLAGS = $(T_CC)
tests_test_parser_LDADD = $(T_LIBS)
tests_test_parser_LDFLAGS = $(T_LINK)

tests_test_feed_fd_SOURCES = tests/test_feed_fd.c
tests_test_feed_fd_CPPFLAGS = $(T_CPP)
tests_test_feed_fd_CFLAGS = $(T_CC)
tests_test_feed_fd_LDADD = $(T_LIBS)
tests_test_feed_fd_LDFLAGS = $(T_LINK)

tests_test_event_runs_SOURCES = tests/test_event_runs.c tests/support/streams.c tests/support/streams.h
tests_test_event_runs_CPPFLAGS = $(T_CPP)
tests_test_event_runs_CFLAGS = $(T_CC)
tests_test_event_runs_LDADD = $(T_LIBS)
tests_test_event_runs_LDFLAGS = $(T_LINK)

tests_test_header_room_SOURCES = tests/test_header_room.c tests/support/streams.c tests/support/streams.h
tests_test_header_room_CPPFLAGS = $(T_CPP)
tests_test_header_room_CFLAGS = $(T_CC)
tests_test_header_room_LDADD = $(T_LIBS)
tests_test_header_room_LDFLAGS = $(T_LINK)

tests_test_time_ns_SOURCES = tests/test_time_ns.c tests/support/streams.c tests/support/streams.h
tests_test_time_ns_CPPFLAGS = $(T_CPP)
tests_test_time_ns_CFLAGS = $(T_CC)
tests_test_time_ns_LDADD = $(T_LIBS)
tests_test_time_ns_LDFLAGS = $(T_LINK)

tests_test_utf8_SOURCES = tests/test_utf8.c
tests_test_utf8_CPPFLAGS = $(T_CPP)
tests_test_utf8_CFLAGS = $(T_CC)
tests_test_utf8_LDADD = $(T_LIBS)
tests_test_utf8_LDFLAGS = $(T_LINK)

tests_test_hash_flood_SOURCES = tests/test_hash_flood.c tests/support/streams.c tests/support/streams.h
tests_test_hash_flood_CPPFLAGS = $(T_CPP)
tests_test_hash_flood_CFLAGS = $(T_CC)
tests_test_hash_flood_LDADD = $(T_LIBS)
tests_test_hash_flood_LDFLAGS = $(T_LINK)

tests_test_index_SOURCES = tests/test_index.c
tests_test_index_CPPFLAGS = $(T_CPP)
tests_test_index_CFLAGS = $(T_CC)
tests_test_index_LDADD = $(T_LIBS)
tests_test_index_LDFLAGS = $(T_LINK)

tests_test_lazy_names_SOURCES = tests/test_lazy_names.c
tests_test_lazy_names_CPPFLAGS = $(T_CPP)
tests_test_lazy_names_CFLAGS = $(T_CC)
tests_test_lazy_names_LDADD = $(T_LIBS)
tests_test_lazy_names_LDFLAGS = $(T_LINK)

# The UTF-16 helpers built a second time without SSE2, for test_utf16 to
# compare both paths on any host.
noinst_LTLIBRARIES += tests/libutf16portable.la
tests_libutf16portable_la_SOURCES = tests/utf16_portable.c tests/utf16_portable.h
tests_libutf16portable_la_CPPFLAGS = $(AM_CPPFLAGS) -U__SSE2__
tests_libutf16portable_la_CFLAGS = $(AM_CFLAGS)

tests_test_utf16_SOURCES = tests/test_utf16.c tests/support/streams.c tests/support/streams.h
tests_test_utf16_CPPFLAGS = $(T_CPP)
tests_test_utf16_CFLAGS = $(T_CC)
tests_test_utf16_LDADD = tests/libutf16portable.la $(T_LIBS)
tests_test_utf16_LDFLAGS = $(T_LINK)

tests_test_v6_utf8_SOURCES = tests/test_v6_utf8.c tests/support/streams.c tests/support/streams.h
tests_test_v6_utf8_CPPFLAGS = $(T_CPP)
tests_test_v6_utf8_CFLAGS = $(T_CC)
tests_test_v6_utf8_LDADD = $(T_LIBS)
tests_test_v6_utf8_LDFLAGS = $(T_LINK)

tests_test_corpus_SOURCES = tests/test_corpus.c
tests_test_corpus_CPPFLAGS = $(T_CPP)
tests_test_corpus_CFLAGS = $(T_CC)
tests_test_corpus_LDADD = $(T_LIBS)
tests_test_corpus_LDFLAGS = $(T_LINK)


TESTS += tests/exported_symbols.sh tests/abi_structs.sh tests/cli_info.sh
EXTRA_DIST += tests/exported_symbols.sh tests/abi_structs.sh tests/cli_info.sh doc/abi-symbols.txt doc/abi.md
# Rewrite the committed symbol list from the built library (after an intended ABI change, doc/abi.md).
abi-symbols: libnettrace.la
	{ sed -n '/^#/p' $(srcdir)/doc/abi-symbols.txt; \
	  nm -D --defined-only .libs/libnettrace.so | awk '$$2 ~ /^[A-Za-z]$$/ {print $$3}' | LC_ALL=C sort -u; } \
	  >$(srcdir)/doc/abi-symbols.txt.new && mv $(srcdir)/doc/abi-symbols.txt.new $(srcdir)/doc/abi-symbols.txt
.PHONY: abi-symbols
TESTS += tests/pprof_go.sh
EXTRA_DIST += tests/pprof_go.sh

# ---- trace and export ----
if HAVE_CRITERION
check_PROGRAMS += tests/test_trace tests/test_trace_corpus
TESTS += tests/test_trace tests/test_trace_corpus
endif
tests_test_trace_SOURCES = tests/test_trace.c tests/support/trace_build.c tests/support/trace_build.h \
	tests/support/streams.c tests/support/streams.h
tests_test_trace_CPPFLAGS = $(T_CPP)
tests_test_trace_CFLAGS = $(T_CC)
tests_test_trace_LDADD = $(T_LIBS)
tests_test_trace_LDFLAGS = $(T_LINK)

tests_test_trace_corpus_SOURCES = tests/test_trace_corpus.c
tests_test_trace_corpus_CPPFLAGS = $(T_CPP)
tests_test_trace_corpus_CFLAGS = $(T_CC)
tests_test_trace_corpus_LDADD = $(T_LIBS)
tests_test_trace_corpus_LDFLAGS = $(T_LINK)

# The commands end to end on corpus/ traces (skips when they are absent).
TESTS += tests/trace_cli.sh
TESTS += tests/cli_profiles.sh
EXTRA_DIST += tests/cli_profiles.sh
EXTRA_DIST += tests/trace_cli.sh tests/support/cli_checks.sh tests/speedscope_check.py tests/data/profile.proto

# ---- session ----
if HAVE_CRITERION
check_PROGRAMS += tests/test_session tests/test_session_live tests/test_trace_window
TESTS += tests/test_session tests/test_session_live tests/test_trace_window
endif
tests_test_session_SOURCES = tests/test_session.c tests/support/session_peer.c tests/support/session_peer.h
tests_test_session_CPPFLAGS = $(T_CPP)
tests_test_session_CFLAGS = $(T_CC)
tests_test_session_LDADD = $(T_LIBS)
tests_test_session_LDFLAGS = $(T_LINK)

# Hostile neighbours: impostor and planted endpoints, escaped peer strings, silent runtimes.
TESTS += tests/cli_hostile_peers.sh
EXTRA_DIST += tests/cli_hostile_peers.sh tests/support/fake_runtime.py

tests_test_session_live_SOURCES = tests/test_session_live.c tests/support/live_target.c tests/support/live_target.h
tests_test_session_live_CPPFLAGS = $(T_CPP)
tests_test_session_live_CFLAGS = $(T_CC)
tests_test_session_live_LDADD = $(T_LIBS)
tests_test_session_live_LDFLAGS = $(T_LINK)

tests_test_trace_window_SOURCES = tests/test_trace_window.c
tests_test_trace_window_CPPFLAGS = $(T_CPP)
tests_test_trace_window_CFLAGS = $(T_CC)
tests_test_trace_window_LDADD = $(T_LIBS)
tests_test_trace_window_LDFLAGS = $(T_LINK)

EXTRA_DIST += tests/workloads/LiveTarget/LiveTarget.csproj tests/workloads/LiveTarget/Program.cs \
	tests/workloads/StartupTarget/StartupTarget.csproj tests/workloads/StartupTarget/Program.cs
# The traces this project recorded for the event fields and the profiles, and their workloads.
EXTRA_DIST += corpus/event-fields.nettrace corpus/profile-alloc.nettrace corpus/profile-contention.nettrace \
	corpus/profile-exceptions.nettrace corpus/profile-gc.nettrace \
	tests/workloads/EventFields/EventFields.csproj tests/workloads/EventFields/Program.cs \
	tests/workloads/ProfileLoad/ProfileLoad.csproj tests/workloads/ProfileLoad/Program.cs
CLEANFILES += tests/*.nettrace
clean-local: clean-live-workload
clean-live-workload:
	rm -rf tests/workloads-build tests/profile-load-build
.PHONY: clean-live-workload

# ---- writer ----
if HAVE_CRITERION
check_PROGRAMS += tests/test_writer tests/test_v6 tests/test_writer_property tests/test_writer_tables tests/test_convert
TESTS += tests/test_writer tests/test_v6 tests/test_writer_property tests/test_writer_tables tests/test_convert
endif
tests_test_writer_SOURCES = tests/test_writer.c tests/support/writer_rec.c tests/support/writer_rec.h
tests_test_writer_CPPFLAGS = $(T_CPP)
tests_test_writer_CFLAGS = $(T_CC)
tests_test_writer_LDADD = $(T_LIBS)
tests_test_writer_LDFLAGS = $(T_LINK)

tests_test_v6_SOURCES = tests/test_v6.c tests/support/writer_rec.c tests/support/writer_rec.h
tests_test_v6_CPPFLAGS = $(T_CPP)
tests_test_v6_CFLAGS = $(T_CC)
tests_test_v6_LDADD = $(T_LIBS)
tests_test_v6_LDFLAGS = $(T_LINK)

tests_test_writer_property_SOURCES = tests/test_writer_property.c
tests_test_writer_property_CPPFLAGS = $(T_CPP)
tests_test_writer_property_CFLAGS = $(T_CC)
tests_test_writer_property_LDADD = $(T_LIBS)
tests_test_writer_property_LDFLAGS = $(T_LINK)

tests_test_writer_tables_SOURCES = tests/test_writer_tables.c
tests_test_writer_tables_CPPFLAGS = $(T_CPP)
tests_test_writer_tables_CFLAGS = $(T_CC)
tests_test_writer_tables_LDADD = $(T_LIBS)
tests_test_writer_tables_LDFLAGS = $(T_LINK)

tests_test_convert_SOURCES = tests/test_convert.c tests/support/streams.c tests/support/streams.h
tests_test_convert_CPPFLAGS = $(T_CPP)
tests_test_convert_CFLAGS = $(T_CC)
tests_test_convert_LDADD = $(T_LIBS)
tests_test_convert_LDFLAGS = $(T_LINK)

# nettrace convert round trips over the seeds (and the shared corpus when present)
TESTS += tests/test_v6_convert.sh tests/test_writer_seeds.sh

# No cycle among the library's units (symbol level), and the checker itself on made-up libraries.
TESTS += tools/check-cycles.sh tests/check_cycles.sh
EXTRA_DIST += tests/test_v6_convert.sh tests/test_writer_seeds.sh tests/check_cycles.sh

# ---- hostile input (crafted streams against every layer) ----
if HAVE_CRITERION
check_PROGRAMS += tests/test_hostile
TESTS += tests/test_hostile
endif
tests_test_hostile_SOURCES = tests/test_hostile.c
tests_test_hostile_CPPFLAGS = $(T_CPP)
tests_test_hostile_CFLAGS = $(T_CC)
tests_test_hostile_LDADD = $(T_LIBS)
tests_test_hostile_LDFLAGS = $(T_LINK)


# ---- the tool's output boundary (names, JSON, info's type table, full devices) ----
if HAVE_CRITERION
check_PROGRAMS += tests/test_cli_output
TESTS += tests/test_cli_output
endif
tests_test_cli_output_SOURCES = tests/test_cli_output.c src/cli/event_types.c src/cli/event_types.h \
	tests/support/trace_build.c tests/support/trace_build.h tests/support/streams.c tests/support/streams.h
tests_test_cli_output_CPPFLAGS = $(T_CPP)
tests_test_cli_output_CFLAGS = $(T_CC)
tests_test_cli_output_LDADD = $(T_LIBS)
tests_test_cli_output_LDFLAGS = $(T_LINK)
# ---- common ----
if HAVE_CRITERION
check_PROGRAMS += tests/test_cursor
TESTS += tests/test_cursor
tests_test_cursor_SOURCES = tests/test_cursor.c
tests_test_cursor_CPPFLAGS = $(T_CPP)
tests_test_cursor_CFLAGS = $(T_CC)
tests_test_cursor_LDADD = $(T_LIBS)
tests_test_cursor_LDFLAGS = $(T_LINK)

check_PROGRAMS += tests/test_map
TESTS += tests/test_map
endif
tests_test_map_SOURCES = tests/test_map.c
tests_test_map_CPPFLAGS = $(T_CPP)
tests_test_map_CFLAGS = $(T_CC)
tests_test_map_LDADD = $(T_LIBS)
tests_test_map_LDFLAGS = $(T_LINK)

if HAVE_CRITERION
check_PROGRAMS += tests/test_trace_limits
TESTS += tests/test_trace_limits
endif
tests_test_trace_limits_SOURCES = tests/test_trace_limits.c tests/support/trace_build.c tests/support/trace_build.h \
	tests/support/streams.c tests/support/streams.h
tests_test_trace_limits_CPPFLAGS = $(T_CPP)
tests_test_trace_limits_CFLAGS = $(T_CC)
tests_test_trace_limits_LDADD = $(T_LIBS)
tests_test_trace_limits_LDFLAGS = $(T_LINK)

if HAVE_CRITERION
check_PROGRAMS += tests/test_trace_cost
TESTS += tests/test_trace_cost
endif
tests_test_trace_cost_SOURCES = tests/test_trace_cost.c tests/support/trace_build.c tests/support/trace_build.h \
	tests/support/streams.c tests/support/streams.h
tests_test_trace_cost_CPPFLAGS = $(T_CPP)
tests_test_trace_cost_CFLAGS = $(T_CC)
tests_test_trace_cost_LDADD = $(T_LIBS)
tests_test_trace_cost_LDFLAGS = $(T_LINK)

if HAVE_CRITERION
check_PROGRAMS += tests/test_trace_count
TESTS += tests/test_trace_count
endif
tests_test_trace_count_SOURCES = tests/test_trace_count.c tests/support/trace_build.c tests/support/trace_build.h \
	tests/support/streams.c tests/support/streams.h
tests_test_trace_count_CPPFLAGS = $(T_CPP)
tests_test_trace_count_CFLAGS = $(T_CC)
tests_test_trace_count_LDADD = $(T_LIBS)
tests_test_trace_count_LDFLAGS = $(T_LINK)

# ---- the tool on a pseudo-terminal: progress, collect -- PROGRAM with Ctrl-C ----
TESTS += tests/cli_pty.sh
EXTRA_DIST += tests/cli_pty.sh tests/cli_pty.py
TESTS += tests/man_flags.sh
EXTRA_DIST += tests/man_flags.sh
TESTS += tests/man_api.sh
EXTRA_DIST += tests/man_api.sh
# ---- event profiles (allocations, exceptions, contention, GC) ----
if HAVE_CRITERION
check_PROGRAMS += tests/test_profile
TESTS += tests/test_profile
endif
tests_test_profile_SOURCES = tests/test_profile.c
tests_test_profile_CPPFLAGS = $(T_CPP)
tests_test_profile_CFLAGS = $(T_CC)
tests_test_profile_LDADD = $(T_LIBS)
tests_test_profile_LDFLAGS = $(T_LINK)
if HAVE_CRITERION
check_PROGRAMS += tests/test_profile_select
TESTS += tests/test_profile_select
endif
tests_test_profile_select_SOURCES = tests/test_profile_select.c
tests_test_profile_select_CPPFLAGS = $(T_CPP)
tests_test_profile_select_CFLAGS = $(T_CC)
tests_test_profile_select_LDADD = $(T_LIBS)
tests_test_profile_select_LDFLAGS = $(T_LINK)
# The live event profiles against a real .NET process (skips without dotnet).
TESTS += tests/profile_live.sh
EXTRA_DIST += tests/profile_live.sh
# No command destroys a user's file: outputs that are inputs, existing traces, failed runs.
TESTS += tests/cli_output_safety.sh
EXTRA_DIST += tests/cli_output_safety.sh
# The thread-sample profiles named for what they count, with their shares and measured rate.
TESTS += tests/cli_thread_time.sh
EXTRA_DIST += tests/cli_thread_time.sh
# Event profile sites outside the runtime's dispatch and waits, --inclusive, the alloc leaf.
TESTS += tests/cli_sites.sh
EXTRA_DIST += tests/cli_sites.sh
# The HTML flame graph in a real headless browser (skips without chromium).
TESTS += tests/flame_html.sh
EXTRA_DIST += tests/flame_html.sh
if HAVE_CRITERION
check_PROGRAMS += tests/test_flame_html
TESTS += tests/test_flame_html
endif
tests_test_flame_html_SOURCES = tests/test_flame_html.c
tests_test_flame_html_CPPFLAGS = $(T_CPP)
tests_test_flame_html_CFLAGS = $(T_CC)
tests_test_flame_html_LDADD = $(T_LIBS)
tests_test_flame_html_LDFLAGS = $(T_LINK)
CLEANFILES += tests/flame-html/*.png
# Never silent: empty selections say what the trace holds; names in any case.
TESTS += tests/cli_never_silent.sh
EXTRA_DIST += tests/cli_never_silent.sh
# The README's first section run as written on a real .NET program (skips without dotnet).
TESTS += tests/readme_first.sh
EXTRA_DIST += tests/readme_first.sh tests/workloads/ReadmeApp/ReadmeApp.csproj tests/workloads/ReadmeApp/Program.cs
# gc's time base, units, window and sizes; quoted labels; usage errors.
TESTS += tests/cli_readable.sh
EXTRA_DIST += tests/cli_readable.sh

# ---- nettrace events on hostile traces: bounded memory and output, escaped names (issue 21) ----
if HAVE_CRITERION
check_PROGRAMS += tests/test_events_bounds
TESTS += tests/test_events_bounds
endif
tests_test_events_bounds_SOURCES = tests/test_events_bounds.c tests/support/cli_run.c tests/support/cli_run.h
tests_test_events_bounds_CPPFLAGS = $(T_CPP)
tests_test_events_bounds_CFLAGS = $(T_CC)
tests_test_events_bounds_LDADD = $(T_LIBS)
tests_test_events_bounds_LDFLAGS = $(T_LINK)

# ---- signed overflow on hostile numbers: GC timeline, profiles, time bounds, formatters (issue 21) ----
if HAVE_CRITERION
check_PROGRAMS += tests/test_overflow
TESTS += tests/test_overflow
endif
tests_test_overflow_SOURCES = tests/test_overflow.c tests/support/cli_run.c tests/support/cli_run.h
tests_test_overflow_CPPFLAGS = $(T_CPP)
tests_test_overflow_CFLAGS = $(T_CC)
tests_test_overflow_LDADD = $(T_LIBS)
tests_test_overflow_LDFLAGS = $(T_LINK)

# ---- an event profile's GCs, labels and threads under named limits (issue 21) ----
if HAVE_CRITERION
check_PROGRAMS += tests/test_profile_limits
TESTS += tests/test_profile_limits
endif
tests_test_profile_limits_SOURCES = tests/test_profile_limits.c
tests_test_profile_limits_CPPFLAGS = $(T_CPP)
tests_test_profile_limits_CFLAGS = $(T_CC)
tests_test_profile_limits_LDADD = $(T_LIBS)
tests_test_profile_limits_LDFLAGS = $(T_LINK)

# ---- the writer's header clock as readers take it; convert refuses what they cannot (issue 21) ----
if HAVE_CRITERION
check_PROGRAMS += tests/test_writer_clock
TESTS += tests/test_writer_clock
endif
tests_test_writer_clock_SOURCES = tests/test_writer_clock.c tests/support/cli_run.c tests/support/cli_run.h
tests_test_writer_clock_CPPFLAGS = $(T_CPP)
tests_test_writer_clock_CFLAGS = $(T_CC)
tests_test_writer_clock_LDADD = $(T_LIBS)
tests_test_writer_clock_LDFLAGS = $(T_LINK)

# ---- the ABI: how structs grow (doc/abi.md) ----
if HAVE_CRITERION
check_PROGRAMS += tests/test_abi
TESTS += tests/test_abi
endif
tests_test_abi_SOURCES = tests/test_abi.c
tests_test_abi_CPPFLAGS = $(T_CPP)
tests_test_abi_CFLAGS = $(T_CC)
tests_test_abi_LDADD = $(T_LIBS)
tests_test_abi_LDFLAGS = $(T_LINK)
# nettrace profiles, keyword names in --providers, collect's provider table.
TESTS += tests/cli_dotnet_like.sh
EXTRA_DIST += tests/cli_dotnet_like.sh

# The always-on soak (tests/window_soak.c): a generated stream through the window API, no file.  make check
# runs it at 10,000 windows (10^6 methods, 10^6 stack shapes); bench.mk runs it under cachegrind too.
check_PROGRAMS += tests/window_soak
TESTS += tests/window_soak
tests_window_soak_SOURCES = tests/window_soak.c
tests_window_soak_CPPFLAGS = $(AM_CPPFLAGS)
tests_window_soak_LDADD = libnettrace_core.la
tests_window_soak_LDFLAGS = $(T_LINK)
