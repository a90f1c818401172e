# convert: nt_convert, a trace re-written (whole or as a time slice) in another NetTrace version, by the parser's
# callbacks driving the writer.
libnettrace_core_la_SOURCES += \
	src/convert/convert_internal.h \
	src/convert/convert_meta.c \
	src/convert/convert.c \
	src/convert/convert_frames.c \
	src/convert/convert_io.c
