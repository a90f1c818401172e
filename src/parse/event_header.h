/* The compressed event header, shared by V4/V5 and V6 event blocks.
 *
 * Each event starts with a flags byte; every set bit says "this field
 * differs from the previous event in the block" and is followed by the new
 * value, every clear bit keeps the previous one (the caller keeps `ev` and
 * the thread fields alive across the block's events for that reason).
 *
 * The two formats share the layout and differ in three places, so one
 * decoder takes the format as a parameter instead of being written twice:
 *  - bits 0x02 and 0x04 carry OS thread ids in V4 and thread *indexes*
 *    into the thread table in V6 (the caller passes where each goes);
 *  - bit 0x10 carries the activity id (and 0x20 the related activity id)
 *    as 16 raw bytes in V4, a label-list index in V6 (label_list != NULL);
 *  - the sequence number counts up on every V6 event, but in V4 only on
 *    events with a metadata id (metadata events carry no sequence). */
#ifndef PS_EVENT_HEADER_H
#define PS_EVENT_HEADER_H

#include "common/compiler.h"
#include "common/cursor.h"
#include "nettrace.h"

#include <string.h>

typedef enum ps_header_result {
    PS_HEADER_OK,
    PS_HEADER_TRUNCATED, /* a field runs past the block, or a varint is too long */
    PS_HEADER_OVERRUN,   /* the payload size runs past the block */
    /* uncompressed headers: */
    PS_HEADER_SHORT,         /* fewer bytes left than a header */
    PS_HEADER_SIZE,          /* EventSize below a header or past the block */
    PS_HEADER_PAYLOAD_SIZE   /* the payload runs past EventSize */
} ps_header_result;

/* The compressed header's flag bits: each says its field changed. */
#define PS_HDR_METADATA_ID 0x01u
#define PS_HDR_CAPTURE 0x02u    /* sequence delta, capture thread, processor */
#define PS_HDR_THREAD 0x04u
#define PS_HDR_STACK_ID 0x08u
#define PS_HDR_LABEL_LIST 0x10u /* V6 (V4: the activity id) */
#define PS_HDR_ALL 0xffu        /* what an uncompressed header reports: every field given */
#define PS_HDR_THREAD_SAMPLE (PS_HDR_THREAD | PS_HDR_STACK_ID) /* a sample of another thread than the last */

/* The most bytes a compressed header can take: the flags, five 32-bit and
 * three 64-bit varints and (V4) two activity ids.  With this many left in
 * the block no field can run past it, so the header is read without a
 * bounds check per field (nearly every event but a block's last few). */
#define PS_COMPRESSED_HEADER_MAX (1 + 5 * 5 + 3 * 10 + 2 * 16)

/* One body, specialised twice (roomy is a constant in each copy: see
 * ps_read_header). */
#define PS_HDR_VARU32(c, v) (roomy ? cm_cur_varu32_roomy(c, v) : cm_cur_varu32(c, v))
#define PS_HDR_VARU64(c, v) (roomy ? cm_cur_varu64_roomy(c, v) : cm_cur_varu64(c, v))

/* The fields every event may change: thread (0x04), stack id (0x08) and the
 * timestamp delta (always present). */
CC_ALWAYS_INLINE static inline bool ps_header_middle(cm_cursor *c, nt_event *ev, uint64_t *thread, uint8_t f,
                                                                   bool ok, bool roomy)
{
    if (f & 0x04)
        ok = ok && PS_HDR_VARU64(c, thread);
    if (f & 0x08)
        ok = ok && PS_HDR_VARU32(c, &ev->stack_id);
    uint64_t dt = 0;
    ok = ok && PS_HDR_VARU64(c, &dt);
    ev->timestamp = (int64_t)((uint64_t)ev->timestamp + dt);
    return ok;
}
#define PS_HDR_MIDDLE(c, ev, thread, f, ok) ps_header_middle(c, ev, thread, f, ok, roomy)

/* Decodes one compressed header and places ev->payload at its payload;
 * *flags is its flags byte (PS_HDR_*: which fields changed); `known` is
 * that byte when the caller has tested it (a constant in a copy of the
 * caller specialised on it: no flag is tested then), else -1.  On failure
 * the cursor is unusable; the caller reports the event's offset. */
CC_ALWAYS_INLINE static inline ps_header_result
ps_read_compressed_header_in(cm_cursor *c, nt_event *ev, uint64_t *thread, uint64_t *capture_thread, uint32_t *label_list,
                             uint8_t *flags, bool roomy, int known)
{
    uint8_t f = known >= 0 ? (uint8_t)known : *c->p;
    c->p++;
    *flags = f;
    bool ok = true;
    if (f & 0x01)
        ok = PS_HDR_VARU32(c, &ev->metadata_id);
    /* Bits 0x02 (a new capture thread) and 0x10-0x40 (activity ids,
     * sorted) are rare: one test passes over all of them, and the fields
     * between them are read by a copy of their own on either side. */
    if (!(f & 0x72)) {
        ev->sequence_number += label_list || ev->metadata_id != 0;
        ok = PS_HDR_MIDDLE(c, ev, thread, f, ok);
        ev->is_sorted = false;
    } else {
        if (f & 0x02) {
            uint32_t delta = 0;
            ok = ok && PS_HDR_VARU32(c, &delta) && PS_HDR_VARU64(c, capture_thread) &&
                 PS_HDR_VARU32(c, &ev->processor_number);
            ev->sequence_number += delta + 1;
        } else if (label_list || ev->metadata_id != 0) {
            ev->sequence_number++;
        }
        ok = PS_HDR_MIDDLE(c, ev, thread, f, ok);
        if (label_list) {
            if (f & 0x10)
                ok = ok && PS_HDR_VARU32(c, label_list);
        } else if (roomy) {
            if (f & 0x10) {
                memcpy(ev->activity_id, c->p, 16);
                c->p += 16;
            }
            if (f & 0x20) {
                memcpy(ev->related_activity_id, c->p, 16);
                c->p += 16;
            }
        } else {
            if (f & 0x10)
                ok = ok && cm_cur_bytes(c, ev->activity_id, 16);
            if (f & 0x20)
                ok = ok && cm_cur_bytes(c, ev->related_activity_id, 16);
        }
        ev->is_sorted = (f & 0x40) != 0;
    }
    if (f & 0x80)
        ok = ok && PS_HDR_VARU32(c, &ev->payload_size);
    if (!ok)
        return PS_HEADER_TRUNCATED;
    if (ev->payload_size > cm_cur_left(c))
        return PS_HEADER_OVERRUN;
    ev->payload = c->p;
    c->p += ev->payload_size;
    return PS_HEADER_OK;
}

#undef PS_HDR_VARU32
#undef PS_HDR_VARU64
#undef PS_HDR_MIDDLE

/* The uncompressed header: the same fields at fixed widths, each event
 * padded to EventSize.  V4/V5 (label_list NULL) carries the two activity
 * ids, V6 a label-list index in their place.  *event_size is EventSize.
 * Out of line: uncompressed blocks are rare. */
ps_header_result ps_read_uncompressed_header(cm_cursor *c, nt_event *ev, uint64_t *thread, uint64_t *capture_thread,
                                             uint32_t *label_list, uint32_t *event_size);

/* Either header form; `compressed` is fixed per block, so each caller's loop
 * specialised on it keeps one branch.  `roomy`: the caller knows that
 * PS_COMPRESSED_HEADER_MAX bytes are left, so no field is bounds-checked
 * (else every field is: a loop reads its block's last few events so);
 * `known` as for ps_read_compressed_header_in (compressed form only).
 * *flags says which fields changed (PS_HDR_ALL for the uncompressed form):
 * the caller looks up what an id names only when the id changed.
 * *event_size is the uncompressed header's EventSize (for ps_header_fail). */
CC_ALWAYS_INLINE static inline ps_header_result ps_read_header(cm_cursor *c, nt_event *ev, uint64_t *thread,
                                                                              uint64_t *capture_thread, uint32_t *label_list,
                                                                              bool compressed, bool roomy, int known,
                                                                              uint8_t *flags, uint32_t *event_size)
{
    if (compressed)
        return roomy ? ps_read_compressed_header_in(c, ev, thread, capture_thread, label_list, flags, true, known)
                     : ps_read_compressed_header_in(c, ev, thread, capture_thread, label_list, flags, false, known);
    *flags = PS_HDR_ALL;
    cm_cursor u = *c; /* out of line: keep the caller's cursor private */
    ps_header_result r = ps_read_uncompressed_header(&u, ev, thread, capture_thread, label_list, event_size);
    *c = u;
    return r;
}

/* The loops over an event block's events, shared by V4/V5 and V6: while
 * the block has room for the longest compressed header, its headers are
 * read without bounds checks (and the room is not tested per event), the
 * events whose flags byte is PS_HDR_THREAD_SAMPLE (most events of
 * sample-heavy traces) by a copy of the caller's code specialised on that
 * byte, which tests no flag; the block's last few events, and every
 * uncompressed one, by the checked code.  ONE(compressed, roomy, known) is
 * the caller's code for one event (see ps_read_compressed_header_in for
 * `known`), an nt_status that s receives; the loops stop at the first
 * failure. */
#define PS_EVENT_LOOPS(c, compressed, s, ONE)                                                      \
    do {                                                                                           \
        if ((compressed) && cm_cur_left(&(c)) > PS_COMPRESSED_HEADER_MAX) {                         \
            const uint8_t *roomy_end_ = (c).end - PS_COMPRESSED_HEADER_MAX;                        \
            while ((s) == NT_OK && (c).p < roomy_end_)                                             \
                (s) = *(c).p == PS_HDR_THREAD_SAMPLE ? ONE(true, true, PS_HDR_THREAD_SAMPLE)       \
                                                     : ONE(true, true, -1);                        \
        }                                                                                          \
        while ((s) == NT_OK && (c).p < (c).end)                                                    \
            (s) = ONE(compressed, false, -1);                                                      \
    } while (0)

/* The error for a failed header (NT_ERR_MALFORMED at the event's offset);
 * block names the block kind for the overrun message, event_size is the
 * uncompressed header's EventSize. */
nt_status ps_header_fail(nt_parser *p, ps_header_result r, uint64_t off, const nt_event *ev, const char *block,
                         uint32_t event_size);

#endif
