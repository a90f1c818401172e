/* Metadata: the set of ids defined (so an event never refers to an undefined
 * one) and nt_writer_define, which encodes a record into the metadata block. */
#include "write/writer_internal.h"

#include <string.h>

bool wr_meta_defined(const nt_writer *w, uint32_t id) { return cm_map_get(&w->ids, id) != NULL; }

static bool id_add(nt_writer *w, uint32_t id) { return cm_map_put(&w->mem, &w->ids, id, NULL) != NULL; }

/* A V6 sequence point with NT_SP_FLUSH_METADATA: every id must be defined again. */
void wr_meta_forget(nt_writer *w)
{
    cm_map_free(&w->mem, &w->ids);
    w->next_id = 1;
    w->typed_count = 0;
}

nt_status nt_writer_define(nt_writer *w, const nt_event_desc *desc, uint32_t *id_out)
{
    nt_status s = wr_usable(w);
    if (s)
        return s;
    if (!desc)
        return wr_fail(w, NT_ERR_INVALID_ARG, "NULL event description");
    uint32_t id = desc->metadata_id;
    if (id == 0) {
        while (wr_meta_defined(w, w->next_id))
            w->next_id++;
        id = w->next_id;
    }
    if (id > INT32_MAX)
        return wr_fail(w, NT_ERR_INVALID_ARG, "metadata id %u is out of range", id);
    if (wr_meta_defined(w, id))
        return wr_fail(w, NT_ERR_INVALID_ARG, "metadata id %u is already defined", id);
    if (w->ids.count >= NT_DEFAULT_MAX_METADATA)
        return wr_fail(w, NT_ERR_LIMIT, "more than %u metadata records", NT_DEFAULT_MAX_METADATA);
    cm_buf rec = { .mem = &w->mem };
    s = wr_encode_metadata(w, &rec, desc, id);
    if (!s)
        s = wr_append_metadata(w, &rec);
    cm_buf_free(&rec);
    if (s)
        return s;
    if (!id_add(w, id))
        return wr_fail(w, NT_ERR_NOMEM, "cannot record metadata id %u", id);
    if (id >= w->next_id)
        w->next_id = id + 1;
    if (id_out)
        *id_out = id;
    return NT_OK;
}
