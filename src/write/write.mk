# write: nt_writer, which emits NetTrace V4 (with V5 additions) and V6 streams.
libnettrace_core_la_SOURCES += \
	src/write/writer_internal.h \
	src/write/writer_status.c \
	src/write/writer_clock.c \
	src/write/writer_blocks.c \
	src/write/writer_encode.c \
	src/write/writer_metadata.c \
	src/write/writer_threads.c \
	src/write/writer_stacks.c \
	src/write/writer_labels.c \
	src/write/writer_sp.c \
	src/write/writer.c \
	src/write/writer_membuf.c \
	src/write/writer_typed.c
