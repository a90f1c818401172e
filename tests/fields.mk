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
