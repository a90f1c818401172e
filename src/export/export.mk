# export: folded, speedscope and pprof writers over a resolved nt_trace.
libnettrace_core_la_SOURCES += \
	src/export/export_common.c \
	src/export/export_folded.c \
	src/export/export_names.c src/export/export_internal.h \
	src/export/export_speedscope.c \
	src/export/export_html.c src/export/flame_html.c src/export/flame_html.h src/export/flame_page.c \
	src/export/export_gzip.c src/export/export_gzip.h \
	src/export/export_pb.c src/export/export_pb.h \
	src/export/export_pprof.c \
	src/export/top.c \
	src/export/wall.c
# The event profiles' exporters (allocations, exceptions, contention).
libnettrace_core_la_SOURCES += \
	src/export/profile_export.c src/export/profile_export.h \
	src/export/profile_pprof.c
# The heap's dominator tree as flame-graph input.
libnettrace_core_la_SOURCES += \
	src/export/heap_export.c
