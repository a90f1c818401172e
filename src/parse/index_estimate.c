/* The index's estimate of how many events and samples the stream holds,
 * made before anything is decoded: metadata blocks say which metadata ids
 * are the sample event, and the headers of a spread of event blocks are
 * walked (event_header.h, the parser's own decoder) to count events per
 * byte, which scales to the bytes of all event blocks. */
#include "common/cursor.h"
#include "common/format.h"
#include "nettrace.h"
#include "parse/event_header.h"
#include "parse/index_internal.h"
#include "common/map.h"
#include "parse/metadata.h"

#include <string.h>

static bool listed(const uint32_t *ids, uint32_t count, uint32_t id)
{
    for (uint32_t i = 0; i < count; i++)
        if (ids[i] == id)
            return true;
    return false;
}

/* Remember what metadata id `id` is, by the parser's own classification. */
static void note_kind(nt_index *ix, uint32_t id, nt_event_kind kind)
{
    if (kind == NT_KIND_THREAD_SAMPLE) {
        if (!listed(ix->sample_ids, ix->sample_id_count, id) && ix->sample_id_count < IX_MAX_SAMPLE_IDS)
            ix->sample_ids[ix->sample_id_count++] = id;
    } else if (kind != NT_KIND_OTHER && !listed(ix->record_ids, ix->record_id_count, id)) {
        if (ix->record_id_count < IX_MAX_RECORD_IDS)
            ix->record_ids[ix->record_id_count++] = id;
        else
            ix->records_everywhere = true; /* too many to list: every walked block is said to hold records */
    }
}

static bool is_sample_id(const nt_index *ix, uint32_t id) { return listed(ix->sample_ids, ix->sample_id_count, id); }

static bool is_record_id(const nt_index *ix, uint32_t id)
{
    return ix->records_everywhere || listed(ix->record_ids, ix->record_id_count, id);
}

/* V4/V5 metadata record: i32 id, provider name in UTF-16 with a NUL, i32 event id.  A name
 * with a unit outside ASCII is none of the runtime's providers (the parser compares UTF-8). */
static void v4_metadata_record(nt_index *ix, const uint8_t *p, size_t n)
{
    char name[IX_MAX_PROVIDER_NAME + 1];
    size_t units = 0;
    for (;; units++) {
        if (4 + 2 * units + 2 > n || units > IX_MAX_PROVIDER_NAME)
            return;
        uint16_t u = cm_le16(p + 4 + 2 * units);
        if (u == 0)
            break;
        if (u >= 0x80)
            return;
        name[units] = (char)u;
    }
    name[units] = '\0';
    size_t at = 4 + 2 * units + 2;
    if (at + 4 <= n)
        note_kind(ix, cm_le32(p), ps_classify_event(name, cm_le32(p + at)));
}

/* V6 metadata row: varuint32 id, provider (varuint32 length, UTF-8), varuint32 event id. */
static void v6_metadata_row(nt_index *ix, cm_cursor c)
{
    uint32_t id, name_len, event_id;
    char name[IX_MAX_PROVIDER_NAME + 1];
    if (!cm_cur_varu32(&c, &id) || !cm_cur_varu32(&c, &name_len) || name_len > IX_MAX_PROVIDER_NAME ||
        cm_cur_left(&c) < name_len)
        return;
    memcpy(name, c.p, name_len);
    name[name_len] = '\0';
    c.p += name_len;
    if (memchr(name, '\0', name_len) == NULL && cm_cur_varu32(&c, &event_id))
        note_kind(ix, id, ps_classify_event(name, event_id));
}

/* The event headers of one event (or V4 metadata) block body at stream
 * offset body_off: calls back per event with its header decoded (ev->offset
 * its stream offset) and the thread, capture thread and (V6) label-list
 * fields as the header holds them; stops at the first bad header (*whole
 * false then). */
typedef void (*event_fn)(void *user, const nt_event *ev, uint64_t thread, uint64_t capture, uint32_t label_list);
static uint64_t walk_events(const uint8_t *body, uint32_t body_size, uint64_t body_off, bool v6, event_fn fn,
                            void *user, bool *whole)
{
    uint16_t header_size = cm_le16(body);
    bool compressed = (cm_le16(body + 2) & CM_EVENT_BLOCK_COMPRESSED) != 0;
    cm_cursor c = cm_cursor_make(body + header_size, body_size - header_size);
    nt_event ev;
    memset(&ev, 0, sizeof ev);
    uint64_t thread = 0, capture = 0, n = 0;
    uint32_t label_list = 0, event_size = 0;
    uint8_t flags;
    while (c.p < c.end) {
        uint64_t off = body_off + (uint64_t)(c.p - body);
        if (ps_read_header(&c, &ev, &thread, &capture, v6 ? &label_list : NULL, compressed, false, -1, &flags,
                           &event_size) != PS_HEADER_OK)
            break;
        n++;
        ev.offset = off;
        if (fn)
            fn(user, &ev, thread, capture, label_list);
    }
    *whole = c.p >= c.end;
    return n;
}

static void v4_metadata_event(void *user, const nt_event *ev, uint64_t thread, uint64_t capture, uint32_t label_list)
{
    (void)thread;
    (void)capture;
    (void)label_list;
    if (ev->metadata_id == 0)
        v4_metadata_record(user, ev->payload, ev->payload_size);
}

void ix_note_metadata(ix_build *b, const nt_index_block *blk)
{
    const uint8_t *body = ix_body(b, blk);
    if (!body)
        return;
    if (b->ix->sum.format_major == 4) {
        bool whole;
        if (blk->body_size >= 20 && cm_le16(body) >= 20 && cm_le16(body) <= blk->body_size)
            walk_events(body, blk->body_size, blk->body_offset, false, v4_metadata_event, b->ix, &whole);
        return;
    }
    /* V6: u16 header size (excluding itself), then rows of u16 size + row. */
    cm_cursor c = cm_cursor_make(body, blk->body_size);
    uint16_t header_size, row_size;
    if (!cm_cur_u16(&c, &header_size) || !cm_cur_skip(&c, header_size))
        return;
    while (cm_cur_u16(&c, &row_size) && cm_cur_left(&c) >= row_size) {
        v6_metadata_row(b->ix, cm_cursor_make(c.p, row_size));
        c.p += row_size;
    }
}

/* What the walk of every block learns on the way.  A sample's wall-time
 * weight is the time to its thread's next sample (src/export/wall.c), so a
 * window's last samples weigh right only when those next samples are read
 * too: last maps each thread to the block of its latest sample (index + 1),
 * and each block's next_sample_block becomes the furthest block holding the
 * next sample of a thread sampled in it. */
typedef struct sample_count {
    nt_index *ix;
    uint64_t samples;
    bool records; /* the block holds a method, module or assembly event */
    bool kept;    /* and each of them was kept (index_records.c) */
    uint32_t block;
    cm_map last;
    bool map_failed;
} sample_count;

static void count_sample(void *user, const nt_event *ev, uint64_t thread, uint64_t capture, uint32_t label_list)
{
    sample_count *sc = user;
    if (is_record_id(sc->ix, ev->metadata_id)) {
        sc->records = true;
        /* Past the id list's cap every event is a candidate: none is kept, the blocks are read. */
        sc->kept = sc->kept && !sc->ix->records_everywhere &&
                   ix_records_add(sc->ix, sc->block, ev, thread, capture, label_list);
    }
    if (!is_sample_id(sc->ix, ev->metadata_id))
        return;
    sc->samples++;
    bool added;
    uint64_t *v = cm_map_put(&sc->ix->mem, &sc->last, thread, &added);
    if (!v) {
        sc->map_failed = true;
        return;
    }
    if (!added && *v != sc->block + 1u) {
        nt_index_block *prev = &sc->ix->blocks[*v - 1];
        if (prev->next_sample_block < sc->block)
            prev->next_sample_block = sc->block;
    }
    *v = sc->block + 1u;
}

/* Scale a count seen in `part` bytes to `whole` bytes, without overflow. */
static uint64_t scale(uint64_t count, uint64_t part, uint64_t whole)
{
    if (part == 0)
        return 0;
    return (uint64_t)((double)count * (double)whole / (double)part + 0.5);
}

void ix_estimate(ix_build *b, uint32_t sample_blocks)
{
    nt_index *ix = b->ix;
    nt_index_summary *s = &ix->sum;
    uint64_t event_blocks = s->blocks[NT_INDEX_EVENT], seen = 0, walked_bytes = 0, all_bytes = 0;
    sample_count sc = { .ix = ix };
    bool v6 = s->format_major == 6;
    for (size_t i = 0; i < ix->count; i++) {
        nt_index_block *blk = &ix->blocks[i];
        if (blk->kind != NT_INDEX_EVENT)
            continue;
        all_bytes += blk->body_size;
        /* Evenly spread: the k-th event block is walked when it is the first of its share. */
        uint64_t k = seen++;
        bool walk = event_blocks <= sample_blocks ||
                    (k * sample_blocks) / event_blocks != ((k + 1) * sample_blocks) / event_blocks;
        if (!walk)
            continue;
        const uint8_t *body = ix_body(b, blk);
        if (!body)
            continue; /* not walked: the estimate scales what was */
        bool whole;
        sc.records = false;
        sc.kept = true;
        sc.block = (uint32_t)i;
        size_t kept_len = ix->rec_len;
        s->sampled_events += walk_events(body, blk->body_size, blk->body_offset, v6, count_sample, &sc, &whole);
        /* A block whose walk stopped early may hold records past the stop: said to hold them, none kept. */
        if (sc.records || !whole)
            blk->flags |= NT_INDEX_BLOCK_RECORDS;
        if (sc.records && whole && sc.kept)
            blk->flags |= NT_INDEX_BLOCK_RECORDS_KEPT;
        else if (ix->rec_len != kept_len)
            ix_records_truncate(ix, kept_len);
        s->sampled_event_blocks++;
        walked_bytes += blk->body_size;
    }
    s->sampled_samples = sc.samples;
    cm_map_free(&ix->mem, &sc.last);
    /* Without every next sample known, no window can be read exactly: exact means all of it. */
    s->estimate_exact = s->sampled_event_blocks == event_blocks && !sc.map_failed;
    s->events_estimate = s->estimate_exact ? s->sampled_events : scale(s->sampled_events, walked_bytes, all_bytes);
    s->samples_estimate = s->estimate_exact ? s->sampled_samples : scale(s->sampled_samples, walked_bytes, all_bytes);
}
