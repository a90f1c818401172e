/* The index's kept records: the method, module and assembly events (JIT,
 * loader, rundown) of the event blocks the walk read whole, copied out of
 * them with their decoded headers.  A windowed read hands them to the parser
 * at their blocks' places (feed_window.c) instead of reading those blocks, so
 * a window's frames resolve as in a full read while the read touches only the
 * window's own blocks; the sidecar stores them after its block table.
 *
 * The layout is index_internal.h's (IX_REC_FIXED); the same bytes are held in
 * memory and written to the sidecar, so a load checks them once here and the
 * delivery reads them without checks of its own. */
#include "common/le_store.h"
#include "common/cursor.h"
#include "parse/index_internal.h"

#include <string.h>

static size_t padded(uint32_t n) { return ((size_t)n + 7u) & ~(size_t)7u; }

bool ix_records_add(nt_index *ix, uint32_t block, const nt_event *ev, uint64_t thread, uint64_t capture,
                    uint32_t label_list)
{
    /* A V6 label list can override the metadata the payload is decoded by: such an event is read in its block. */
    if (label_list != 0)
        return false;
    size_t need = IX_REC_FIXED + padded(ev->payload_size);
    if (ev->payload_size > IX_REC_MAX_BYTES || need > IX_REC_MAX_BYTES - ix->rec_len)
        return false;
    if (!cm_mem_reserve(&ix->mem, (void **)&ix->rec, &ix->rec_cap, ix->rec_len + need, 1))
        return false;
    uint8_t *e = ix->rec + ix->rec_len;
    memset(e, 0, need);
    cm_store_le32(e, block);
    cm_store_le32(e + 4, ev->metadata_id);
    cm_store_le32(e + 8, ev->sequence_number);
    cm_store_le32(e + 12, ev->processor_number);
    cm_store_le64(e + 16, thread);
    cm_store_le64(e + 24, capture);
    cm_store_le32(e + 32, ev->stack_id);
    cm_store_le32(e + 36, ev->payload_size);
    cm_store_le64(e + 40, (uint64_t)ev->timestamp);
    cm_store_le64(e + 48, ev->offset);
    memcpy(e + 56, ev->activity_id, 16);
    memcpy(e + 72, ev->related_activity_id, 16);
    e[88] = ev->is_sorted;
    if (ev->payload_size)
        memcpy(e + IX_REC_FIXED, ev->payload, ev->payload_size);
    ix->rec_len += need;
    ix->rec_count++;
    return true;
}

void ix_records_truncate(nt_index *ix, size_t len)
{
    /* Recount: a truncation drops the few records of one block, and it is rare. */
    ix->rec_len = len;
    ix->rec_count = 0;
    for (size_t at = 0; at < len; at += IX_REC_FIXED + padded(cm_le32(ix->rec + at + 36)))
        ix->rec_count++;
}

/* The record at d (IX_REC_FIXED bytes at least, its payload not checked here). */
static void decode(const uint8_t *d, ix_record *r)
{
    memset(r, 0, sizeof *r);
    r->block = cm_le32(d);
    r->ev.metadata_id = cm_le32(d + 4);
    r->ev.sequence_number = cm_le32(d + 8);
    r->ev.processor_number = cm_le32(d + 12);
    r->thread = cm_le64(d + 16);
    r->capture = cm_le64(d + 24);
    r->ev.stack_id = cm_le32(d + 32);
    r->ev.payload_size = cm_le32(d + 36);
    r->ev.timestamp = (int64_t)cm_le64(d + 40);
    r->ev.offset = cm_le64(d + 48);
    memcpy(r->ev.activity_id, d + 56, 16);
    memcpy(r->ev.related_activity_id, d + 72, 16);
    r->ev.is_sorted = d[88] != 0;
    r->ev.payload = d + IX_REC_FIXED;
}

bool ix_records_next(const nt_index *ix, size_t *at, ix_record *r)
{
    if (*at >= ix->rec_len)
        return false;
    decode(ix->rec + *at, r);
    *at += IX_REC_FIXED + padded(r->ev.payload_size);
    return true;
}

nt_status ix_records_adopt(nt_index *ix, const uint8_t *d, size_t n, size_t *bad)
{
    uint64_t count = 0;
    uint32_t prev = 0;
    for (size_t at = 0; at < n;) {
        *bad = at;
        if (n - at < IX_REC_FIXED)
            return NT_ERR_MALFORMED;
        ix_record r;
        decode(d + at, &r);
        const nt_index_block *b = r.block < ix->count ? &ix->blocks[r.block] : NULL;
        bool zeros = d[88 + at] <= 1 && memcmp(d + at + 89, "\0\0\0\0\0\0\0", 7) == 0;
        if (!b || r.block < prev || !(b->flags & NT_INDEX_BLOCK_RECORDS_KEPT) || !zeros ||
            r.ev.offset < b->body_offset || r.ev.offset >= b->body_offset + b->body_size ||
            r.ev.payload_size > b->body_size || padded(r.ev.payload_size) > n - at - IX_REC_FIXED)
            return NT_ERR_MALFORMED;
        for (size_t i = r.ev.payload_size; i < padded(r.ev.payload_size); i++)
            if (d[at + IX_REC_FIXED + i] != 0)
                return NT_ERR_MALFORMED;
        prev = r.block;
        at += IX_REC_FIXED + padded(r.ev.payload_size);
        count++;
    }
    if (n && !cm_mem_reserve(&ix->mem, (void **)&ix->rec, &ix->rec_cap, n, 1))
        return NT_ERR_NOMEM;
    if (n)
        memcpy(ix->rec, d, n);
    ix->rec_len = n;
    ix->rec_count = count;
    return NT_OK;
}
