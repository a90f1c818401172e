/* Payload field decoding: walks an event's layout (its metadata fields, or
 * the runtime table's) over the payload one value per call, so a caller pays
 * only for the fields it reads.  Every length and count is checked against
 * the payload before use; arrays are bounded by max_array_elements and by
 * the bytes left, nesting by max_field_depth, so a hostile payload costs at
 * most linear work and gives an error with its payload offset. */
#include "parse/field_decode.h"
#include "parse/clr_event_table.h"
#include "common/cursor.h"
#include "common/utf16.h"

#include <string.h>

enum { FRAME_STRUCT, FRAME_ARRAY };

/* One layout node, whichever table it comes from. */
typedef struct node {
    const char *name;
    uint32_t type, elem, depth, ref, fixed;
} node;

void ps_field_ctx_init(struct nt_field_ctx *c, cm_mem *mem, const nt_trace_info *info, const nt_limits *lim)
{
    memset(c, 0, sizeof *c);
    c->mem = mem;
    c->info = info;
    c->max_array_elements = lim->max_array_elements;
    c->max_depth = lim->max_field_depth > NT_FIELD_ITER_MAX_DEPTH ? NT_FIELD_ITER_MAX_DEPTH : lim->max_field_depth;
}

void ps_field_ctx_free(struct nt_field_ctx *c)
{
    cm_mem_free(c->mem, c->buf, c->cap);
    c->buf = NULL;
    c->cap = 0;
}

static void node_at(const nt_field_iter *it, uint32_t i, node *n)
{
    if (it->schema_) {
        const ps_schema_field *f = (const ps_schema_field *)it->fields_ + i;
        *n = (node){ f->name, f->type, f->elem, f->depth, f->ref, f->fixed };
    } else {
        const nt_field *f = (const nt_field *)it->fields_ + i;
        *n = (node){ f->name ? f->name : "", f->type, f->element_type, f->depth, 0, 0 };
    }
}

static uint32_t node_depth(const nt_field_iter *it, uint32_t i)
{
    return it->schema_ ? ((const ps_schema_field *)it->fields_)[i].depth : ((const nt_field *)it->fields_)[i].depth;
}

/* The index after node i's last descendant. */
static uint32_t subtree_end(const nt_field_iter *it, uint32_t i)
{
    uint32_t d = node_depth(it, i), j = i + 1;
    while (j < it->nfields_ && node_depth(it, j) > d)
        j++;
    return j;
}

static uint32_t child_count(const nt_field_iter *it, uint32_t first, uint32_t end)
{
    uint32_t n = 0;
    for (uint32_t j = first; j < end; j = subtree_end(it, j))
        n++;
    return n;
}

static bool fail(nt_field_iter *it, nt_status s, uint32_t off, const char *msg)
{
    it->status = s;
    it->error_offset = off;
    it->message = msg;
    it->done_ = true;
    return false;
}

nt_status nt_event_fields_begin(const nt_event *ev, nt_field_iter *it)
{
    memset(it, 0, offsetof(nt_field_iter, stack_));
    it->message = "";
    it->ev_ = ev;
    if (!ev || !ev->field_ctx) {
        fail(it, NT_ERR_STATE, 0, "fields can be read only during a parser callback");
        return NT_ERR_STATE;
    }
    const nt_event_desc *d = ev->desc;
    if (d && d->field_count && d->fields) {
        it->fields_ = d->fields;
        it->nfields_ = d->field_count;
    } else if (d && d->schema) {
        it->fields_ = d->schema->fields;
        it->nfields_ = d->schema->field_count;
        it->schema_ = true;
    }
    it->stack_[0] = (struct nt_field_frame_){ 0, it->nfields_, 0, 0, 0, 0, 0, FRAME_STRUCT };
    it->sp_ = 1;
    /* Strings land at 1.5 x their payload offset: a UTF-16 string of n units
     * at offset o needs at most 3n + 1 bytes and the next one starts at
     * o + 2n + 2 or later, so no string overwrites another and a second pass
     * over the same event writes the same bytes to the same places. */
    struct nt_field_ctx *c = ev->field_ctx;
    size_t need = (size_t)ev->payload_size + ev->payload_size / 2 + 8;
    if (it->nfields_ && need > c->cap) {
        size_t cap = c->cap ? c->cap : 256;
        while (cap < need)
            cap *= 2;
        if (!cm_mem_resize(c->mem, (void **)&c->buf, c->cap, cap)) {
            fail(it, NT_ERR_NOMEM, 0, "out of memory for field strings");
            return NT_ERR_NOMEM;
        }
        c->cap = cap;
    }
    return NT_OK;
}

static bool need(nt_field_iter *it, size_t n)
{
    if (it->ev_->payload_size - it->pos_ < n)
        return fail(it, NT_ERR_MALFORMED, it->pos_, "payload too short for its layout");
    return true;
}

static bool read_count(nt_field_iter *it, const node *n, uint32_t *count)
{
    if (!it->schema_) {
        /* self-describing arrays carry a u16 element count */
        if (!need(it, 2))
            return false;
        *count = cm_le16(it->ev_->payload + it->pos_);
        it->pos_ += 2;
        return true;
    }
    if (!n->ref) {
        *count = n->fixed;
        return true;
    }
    uint64_t v = n->ref <= PS_SCHEMA_MAX_REF ? it->ints_[n->ref - 1] : 0;
    if (v > UINT32_MAX)
        return fail(it, NT_ERR_MALFORMED, it->pos_, "count field out of range");
    *count = (uint32_t)v;
    return true;
}

/* A type of fixed size at p (left bytes there) into out: its size, with the
 * value read when left holds it; 0 when t has no fixed size. */
static size_t fixed_scalar(const nt_field_iter *it, const uint8_t *p, size_t left, uint32_t t, nt_field_value *out)
{
    switch (t) {
    case NT_TYPE_BOOLEAN32:
        if (left >= 4)
            out->v.u = cm_le32(p) != 0;
        out->kind = NT_VALUE_BOOL;
        return 4;
    case NT_TYPE_BOOLEAN8:
        if (left >= 1)
            out->v.u = p[0] != 0;
        out->kind = NT_VALUE_BOOL;
        return 1;
    case NT_TYPE_SBYTE:
        if (left >= 1)
            out->v.i = (int8_t)p[0];
        out->kind = NT_VALUE_INT;
        return 1;
    case NT_TYPE_BYTE:
    case NT_TYPE_UTF8_CHAR:
        if (left >= 1)
            out->v.u = p[0];
        out->kind = NT_VALUE_UINT;
        return 1;
    case NT_TYPE_INT16:
        if (left >= 2)
            out->v.i = (int16_t)cm_le16(p);
        out->kind = NT_VALUE_INT;
        return 2;
    case NT_TYPE_CHAR:
    case NT_TYPE_UINT16:
        if (left >= 2)
            out->v.u = cm_le16(p);
        out->kind = NT_VALUE_UINT;
        return 2;
    case NT_TYPE_INT32:
        if (left >= 4)
            out->v.i = (int32_t)cm_le32(p);
        out->kind = NT_VALUE_INT;
        return 4;
    case NT_TYPE_UINT32:
    case NT_TYPE_RELLOC:
    case NT_TYPE_DATALOC:
        if (left >= 4)
            out->v.u = cm_le32(p);
        out->kind = NT_VALUE_UINT;
        return 4;
    case NT_TYPE_INT64:
    case NT_TYPE_DATETIME:
        if (left >= 8)
            out->v.i = (int64_t)cm_le64(p);
        out->kind = t == NT_TYPE_INT64 ? NT_VALUE_INT : NT_VALUE_DATETIME;
        return 8;
    case NT_TYPE_UINT64:
        if (left >= 8)
            out->v.u = cm_le64(p);
        out->kind = NT_VALUE_UINT;
        return 8;
    case NT_TYPE_POINTER: {
        uint32_t ps = it->ev_->field_ctx->info->pointer_size == 4 ? 4 : 8;
        if (left >= ps)
            out->v.u = ps == 4 ? cm_le32(p) : cm_le64(p);
        out->kind = NT_VALUE_UINT;
        return ps;
    }
    case NT_TYPE_SINGLE:
        if (left >= 4) {
            uint32_t b = cm_le32(p);
            float f;
            memcpy(&f, &b, 4);
            out->v.f = f;
        }
        out->kind = NT_VALUE_FLOAT;
        return 4;
    case NT_TYPE_DOUBLE:
        if (left >= 8) {
            uint64_t b = cm_le64(p);
            memcpy(&out->v.f, &b, 8);
        }
        out->kind = NT_VALUE_FLOAT;
        return 8;
    case NT_TYPE_GUID:
        if (left >= 16)
            memcpy(out->v.guid, p, 16);
        out->kind = NT_VALUE_GUID;
        return 16;
    case NT_TYPE_DECIMAL:
        out->v.bin.ptr = p;
        out->v.bin.len = 16;
        out->kind = NT_VALUE_BINARY;
        return 16;
    default:
        return 0;
    }
}

/* A VarInt (zigzag) or VarUInt at p into out, its bytes into *size. */
static bool var_integer(nt_field_iter *it, const uint8_t *p, size_t left, uint32_t t, nt_field_value *out,
                        size_t *size)
{
    cm_cursor c = cm_cursor_make(p, left);
    uint64_t v;
    if (!cm_cur_varu64(&c, &v))
        return fail(it, NT_ERR_MALFORMED, it->pos_, "bad variable-length integer");
    *size = (size_t)(c.p - p);
    if (t == NT_TYPE_VARINT) {
        out->v.i = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
        out->kind = NT_VALUE_INT;
    } else {
        out->v.u = v;
        out->kind = NT_VALUE_UINT;
    }
    return true;
}

/* Where a string field's UTF-8 goes in the event's field buffer: at 1.5
 * times its payload offset, since its UTF-8 (NUL included) takes at most 1.5
 * bytes per payload byte, so no string's text overwrites the next one's. */
static char *string_room(const nt_field_iter *it) { return it->ev_->field_ctx->buf + it->pos_ + it->pos_ / 2; }

/* A NUL-terminated UTF-16 string at p into out (as UTF-8), its bytes into *size. */
static bool utf16_string(nt_field_iter *it, const uint8_t *p, size_t left, nt_field_value *out, size_t *size)
{
    cm_cursor c = cm_cursor_make(p, left);
    const uint8_t *s;
    size_t units;
    if (!cm_utf16z_scan(&c, &s, &units))
        return fail(it, NT_ERR_MALFORMED, it->pos_, "string without its terminator");
    char *dst = string_room(it);
    out->v.str.len = cm_utf16_to_utf8(s, units, dst);
    out->v.str.ptr = dst;
    out->kind = NT_VALUE_STRING;
    *size = (size_t)(c.p - p);
    return true;
}

/* A NUL-terminated byte string at p into out, its bytes into *size.  The
 * code page is not in the trace: ASCII passes, other bytes become '?', so
 * the value is valid UTF-8 and no longer than its bytes. */
static bool ansi_string(nt_field_iter *it, const uint8_t *p, size_t left, nt_field_value *out, size_t *size)
{
    const uint8_t *z = memchr(p, 0, left);
    if (!z)
        return fail(it, NT_ERR_MALFORMED, it->pos_, "string without its terminator");
    char *dst = string_room(it);
    size_t len = (size_t)(z - p);
    for (size_t k = 0; k < len; k++)
        dst[k] = p[k] < 0x80 ? (char)p[k] : '?';
    dst[len] = 0;
    out->v.str.ptr = dst;
    out->v.str.len = len;
    out->kind = NT_VALUE_STRING;
    *size = len + 1;
    return true;
}

/* One scalar of type t at the cursor into out. */
static bool scalar(nt_field_iter *it, const node *n, uint32_t t, nt_field_value *out)
{
    const uint8_t *p = it->ev_->payload + it->pos_;
    size_t left = it->ev_->payload_size - it->pos_;
    out->type = t;
    /* the table-only types have no wire code: in metadata they are unknown */
    if (!it->schema_ && (t == NT_TYPE_POINTER || t == NT_TYPE_BINARY || t == NT_TYPE_ANSI_STRING))
        return fail(it, NT_ERR_MALFORMED, it->pos_, "field of an unknown type");
    size_t size = fixed_scalar(it, p, left, t, out);
    if (size == 0) {
        bool ok;
        uint32_t len;
        switch (t) {
        case NT_TYPE_BINARY:
            if (!(ok = read_count(it, n, &len)))
                break;
            size = len;
            out->v.bin.ptr = p;
            out->v.bin.len = len;
            out->kind = NT_VALUE_BINARY;
            break;
        case NT_TYPE_VARINT:
        case NT_TYPE_VARUINT:
            ok = var_integer(it, p, left, t, out, &size);
            break;
        case NT_TYPE_STRING:
            ok = utf16_string(it, p, left, out, &size);
            break;
        case NT_TYPE_ANSI_STRING:
            ok = ansi_string(it, p, left, out, &size);
            break;
        default:
            return fail(it, NT_ERR_MALFORMED, it->pos_, "field of an unknown type");
        }
        if (!ok)
            return false;
    }
    if (left < size)
        return fail(it, NT_ERR_MALFORMED, it->pos_, "payload too short for its layout");
    out->offset = it->pos_;
    it->pos_ += (uint32_t)size;
    return true;
}

static bool push(nt_field_iter *it, struct nt_field_frame_ f)
{
    if (it->sp_ > it->ev_->field_ctx->max_depth || it->sp_ > NT_FIELD_ITER_MAX_DEPTH)
        return fail(it, NT_ERR_LIMIT, it->pos_, "fields nested deeper than max_field_depth");
    it->stack_[it->sp_++] = f;
    return true;
}

/* A struct: its BEGIN value and a frame over its fields. */
static bool begin_struct(nt_field_iter *it, uint32_t owner, nt_field_value *out)
{
    uint32_t end = subtree_end(it, owner);
    out->kind = NT_VALUE_STRUCT_BEGIN;
    out->type = NT_TYPE_OBJECT;
    out->count = child_count(it, owner + 1, end);
    out->offset = it->pos_;
    return push(it, (struct nt_field_frame_){ owner + 1, end, owner + 1, out->count, 0, it->pos_, owner,
                                              FRAME_STRUCT });
}

static bool begin_node(nt_field_iter *it, uint32_t i, nt_field_value *out)
{
    node n;
    node_at(it, i, &n);
    out->name = n.name;
    if (n.type == NT_TYPE_OBJECT)
        return begin_struct(it, i, out);
    if (n.type == NT_TYPE_ARRAY || n.type == NT_TYPE_FIXED_ARRAY) {
        uint32_t off = it->pos_, count;
        if (n.type == NT_TYPE_FIXED_ARRAY && !it->schema_)
            return fail(it, NT_ERR_MALFORMED, off, "fixed-length arrays are not decoded");
        if (!read_count(it, &n, &count))
            return false;
        if (count > it->ev_->field_ctx->max_array_elements)
            return fail(it, NT_ERR_LIMIT, off, "array longer than max_array_elements");
        /* every element takes at least one byte (empty elements are refused below) */
        if (count > it->ev_->payload_size - it->pos_)
            return fail(it, NT_ERR_MALFORMED, off, "array count beyond the payload");
        out->kind = NT_VALUE_ARRAY_BEGIN;
        out->type = n.type;
        out->count = count;
        out->offset = off;
        return push(it, (struct nt_field_frame_){ i + 1, subtree_end(it, i), 0, count, 0, it->pos_, i, FRAME_ARRAY });
    }
    if (!scalar(it, &n, n.type, out))
        return false;
    if (i < PS_SCHEMA_MAX_REF) /* an array element's struct overwrites its own counts */
        it->ints_[i] = out->kind == NT_VALUE_INT ? (uint64_t)out->v.i : out->v.u;
    return true;
}

static bool finish(nt_field_iter *it)
{
    it->leftover = it->ev_->payload_size - it->pos_;
    it->done_ = true;
    return false;
}

bool nt_field_next(nt_field_iter *it, nt_field_value *out)
{
    if (it->done_)
        return false;
    if (!it->nfields_) {
        it->leftover = it->ev_->payload_size;
        it->done_ = true;
        return false;
    }
    memset(out, 0, sizeof *out);
    struct nt_field_frame_ *f = &it->stack_[it->sp_ - 1];
    out->depth = it->sp_ - 1;
    if (f->kind == FRAME_STRUCT) {
        if (f->cur >= f->end) {
            if (it->sp_ == 1)
                return finish(it);
            it->sp_--;
            const struct nt_field_frame_ *parent = &it->stack_[it->sp_ - 1];
            node n;
            node_at(it, f->owner, &n);
            *out = (nt_field_value){ .name = n.name, .kind = NT_VALUE_STRUCT_END, .type = NT_TYPE_OBJECT,
                                     .depth = it->sp_ - 1, .count = f->count, .offset = f->start };
            if (parent->kind == FRAME_ARRAY) {
                out->in_array = true;
                out->index = parent->index - 1;
                if (it->pos_ == f->start)
                    return fail(it, NT_ERR_MALFORMED, f->start, "array element of no bytes");
            }
            return true;
        }
        uint32_t i = f->cur;
        f->cur = subtree_end(it, i);
        out->index = f->index++;
        return begin_node(it, i, out);
    }
    node n;
    node_at(it, f->owner, &n);
    out->name = n.name;
    if (f->index >= f->count) {
        it->sp_--;
        out->kind = NT_VALUE_ARRAY_END;
        out->type = n.type;
        out->depth = it->sp_ - 1;
        out->count = f->count;
        out->offset = f->start;
        return true;
    }
    out->in_array = true;
    out->index = f->index++;
    if (n.elem == NT_TYPE_OBJECT)
        return begin_struct(it, f->owner, out);
    return scalar(it, &n, n.elem, out);
}

nt_status nt_event_field(const nt_event *ev, const char *name, nt_field_value *out)
{
    nt_field_iter it;
    nt_status s = nt_event_fields_begin(ev, &it);
    if (s)
        return s;
    while (nt_field_next(&it, out))
        if (out->depth == 0 && out->kind != NT_VALUE_STRUCT_END && out->kind != NT_VALUE_ARRAY_END &&
            strcmp(out->name, name) == 0)
            return NT_OK;
    return it.status ? it.status : NT_ERR_INVALID_ARG;
}

const char *nt_event_name(const nt_event *ev)
{
    return ev && ev->desc && ev->desc->name ? ev->desc->name : "";
}

nt_status nt_event_labels_get(const nt_event *ev, nt_event_labels *out)
{
    if (!out)
        return NT_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    if (!ev || !ev->field_ctx)
        return NT_ERR_STATE;
    memcpy(out->activity_id, ev->activity_id, 16);
    memcpy(out->related_activity_id, ev->related_activity_id, 16);
    const struct nt_field_ctx *c = ev->field_ctx;
    /* Only what the event's label list holds: the context keeps the last
     * list's ids after an event without them, and what came before must not show. */
    out->has_trace_id = c->has_trace_id;
    out->has_span_id = c->has_span_id;
    if (c->has_trace_id)
        memcpy(out->trace_id, c->trace_id, 16);
    if (c->has_span_id)
        memcpy(out->span_id, c->span_id, 8);
    return NT_OK;
}
