# cli: the nettrace tool, one file per subcommand, on the public API (and the
# core library's internals it shares, such as the export name tables).
bin_PROGRAMS += nettrace
nettrace_SOURCES = \
	src/cli/main.c src/cli/cli.h \
	src/cli/io.c src/cli/io_window.c src/cli/out_file.c src/cli/out_file.h src/cli/progress.c src/cli/progress.h \
	src/cli/opts.c src/cli/opts.h \
	src/cli/time_opt.c src/cli/time_opt.h src/cli/human.c src/cli/human.h \
	src/cli/select.c src/cli/select.h \
	src/cli/trace_load.c src/cli/trace_load.h src/cli/stream_read.c src/cli/stream_read.h \
	src/cli/session_opts.c src/cli/session_opts.h src/cli/keywords.c src/cli/keywords.h \
	src/cli/profile_presets.c src/cli/profile_presets.h \
	src/cli/cmd_info.c src/cli/event_types.c src/cli/event_types.h \
	src/cli/cmd_events.c src/cli/event_census.c src/cli/event_census.h src/cli/event_format.c src/cli/event_format.h src/cli/event_lines.c src/cli/event_lines.h \
	src/cli/event_stacks.c src/cli/event_stacks.h src/cli/stack_texts.c src/cli/stack_texts.h \
	src/cli/cmd_samples.c \
	src/cli/cmd_top.c src/cli/top_print.c src/cli/top_print.h \
	src/cli/cmd_stacks.c \
	src/cli/cmd_profile.c src/cli/profile_cli.h src/cli/site.c src/cli/site.h \
	src/cli/cmd_gc.c \
	src/cli/cmd_convert.c src/cli/cmd_slice.c src/cli/convert_run.c src/cli/convert_run.h \
	src/cli/cmd_collect.c src/cli/collect.h src/cli/collect_launch.c src/cli/collect_run.c \
	src/cli/collect_program.c \
	src/cli/cmd_ps.c src/cli/cmd_profiles.c \
	src/cli/cmd_index.c \
	src/cli/cmd_top_live.c \
	src/cli/cmd_heap.c src/cli/cmd_gcdump.c \
	src/cli/cmd_stack.c src/cli/session_pump.c src/cli/session_pump.h
nettrace_CPPFLAGS = $(AM_CPPFLAGS) -D_GNU_SOURCE
nettrace_LDADD = libnettrace_core.la
