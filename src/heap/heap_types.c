/* Type names as dotnet-gcdump prints them.  Its reader (PerfView's
 * DotNetHeapDumpGraphReader, dotnet/diagnostics 3c9f99e) takes BulkType's
 * Name, removes generic arity marks ("`1"), writes brackets as angle
 * brackets except an empty pair ("List`1[System.String]" is
 * "List<System.String>", "Int32[]" stays), names an unnamed type
 * "Type(0xID)" or "ArrayType(0xID)" by its TypeNameID, an RCW's type
 * "[RCW NAME]", a type never named "UNKNOWN 0xTYPEID", and files objects
 * over 1,000 bytes under a size class.  Types of one name and module are
 * one type of the report. */
#include "heap/heap_internal.h"
#include "common/sort.h"

#include <stdio.h>
#include <string.h>

enum { TYPE_FLAG_RCW = 0x4, TYPE_FLAG_ARRAY = 0x8 };

static const char *const size_suffix[] = {
    "", " (Bytes > 1K)", " (Bytes > 10K)", " (Bytes > 100K)", " (Bytes > 1M)", " (Bytes > 10M)", " (Bytes > 100M)",
};

unsigned hp_size_class(uint64_t size)
{
    /* dotnet-gcdump keeps sizes as int: a size of 2 GiB or more is negative there and gets no class;
     * here it gets the largest. */
    if (size <= 1000)
        return 0;
    unsigned cls = 1;
    for (uint64_t lim = 10000; cls < 6 && size >= lim; lim *= 10)
        cls++;
    return cls;
}

const char *hp_size_class_suffix(unsigned cls) { return cls < 7 ? size_suffix[cls] : ""; }

/* The display form of raw (len bytes) into out (room for len + 8 bytes), returning its length. */
static size_t display_name(const char *raw, size_t len, char *out)
{
    size_t w = 0;
    for (size_t i = 0; i < len; i++) {
        char c = raw[i];
        if (c == '`' && i + 1 < len && raw[i + 1] >= '0' && raw[i + 1] <= '9') {
            while (i + 1 < len && raw[i + 1] >= '0' && raw[i + 1] <= '9')
                i++;
            continue;
        }
        if (c == '[')
            c = '<';
        else if (c == ']')
            c = '>';
        if (c == '>' && w > 0 && out[w - 1] == '<') { /* "<>" back to "[]" */
            out[w - 1] = '[';
            c = ']';
        }
        out[w++] = c;
    }
    return w;
}

static bool name_type(nt_heap *h, hp_type *t, const cm_map *module_names, size_t max)
{
    char buf[3 * 1024 + 48];
    size_t len;
    const char *raw = hp_name(h, t->name);
    size_t raw_len = strlen(raw);
    if (!t->defined)
        len = (size_t)snprintf(buf, sizeof buf, "UNKNOWN 0x%llx", (unsigned long long)t->type_id);
    else if (t->flags & HP_TYPE_DISPLAY_NAME) {
        if (raw_len > sizeof buf - 1)
            raw_len = sizeof buf - 1;
        memcpy(buf, raw, raw_len);
        len = raw_len;
    } else if (raw_len == 0)
        len = (size_t)snprintf(buf, sizeof buf, "%s(0x%x)", (t->flags & TYPE_FLAG_ARRAY) ? "ArrayType" : "Type",
                               t->name_id);
    else {
        size_t at = 0;
        if (t->flags & TYPE_FLAG_RCW) {
            memcpy(buf, "[RCW ", 5);
            at = 5;
        }
        if (raw_len > sizeof buf - 16)
            raw_len = sizeof buf - 16;
        len = at + display_name(raw, raw_len, buf + at);
        if (t->flags & TYPE_FLAG_RCW)
            buf[len++] = ']';
        buf[len] = '\0';
    }
    if (!hp_names_add(&h->mem, &h->names, buf, len, max, &t->name))
        return false;
    const uint64_t *m = t->defined ? cm_map_get(module_names, t->module_id) : NULL;
    t->module = m ? (uint32_t)*m : 0;
    return true;
}

static int by_name(const void *a, const void *b, void *ctx)
{
    const nt_heap *h = ctx;
    const hp_type *x = &h->types[*(const uint32_t *)a], *y = &h->types[*(const uint32_t *)b];
    int c = strcmp(hp_name(h, x->name), hp_name(h, y->name));
    return c ? c : strcmp(hp_name(h, x->module), hp_name(h, y->module));
}

bool hp_types_finish(nt_heap *h, const cm_map *module_names, size_t max_name_bytes)
{
    for (size_t i = 0; i < h->ntypes; i++)
        if (!name_type(h, &h->types[i], module_names, max_name_bytes))
            return false;
    size_t n = h->ntypes;
    uint32_t *order = cm_mem_alloc(&h->mem, (n ? n : 1) * sizeof *order);
    uint32_t *tmp = cm_mem_alloc(&h->mem, (n ? n : 1) * sizeof *tmp);
    bool ok = order && tmp;
    if (ok) {
        for (size_t i = 0; i < n; i++)
            order[i] = (uint32_t)i;
        cm_merge_sort(order, tmp, n, sizeof *order, by_name, h);
        for (size_t i = 0; i < n; i++) {
            /* The stable sort keeps the first-made type of a name first: it stands for the group. */
            bool same = i > 0 && by_name(&order[i - 1], &order[i], h) == 0;
            h->types[order[i]].canon = same ? h->types[order[i - 1]].canon : order[i];
        }
    }
    cm_mem_free(&h->mem, order, (n ? n : 1) * sizeof *order);
    cm_mem_free(&h->mem, tmp, (n ? n : 1) * sizeof *tmp);
    return ok;
}
