# Payload field decoding: the decoder, the runtime event table and its generator.
if HAVE_CRITERION
check_PROGRAMS += tests/test_fields
TESTS += tests/test_fields
endif
tests_test_fields_SOURCES = tests/test_fields.c
tests_test_fields_CPPFLAGS = $(T_CPP)
tests_test_fields_CFLAGS = $(T_CC)
tests_test_fields_LDADD = $(T_LIBS)
tests_test_fields_LDFLAGS = $(T_LINK)

TESTS += tests/gen_clr_events.sh
EXTRA_DIST += tests/gen_clr_events.sh tools/gen_clr_events.py

check_PROGRAMS += tests/strings_trace
tests_strings_trace_SOURCES = tests/strings_trace.c
tests_strings_trace_LDADD = libnettrace_core.la
TESTS += tests/cli_events.sh
EXTRA_DIST += tests/cli_events.sh
