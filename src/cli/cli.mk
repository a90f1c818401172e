# The nettrace tool: one file per subcommand.
bin_PROGRAMS += nettrace
nettrace_SOURCES = \
	src/cli/main.c src/cli/cli.h \
	src/cli/io.c \
	src/cli/json.c src/cli/json.h src/cli/u64map.h \
	src/cli/cmd_info.c \
	src/cli/cmd_events.c src/cli/event_format.c src/cli/event_format.h src/cli/event_lines.c src/cli/event_lines.h
nettrace_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE
nettrace_LDADD = libnettrace_core.la
