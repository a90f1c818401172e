/* Payload decoders for the runtime and rundown events the parser types
 * (samples take the inline path of deliver.h): keyed by (provider, event id)
 * at metadata time and by the metadata's version here.  Ids and addresses
 * are win:UInt64 in every template, so layouts do not depend on the pointer
 * size.  A version newer than the ones we know decodes its known prefix; a
 * payload too short for its version is malformed. */
#include "common/utf16.h"
#include "parse/deliver.h"

/* Read a NUL-terminated UTF-16 string into the scratch at *pos. */
static bool read_str(nt_parser *p, nt_cursor *c, size_t *pos, const char **out)
{
    char *dst = p->str + *pos;
    size_t n;
    if (!nt_utf16z_to_utf8(c, dst, &n))
        return false;
    *pos += n + 1;
    *out = dst;
    return true;
}

static nt_status short_payload(nt_parser *p, const nt_event *ev, const char *what)
{
    return nt_fail(p, NT_ERR_MALFORMED, ev->offset, "%s payload (version %u, %u bytes) is truncated", what,
                   ev->desc->version, ev->payload_size);
}

static nt_status decode_method(nt_parser *p, const nt_event *ev, nt_record_event which)
{
    p->stats.methods++;
    /* Decoded even without a callback, so validation never depends on which callbacks are set. */
    if (!nt_scratch_reserve(p, nt_utf8_bound(ev->payload_size) + NT_UTF8_SLACK))
        return nt_fail(p, NT_ERR_NOMEM, ev->offset, "cannot decode method strings");
    nt_cursor c = nt_cursor_make(ev->payload, ev->payload_size);
    nt_method m = { 0 };
    size_t pos = 0;
    m.which = which;
    m.version = ev->desc->version;
    if (!nt_cur_u64(&c, &m.method_id) || !nt_cur_u64(&c, &m.module_id) || !nt_cur_u64(&c, &m.start_address) ||
        !nt_cur_u32(&c, &m.size) || !nt_cur_u32(&c, &m.token) || !nt_cur_u32(&c, &m.flags) ||
        !read_str(p, &c, &pos, &m.declaring_type) || !read_str(p, &c, &pos, &m.name) ||
        !read_str(p, &c, &pos, &m.signature))
        return short_payload(p, ev, "method");
    if (m.version >= 1 && !nt_cur_u16(&c, &m.clr_instance_id))
        return short_payload(p, ev, "method");
    if (m.version >= 2 && !nt_cur_u64(&c, &m.rejit_id))
        return short_payload(p, ev, "method");
    m.timestamp = ev->timestamp;
    m.event = ev;
    return NT_CALL(p, method, &m);
}

static nt_status decode_module(nt_parser *p, const nt_event *ev, nt_record_event which, bool domain)
{
    p->stats.modules++;
    /* Decoded even without a callback, so validation never depends on which callbacks are set. */
    if (!nt_scratch_reserve(p, nt_utf8_bound(ev->payload_size) + NT_UTF8_SLACK))
        return nt_fail(p, NT_ERR_NOMEM, ev->offset, "cannot decode module strings");
    nt_cursor c = nt_cursor_make(ev->payload, ev->payload_size);
    nt_module m = { 0 };
    size_t pos = 0;
    uint32_t reserved;
    m.which = which;
    m.domain = domain;
    m.version = ev->desc->version;
    if (!nt_cur_u64(&c, &m.module_id) || !nt_cur_u64(&c, &m.assembly_id) ||
        (domain && !nt_cur_u64(&c, &m.app_domain_id)) || !nt_cur_u32(&c, &m.flags) ||
        !nt_cur_u32(&c, &reserved) || !read_str(p, &c, &pos, &m.il_path) ||
        !read_str(p, &c, &pos, &m.native_path))
        return short_payload(p, ev, "module");
    if (m.version >= 1 && !nt_cur_u16(&c, &m.clr_instance_id))
        return short_payload(p, ev, "module");
    m.timestamp = ev->timestamp;
    m.event = ev;
    return NT_CALL(p, module, &m);
}

static nt_status decode_assembly(nt_parser *p, const nt_event *ev, nt_record_event which)
{
    p->stats.assemblies++;
    /* Decoded even without a callback, so validation never depends on which callbacks are set. */
    if (!nt_scratch_reserve(p, nt_utf8_bound(ev->payload_size) + NT_UTF8_SLACK))
        return nt_fail(p, NT_ERR_NOMEM, ev->offset, "cannot decode assembly strings");
    nt_cursor c = nt_cursor_make(ev->payload, ev->payload_size);
    nt_assembly a = { 0 };
    size_t pos = 0;
    a.which = which;
    a.version = ev->desc->version;
    /* V1 inserted BindingID in the middle: not append-only, decode by version. */
    if (!nt_cur_u64(&c, &a.assembly_id) || !nt_cur_u64(&c, &a.app_domain_id) ||
        (a.version >= 1 && !nt_cur_u64(&c, &a.binding_id)) || !nt_cur_u32(&c, &a.flags) ||
        !read_str(p, &c, &pos, &a.name))
        return short_payload(p, ev, "assembly");
    if (a.version >= 1 && !nt_cur_u16(&c, &a.clr_instance_id))
        return short_payload(p, ev, "assembly");
    a.timestamp = ev->timestamp;
    a.event = ev;
    return NT_CALL(p, assembly, &a);
}

nt_status nt_dispatch_typed(nt_parser *p, const nt_event *ev)
{
    switch (ev->desc->kind) {
    case NT_KIND_METHOD_LOAD_VERBOSE: return decode_method(p, ev, NT_RECORD_LOAD);
    case NT_KIND_METHOD_UNLOAD_VERBOSE: return decode_method(p, ev, NT_RECORD_UNLOAD);
    case NT_KIND_METHOD_DC_START_VERBOSE: return decode_method(p, ev, NT_RECORD_DC_START);
    case NT_KIND_METHOD_DC_END_VERBOSE: return decode_method(p, ev, NT_RECORD_DC_END);
    case NT_KIND_MODULE_LOAD: return decode_module(p, ev, NT_RECORD_LOAD, false);
    case NT_KIND_MODULE_UNLOAD: return decode_module(p, ev, NT_RECORD_UNLOAD, false);
    case NT_KIND_DOMAIN_MODULE_LOAD: return decode_module(p, ev, NT_RECORD_LOAD, true);
    case NT_KIND_MODULE_DC_START: return decode_module(p, ev, NT_RECORD_DC_START, false);
    case NT_KIND_MODULE_DC_END: return decode_module(p, ev, NT_RECORD_DC_END, false);
    case NT_KIND_DOMAIN_MODULE_DC_START: return decode_module(p, ev, NT_RECORD_DC_START, true);
    case NT_KIND_DOMAIN_MODULE_DC_END: return decode_module(p, ev, NT_RECORD_DC_END, true);
    case NT_KIND_ASSEMBLY_LOAD: return decode_assembly(p, ev, NT_RECORD_LOAD);
    case NT_KIND_ASSEMBLY_UNLOAD: return decode_assembly(p, ev, NT_RECORD_UNLOAD);
    case NT_KIND_ASSEMBLY_DC_START: return decode_assembly(p, ev, NT_RECORD_DC_START);
    case NT_KIND_ASSEMBLY_DC_END: return decode_assembly(p, ev, NT_RECORD_DC_END);
    default: return NT_OK;
    }
}
