/* The well-known EventSources' events an in-process agent sees (payload.c):
 * TplEventSource's task events and System.Diagnostics.Metrics' events (by
 * provider and id, as their manifests fix them, or by name) and the two
 * EventCounters payloads (by name, any provider).  Each is an event
 * description whose fields the one iterator walks (field_decode.c), as it
 * walks a parsed event's; the layouts are those the runtime's metadata gives
 * (corpus/event-sources.nettrace, tests/test_payload_sources.c). */
#ifndef PS_EVENTSOURCE_TABLE_H
#define PS_EVENTSOURCE_TABLE_H

#include "nettrace.h"

/* The description of (provider, event_id, version), or NULL. */
const nt_event_desc *ps_es_find(const char *provider, uint32_t event_id, uint32_t version);

/* The descriptions named event_name (provider NULL-free; "EventCounters" matches any provider): up
 * to max of them into out (EventCounters has two layouts).  Returns how many. */
size_t ps_es_find_named(const char *provider, const char *event_name, const nt_event_desc **out, size_t max);

#endif
