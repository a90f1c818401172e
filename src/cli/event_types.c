/* info's event-type table (event_types.h). */
#include "cli/event_types.h"

#include <stdlib.h>
#include <string.h>

void cli_event_types_init(cli_event_types *et)
{
    memset(et, 0, sizeof *et);
    nt_mem_init(&et->mem, NULL);
}

bool cli_event_types_define(cli_event_types *et, uint32_t metadata_id, const char *provider, const char *name,
                            uint32_t event_id, uint32_t version)
{
    if (et->n == et->cap) {
        size_t ncap = et->cap ? et->cap * 2 : 64;
        cli_event_type *n = realloc(et->types, ncap * sizeof *n);
        if (!n)
            return false;
        et->types = n;
        et->cap = ncap;
    }
    char *prov = strdup(provider);
    char *nm = strdup(name ? name : "");
    uint64_t *v = prov && nm ? nt_map_put(&et->mem, &et->of_meta, metadata_id, NULL) : NULL;
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
    uint64_t *v = nt_map_put(&et->mem, &et->of_meta, metadata_id, NULL);
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

/* Bottom-up merge sort: qsort has no context argument for the comparison count. */
static void sort_types(cli_event_types *et, cli_event_type *tmp)
{
    cli_event_type *src = et->types, *dst = tmp;
    size_t n = et->n;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                et->compares++;
                dst[k++] = cmp_type(&src[j], &src[i]) < 0 ? src[j++] : src[i++];
            }
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        cli_event_type *x = src;
        src = dst;
        dst = x;
    }
    if (src != et->types)
        memcpy(et->types, src, n * sizeof *src);
}

void cli_event_types_finish(cli_event_types *et)
{
    if (!et->n)
        return;
    cli_event_type *tmp = malloc(et->n * sizeof *tmp);
    if (tmp) /* short of memory the list stays in stream order, merged below only where adjacent */
        sort_types(et, tmp);
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
    free(et->types);
    nt_map_free(&et->mem, &et->of_meta);
    cli_event_types_init(et);
}
