# parse: the push parser.  Uses only common/.  From the top down (no unit
# calls into one above it; tools/check-cycles.sh checks):
#   parser.c, feed_fd.c      framing machine and public entry points
#   payload.c                payloads without a stream: the runtime table's,
#                            the well-known EventSources' (eventsource_table.c)
#                            or a caller's metadata blob (read by blocks_v4.c's
#                            metadata code in a parser of its own)
#   parallel_*.c, plog.c     the parallel parse: parts cut at sequence points,
#                            decoded on threads into callback logs, replayed in order
#   blocks_v4.c, blocks_v6.c the block decoders of each format version
#   stack_block.c, fields.c, threads.c, clr_events.c
#                            what both versions share: stack blocks, metadata
#                            records' fields and storage, the thread table and
#                            drop accounting, typed runtime payloads
#   context.c                the decoder context: failures, scratch, the
#                            trace header and sequence-point steps
#   metadata.c, stacks.c     the metadata and stack tables
#   field_decode.c, event_names.c, clr_event_table.c
#                            payload fields on demand (nt_event_fields_begin)
#                            and the runtime event table they and the
#                            descriptions' names come from
libnettrace_core_la_SOURCES += \
	src/parse/parser.c \
	src/parse/feed_fd.c \
	src/parse/index.c src/parse/index_read.c src/parse/index_scan.c src/parse/index_estimate.c src/parse/index_sidecar.c src/parse/index_records.c src/parse/feed_window.c src/parse/index_internal.h \
	src/parse/parallel_run.c src/parse/parallel_part.c src/parse/parallel_plan.c src/parse/parallel_internal.h \
	src/parse/plog.c src/parse/plog.h src/parse/resume.h \
	src/parse/blocks.h \
	src/parse/blocks_v4.c \
	src/parse/blocks_v6.c \
	src/parse/event_header.h \
	src/parse/deliver.h \
	src/parse/stack_block.c \
	src/parse/fields.c src/parse/fields.h \
	src/parse/threads.c src/parse/threads.h \
	src/parse/clr_events.c \
	src/parse/context.c src/parse/context.h \
	src/parse/metadata.c src/parse/metadata.h \
	src/parse/stacks.c src/parse/stacks.h \
	src/parse/field_decode.c src/parse/field_decode.h \
	src/parse/payload.c \
	src/parse/eventsource_table.c src/parse/eventsource_table.h \
	src/parse/event_names.c \
	src/parse/clr_event_table.c src/parse/clr_event_table.h
