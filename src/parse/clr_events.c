/* Payload decoders for the runtime and rundown events the parser types
 * (samples take the inline path of deliver.h): keyed by (provider, event id)
 * at metadata time and by the metadata's version here.  Ids and addresses
 * are win:UInt64 in every template, so layouts do not depend on the pointer
 * size.  A version newer than the ones we know decodes its known prefix; a
 * payload too short for its version is malformed. */
#include "common/compiler.h"
#include "common/utf16.h"
#include "parse/deliver.h"

/* A record's strings, stored one after another: always found, in one pass
 * over them all (their terminators checked, so that validation never
 * depends on which callbacks are set), and handed out as spans; converted
 * into the scratch only when the record's callback is set and the consumer
 * did not ask for lazy names. */
typedef struct str_reader {
    cm_utf16_nuls z;          /* the terminators from the first string on */
    const uint8_t *start, *at; /* the first string's first byte, the next one's */
} str_reader;

/* The strings start at c. */
#if defined(__GNUC__)
CC_ALWAYS_INLINE
#endif
static inline void str_reader_start(str_reader *r, const cm_cursor *c)
{
    r->z = cm_utf16_nuls_begin(c->p, cm_cur_left(c) / 2);
    r->start = r->at = c->p;
}

#if defined(__GNUC__)
CC_ALWAYS_INLINE /* up to three per record: the call cost more than the scan */
#endif
static inline bool read_str(str_reader *r, nt_str16 *span)
{
    const uint8_t *end;
    if (!cm_utf16_nuls_next(&r->z, r->start, &end))
        return false;
    span->units = r->at;
    span->count = (uint32_t)((size_t)(end - r->at) / 2);
    r->at = end + 2;
    return true;
}

/* Moves c past the strings read. */
static inline void str_reader_done(const str_reader *r, cm_cursor *c) { c->p = r->at; }

/* Whether the record's strings are to be converted: its callback is set and
 * the consumer did not ask for lazy names. */
static inline bool want_utf8(const nt_parser *p, bool has_callback) { return has_callback && !p->lazy_names; }

/* The strings read, converted in one call: they and their terminators are
 * contiguous, and a zero unit converts to a NUL byte, so the output is the
 * strings, each NUL-terminated, one after another (surrogate pairs never
 * straddle a terminator).  utf8_of then finds each: at its unit offset when
 * everything was ASCII, else by walking the NULs.  [start, end): the strings
 * and their terminators. */
typedef struct utf8_strs {
    const char *dst;     /* the first string */
    const char *next;    /* the next one, when walking */
    const uint8_t *from; /* the first string's UTF-16 */
    bool ascii;
} utf8_strs;

static nt_status convert_strs(nt_parser *p, const nt_event *ev, const uint8_t *start, const uint8_t *end,
                              unsigned count, utf8_strs *u)
{
    size_t units = (size_t)(end - start) / 2;
    if (cm_utf8_bound(units) > p->str_cap && !ps_scratch_reserve(p, cm_utf8_bound(units)))
        return ps_fail(p, NT_ERR_NOMEM, ev->offset, "cannot decode record strings");
    u->ascii = cm_utf16_to_utf8(start, units, p->str) == units;
    u->dst = u->next = p->str;
    u->from = start;
    p->names_converted += count;
    return NT_OK;
}

/* The UTF-8 of the next string converted (span: its UTF-16). */
static inline const char *utf8_of(utf8_strs *u, nt_str16 span)
{
    if (u->ascii)
        return u->dst + (size_t)(span.units - u->from) / 2;
    const char *s = u->next;
    u->next += strlen(s) + 1;
    return s;
}

static nt_status short_payload(nt_parser *p, const nt_event *ev, const char *what)
{
    return ps_fail(p, NT_ERR_MALFORMED, ev->offset, "%s payload (version %u, %u bytes) is truncated", what,
                   ev->desc->version, ev->payload_size);
}

/* MethodLoadVerbose and kin: u64 method id, module id, start address; u32
 * size, token, flags; three strings; [u16 ClrInstanceID if V1+]; [u64
 * ReJITID if V2].  The fixed prefix is read with one bounds check: rundown
 * is mostly method records. */
static nt_status decode_method(nt_parser *p, const nt_event *ev, nt_record_event which)
{
    p->stats.methods++;
    nt_method m;
    if (!ps_method_extent(ev, &m.start_address, &m.size))
        return short_payload(p, ev, "method");
    const uint8_t *f = ev->payload;
    cm_cursor c = cm_cursor_make(f + PS_METHOD_FIXED, ev->payload_size - PS_METHOD_FIXED);
    str_reader r;
    str_reader_start(&r, &c);
    if (!read_str(&r, &m.declaring_type16) || !read_str(&r, &m.name16) || !read_str(&r, &m.signature16))
        return short_payload(p, ev, "method");
    str_reader_done(&r, &c);
    m.version = ev->desc->version;
    m.clr_instance_id = 0;
    m.rejit_id = 0;
    if (m.version >= 1 && !cm_cur_u16(&c, &m.clr_instance_id))
        return short_payload(p, ev, "method");
    if (m.version >= 2 && !cm_cur_u64(&c, &m.rejit_id))
        return short_payload(p, ev, "method");
    if (!p->cb.method)
        return NT_OK; /* validated: nobody reads the rest */
    m.declaring_type = m.name = m.signature = NULL;
    if (want_utf8(p, true)) { /* the callback is set */
        utf8_strs u = { 0 };
        nt_status s = convert_strs(p, ev, r.start, r.at, 3, &u);
        if (s)
            return s;
        m.declaring_type = utf8_of(&u, m.declaring_type16);
        m.name = utf8_of(&u, m.name16);
        m.signature = utf8_of(&u, m.signature16);
    }
    m.which = which;
    m.method_id = cm_le64(f);
    m.module_id = cm_le64(f + 8);
    m.token = cm_le32(f + 28);
    m.flags = cm_le32(f + 32);
    m.timestamp = ev->timestamp;
    m.event = ev;
    return PS_CALL(p, method, &m);
}

static nt_status decode_module(nt_parser *p, const nt_event *ev, nt_record_event which, bool domain)
{
    p->stats.modules++;
    cm_cursor c = cm_cursor_make(ev->payload, ev->payload_size);
    nt_module m = { 0 };
    uint32_t reserved;
    m.which = which;
    m.domain = domain;
    m.version = ev->desc->version;
    if (!cm_cur_u64(&c, &m.module_id) || !cm_cur_u64(&c, &m.assembly_id) ||
        (domain && !cm_cur_u64(&c, &m.app_domain_id)) || !cm_cur_u32(&c, &m.flags) ||
        !cm_cur_u32(&c, &reserved))
        return short_payload(p, ev, "module");
    str_reader r;
    str_reader_start(&r, &c);
    if (!read_str(&r, &m.il_path16) || !read_str(&r, &m.native_path16))
        return short_payload(p, ev, "module");
    str_reader_done(&r, &c);
    if (m.version >= 1 && !cm_cur_u16(&c, &m.clr_instance_id))
        return short_payload(p, ev, "module");
    if (want_utf8(p, p->cb.module != NULL)) {
        utf8_strs u = { 0 };
        nt_status s = convert_strs(p, ev, r.start, r.at, 2, &u);
        if (s)
            return s;
        m.il_path = utf8_of(&u, m.il_path16);
        m.native_path = utf8_of(&u, m.native_path16);
    }
    m.timestamp = ev->timestamp;
    m.event = ev;
    return PS_CALL(p, module, &m);
}

static nt_status decode_assembly(nt_parser *p, const nt_event *ev, nt_record_event which)
{
    p->stats.assemblies++;
    cm_cursor c = cm_cursor_make(ev->payload, ev->payload_size);
    nt_assembly a = { 0 };
    a.which = which;
    a.version = ev->desc->version;
    /* V1 inserted BindingID in the middle: not append-only, decode by version. */
    if (!cm_cur_u64(&c, &a.assembly_id) || !cm_cur_u64(&c, &a.app_domain_id) ||
        (a.version >= 1 && !cm_cur_u64(&c, &a.binding_id)) || !cm_cur_u32(&c, &a.flags))
        return short_payload(p, ev, "assembly");
    str_reader r;
    str_reader_start(&r, &c);
    if (!read_str(&r, &a.name16))
        return short_payload(p, ev, "assembly");
    str_reader_done(&r, &c);
    if (a.version >= 1 && !cm_cur_u16(&c, &a.clr_instance_id))
        return short_payload(p, ev, "assembly");
    if (want_utf8(p, p->cb.assembly != NULL)) {
        utf8_strs u = { 0 };
        nt_status s = convert_strs(p, ev, r.start, r.at, 1, &u);
        if (s)
            return s;
        a.name = utf8_of(&u, a.name16);
    }
    a.timestamp = ev->timestamp;
    a.event = ev;
    return PS_CALL(p, assembly, &a);
}

/* The four method kinds are in nt_record_event's order. */
_Static_assert(NT_KIND_METHOD_UNLOAD_VERBOSE - NT_KIND_METHOD_LOAD_VERBOSE == NT_RECORD_UNLOAD &&
                   NT_KIND_METHOD_DC_START_VERBOSE - NT_KIND_METHOD_LOAD_VERBOSE == NT_RECORD_DC_START &&
                   NT_KIND_METHOD_DC_END_VERBOSE - NT_KIND_METHOD_LOAD_VERBOSE == NT_RECORD_DC_END &&
                   NT_RECORD_LOAD == 0,
               "method kinds follow nt_record_event");

nt_status ps_dispatch_typed(nt_parser *p, const nt_event *ev)
{
    /* method records first, with one test: rundown is mostly them */
    unsigned method = (unsigned)ev->desc->kind - NT_KIND_METHOD_LOAD_VERBOSE;
    if (method <= NT_RECORD_DC_END)
        return decode_method(p, ev, (nt_record_event)method);
    switch (ev->desc->kind) {
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
