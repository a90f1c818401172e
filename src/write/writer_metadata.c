/* Metadata: the set of ids defined (so an event never refers to an undefined
 * one) and nt_writer_define, which encodes a record into the metadata block. */
#include "write/writer_internal.h"

#include <string.h>

static size_t id_slot(uint32_t id, size_t cap) { return (size_t)((id * 0x9E3779B1u) & (cap - 1)); }

bool nt_wmeta_defined(const nt_writer *w, uint32_t id)
{
    if (!w->ids_cap)
        return false;
    for (size_t i = id_slot(id, w->ids_cap);; i = (i + 1) & (w->ids_cap - 1)) {
        if (!w->ids[i])
            return false;
        if (w->ids[i] == id)
            return true;
    }
}

static bool id_add(nt_writer *w, uint32_t id)
{
    if ((w->ids_count + 1) * 2 > w->ids_cap) {
        size_t ncap = w->ids_cap ? w->ids_cap * 2 : 64;
        uint32_t *n = NULL;
        if (!nt_mem_resize(&w->mem, (void **)&n, 0, ncap * sizeof *n))
            return false;
        memset(n, 0, ncap * sizeof *n);
        for (size_t k = 0; k < w->ids_cap; k++) {
            if (!w->ids[k])
                continue;
            size_t i = id_slot(w->ids[k], ncap);
            while (n[i])
                i = (i + 1) & (ncap - 1);
            n[i] = w->ids[k];
        }
        nt_mem_free(&w->mem, w->ids, w->ids_cap * sizeof *w->ids);
        w->ids = n;
        w->ids_cap = ncap;
    }
    size_t i = id_slot(id, w->ids_cap);
    while (w->ids[i])
        i = (i + 1) & (w->ids_cap - 1);
    w->ids[i] = id;
    w->ids_count++;
    return true;
}


/* A V6 sequence point with NT_SP_FLUSH_METADATA: every id must be defined again. */
void nt_wmeta_forget(nt_writer *w)
{
    if (w->ids_cap)
        memset(w->ids, 0, w->ids_cap * sizeof *w->ids);
    w->ids_count = 0;
    w->next_id = 1;
    w->typed_count = 0;
}

nt_status nt_writer_define(nt_writer *w, const nt_event_desc *desc, uint32_t *id_out)
{
    nt_status s = nt_wusable(w);
    if (s)
        return s;
    if (!desc)
        return nt_wfail(w, NT_ERR_INVALID_ARG, "NULL event description");
    uint32_t id = desc->metadata_id;
    if (id == 0) {
        while (nt_wmeta_defined(w, w->next_id))
            w->next_id++;
        id = w->next_id;
    }
    if (id > INT32_MAX)
        return nt_wfail(w, NT_ERR_INVALID_ARG, "metadata id %u is out of range", id);
    if (nt_wmeta_defined(w, id))
        return nt_wfail(w, NT_ERR_INVALID_ARG, "metadata id %u is already defined", id);
    if (w->ids_count >= NT_DEFAULT_MAX_METADATA)
        return nt_wfail(w, NT_ERR_LIMIT, "more than %u metadata records", NT_DEFAULT_MAX_METADATA);
    wbuf rec = { .mem = &w->mem };
    s = nt_wencode_metadata(w, &rec, desc, id);
    if (!s)
        s = nt_wappend_metadata(w, &rec);
    wb_free(&rec);
    if (s)
        return s;
    if (!id_add(w, id))
        return nt_wfail(w, NT_ERR_NOMEM, "cannot record metadata id %u", id);
    if (id >= w->next_id)
        w->next_id = id + 1;
    if (id_out)
        *id_out = id;
    return NT_OK;
}
