/* info's event-type table: names and counts per (provider, event id, version).  One
 * entry is appended per metadata record (O(1) whatever the ids), events
 * are counted through a map from metadata id, and the entries of one type
 * are merged once at the end by sorting: n log n in the number of metadata
 * records, never a list searched per record. */
#ifndef CLI_EVENT_TYPES_H
#define CLI_EVENT_TYPES_H

#include "common/map.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cli_event_type {
    char *provider;
    char *name;         /* the event's name (the first record's when several describe one type) */
    uint32_t event_id, version;
    uint64_t count;
} cli_event_type;

typedef struct cli_event_types {
    cli_event_type *types;
    size_t n, cap;
    cm_mem mem;         /* the map's allocations */
    cm_map of_meta;     /* metadata id -> index + 1 in types */
    uint64_t compares;  /* comparisons the merge made (the tests bound the cost with it) */
} cli_event_types;

void cli_event_types_init(cli_event_types *et);
/* A metadata record; false when memory is short. */
bool cli_event_types_define(cli_event_types *et, uint32_t metadata_id, const char *provider, const char *name,
                            uint32_t event_id, uint32_t version);
/* An event of metadata_id (ids never defined are not counted); false when memory is short. */
bool cli_event_types_count(cli_event_types *et, uint32_t metadata_id);
/* Sort by (provider, id, version), merge the records of one type, and drop
 * the types no event of which was read (on a truncated stream metadata can
 * arrive without its events). */
void cli_event_types_finish(cli_event_types *et);
void cli_event_types_free(cli_event_types *et);

#endif
