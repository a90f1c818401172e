/* Names and layouts for descriptions from the runtime event table, looked up
 * once per metadata record.  The table is sorted by (provider, id, version),
 * so a lookup is a provider scan over a handful of names and a binary search.
 * A version newer than the table's newest for that id takes the newest: the
 * runtime only appends fields across versions (assembly events excepted,
 * whose V1 the table holds), so the known prefix still decodes. */
#include "parse/field_decode.h"
#include "parse/clr_event_table.h"

#include <string.h>

static const struct nt_schema *schema_find(const char *provider, uint32_t event_id, uint32_t version)
{
    if (!provider)
        return NULL;
    size_t prov = ps_schema_provider_count;
    for (size_t i = 0; i < ps_schema_provider_count; i++)
        if (strcmp(ps_schema_providers[i], provider) == 0)
            prov = i;
    if (prov == ps_schema_provider_count || event_id > UINT16_MAX)
        return NULL;
    /* first entry not less than (prov, event_id, version) */
    size_t lo = 0, hi = ps_schema_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct nt_schema *s = &ps_schemas[mid];
        bool less = s->provider != prov ? s->provider < prov
                    : s->event_id != event_id ? s->event_id < event_id
                                              : s->version < version;
        if (less)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < ps_schema_count && ps_schemas[lo].provider == prov && ps_schemas[lo].event_id == event_id &&
        ps_schemas[lo].version == version)
        return &ps_schemas[lo];
    /* newer than known: the entry before is the newest older version of this id, if any */
    if (lo > 0 && ps_schemas[lo - 1].provider == prov && ps_schemas[lo - 1].event_id == event_id)
        return &ps_schemas[lo - 1];
    return NULL;
}

void ps_schema_attach(nt_event_desc *d)
{
    const struct nt_schema *s = schema_find(d->provider, d->event_id, d->version);
    d->schema = s;
    d->task_name = s ? s->task : "";
    d->opcode_name = s ? s->opcode : "";
    d->name = d->event_name && d->event_name[0] ? d->event_name : s ? s->name : "";
}

bool nt_runtime_event_names(const char *provider, uint32_t event_id, uint32_t version, const char **name,
                            const char **task_name, const char **opcode_name)
{
    const struct nt_schema *s = schema_find(provider, event_id, version);
    if (name)
        *name = s ? s->name : "";
    if (task_name)
        *task_name = s ? s->task : "";
    if (opcode_name)
        *opcode_name = s ? s->opcode : "";
    return s != NULL;
}
