/* V6 label lists: an event's activity ids, trace context, key/value labels and
 * overrides of its metadata's opcode, keywords, level and version. */
#include "write/writer_internal.h"

#include <string.h>

/* The public label kinds are the format's kind bytes, written as they are. */
#define SAME_KIND(k) ((int)NT_LABEL_##k == (int)CM_V6_LABEL_##k)
_Static_assert(SAME_KIND(ACTIVITY_ID) &&
                   SAME_KIND(RELATED_ACTIVITY_ID) &&
                   SAME_KIND(TRACE_ID) &&
                   SAME_KIND(SPAN_ID) &&
                   SAME_KIND(STRING) &&
                   SAME_KIND(INT) &&
                   SAME_KIND(OPCODE) &&
                   SAME_KIND(KEYWORDS) &&
                   SAME_KIND(LEVEL) &&
                   SAME_KIND(VERSION),
               "nt_label_kind must equal the V6 label kinds");

static nt_status put_label(nt_writer *w, cm_buf *b, const nt_label *l, bool last)
{
    uint8_t kind = (uint8_t)l->kind | (last ? CM_V6_LABEL_LAST_IN_LIST : 0);
    cm_buf_u8(b, kind);
    switch (l->kind) {
    case NT_LABEL_ACTIVITY_ID:
    case NT_LABEL_RELATED_ACTIVITY_ID:
    case NT_LABEL_TRACE_ID:
        cm_buf_bytes(b, l->guid, 16);
        break;
    case NT_LABEL_SPAN_ID:
    case NT_LABEL_KEYWORDS:
        cm_buf_u64(b, l->value);
        break;
    case NT_LABEL_STRING:
        cm_buf_str8(b, l->key);
        cm_buf_str8(b, l->text);
        break;
    case NT_LABEL_INT: {
        int64_t v = (int64_t)l->value;
        cm_buf_str8(b, l->key);
        cm_buf_varu(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
        break;
    }
    case NT_LABEL_OPCODE:
    case NT_LABEL_LEVEL:
    case NT_LABEL_VERSION:
        if (l->value > 255)
            return wr_fail(w, NT_ERR_INVALID_ARG, "label kind %u holds one byte", l->kind);
        cm_buf_u8(b, (uint8_t)l->value);
        break;
    default:
        return wr_fail(w, NT_ERR_INVALID_ARG, "unknown label kind %u", l->kind);
    }
    return NT_OK;
}

nt_status nt_writer_label_list(nt_writer *w, const nt_label *labels, size_t count, uint32_t *id_out)
{
    nt_status s = wr_usable(w);
    if (s)
        return s;
    if (w->opt.format != 6)
        return wr_fail(w, NT_ERR_STATE, "label lists exist only in V6");
    if (!labels || count == 0)
        return wr_fail(w, NT_ERR_INVALID_ARG, "a label list needs at least one label");
    cm_buf *tmp = &w->scratch;
    tmp->n = 0;
    for (size_t i = 0; i < count; i++)
        if ((s = put_label(w, tmp, &labels[i], i + 1 == count)))
            return s;
    if (tmp->failed)
        return wr_fail(w, NT_ERR_NOMEM, "cannot encode a label list");
    if (tmp->n > MAX_BLOCK_CONTENT - 64)
        return wr_fail(w, NT_ERR_INVALID_ARG, "a label list of %zu bytes does not fit a block", tmp->n);
    if (w->next_label_id >= NT_DEFAULT_MAX_STACKS)
        return wr_fail(w, NT_ERR_LIMIT, "too many label lists in one sequence-point interval");
    wblock *b = &w->labels;
    if (b->count && b->body.n + tmp->n > w->opt.block_bytes) {
        if ((s = wr_flush_labels(w)))
            return s;
    }
    cm_buf_bytes(&b->body, tmp->d, tmp->n);
    if (b->body.failed)
        return wr_fail(w, NT_ERR_NOMEM, "cannot buffer a label list");
    b->count++;
    uint32_t id = w->next_label_id++;
    if (id_out)
        *id_out = id;
    return NT_OK;
}
