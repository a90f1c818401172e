# trace: the aggregator (nt_trace) and live counting, built only on the
# parser's public callbacks.  Uses parse/ (through nettrace.h) and common/.
libnettrace_core_la_SOURCES += \
	src/trace/trace_internal.h \
	src/trace/trace_view.h \
	src/trace/trace_view.c \
	src/trace/trace_tables.c \
	src/trace/symbols.c \
	src/trace/build_internal.h \
	src/trace/build.c \
	src/trace/code_epoch.h \
	src/trace/build_part.c \
	src/trace/records.c \
	src/trace/labels.c \
	src/trace/resolve.c \
	src/trace/trace.c \
	src/trace/trace_io.c \
	src/trace/record_store.h \
	src/trace/record_store.c \
	src/trace/sample_log.h \
	src/trace/sample_log.c \
	src/trace/loss.h \
	src/trace/loss.c \
	src/trace/window.c
# The event profiles (allocations, exceptions, contention, GC timeline) beside the trace.
libnettrace_core_la_SOURCES += \
	src/trace/profile_internal.h \
	src/trace/profile_fields.c \
	src/trace/profile.c \
	src/trace/profile_gc.c \
	src/trace/profile_io.c \
	src/trace/time_bound.c
