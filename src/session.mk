# session component: library sources, tool commands and tests
libnettrace_core_la_SOURCES += \
	src/ipc.c src/ipc.h \
	src/endpoint.c \
	src/session.c src/session_internal.h src/session_stream.c \
	src/live_top.c
include_HEADERS += include/nettrace_session.h
nettrace_SOURCES += src/cli/cmd_collect.c src/cli/cmd_ps.c src/cli/cmd_top_live.c src/cli/session_opts.c src/cli/session_opts.h \
	src/cli/profile_presets.c src/cli/profile_presets.h
if HAVE_CRITERION
check_PROGRAMS += tests/test_session
TESTS += tests/test_session
endif
tests_test_session_SOURCES = tests/test_session.c tests/session_peer.c tests/session_peer.h
tests_test_session_CPPFLAGS = $(T_CPP)
tests_test_session_CFLAGS = $(T_CC)
tests_test_session_LDADD = $(T_LIBS)
tests_test_session_LDFLAGS = $(T_LINK)
if HAVE_CRITERION
check_PROGRAMS += tests/test_session_live
TESTS += tests/test_session_live
endif
tests_test_session_live_SOURCES = tests/test_session_live.c tests/live_target.c tests/live_target.h
tests_test_session_live_CPPFLAGS = $(T_CPP)
tests_test_session_live_CFLAGS = $(T_CC)
tests_test_session_live_LDADD = $(T_LIBS)
tests_test_session_live_LDFLAGS = $(T_LINK)
EXTRA_DIST += tests/workloads/LiveTarget/LiveTarget.csproj tests/workloads/LiveTarget/Program.cs
CLEANFILES += tests/*.nettrace
clean-local: clean-live-workload
clean-live-workload:
	rm -rf tests/workloads-build
.PHONY: clean-live-workload
if HAVE_CRITERION
check_PROGRAMS += tests/test_session_top
TESTS += tests/test_session_top
endif
tests_test_session_top_SOURCES = tests/test_session_top.c
tests_test_session_top_CPPFLAGS = $(T_CPP)
tests_test_session_top_CFLAGS = $(T_CC)
tests_test_session_top_LDADD = $(T_LIBS)
tests_test_session_top_LDFLAGS = $(T_LINK)
