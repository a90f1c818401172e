/* The index's framing pass: from the stream's first byte to its end mark (or
 * the damage), every block's kind, place and size, and the timestamps its
 * header states.  It reads the framing the parser reads (parser.c) and the
 * first bytes of event and sequence-point bodies, nothing else; what a body
 * holds is the parser's to check. */
#include "common/cursor.h"
#include "common/format.h"
#include "parse/index_internal.h"

#include <string.h>

#define MAX_TYPE_NAME 64 /* as the parser: TraceEvent rejects longer names */
#define EVENT_BLOCK_HEADER_MIN 20

static nt_index_kind v4_kind(const uint8_t *name, uint32_t len)
{
    static const struct { const char *name; nt_index_kind kind; } NAMES[] = {
        { "Trace", NT_INDEX_TRACE },        { "EventBlock", NT_INDEX_EVENT },
        { "MetadataBlock", NT_INDEX_METADATA }, { "StackBlock", NT_INDEX_STACK },
        { "SPBlock", NT_INDEX_SEQUENCE_POINT },
    };
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (strlen(NAMES[i].name) == len && memcmp(NAMES[i].name, name, len) == 0)
            return NAMES[i].kind;
    return NT_INDEX_UNKNOWN;
}

static nt_index_kind v6_kind(uint32_t k)
{
    switch (k) {
    case CM_V6_TRACE: return NT_INDEX_TRACE;
    case CM_V6_EVENT: return NT_INDEX_EVENT;
    case CM_V6_METADATA: return NT_INDEX_METADATA;
    case CM_V6_SEQUENCE_POINT: return NT_INDEX_SEQUENCE_POINT;
    case CM_V6_STACK: return NT_INDEX_STACK;
    case CM_V6_THREAD: return NT_INDEX_THREAD;
    case CM_V6_REMOVE_THREAD: return NT_INDEX_REMOVE_THREAD;
    case CM_V6_LABEL_LIST: return NT_INDEX_LABEL_LIST;
    default: return NT_INDEX_UNKNOWN;
    }
}

/* The timestamps a body's header states, and the trace header's clock. */
static nt_status read_body_header(ix_build *b, nt_index_block *blk)
{
    if (blk->kind != NT_INDEX_EVENT && blk->kind != NT_INDEX_SEQUENCE_POINT && blk->kind != NT_INDEX_TRACE)
        return NT_OK;
    size_t got = 0;
    const uint8_t *body = ix_at(b, blk->body_offset, blk->body_size < 32 ? blk->body_size : 32, &got);
    if (!body)
        return ix_fail(b, NT_ERR_IO, blk->body_offset, "reading a block header failed");
    nt_index_summary *s = &b->ix->sum;
    switch (blk->kind) {
    case NT_INDEX_EVENT:
        if (blk->body_size < EVENT_BLOCK_HEADER_MIN || cm_le16(body) < EVENT_BLOCK_HEADER_MIN ||
            cm_le16(body) > blk->body_size)
            return ix_fail(b, NT_ERR_MALFORMED, blk->body_offset, "event block header shorter than 20 bytes or past the block");
        blk->min_ticks = (int64_t)cm_le64(body + 4);
        blk->max_ticks = (int64_t)cm_le64(body + 12);
        if (blk->min_ticks > blk->max_ticks) { /* the parser reads such a block: its range is unknown */
            blk->min_ticks = INT64_MIN;
            blk->max_ticks = INT64_MAX;
        }
        break;
    case NT_INDEX_SEQUENCE_POINT:
        if (blk->body_size < 8)
            return ix_fail(b, NT_ERR_MALFORMED, blk->body_offset, "sequence point block shorter than its timestamp");
        blk->min_ticks = blk->max_ticks = (int64_t)cm_le64(body);
        break;
    case NT_INDEX_TRACE:
        /* V4/V5 payload and V6 block both start SYSTEMTIME, sync ticks, frequency. */
        if (blk->body_size >= 32) {
            s->sync_qpc = (int64_t)cm_le64(body + 16);
            s->qpc_frequency = (int64_t)cm_le64(body + 24);
        }
        break;
    default:
        break;
    }
    return NT_OK;
}

void ix_count_block(nt_index *ix, const nt_index_block *blk)
{
    nt_index_summary *s = &ix->sum;
    s->blocks[blk->kind]++;
    s->bytes[blk->kind] += blk->end - blk->offset;
    s->stream_bytes = blk->end;
    if (blk->kind == NT_INDEX_EVENT && !(blk->min_ticks == INT64_MIN && blk->max_ticks == INT64_MAX)) {
        bool first = ix->spanned++ == 0;
        if (first || blk->min_ticks < s->min_ticks)
            s->min_ticks = blk->min_ticks;
        if (first || blk->max_ticks > s->max_ticks)
            s->max_ticks = blk->max_ticks;
    }
}

static nt_status add_block(ix_build *b, nt_index_block *blk)
{
    nt_index *ix = b->ix;
    if (ix->count >= b->max_blocks)
        return ix_fail(b, NT_ERR_LIMIT, blk->offset, "max_blocks reached (nt_index_options.max_blocks)");
    if (blk->kind == NT_INDEX_METADATA)
        ix_note_metadata(b, blk);
    if (!cm_mem_reserve(&ix->mem, (void **)&ix->blocks, &ix->cap, ix->count + 1, sizeof *ix->blocks))
        return ix_fail(b, NT_ERR_NOMEM, blk->offset, "out of memory for the block table");
    ix->blocks[ix->count++] = *blk;
    ix_count_block(ix, blk);
    return NT_OK;
}

/* V4/V5: objects framed by FastSerialization tags from `off` on.  The
 * longest object header (IX_V4_HEADER_MAX) fits one header read. */
_Static_assert(IX_V4_HEADER_MAX == 1 + 14 + MAX_TYPE_NAME + 1 + 4 + 3, "tags, type header, name, EndObject, size, padding");
static nt_status frame_v4(ix_build *b, uint64_t off, nt_index_block *out, bool *end_mark)
{
    size_t got = 0;
    const uint8_t *h = ix_at(b, off, IX_V4_HEADER_MAX, &got);
    if (!h)
        return ix_fail(b, NT_ERR_IO, off, "reading an object header failed");
    cm_cursor c = cm_cursor_make(h, got);
    uint8_t tag, tag2, null_ref;
    uint32_t version, min_reader, name_len;
    if (!cm_cur_u8(&c, &tag))
        return ix_fail(b, NT_ERR_TRUNCATED, off, "the stream ends before its end-of-stream mark");
    if (tag == CM_TAG_NULL_REFERENCE) {
        *end_mark = true;
        *out = (nt_index_block){ .offset = off, .end = off + 1 };
        return NT_OK;
    }
    if (tag != CM_TAG_BEGIN_PRIVATE_OBJECT)
        return ix_fail(b, NT_ERR_MALFORMED, off, "expected an object (BeginPrivateObject) or the end of the stream");
    if (!cm_cur_u8(&c, &tag2) || !cm_cur_u8(&c, &null_ref) || !cm_cur_u32(&c, &version) ||
        !cm_cur_u32(&c, &min_reader) || !cm_cur_u32(&c, &name_len))
        return ix_fail(b, NT_ERR_TRUNCATED, off, "the stream ends inside an object's type header");
    if (tag2 != CM_TAG_BEGIN_PRIVATE_OBJECT || null_ref != CM_TAG_NULL_REFERENCE || name_len > MAX_TYPE_NAME)
        return ix_fail(b, NT_ERR_MALFORMED, off + 1, "malformed object type header");
    const uint8_t *name = c.p;
    uint8_t end_type;
    if (!cm_cur_skip(&c, name_len) || !cm_cur_u8(&c, &end_type))
        return ix_fail(b, NT_ERR_TRUNCATED, off, "the stream ends inside an object's type name");
    if (end_type != CM_TAG_END_OBJECT)
        return ix_fail(b, NT_ERR_MALFORMED, off + (uint64_t)(c.p - h) - 1, "type header does not end with EndObject");
    nt_index_block blk = { .offset = off, .kind = (uint8_t)v4_kind(name, name_len) };
    uint32_t size = 48; /* the Trace object's fixed payload */
    if (blk.kind != NT_INDEX_TRACE) {
        if (!cm_cur_u32(&c, &size))
            return ix_fail(b, NT_ERR_TRUNCATED, off + (uint64_t)(c.p - h), "the stream ends inside a block size");
        size_t pad = (size_t)((4 - (off + (uint64_t)(c.p - h)) % 4) % 4);
        if (size > INT32_MAX || !cm_cur_skip(&c, pad))
            return ix_fail(b, size > INT32_MAX ? NT_ERR_MALFORMED : NT_ERR_TRUNCATED, off + (uint64_t)(c.p - h) - 4,
                           size > INT32_MAX ? "block size out of range" : "the stream ends inside a block's padding");
    }
    blk.body_offset = off + (uint64_t)(c.p - h);
    blk.body_size = size;
    /* The content, then EndObject. */
    const uint8_t *end_obj = b->len - blk.body_offset > size ? ix_at(b, blk.body_offset + size, 1, &got) : NULL;
    if (b->len - blk.body_offset <= size)
        return ix_fail(b, NT_ERR_TRUNCATED, blk.body_offset, "the stream ends inside a block");
    if (!end_obj)
        return ix_fail(b, NT_ERR_IO, blk.body_offset + size, "reading a block's end failed");
    if (*end_obj != CM_TAG_END_OBJECT)
        return ix_fail(b, NT_ERR_MALFORMED, blk.body_offset + size, "block does not end with EndObject");
    blk.end = blk.body_offset + size + 1;
    *end_mark = false;
    *out = blk;
    return read_body_header(b, out);
}

/* V6: a 4-byte header (size | kind << 24) before each block. */
static nt_status frame_v6(ix_build *b, uint64_t off, nt_index_block *out, bool *end_mark)
{
    size_t got = 0;
    const uint8_t *hp = ix_at(b, off, 4, &got);
    if (!hp)
        return ix_fail(b, NT_ERR_IO, off, "reading a block header failed");
    if (got < 4)
        return ix_fail(b, NT_ERR_TRUNCATED, off, "the stream ends before its end-of-stream block");
    uint32_t h = cm_le32(hp);
    uint32_t size = h & CM_V6_BLOCK_SIZE_MASK, kind = h >> CM_V6_BLOCK_KIND_SHIFT;
    if (kind == CM_V6_END_OF_STREAM) { /* its size is not read, as the parser does not */
        *end_mark = true;
        *out = (nt_index_block){ .offset = off, .end = off + 4 };
        return NT_OK;
    }
    if (b->len - off - 4 < size)
        return ix_fail(b, NT_ERR_TRUNCATED, off + 4, "the stream ends inside a block");
    *end_mark = false;
    *out = (nt_index_block){ .offset = off, .body_offset = off + 4, .body_size = size, .end = off + 4 + size,
                             .kind = (uint8_t)v6_kind(kind) };
    return read_body_header(b, out);
}

nt_status ix_frame_at(ix_build *b, uint64_t off, nt_index_block *blk, bool *end_mark)
{
    if (off >= b->len)
        return ix_fail(b, NT_ERR_TRUNCATED, off, "the stream ends before its end-of-stream mark");
    return b->ix->sum.format_major == 6 ? frame_v6(b, off, blk, end_mark) : frame_v4(b, off, blk, end_mark);
}

/* Every block from off to the end mark, numbering the sequence-point intervals. */
static nt_status scan_blocks(ix_build *b, uint64_t off)
{
    uint32_t interval = 0;
    for (;;) {
        nt_index_block blk;
        bool end_mark = false;
        nt_status st = ix_frame_at(b, off, &blk, &end_mark);
        if (st)
            return st;
        if (end_mark) {
            b->ix->sum.stream_bytes = blk.end;
            b->ix->sum.complete = true;
            return NT_OK;
        }
        blk.interval = interval;
        st = add_block(b, &blk);
        if (st)
            return st;
        interval += blk.kind == NT_INDEX_SEQUENCE_POINT;
        off = blk.end;
    }
}

nt_status ix_stream_head(ix_build *b, uint64_t *first)
{
    const size_t v4_head = CM_FMT_MAGIC_LEN + 4 + CM_FMT_FS_HEADER_LEN;
    size_t got = 0;
    const uint8_t *h = ix_at(b, 0, v4_head, &got);
    if (!h)
        return ix_fail(b, NT_ERR_IO, 0, "reading the stream header failed");
    if (got < CM_FMT_MAGIC_LEN + 4 || memcmp(h, CM_FMT_MAGIC, CM_FMT_MAGIC_LEN) != 0)
        return ix_fail(b, NT_ERR_NOT_NETTRACE, 0, "no NetTrace magic (NetPerf and other streams have no index)");
    uint32_t after = cm_le32(h + CM_FMT_MAGIC_LEN);
    if (after == CM_FMT_FS_HEADER_LEN) {
        if (got < v4_head)
            return ix_fail(b, NT_ERR_TRUNCATED, CM_FMT_MAGIC_LEN + 4, "the stream ends inside its serialization header");
        if (memcmp(h + CM_FMT_MAGIC_LEN + 4, CM_FMT_FS_HEADER, CM_FMT_FS_HEADER_LEN) != 0)
            return ix_fail(b, NT_ERR_NOT_NETTRACE, CM_FMT_MAGIC_LEN + 4, "no FastSerialization header after the magic");
        b->ix->sum.format_major = 4;
        *first = v4_head;
        return NT_OK;
    }
    if (after != 0)
        return ix_fail(b, NT_ERR_NOT_NETTRACE, CM_FMT_MAGIC_LEN, "neither a V4/V5 nor a V6 header after the magic");
    if (got < CM_FMT_MAGIC_LEN + 12)
        return ix_fail(b, NT_ERR_TRUNCATED, CM_FMT_MAGIC_LEN + 4, "the stream ends inside its version");
    uint32_t major = cm_le32(h + CM_FMT_MAGIC_LEN + 4);
    if (major != 6)
        return ix_fail(b, NT_ERR_UNSUPPORTED_VERSION, CM_FMT_MAGIC_LEN + 4, "unsupported major version");
    b->ix->sum.format_major = 6;
    *first = CM_FMT_MAGIC_LEN + 12;
    return NT_OK;
}

nt_status ix_scan(ix_build *b)
{
    uint64_t first = 0;
    nt_status s = ix_stream_head(b, &first);
    return s ? s : scan_blocks(b, first);
}
