/* One event as a line of text or JSON, with its decoded fields, and the
 * filters of nettrace events. */
#ifndef CLI_EVENT_FORMAT_H
#define CLI_EVENT_FORMAT_H

#include "nettrace.h"

#include <stdio.h>

typedef struct ev_filter {
    const char *provider;   /* NULL = any */
    const char *event;      /* a name (with or without _V<n>) or a numeric id; NULL = any */
    uint64_t thread;
    bool has_thread;
    int64_t from_ns, to_ns;
    bool has_from, has_to;
} ev_filter;

bool ev_filter_match(const ev_filter *f, const nt_event *ev, int64_t time_ns);

/* What a text line escapes in names besides controls (common/text_escape.h):
 * its field and name=value separators, so a name forges no field. */
#define EV_TEXT_SEPARATORS " ="

/* The formatters write f no further than position limit (ftell) while
 * printing fields, and return false when they would have.
 *
 * The event as one JSON object (no newline):
 * {"time_ns":..,"thread":..,"provider":"..","event_id":..,"version":..,"name":"..",
 *  "fields":{..}[,"leftover":n][,"error":"..","error_offset":n]} */
bool ev_format_json(FILE *f, const nt_event *ev, int64_t time_ns, long limit);
/* <time> <thread> <provider> <name> k=v ... (values as in JSON, pointers and
 * HRESULTs in hex; names escaped with EV_TEXT_SEPARATORS; no newline).  The
 * time is s since origin_ns (the trace's start) with 9 decimals, or with
 * absolute the trace-clock ns. */
bool ev_format_text(FILE *f, const nt_event *ev, int64_t time_ns, int64_t origin_ns, bool absolute, long limit);

#endif
