# write: nt_writer, which emits NetTrace V4 (with V5 additions) and V6 streams.
libnettrace_core_la_SOURCES += \
	src/write/writer_internal.h \
	src/write/writer.c \
	src/write/writer_encode.c \
	src/write/writer_typed.c
