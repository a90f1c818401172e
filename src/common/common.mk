# common: what every layer may use and that uses no other layer (allocation,
# bounded reads, UTF-16/UTF-8, the status table).
libnettrace_core_la_SOURCES += \
	src/common/abi.c src/common/abi.h \
	src/common/alloc.c src/common/alloc.h \
	src/common/clock.h src/common/compiler.h \
	src/common/map.c src/common/map.h \
	src/common/sort.h \
	src/common/cursor.h \
	src/common/file_read.c src/common/file_read.h \
	src/common/le_store.h src/common/byte_buf.c src/common/byte_buf.h \
	src/common/format.h \
	src/common/hash.c src/common/hash.h \
	src/common/checksum.c src/common/checksum.h \
	src/common/addr_set.c src/common/addr_set.h src/common/sort_u64.c src/common/sort_u64.h \
	src/common/utf16.c src/common/utf16.h \
	src/common/utf8.c src/common/utf8.h \
	src/common/json.c src/common/json.h \
	src/common/duration.c src/common/duration.h \
	src/common/text_escape.c src/common/text_escape.h src/common/sat.h \
	src/common/limits.h src/common/status.c src/common/status.h
