# The library is built once as a convenience library (tests and the tool link
# it statically, internals included) and wrapped as the installed libnettrace,
# which exports only the NT_API symbols.
noinst_LTLIBRARIES += libnettrace_core.la
libnettrace_core_la_SOURCES = \
	src/alloc.c src/alloc.h \
	src/cursor.h \
	src/utf16.c src/utf16.h \
	src/metadata.c src/metadata.h \
	src/stacks.c src/stacks.h \
	src/parser_internal.h \
	src/event_header.h \
	src/parser.c \
	src/blocks.c \
	src/clr_events.c \
	src/fields.c src/fields.h \
	src/event_names.c \
	src/clr_event_table.c src/clr_event_table.h \
	src/status.c
libnettrace_core_la_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE
libnettrace_core_la_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS) -fvisibility=hidden
libnettrace_core_la_LIBADD = $(PTHREAD_LIBS) $(ZLIB_LIBS)
libnettrace_la_LIBADD += libnettrace_core.la
