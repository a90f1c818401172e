/* Payload decoders for the runtime and rundown events the parser types
 * (samples take the inline path of deliver.h): keyed by (provider, event id)
 * at metadata time and by the metadata's version here.  Ids and addresses
 * are win:UInt64 in every template, so layouts do not depend on the pointer
 * size.  A version newer than the ones we know decodes its known prefix; a
 * payload too short for its version is malformed. */
#include "common/utf16.h"
#include "parse/deliver.h"

/* A record's strings: always found (their terminators checked, so that
 * validation never depends on which callbacks are set) and handed out as
 * spans; converted into the scratch only when the record's callback is set
 * and the consumer did not ask for lazy names. */
typedef struct str_reader {
    nt_parser *p;
    bool convert;
    size_t pos; /* scratch bytes used */
} str_reader;

static inline nt_status str_reader_begin(str_reader *r, nt_parser *p, const nt_event *ev, bool has_callback)
{
    r->p = p;
    r->convert = has_callback && !p->lazy_names;
    r->pos = 0;
    if (r->convert && !nt_scratch_reserve(p, nt_utf8_bound(ev->payload_size) + NT_UTF8_SLACK))
        return nt_fail(p, NT_ERR_NOMEM, ev->offset, "cannot decode record strings");
    return NT_OK;
}

#if defined(__GNUC__)
__attribute__((always_inline)) /* three per record: the call cost more than the scan */
#endif
static inline bool read_str(str_reader *r, nt_cursor *c, const char **out, nt_str16 *span)
{
    const uint8_t *start = c->p;
    if (r->convert) {
        char *dst = r->p->str + r->pos;
        size_t n;
        if (!nt_utf16z_to_utf8(c, dst, &n))
            return false;
        r->pos += n + 1;
        r->p->names_converted++;
        *out = dst;
        span->units = start;
        span->count = (uint32_t)((size_t)(c->p - start) / 2 - 1);
        return true;
    }
    size_t units;
    if (!nt_utf16z_scan(c, &span->units, &units))
        return false;
    span->count = (uint32_t)units;
    *out = NULL;
    return true;
}

static nt_status short_payload(nt_parser *p, const nt_event *ev, const char *what)
{
    return nt_fail(p, NT_ERR_MALFORMED, ev->offset, "%s payload (version %u, %u bytes) is truncated", what,
                   ev->desc->version, ev->payload_size);
}

/* MethodLoadVerbose and kin: u64 method id, module id, start address; u32
 * size, token, flags; three strings; [u16 ClrInstanceID if V1+]; [u64
 * ReJITID if V2].  The fixed prefix is read with one bounds check: rundown
 * is mostly method records. */
static nt_status decode_method(nt_parser *p, const nt_event *ev, nt_record_event which)
{
    p->stats.methods++;
    str_reader r;
    nt_status s = str_reader_begin(&r, p, ev, p->cb.method != NULL);
    if (s)
        return s;
    if (ev->payload_size < 36)
        return short_payload(p, ev, "method");
    const uint8_t *f = ev->payload;
    nt_method m;
    m.which = which;
    m.version = ev->desc->version;
    m.method_id = nt_le64(f);
    m.module_id = nt_le64(f + 8);
    m.start_address = nt_le64(f + 16);
    m.size = nt_le32(f + 24);
    m.token = nt_le32(f + 28);
    m.flags = nt_le32(f + 32);
    m.clr_instance_id = 0;
    m.rejit_id = 0;
    nt_cursor c = nt_cursor_make(f + 36, ev->payload_size - 36);
    if (!read_str(&r, &c, &m.declaring_type, &m.declaring_type16) || !read_str(&r, &c, &m.name, &m.name16) ||
        !read_str(&r, &c, &m.signature, &m.signature16))
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
    str_reader r;
    nt_status s = str_reader_begin(&r, p, ev, p->cb.module != NULL);
    if (s)
        return s;
    nt_cursor c = nt_cursor_make(ev->payload, ev->payload_size);
    nt_module m = { 0 };
    uint32_t reserved;
    m.which = which;
    m.domain = domain;
    m.version = ev->desc->version;
    if (!nt_cur_u64(&c, &m.module_id) || !nt_cur_u64(&c, &m.assembly_id) ||
        (domain && !nt_cur_u64(&c, &m.app_domain_id)) || !nt_cur_u32(&c, &m.flags) ||
        !nt_cur_u32(&c, &reserved) || !read_str(&r, &c, &m.il_path, &m.il_path16) ||
        !read_str(&r, &c, &m.native_path, &m.native_path16))
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
    str_reader r;
    nt_status s = str_reader_begin(&r, p, ev, p->cb.assembly != NULL);
    if (s)
        return s;
    nt_cursor c = nt_cursor_make(ev->payload, ev->payload_size);
    nt_assembly a = { 0 };
    a.which = which;
    a.version = ev->desc->version;
    /* V1 inserted BindingID in the middle: not append-only, decode by version. */
    if (!nt_cur_u64(&c, &a.assembly_id) || !nt_cur_u64(&c, &a.app_domain_id) ||
        (a.version >= 1 && !nt_cur_u64(&c, &a.binding_id)) || !nt_cur_u32(&c, &a.flags) ||
        !read_str(&r, &c, &a.name, &a.name16))
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
