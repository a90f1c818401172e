# parse: the push parser (framing machine, V4/V5 and V6 block decoders,
# metadata table, stack blocks, typed runtime events).  Uses only common/.
libnettrace_core_la_SOURCES += \
	src/parse/parser_internal.h \
	src/parse/event_header.h \
	src/parse/parser.c \
	src/parse/metadata.c src/parse/metadata.h \
	src/parse/stacks.c src/parse/stacks.h \
	src/parse/blocks.c \
	src/parse/blocks_v6.c src/parse/blocks_v6.h \
	src/parse/clr_events.c \
	src/parse/fields.c src/parse/fields.h \
	src/parse/event_names.c \
	src/parse/clr_event_table.c src/parse/clr_event_table.h
