/* What a trace's events are, kept while `nettrace events` filters them, so
 * that a filter that selects nothing says what the trace does hold (its
 * providers, their events and counts) and which `nettrace collect` records
 * what was asked for -- never an empty output and exit 0 without a word. */
#ifndef CLI_EVENT_CENSUS_H
#define CLI_EVENT_CENSUS_H

#include "cli/event_format.h"

#include <stdint.h>
#include <stdio.h>

#define EV_CENSUS_PROVIDERS 16 /* kept by name; more are counted together */
#define EV_CENSUS_NAMES 6      /* event names kept per provider */

typedef struct ev_census_provider {
    char *name;
    uint64_t events;
    char *names[EV_CENSUS_NAMES];
    size_t nnames;
} ev_census_provider;

typedef struct ev_census {
    ev_census_provider p[EV_CENSUS_PROVIDERS];
    size_t n;
    uint64_t events, others, matched;
    bool oom;
} ev_census;

/* Count ev (matched: the filter kept it). */
void ev_census_add(ev_census *c, const nt_event *ev, bool matched);
/* When nothing matched f, say so on stderr ("nettrace events: ..."). */
void ev_census_explain(const ev_census *c, const ev_filter *f, FILE *err);
void ev_census_free(ev_census *c);

#endif
