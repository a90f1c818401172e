/* info's event-type table (event_types.h). */
#include "cli/event_types.h"
#include "common/sort.h"

#include <stdlib.h>
#include <string.h>

void cli_event_types_init(cli_event_types *et)
{
    memset(et, 0, sizeof *et);
    cm_mem_init(&et->mem, NULL);
}

bool cli_event_types_define(cli_event_types *et, uint32_t metadata_id, const char *provider, const char *name,
                            uint32_t event_id, uint32_t version)
{
    if (!cm_mem_reserve(&et->mem, (void **)&et->types, &et->cap, et->n + 1, sizeof *et->types))
        return false;
    char *prov = strdup(provider);
    char *nm = strdup(name ? name : "");
    uint64_t *v = prov && nm ? cm_map_put(&et->mem, &et->of_meta, metadata_id, NULL) : NULL;
    if (!v) {
        free(prov);
        free(nm);
        return false;
    }
    et->types[et->n++] = (cli_event_type){ prov, nm, event_id, version, 0 };
    *v = et->n;
    return true;
}

bool cli_event_types_count(cli_event_types *et, uint32_t metadata_id)
{
    uint64_t *v = cm_map_put(&et->mem, &et->of_meta, metadata_id, NULL);
    if (!v)
        return false;
    if (*v)
        et->types[*v - 1].count++;
    return true;
}

static int cmp_type(const cli_event_type *x, const cli_event_type *y)
{
    int c = strcmp(x->provider, y->provider);
    if (c)
        return c;
    if (x->event_id != y->event_id)
        return x->event_id < y->event_id ? -1 : 1;
    if (x->version != y->version)
        return x->version < y->version ? -1 : 1;
    return 0;
}

/* The one stable sort's comparison, counted (the tests bound the cost with it). */
static int cmp_counted(const void *a, const void *b, void *ctx)
{
    ((cli_event_types *)ctx)->compares++;
    return cmp_type(a, b);
}

void cli_event_types_finish(cli_event_types *et)
{
    if (!et->n)
        return;
    cli_event_type *tmp = malloc(et->n * sizeof *tmp);
    if (tmp) /* short of memory the list stays in stream order, merged below only where adjacent */
        cm_merge_sort(et->types, tmp, et->n, sizeof *tmp, cmp_counted, et);
    free(tmp);
    size_t out = 0;
    for (size_t i = 0; i < et->n; i++) {
        cli_event_type *e = &et->types[i];
        if (out && (et->compares++, cmp_type(&et->types[out - 1], e) == 0)) {
            et->types[out - 1].count += e->count;
            free(e->provider);
            free(e->name);
        } else {
            et->types[out++] = *e;
        }
    }
    size_t kept = 0;
    for (size_t i = 0; i < out; i++) {
        if (et->types[i].count)
            et->types[kept++] = et->types[i];
        else {
            free(et->types[i].provider);
            free(et->types[i].name);
        }
    }
    et->n = kept;
}

void cli_event_types_free(cli_event_types *et)
{
    for (size_t i = 0; i < et->n; i++) {
        free(et->types[i].provider);
        free(et->types[i].name);
    }
    cm_mem_free(&et->mem, et->types, et->cap * sizeof *et->types);
    cm_map_free(&et->mem, &et->of_meta);
    cli_event_types_init(et);
}
