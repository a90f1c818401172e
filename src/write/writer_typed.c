/* Typed convenience events: the metadata the runtime would register for
 * them (native events: empty name, no fields) and their manifest payloads,
 * the inverse of the decoders in clr_events.c. */
#include "write/writer_internal.h"

#include <string.h>

/* Runtime keywords the events are enabled by. */
#define KW_LOADER 0x8ull
#define KW_JIT 0x10ull
#define LEVEL_INFO 4u

static nt_status typed_id(nt_writer *w, const char *provider, uint32_t event_id, uint32_t version, uint64_t keywords,
                          uint32_t *id)
{
    for (size_t i = 0; i < w->typed_count; i++) {
        const wtyped *t = &w->typed[i];
        if (strcmp(t->provider, provider) == 0 && t->event_id == event_id && t->version == version) {
            *id = t->metadata_id;
            return NT_OK;
        }
    }
    nt_event_desc d;
    memset(&d, 0, sizeof d);
    d.provider = provider;
    d.event_id = event_id;
    d.event_name = "";
    d.keywords = keywords;
    d.version = version;
    d.level = LEVEL_INFO;
    nt_status s = nt_writer_define(w, &d, id);
    if (s)
        return s;
    if (!cm_mem_reserve(&w->mem, (void **)&w->typed, &w->typed_cap, w->typed_count + 1, sizeof *w->typed))
        return wr_fail(w, NT_ERR_NOMEM, "cannot remember typed metadata");
    w->typed[w->typed_count++] = (wtyped){ provider, event_id, version, *id };
    return NT_OK;
}

/* Write the payload in w->payload as an event of metadata id. */
static nt_status write_typed(nt_writer *w, const nt_writer_event *hdr, int64_t ts, uint32_t id)
{
    if (w->payload.failed)
        return wr_fail(w, NT_ERR_NOMEM, "cannot encode a payload");
    nt_writer_event ev;
    if (hdr) {
        ev = *hdr;
    } else {
        memset(&ev, 0, sizeof ev);
        ev.timestamp = ts;
    }
    ev.metadata_id = id;
    ev.payload = w->payload.d;
    ev.payload_size = (uint32_t)w->payload.n;
    return nt_writer_write_event(w, &ev);
}

static nt_status check(nt_writer *w, const void *rec)
{
    nt_status s = wr_usable(w);
    if (s == NT_OK && !rec)
        s = wr_fail(w, NT_ERR_INVALID_ARG, "NULL record");
    return s;
}

nt_status nt_writer_sample(nt_writer *w, const nt_writer_event *hdr, uint32_t type)
{
    nt_status s = check(w, hdr);
    if (s)
        return s;
    uint32_t id;
    if ((s = typed_id(w, NT_PROVIDER_SAMPLE_PROFILER, 0, 0, 0, &id)))
        return s;
    w->payload.n = 0;
    cm_buf_u32(&w->payload, type);
    return write_typed(w, hdr, hdr->timestamp, id);
}

nt_status nt_writer_method(nt_writer *w, const nt_writer_event *hdr, const nt_method *m)
{
    nt_status s = check(w, m);
    if (s)
        return s;
    static const struct { const char *provider; uint32_t id; } ids[] = {
        [NT_RECORD_LOAD] = { NT_PROVIDER_RUNTIME, 143 },
        [NT_RECORD_UNLOAD] = { NT_PROVIDER_RUNTIME, 144 },
        [NT_RECORD_DC_START] = { NT_PROVIDER_RUNDOWN, 143 },
        [NT_RECORD_DC_END] = { NT_PROVIDER_RUNDOWN, 144 },
    };
    if ((unsigned)m->which > NT_RECORD_DC_END || m->version > 2)
        return wr_fail(w, NT_ERR_INVALID_ARG, "method event %u version %u is not one the writer encodes",
                        (unsigned)m->which, m->version);
    uint32_t id;
    if ((s = typed_id(w, ids[m->which].provider, ids[m->which].id, m->version, KW_JIT, &id)))
        return s;
    cm_buf *b = &w->payload;
    b->n = 0;
    cm_buf_u64(b, m->method_id);
    cm_buf_u64(b, m->module_id);
    cm_buf_u64(b, m->start_address);
    cm_buf_u32(b, m->size);
    cm_buf_u32(b, m->token);
    cm_buf_u32(b, m->flags);
    cm_buf_utf16z(b, m->declaring_type, CM_UTF8_REPLACE);
    cm_buf_utf16z(b, m->name, CM_UTF8_REPLACE);
    cm_buf_utf16z(b, m->signature, CM_UTF8_REPLACE);
    if (m->version >= 1)
        cm_buf_u16(b, m->clr_instance_id);
    if (m->version >= 2)
        cm_buf_u64(b, m->rejit_id);
    return write_typed(w, hdr, m->timestamp, id);
}

nt_status nt_writer_module(nt_writer *w, const nt_writer_event *hdr, const nt_module *m)
{
    nt_status s = check(w, m);
    if (s)
        return s;
    /* [which][domain] -> provider, event id (0 = no such event) */
    static const struct { const char *provider; uint32_t id; } ids[4][2] = {
        [NT_RECORD_LOAD] = { { NT_PROVIDER_RUNTIME, 152 }, { NT_PROVIDER_RUNTIME, 151 } },
        [NT_RECORD_UNLOAD] = { { NT_PROVIDER_RUNTIME, 153 }, { NULL, 0 } },
        [NT_RECORD_DC_START] = { { NT_PROVIDER_RUNDOWN, 153 }, { NT_PROVIDER_RUNDOWN, 151 } },
        [NT_RECORD_DC_END] = { { NT_PROVIDER_RUNDOWN, 154 }, { NT_PROVIDER_RUNDOWN, 152 } },
    };
    if ((unsigned)m->which > NT_RECORD_DC_END || m->version > 2 || !ids[m->which][m->domain].provider)
        return wr_fail(w, NT_ERR_INVALID_ARG, "module event %u%s version %u is not one the writer encodes",
                        (unsigned)m->which, m->domain ? " (domain)" : "", m->version);
    uint32_t id;
    if ((s = typed_id(w, ids[m->which][m->domain].provider, ids[m->which][m->domain].id, m->version, KW_LOADER,
                      &id)))
        return s;
    cm_buf *b = &w->payload;
    b->n = 0;
    cm_buf_u64(b, m->module_id);
    cm_buf_u64(b, m->assembly_id);
    if (m->domain)
        cm_buf_u64(b, m->app_domain_id);
    cm_buf_u32(b, m->flags);
    cm_buf_u32(b, 0); /* Reserved1 */
    cm_buf_utf16z(b, m->il_path, CM_UTF8_REPLACE);
    cm_buf_utf16z(b, m->native_path, CM_UTF8_REPLACE);
    if (m->version >= 1)
        cm_buf_u16(b, m->clr_instance_id);
    if (m->version >= 2 && !m->domain) {
        /* PDB signatures, ages and paths: not part of nt_module, written empty */
        const uint8_t zero[16] = { 0 };
        for (int k = 0; k < 2; k++) {
            cm_buf_bytes(b, zero, 16);
            cm_buf_u32(b, 0);
            cm_buf_u16(b, 0);
        }
    }
    return write_typed(w, hdr, m->timestamp, id);
}

nt_status nt_writer_assembly(nt_writer *w, const nt_writer_event *hdr, const nt_assembly *a)
{
    nt_status s = check(w, a);
    if (s)
        return s;
    static const struct { const char *provider; uint32_t id; } ids[] = {
        [NT_RECORD_LOAD] = { NT_PROVIDER_RUNTIME, 154 },
        [NT_RECORD_UNLOAD] = { NT_PROVIDER_RUNTIME, 155 },
        [NT_RECORD_DC_START] = { NT_PROVIDER_RUNDOWN, 155 },
        [NT_RECORD_DC_END] = { NT_PROVIDER_RUNDOWN, 156 },
    };
    if ((unsigned)a->which > NT_RECORD_DC_END || a->version > 1)
        return wr_fail(w, NT_ERR_INVALID_ARG, "assembly event %u version %u is not one the writer encodes",
                        (unsigned)a->which, a->version);
    uint32_t id;
    if ((s = typed_id(w, ids[a->which].provider, ids[a->which].id, a->version, KW_LOADER, &id)))
        return s;
    cm_buf *b = &w->payload;
    b->n = 0;
    cm_buf_u64(b, a->assembly_id);
    cm_buf_u64(b, a->app_domain_id);
    if (a->version >= 1)
        cm_buf_u64(b, a->binding_id);
    cm_buf_u32(b, a->flags);
    cm_buf_utf16z(b, a->name, CM_UTF8_REPLACE);
    if (a->version >= 1)
        cm_buf_u16(b, a->clr_instance_id);
    return write_typed(w, hdr, a->timestamp, id);
}
