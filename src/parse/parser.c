/* The framing state machine: magic -> serialization header -> objects.
 *
 * Every state needs a known number of bytes (`need`).  When the caller's
 * chunk holds the whole unit it is decoded in place; otherwise the bytes are
 * gathered into `small` (headers) or `big` (block content, grown only as bytes
 * actually arrive and never beyond max_block_bytes).  A unit is decoded only
 * when complete, so the callbacks do not depend on how the input is chunked.
 */
#include "common/abi.h"
#include "common/format.h"
#include "common/limits.h"
#include "common/utf16.h"
#include "parse/blocks.h"
#include "parse/resume.h"

#include <stdio.h>
#include <string.h>

enum {
    ST_MAGIC,        /* 8: "Nettrace" */
    ST_AFTER_MAGIC,  /* 4: 20 (FastSerialization header length) or 0 (V6) */
    ST_FS_HEADER,    /* 20: "!FastSerialization.1" */
    ST_NETPERF_HEAD, /* 16 + 1 + 6: the rest of a NetPerf stream's "!FastSerialization.1", the Trace
                      * object's BeginObject, BeginObject NullReference version (read, then refused) */
    ST_V6_VERSION,   /* 8: major, minor */
    ST_OBJ_TAG,      /* 1: BeginPrivateObject or NullReference (end of stream) */
    ST_TYPE_HEADER,  /* 14: BeginPrivateObject NullReference version minReader nameLen */
    ST_TYPE_NAME,    /* nameLen + 1: name, EndObject */
    ST_TRACE,        /* 48 + 1: Trace payload, EndObject */
    ST_BLOCK_SIZE,   /* 4 */
    ST_BLOCK_PAD,    /* 0-3, skipped */
    ST_BLOCK_BODY,   /* BlockSize */
    ST_BLOCK_SKIP,   /* BlockSize of an unknown block, skipped */
    ST_END_OBJECT,   /* 1: EndObject */
    ST_DONE,         /* after the end-of-stream tag */
    ST_V6_BLOCK_HEADER, /* 4: BlockSize (24 bits) | BlockKind << 24 */
    ST_V6_BLOCK_BODY,   /* BlockSize, decoded by blocks_v6.c */
    ST_V6_BLOCK_SKIP    /* BlockSize of an unknown kind, skipped */
};

#define MAX_TYPE_NAME 64

nt_parser *nt_parser_new(const nt_callbacks *cb, void *user, const nt_limits *lim,
                         const nt_allocator *alloc)
{
    nt_limits given;
    nt_callbacks calls;
    if (!ABI_IN(nt_limits, &given, lim) || !ABI_IN(nt_callbacks, &calls, cb))
        return NULL;
    nt_parser *p = CM_MEM_NEW(nt_parser, alloc);
    if (!p)
        return NULL;
    p->cb = calls;
    p->user = user;
    cm_limits_resolve(&p->lim, &given);
    ps_metadata_init(&p->meta, &p->mem);
    ps_stacks_init(&p->stacks, &p->mem);
    ps_threads_init(&p->threads, p);
    ps_field_ctx_init(&p->fctx, &p->mem, &p->info, &p->lim);
    p->state = ST_MAGIC;
    p->need = 8;
    return p;
}

void nt_parser_free(nt_parser *p)
{
    if (!p)
        return;
    ps_v6_free(p);
    ps_metadata_free(&p->meta);
    ps_stacks_free(&p->stacks);
    cm_mem_free(&p->mem, p->big, p->big_cap);
    ps_threads_free(&p->threads, &p->mem);
    ps_fields_free(&p->fields, &p->mem);
    cm_mem_free(&p->mem, p->sp_threads, p->sp_threads_cap * sizeof *p->sp_threads);
    cm_mem_free(&p->mem, p->str, p->str_cap);
    ps_field_ctx_free(&p->fctx);
    CM_MEM_DELETE(nt_parser, p);
}

static ps_block_type block_type_of(const char *name, size_t len)
{
#define IS_(lit) (len == sizeof(lit) - 1 && memcmp(name, lit, len) == 0)
    if (IS_("EventBlock"))
        return PS_BLOCK_EVENT;
    if (IS_("MetadataBlock"))
        return PS_BLOCK_METADATA;
    if (IS_("StackBlock"))
        return PS_BLOCK_STACK;
    if (IS_("SPBlock"))
        return PS_BLOCK_SP;
    if (IS_("Trace"))
        return PS_BLOCK_TRACE;
#undef IS_
    return PS_BLOCK_UNKNOWN;
}

static void set_state(nt_parser *p, int state, size_t need)
{
    p->state = state;
    p->need = need;
}

/* A block's body decoded (status s) or skipped (NT_OK): on success the framing
 * goes on with the unit that follows a block in this format version. */
static nt_status after_block(nt_parser *p, nt_status s, int next, size_t need)
{
    if (s)
        return s;
    set_state(p, next, need);
    return NT_OK;
}

static nt_status parse_trace_object(nt_parser *p, const uint8_t *u)
{
    nt_trace_info *t = &p->info;
    uint16_t st[8];
    for (int i = 0; i < 8; i++)
        st[i] = cm_le16(u + 2 * i);
    t->sync_time_utc = (nt_systemtime){ st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7] };
    t->sync_qpc = (int64_t)cm_le64(u + 16);
    t->qpc_frequency = (int64_t)cm_le64(u + 24);
    t->pointer_size = cm_le32(u + 32);
    t->process_id = cm_le32(u + 36);
    t->processor_count = cm_le32(u + 40);
    t->sampling_interval_ns = cm_le32(u + 44);
    nt_status s = ps_trace_check_pointer_size(p, p->unit_off + 32);
    if (s)
        return s;
    if (u[48] != CM_TAG_END_OBJECT)
        return ps_fail(p, NT_ERR_MALFORMED, p->unit_off + 48, "Trace object does not end with EndObject");
    return ps_trace_commit(p);
}

/* The magic, or the FastSerialization header of a NetPerf stream. */
static nt_status at_magic(nt_parser *p, const uint8_t *u)
{
    if (memcmp(u, CM_FMT_MAGIC, CM_FMT_MAGIC_LEN) == 0) {
        set_state(p, ST_AFTER_MAGIC, 4);
        return NT_OK;
    }
    /* NetPerf: the FastSerialization header with no magic.  Framed as far
     * as its Trace object's version, which is then refused (and reported). */
    if (cm_le32(u) == 20 && memcmp(u + 4, CM_FMT_FS_HEADER, 4) == 0) {
        p->netperf = true;
        set_state(p, ST_NETPERF_HEAD, CM_FMT_FS_HEADER_LEN - 4 + 1 + 6);
        return NT_OK;
    }
    return ps_fail(p, NT_ERR_NOT_NETTRACE, 0, "no \"Nettrace\" magic");
}

/* What follows the magic: a FastSerialization header (V4/V5) or a V6 version header. */
static nt_status after_magic(nt_parser *p, const uint8_t *u)
{
    uint32_t v = cm_le32(u);
    if (v == 20) {
        set_state(p, ST_FS_HEADER, 20);
        return NT_OK;
    }
    if (v == 0) {
        set_state(p, ST_V6_VERSION, 8);
        return NT_OK;
    }
    return ps_fail(p, NT_ERR_NOT_NETTRACE, p->unit_off,
                   "neither a FastSerialization header nor a V6 version header follows the magic");
}

/* A NetPerf stream's head: its Trace object's version, reported and refused. */
static nt_status at_netperf_head(nt_parser *p, const uint8_t *u)
{
    const uint8_t *obj = u + CM_FMT_FS_HEADER_LEN - 4;
    if (memcmp(u, &CM_FMT_FS_HEADER[4], CM_FMT_FS_HEADER_LEN - 4) != 0 || obj[0] != CM_TAG_BEGIN_OBJECT ||
        obj[1] != CM_TAG_BEGIN_OBJECT || obj[2] != CM_TAG_NULL_REFERENCE)
        return ps_fail(p, NT_ERR_NOT_NETTRACE, 0, "no \"Nettrace\" magic");
    p->info.format_major = cm_le32(obj + 3); /* NetPerf's format version is its Trace object's version */
    return ps_fail(p, NT_ERR_UNSUPPORTED_VERSION, p->unit_off + (uint64_t)(obj + 3 - u),
                   "NetPerf stream of format version %u; only NetTrace V4/V5 and V6 are read",
                   p->info.format_major);
}

/* The V6 version header: major 6 only. */
static nt_status at_v6_version(nt_parser *p, const uint8_t *u)
{
    uint32_t major = cm_le32(u), minor = cm_le32(u + 4);
    p->info.format_major = major;
    p->info.format_minor = minor;
    if (major != 6) /* a higher major version is a breaking change; below 6 never had this header */
        return ps_fail(p, NT_ERR_UNSUPPORTED_VERSION, p->unit_off,
                       "NetTrace major version %u (this reader supports V4/V5 and V6)", major);
    nt_status s = ps_v6_begin(p);
    if (s)
        return s;
    set_state(p, ST_V6_BLOCK_HEADER, 4);
    return NT_OK;
}

/* A V6 block header: its body to decode or skip next, or the end of the stream. */
static nt_status at_v6_block_header(nt_parser *p, const uint8_t *u)
{
    uint32_t size = 0;
    ps_v6_next next = PS_V6_BODY;
    nt_status s = ps_v6_block_header(p, u, &size, &next);
    if (s)
        return s;
    if (next == PS_V6_END) {
        p->ended = true;
        set_state(p, ST_DONE, 0);
    } else {
        set_state(p, next == PS_V6_BODY ? ST_V6_BLOCK_BODY : ST_V6_BLOCK_SKIP, size);
    }
    return NT_OK;
}

/* Where an object may start (V4/V5): BeginPrivateObject, or the end of the stream. */
static nt_status at_object_tag(nt_parser *p, const uint8_t *u)
{
    if (u[0] == CM_TAG_NULL_REFERENCE) { /* where an object would start: end of stream */
        if (!p->have_trace)
            return ps_fail(p, NT_ERR_MALFORMED, p->unit_off, "stream ends before the Trace object");
        p->ended = true;
        set_state(p, ST_DONE, 0);
        return NT_OK;
    }
    if (u[0] != CM_TAG_BEGIN_PRIVATE_OBJECT)
        return ps_fail(p, NT_ERR_MALFORMED, p->unit_off,
                       "expected BeginPrivateObject (0x05) or end of stream (0x01), found 0x%02x", u[0]);
    set_state(p, ST_TYPE_HEADER, 14);
    return NT_OK;
}

/* An object's type header: its version, the reader version it needs, its name's length. */
static nt_status at_type_header(nt_parser *p, const uint8_t *u)
{
    if (u[0] != CM_TAG_BEGIN_PRIVATE_OBJECT || u[1] != CM_TAG_NULL_REFERENCE)
        return ps_fail(p, NT_ERR_MALFORMED, p->unit_off, "bad object type header");
    p->obj_version = cm_le32(u + 2);
    uint32_t min_reader = cm_le32(u + 6);
    uint32_t name_len = cm_le32(u + 10);
    if (name_len == 0 || name_len > MAX_TYPE_NAME)
        return ps_fail(p, NT_ERR_MALFORMED, p->unit_off + 10, "type name length %u out of range (1..%d)",
                       name_len, MAX_TYPE_NAME);
    if (!p->have_trace && min_reader > 4)
        return ps_fail(p, NT_ERR_UNSUPPORTED_VERSION, p->unit_off + 6,
                       "Trace object needs reader version %u (this reader is version 4)", min_reader);
    p->info.object_version = p->have_trace ? p->info.object_version : p->obj_version;
    p->info.min_reader_version = p->have_trace ? p->info.min_reader_version : min_reader;
    set_state(p, ST_TYPE_NAME, name_len + 1);
    return NT_OK;
}

/* An object's type name: the Trace object first, then blocks. */
static nt_status at_type_name(nt_parser *p, const uint8_t *u)
{
    size_t len = p->need - 1;
    if (u[len] != CM_TAG_END_OBJECT)
        return ps_fail(p, NT_ERR_MALFORMED, p->unit_off + len, "type header does not end with EndObject");
    p->btype = block_type_of((const char *)u, len);
    if (!p->have_trace) {
        if (p->btype != PS_BLOCK_TRACE)
            return ps_fail(p, NT_ERR_MALFORMED, p->unit_off, "the first object is %.*s, not Trace",
                           (int)len, (const char *)u);
        if (p->obj_version < 4)
            return ps_fail(p, NT_ERR_UNSUPPORTED_VERSION, p->unit_off,
                           "Trace object version %u (NetPerf); only NetTrace V4/V5 and V6 are read",
                           p->obj_version);
        set_state(p, ST_TRACE, 49);
        return NT_OK;
    }
    if (p->btype == PS_BLOCK_TRACE)
        return ps_fail(p, NT_ERR_MALFORMED, p->unit_off, "a second Trace object");
    set_state(p, ST_BLOCK_SIZE, 4);
    return NT_OK;
}

/* A V4/V5 block's size, then the padding that aligns its content. */
static nt_status at_block_size(nt_parser *p, const uint8_t *u)
{
    uint32_t size = cm_le32(u);
    if (size > INT32_MAX)
        return ps_fail(p, NT_ERR_MALFORMED, p->unit_off, "negative block size");
    if (size > p->lim.max_block_bytes)
        return ps_fail(p, NT_ERR_LIMIT, p->unit_off, "block of %u bytes exceeds max_block_bytes (%u)", size,
                       p->lim.max_block_bytes);
    /* Padding aligns the content to the absolute stream offset. */
    uint64_t after = p->unit_off + 4;
    p->block_size = size;
    set_state(p, ST_BLOCK_PAD, (size_t)((4 - (after & 3)) & 3));
    return NT_OK;
}

/* Decode one complete unit of p->need bytes at u and choose the next state. */
static nt_status step(nt_parser *p, const uint8_t *u)
{
    switch (p->state) {
    case ST_MAGIC:
        return at_magic(p, u);
    case ST_AFTER_MAGIC:
        return after_magic(p, u);
    case ST_FS_HEADER:
        if (memcmp(u, CM_FMT_FS_HEADER, CM_FMT_FS_HEADER_LEN) != 0)
            return ps_fail(p, NT_ERR_NOT_NETTRACE, p->unit_off, "bad \"!FastSerialization.1\" header");
        p->info.format_major = 4;
        set_state(p, ST_OBJ_TAG, 1);
        return NT_OK;
    case ST_NETPERF_HEAD:
        return at_netperf_head(p, u);
    case ST_V6_VERSION:
        return at_v6_version(p, u);
    case ST_V6_BLOCK_HEADER:
        return at_v6_block_header(p, u);
    case ST_V6_BLOCK_BODY:
        return after_block(p, ps_v6_decode_block(p, u, p->need), ST_V6_BLOCK_HEADER, 4);
    case ST_V6_BLOCK_SKIP:
        return after_block(p, NT_OK, ST_V6_BLOCK_HEADER, 4);
    case ST_OBJ_TAG:
        return at_object_tag(p, u);
    case ST_TYPE_HEADER:
        return at_type_header(p, u);
    case ST_TYPE_NAME:
        return at_type_name(p, u);
    case ST_TRACE: {
        nt_status s = parse_trace_object(p, u);
        if (s)
            return s;
        set_state(p, ST_OBJ_TAG, 1);
        return NT_OK;
    }
    case ST_BLOCK_SIZE:
        return at_block_size(p, u);
    case ST_BLOCK_PAD:
        if (p->btype == PS_BLOCK_UNKNOWN) {
            p->stats.unknown_blocks++;
            set_state(p, ST_BLOCK_SKIP, p->block_size);
        } else {
            set_state(p, ST_BLOCK_BODY, p->block_size);
        }
        return NT_OK;
    case ST_BLOCK_BODY:
        return after_block(p, ps_v4_decode_block(p, u, p->need), ST_END_OBJECT, 1);
    case ST_BLOCK_SKIP:
        return after_block(p, NT_OK, ST_END_OBJECT, 1);
    case ST_END_OBJECT:
        if (u[0] != CM_TAG_END_OBJECT)
            return ps_fail(p, NT_ERR_MALFORMED, p->unit_off, "block does not end with EndObject (found 0x%02x)",
                           u[0]);
        set_state(p, ST_OBJ_TAG, 1);
        return NT_OK;
    default:
        return ps_fail(p, NT_ERR_MALFORMED, p->unit_off, "internal parser state %d", p->state);
    }
}

/* Make the gather buffer hold n bytes, growing geometrically (at most need). */
static bool gather_reserve(nt_parser *p, size_t n)
{
    if (n <= p->big_cap)
        return true;
    size_t cap = p->big_cap ? p->big_cap : 4096;
    while (cap < n)
        cap *= 2;
    if (cap > p->need)
        cap = p->need;
    if (!cm_mem_resize(&p->mem, (void **)&p->big, p->big_cap, cap))
        return false;
    p->big_cap = cap;
    return true;
}

nt_status nt_parser_feed(nt_parser *p, const void *data, size_t len)
{
    if (!p)
        return NT_ERR_INVALID_ARG;
    if (p->status)
        return p->status;
    if (!data && len)
        return ps_fail(p, NT_ERR_INVALID_ARG, p->offset, "NULL data with a non-zero length");
    const uint8_t *d = data;
    for (;;) {
        if (p->state == ST_DONE) {
            p->trailing += len;
            p->offset += len;
            break;
        }
        if (p->need == 0) { /* empty padding or an empty block: nothing to wait for */
            p->unit_off = p->offset;
            nt_status s = step(p, p->small); /* never NULL: decoders build cursors from it */
            if (s)
                return s;
            continue;
        }
        if (!len)
            break;
        if (p->have == 0 && len >= p->need) { /* the whole unit is here: decode in place */
            size_t n = p->need;
            p->unit_off = p->offset;
            nt_status s = step(p, d);
            d += n;
            len -= n;
            p->offset += n;
            if (s)
                return s;
            continue;
        }
        if (p->have == 0)
            p->unit_off = p->offset;
        size_t take = p->need - p->have < len ? p->need - p->have : len;
        uint8_t *buf = NULL; /* a unit that is skipped (padding, an unknown block) is counted, not kept */
        if (p->state != ST_BLOCK_SKIP && p->state != ST_BLOCK_PAD && p->state != ST_V6_BLOCK_SKIP) {
            buf = p->small;
            if (p->need > PS_SMALL_UNIT) {
                if (!gather_reserve(p, p->have + take))
                    return ps_fail(p, NT_ERR_NOMEM, p->offset, "cannot buffer a block of %zu bytes", p->need);
                buf = p->big;
            }
            memcpy(buf + p->have, d, take);
        }
        p->have += take;
        p->offset += take;
        d += take;
        len -= take;
        if (p->have == p->need) {
            p->have = 0;
            nt_status s = step(p, buf);
            if (s)
                return s;
        }
    }
    p->stats.bytes = p->offset;
    return NT_OK;
}

nt_status nt_parser_finish(nt_parser *p)
{
    if (!p)
        return NT_ERR_INVALID_ARG;
    if (p->status)
        return p->status;
    p->stats.bytes = p->offset;
    if (p->ended)
        return p->stats.events ? NT_OK
                               : ps_fail(p, NT_ERR_NO_EVENTS, p->offset, "the stream holds no events");
    if (!p->have_trace) {
        if (p->offset == 0)
            return ps_fail(p, NT_ERR_NOT_NETTRACE, 0, "empty input");
        if (p->state == ST_MAGIC)
            return ps_fail(p, NT_ERR_NOT_NETTRACE, 0, "input shorter than the magic");
        if (p->netperf) /* cut before its version: refused all the same */
            return ps_fail(p, NT_ERR_UNSUPPORTED_VERSION, 0, "NetPerf stream; only NetTrace V4/V5 and V6 are read");
        return ps_fail(p, NT_ERR_TRUNCATED, p->unit_off, "the stream ends inside its header");
    }
    /* Ended at an object boundary with no events at all: a header and nothing else. */
    const bool boundary = p->state == ST_OBJ_TAG || p->state == ST_V6_BLOCK_HEADER;
    if (boundary && p->have == 0 && p->stats.events == 0)
        return ps_fail(p, NT_ERR_NO_EVENTS, p->offset, "the stream holds no events and has no end-of-stream tag");
    uint64_t at = p->have || !boundary ? p->unit_off : p->offset;
    /* Report where the incomplete object began, when we know it. */
    return ps_fail(p, NT_ERR_TRUNCATED, at, "the stream ends without its end-of-stream tag");
}

bool ps_parser_at_block(const nt_parser *p)
{
    return p->status == NT_OK && p->have == 0 && p->have_trace &&
           (p->state == ST_OBJ_TAG || p->state == ST_V6_BLOCK_HEADER);
}

bool ps_parser_seek_block(nt_parser *p, uint64_t offset)
{
    if (!ps_parser_at_block(p) || offset < p->offset)
        return false;
    p->offset = p->unit_off = offset;
    return true;
}

/* The windowed read's skip: the one seek above, and the blocks skipped break every thread's sequence. */
nt_status ps_parser_skip_to(nt_parser *p, uint64_t off)
{
    if (p->status)
        return p->status;
    if (off == p->offset)
        return NT_OK;
    if (!ps_parser_seek_block(p, off))
        return ps_fail(p, NT_ERR_MALFORMED, p->offset,
                       "the index places a block at byte %llu, but the stream's unit there ends elsewhere",
                       (unsigned long long)off);
    ps_threads_forget_sequence(&p->threads);
    return NT_OK;
}

nt_status nt_parser_status(const nt_parser *p) { return p ? p->status : NT_ERR_INVALID_ARG; }
uint64_t nt_parser_offset(const nt_parser *p) { return p ? p->offset : 0; }
uint64_t nt_parser_error_offset(const nt_parser *p) { return p ? p->err_offset : 0; }

const char *nt_parser_message(const nt_parser *p)
{
    if (!p || p->status == NT_OK)
        return ""; /* the library's one convention: "" when there is no failure to describe */
    return p->msg;
}

const nt_trace_info *nt_parser_trace_info(const nt_parser *p)
{
    return p && p->have_trace ? &p->info : NULL;
}

uint32_t nt_parser_format_version(const nt_parser *p)
{
    return p ? p->info.format_major : 0;
}

void nt_parser_stats_get(const nt_parser *p, nt_parser_stats *out)
{
    nt_parser_stats st = { 0 };
    if (p) {
        st = p->stats;
        st.bytes = p->offset;
        st.memory = p->mem.used;
        st.memory_peak = p->mem.peak;
    }
    ABI_OUT(nt_parser_stats, out, &st);
}

void nt_parser_set_lazy_names(nt_parser *p, bool lazy)
{
    if (p)
        p->lazy_names = lazy;
}

int64_t nt_parser_time_ns(const nt_parser *p, int64_t ticks)
{
    return p && p->have_trace ? ps_parser_ticks_to_ns(p, ticks) : 0;
}

nt_status nt_parse_buffer(const void *data, size_t len, const nt_callbacks *cb, void *user,
                          const nt_limits *lim, char *msg, size_t msg_size)
{
    nt_parser *p = nt_parser_new(cb, user, lim, NULL);
    if (!p) {
        if (msg && msg_size)
            snprintf(msg, msg_size, "out_of_memory: cannot create a parser");
        return NT_ERR_NOMEM;
    }
    nt_status s = nt_parser_feed(p, data, len);
    if (s == NT_OK)
        s = nt_parser_finish(p);
    if (msg && msg_size)
        snprintf(msg, msg_size, "%s", nt_parser_message(p));
    nt_parser_free(p);
    return s;
}
