# session: the diagnostics IPC client (endpoints, commands, streaming).
# Never parses a trace; hands bytes to a sink.
libnettrace_core_la_SOURCES += \
	src/session/deadline.c \
	src/session/ipc.c src/session/ipc.h \
	src/session/endpoint.c src/session/procfs.h \
	src/session/process_info.c \
	src/session/port.c \
	src/session/session.c src/session/session_internal.h \
	src/session/session_stream.c \
	src/session/sinks.c
