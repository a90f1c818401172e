# Tests (tests/README says where a test goes and how to add one).
#
# A Criterion suite is one word: add tests/NAME to CRITERION_TESTS (its source
# is tests/NAME.c; a line tests_NAME_SOURCES = ... only when it has more).  It
# links the convenience library (internals included) and the test support
# (tests/support: streams, trace builders, the writer recorder, the session
# peer, the live target), and runs through tests/criterion_tap.sh, so each
# test case is one TAP result: a case that skips (the shared corpus or dotnet
# is absent) shows as SKIP in the summary, never inside a PASS.
noinst_LTLIBRARIES += tests/libtestsupport.la
tests_libtestsupport_la_SOURCES = tests/support/support.c tests/support/support.h tests/support/leakcheck.c \
	tests/support/ltest.h tests/support/streams.c tests/support/streams.h \
	tests/support/trace_build.c tests/support/trace_build.h tests/support/writer_rec.c tests/support/writer_rec.h \
	tests/support/session_peer.c tests/support/session_peer.h tests/support/live_target.c tests/support/live_target.h \
	tests/support/cli_run.c tests/support/cli_run.h
tests_libtestsupport_la_CFLAGS = $(AM_CFLAGS) $(CRITERION_CFLAGS)
tests_libtestsupport_la_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE

T_CPP = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/support -D_GNU_SOURCE
T_CC = $(AM_CFLAGS) $(CRITERION_CFLAGS)
T_LIBS = tests/libtestsupport.la libnettrace_core.la $(CRITERION_LIBS)
T_LINK = $(AM_LDFLAGS) -no-install

# What every program without flags of its own compiles and links with: the
# Criterion suites.  (The library, the tool, the tools and the benchmarks set
# their own; these reach them only through $(AM_CPPFLAGS) and add nothing they
# could use by accident but tests/support's include path.)
AM_CPPFLAGS += -I$(top_srcdir)/tests/support -D_GNU_SOURCE
AM_CFLAGS += $(CRITERION_CFLAGS)
LDADD = $(T_LIBS)
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
AM_LOG_DRIVER_FLAGS = --merge
LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/criterion_tap.sh
EXTRA_DIST += tests/criterion_tap.sh tests/README

CRITERION_TESTS = \
	tests/test_parser tests/test_event_runs tests/test_header_room tests/test_corpus tests/test_feed_fd \
	tests/test_time_ns tests/test_utf8 tests/test_hash_flood tests/test_lazy_names tests/test_v6_utf8 \
	tests/test_utf16 \
	tests/test_trace tests/test_trace_corpus tests/test_trace_limits tests/test_trace_cost tests/test_trace_count \
	tests/test_session tests/test_session_live tests/test_trace_window \
	tests/test_writer tests/test_v6 tests/test_writer_property tests/test_writer_tables tests/test_convert \
	tests/test_hostile tests/test_cli_output tests/test_cursor tests/test_map \
	tests/test_profile tests/test_profile_select tests/test_profile_limits \
	tests/test_index tests/test_flame_html tests/test_events_bounds tests/test_overflow tests/test_writer_clock \
	tests/test_abi tests/test_convert_api tests/test_file_read
CRITERION_TESTS += tests/test_window_loss tests/test_payload_sources tests/test_checksum
EXTRA_DIST += corpus/event-sources.nettrace tests/workloads/EventSources/EventSources.csproj \
	tests/workloads/EventSources/Program.cs
if HAVE_CRITERION
check_PROGRAMS += $(CRITERION_TESTS)
TESTS += $(CRITERION_TESTS)
endif

# Suites with sources or libraries beyond the defaults.
# test_utf16 compares the SSE2 helpers with the same code built without SSE2.
noinst_LTLIBRARIES += tests/libutf16portable.la
tests_libutf16portable_la_SOURCES = tests/utf16_portable.c tests/utf16_portable.h
tests_libutf16portable_la_CPPFLAGS = $(AM_CPPFLAGS) -U__SSE2__
tests_libutf16portable_la_CFLAGS = $(AM_CFLAGS)
tests_test_utf16_LDADD = tests/libutf16portable.la $(LDADD)
# The tool's output boundary (names, JSON, info's type table, full devices).
tests_test_cli_output_SOURCES = tests/test_cli_output.c src/cli/event_types.c src/cli/event_types.h



TESTS += tests/exported_symbols.sh tests/abi_structs.sh tests/cli_info.sh tests/internal_names.sh
EXTRA_DIST += tests/exported_symbols.sh tests/abi_structs.sh tests/cli_info.sh tests/internal_names.sh doc/abi-symbols.txt doc/abi.md
# The deprecated names warn (gcc and clang) and are used nowhere inside (doc/abi.md "Deprecation").
TESTS += tests/deprecated_names.sh
EXTRA_DIST += tests/deprecated_names.sh
# Rewrite the committed symbol list from the built library (after an intended ABI change, doc/abi.md).
abi-symbols: libnettrace.la
	{ sed -n '/^#/p' $(srcdir)/doc/abi-symbols.txt; \
	  nm -D --defined-only .libs/libnettrace.so | awk '$$2 ~ /^[A-Za-z]$$/ {print $$3}' | LC_ALL=C sort -u; } \
	  >$(srcdir)/doc/abi-symbols.txt.new && mv $(srcdir)/doc/abi-symbols.txt.new $(srcdir)/doc/abi-symbols.txt
.PHONY: abi-symbols
TESTS += tests/pprof_go.sh
EXTRA_DIST += tests/pprof_go.sh

# ---- trace and export ----
# The commands end to end on corpus/ traces (skips when they are absent).
TESTS += tests/trace_cli.sh
TESTS += tests/cli_profiles.sh
EXTRA_DIST += tests/cli_profiles.sh
EXTRA_DIST += tests/trace_cli.sh tests/support/cli_checks.sh tests/speedscope_check.py tests/data/profile.proto

# ---- session ----
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
# nettrace convert round trips over the seeds and corpus/ (and, a test of its own, the shared corpus)
TESTS += tests/test_v6_convert.sh tests/v6_convert_shared.sh tests/test_writer_seeds.sh
# nettrace slice: the window's samples and top, on corpus/ and (a test of its own) the shared corpus
TESTS += tests/slice_windows.sh tests/slice_shared.sh
EXTRA_DIST += tests/slice_windows.sh tests/slice_shared.sh

# No cycle among the library's units (symbol level), and the checker itself on made-up libraries.
TESTS += tools/check-cycles.sh tests/check_cycles.sh
EXTRA_DIST += tests/test_v6_convert.sh tests/v6_convert_shared.sh tests/test_writer_seeds.sh tests/check_cycles.sh
# No function in src/ over 120 lines, and the length checker itself on made-up files.
TESTS += tests/function_length.sh
EXTRA_DIST += tests/function_length.sh tools/function-lengths.py

# ---- the tool on a pseudo-terminal: progress, collect -- PROGRAM with Ctrl-C ----
TESTS += tests/cli_pty.sh
EXTRA_DIST += tests/cli_pty.sh tests/cli_pty.py
TESTS += tests/man_flags.sh tests/cli_window.sh tests/cli_window_shared.sh
EXTRA_DIST += tests/cli_window.sh tests/cli_window_shared.sh
EXTRA_DIST += tests/man_flags.sh
TESTS += tests/man_api.sh
EXTRA_DIST += tests/man_api.sh
# ---- event profiles (allocations, exceptions, contention, GC) ----
# The live event profiles against a real .NET process (skips without dotnet).
TESTS += tests/profile_live.sh
EXTRA_DIST += tests/profile_live.sh

# Hostile neighbours: impostor and planted endpoints, escaped peer strings, silent runtimes.
TESTS += tests/cli_hostile_peers.sh
EXTRA_DIST += tests/cli_hostile_peers.sh tests/support/fake_runtime.py

# No command destroys a user's file: outputs that are inputs, existing traces, failed runs.
TESTS += tests/cli_output_safety.sh
EXTRA_DIST += tests/cli_output_safety.sh
# The thread-sample profiles named for what they count, with their shares and measured rate.
TESTS += tests/cli_thread_time.sh
EXTRA_DIST += tests/cli_thread_time.sh
# Event profile sites outside the runtime's dispatch and waits, --inclusive, the alloc leaf.
TESTS += tests/cli_sites.sh
EXTRA_DIST += tests/cli_sites.sh
# The HTML flame graph in a real headless browser (skips without chromium); test_flame_html is above.
TESTS += tests/flame_html.sh
EXTRA_DIST += tests/flame_html.sh
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
# nettrace stack -p on a real .NET process (issue 25; SKIP without dotnet)
TESTS += tests/cli_stack.sh
EXTRA_DIST += tests/cli_stack.sh
TESTS += tests/readme_docs.sh
EXTRA_DIST += tests/readme_docs.sh
# (issue 21: test_events_bounds, test_overflow, test_profile_limits, test_writer_clock are in CRITERION_TESTS.)
# nettrace profiles, keyword names in --providers, collect's provider table.
TESTS += tests/cli_dotnet_like.sh
EXTRA_DIST += tests/cli_dotnet_like.sh

# The always-on soak (tests/window_soak.c): a generated stream through the window API, no file.  make check
# runs it at 10,000 windows (10^6 methods, 10^6 stack shapes); bench.mk runs it under cachegrind too.  Not a
# Criterion suite: tests/criterion_tap.sh reports its exit status as one TAP result.
check_PROGRAMS += tests/window_soak
TESTS += tests/window_soak
tests_window_soak_SOURCES = tests/window_soak.c
tests_window_soak_CPPFLAGS = $(AM_CPPFLAGS)
tests_window_soak_LDADD = libnettrace_core.la
tests_window_soak_LDFLAGS = $(T_LINK)

# The parallel parse against the sequential one (nettrace_parallel.h).
CRITERION_TESTS += tests/test_parallel
TESTS += tests/cli_parallel.sh tests/cli_parallel_shared.sh
EXTRA_DIST += tests/cli_parallel.sh tests/cli_parallel_shared.sh
