/* The .gcdump reader: PerfView's FastSerialization stream of a MemoryGraph
 * (what dotnet-gcdump and dotnet-monitor write), into the same nt_heap the
 * NetTrace builder makes.  doc/gcdump-format.md describes the format. */
#ifndef HP_GCDUMP_READ_H
#define HP_GCDUMP_READ_H

#include "nettrace_heap.h"

#include <stdbool.h>
#include <stddef.h>

/* Bytes the magic takes: an Int32 length (20) and "!FastSerialization.1". */
#define HP_GCDUMP_MAGIC_BYTES 24u

/* The most bytes a .gcdump read from a file descriptor may hold (the format's
 * counts are Int32: nodes' labels, a blob under 2 GiB and 8-byte addresses
 * stay below this).  Past it the read stops with NT_ERR_LIMIT. */
#define HP_GCDUMP_MAX_FILE_BYTES (32ull << 30)

/* True when the first len bytes (at least HP_GCDUMP_MAGIC_BYTES) start a .gcdump. */
bool hp_gcdump_magic(const void *data, size_t len);

/* Build *out from a whole .gcdump in memory.  Returns the status the heap's
 * stats hold; *out is set whenever the header was read (also on damage, with
 * what could be read before it).  msg (may be NULL) receives a description
 * with the byte offset. */
nt_status hp_gcdump_read(const void *data, size_t len, const nt_heap_limits *limits, const nt_allocator *alloc,
                         nt_heap **out, char *msg, size_t msg_size);

#endif
