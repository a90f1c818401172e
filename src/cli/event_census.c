/* The providers and events a trace holds, for a filter that selected none (event_census.h). */
#include "cli/event_census.h"
#include "cli/human.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *copy(ev_census *c, const char *s)
{
    char *d = strdup(s ? s : "");
    c->oom |= d == NULL;
    return d;
}

void ev_census_add(ev_census *c, const nt_event *ev, bool matched)
{
    c->events++;
    c->matched += matched;
    if (matched || c->oom)
        return;
    const char *prov = ev->desc ? ev->desc->provider : "(no metadata)";
    ev_census_provider *p = NULL;
    for (size_t i = 0; i < c->n && !p; i++)
        if (strcmp(c->p[i].name, prov) == 0)
            p = &c->p[i];
    if (!p) {
        if (c->n == EV_CENSUS_PROVIDERS) {
            c->others++;
            return;
        }
        p = &c->p[c->n];
        if (!(p->name = copy(c, prov)))
            return;
        c->n++;
    }
    p->events++;
    const char *name = ev->desc ? nt_event_name(ev) : "?";
    for (size_t i = 0; i < p->nnames; i++)
        if (strcmp(p->names[i], name) == 0)
            return;
    if (p->nnames < EV_CENSUS_NAMES && (p->names[p->nnames] = copy(c, name)))
        p->nnames++;
}

/* Which collect profile records events named like want (NULL when none does). */
static const char *profile_for(const char *want)
{
    static const struct {
        const char *prefix, *profile;
    } P[] = {
        { "GCAllocationTick", "alloc" }, { "Exception", "exceptions" }, { "Contention", "contention" },
        { "GC", "gc" },                  { "ThreadSample", "thread-time" },
    };
    for (size_t i = 0; want && i < sizeof P / sizeof P[0]; i++)
        if (strncasecmp(want, P[i].prefix, strlen(P[i].prefix)) == 0)
            return P[i].profile;
    return NULL;
}

void ev_census_explain(const ev_census *c, const ev_filter *f, FILE *err)
{
    if (c->matched || !c->events)
        return;
    if (!f->provider && !f->event && !f->has_thread && !f->has_from && !f->has_to)
        return;
    fprintf(err, "nettrace events: no event matches the filter (");
    const char *sep = "";
    if (f->provider)
        fprintf(err, "%s--provider %s", sep, f->provider), sep = " ";
    if (f->event)
        fprintf(err, "%s--event %s", sep, f->event), sep = " ";
    if (f->has_thread)
        fprintf(err, "%s--thread %" PRIu64, sep, f->thread), sep = " ";
    if (f->has_from || f->has_to)
        fprintf(err, "%s--from/--to", sep);
    fprintf(err, "); the trace's %s events are:\n", cli_count(c->events).s);
    for (size_t i = 0; i < c->n; i++) {
        const ev_census_provider *p = &c->p[i];
        fprintf(err, "  %s: %s event%s (", p->name, cli_count(p->events).s, p->events == 1 ? "" : "s");
        for (size_t k = 0; k < p->nnames; k++)
            fprintf(err, "%s%s", k ? ", " : "", p->names[k]);
        fprintf(err, "%s)\n", p->nnames == EV_CENSUS_NAMES ? ", ..." : "");
    }
    if (c->others)
        fprintf(err, "  and %s events of other providers\n", cli_count(c->others).s);
    const char *profile = profile_for(f->event);
    if (profile)
        fprintf(err, "  ('nettrace collect --profile %s' records %s events)\n", profile, f->event);
    else if (f->provider)
        fprintf(err, "  ('nettrace collect --providers %s' records that provider's events)\n", f->provider);
}

void ev_census_free(ev_census *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->p[i].name);
        for (size_t k = 0; k < c->p[i].nnames; k++)
            free(c->p[i].names[k]);
    }
    memset(c, 0, sizeof *c);
}
