# heap: heap snapshots (nt_heap), built only on the parser's public
# callbacks, like trace/.  Uses parse/ (through nettrace.h) and common/.
#   heap_io.c       the one-call entry points (NetTrace or .gcdump by the magic)
#   gcdump_read.c   .gcdump files (PerfView's serialized MemoryGraph), into the builder
#   heap_events.c   the runtime's heap-dump payloads, into the builder
#   heap_build.c    the builder's storage and its finish (addresses resolved)
#   heap_addr_sort.c the address sort of a walk not in address order (radix, 32-bit keys)
#   heap_types.c    type names as dotnet-gcdump prints them
#   heap_table.c    type tables and their diff
#   heap_paths.c    shortest paths from the roots, largest retainers
#   heap_dom.c      dominators (Lengauer-Tarjan) and retained sizes
#   heap.c          accessors
#   heap_names.c    the name pool, under all of them
libnettrace_core_la_SOURCES += \
	src/heap/heap_internal.h src/heap/heap_build.h \
	src/heap/heap_io.c \
	src/heap/gcdump_read.h src/heap/gcdump_read.c \
	src/heap/heap_events.c \
	src/heap/heap_build.c \
	src/heap/heap_addr_sort.h src/heap/heap_addr_sort.c \
	src/heap/heap_types.c \
	src/heap/heap_table.c \
	src/heap/heap_paths.c \
	src/heap/heap_dom.c \
	src/heap/heap.c \
	src/heap/heap_names.c
