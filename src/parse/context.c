/* The decoder context (context.h): failures, the string scratch, and the
 * steps both format versions share around the trace header, sequence points
 * and event blocks. */
#include "common/format.h"
#include "common/status.h"
#include "parse/context.h"
#include "parse/event_header.h"

#include <stdarg.h>
#include <stdio.h>

nt_status ps_fail(nt_parser *p, nt_status s, uint64_t offset, const char *fmt, ...)
{
    if (p->status != NT_OK)
        return p->status;
    p->status = s;
    p->err_offset = offset;
    va_list ap;
    va_start(ap, fmt);
    size_t n = cm_failure_text(p->msg, sizeof p->msg, 200, s, fmt, ap);
    va_end(ap);
    snprintf(p->msg + n, sizeof p->msg - n, " at byte %llu", (unsigned long long)offset);
    return s;
}

bool ps_scratch_reserve(nt_parser *p, size_t n)
{
    if (n <= p->str_cap)
        return true;
    size_t cap = p->str_cap ? p->str_cap : 1024;
    while (cap < n)
        cap *= 2;
    /* The scratch holds one payload's strings; payloads live in one block. */
    if (!cm_mem_resize(&p->mem, (void **)&p->str, p->str_cap, cap))
        return false;
    p->str_cap = cap;
    return true;
}

ps_header_result ps_read_uncompressed_header(cm_cursor *c, nt_event *ev, uint64_t *thread, uint64_t *capture_thread,
                                             uint32_t *label_list, uint32_t *event_size)
{
    const size_t fixed = label_list ? 52 : 80; /* EventSize itself included */
    uint32_t raw_meta = 0;
    uint64_t ts = 0;
    *event_size = 0;
    if (cm_cur_left(c) < fixed)
        return PS_HEADER_SHORT;
    cm_cur_u32(c, event_size);
    if (*event_size < fixed - 4 || *event_size > cm_cur_left(c))
        return PS_HEADER_SIZE;
    const uint8_t *next = c->p + *event_size;
    cm_cur_u32(c, &raw_meta);
    ev->metadata_id = raw_meta & 0x7FFFFFFFu;
    ev->is_sorted = (raw_meta & 0x80000000u) == 0; /* the writer sets bit 31 when NOT sorted */
    cm_cur_u32(c, &ev->sequence_number);
    cm_cur_u64(c, thread);
    cm_cur_u64(c, capture_thread);
    cm_cur_u32(c, &ev->processor_number);
    cm_cur_u32(c, &ev->stack_id);
    cm_cur_u64(c, &ts);
    ev->timestamp = (int64_t)ts;
    if (label_list) {
        cm_cur_u32(c, label_list);
    } else {
        cm_cur_bytes(c, ev->activity_id, 16);
        cm_cur_bytes(c, ev->related_activity_id, 16);
    }
    cm_cur_u32(c, &ev->payload_size);
    if (ev->payload_size > *event_size - (fixed - 4))
        return PS_HEADER_PAYLOAD_SIZE;
    ev->payload = c->p;
    c->p = next; /* EventSize covers the trailing alignment padding */
    return PS_HEADER_OK;
}

nt_status ps_header_fail(nt_parser *p, ps_header_result r, uint64_t off, const nt_event *ev, const char *block,
                         uint32_t event_size)
{
    if (r == PS_HEADER_OVERRUN)
        return ps_fail(p, NT_ERR_MALFORMED, off, "event payload of %u bytes overruns the %s", ev->payload_size, block);
    if (r == PS_HEADER_SIZE)
        return ps_fail(p, NT_ERR_MALFORMED, off, "event size %u out of range", event_size);
    if (r == PS_HEADER_PAYLOAD_SIZE)
        return ps_fail(p, NT_ERR_MALFORMED, off, "event payload of %u bytes overruns its event size %u",
                       ev->payload_size, event_size);
    if (r == PS_HEADER_SHORT)
        return ps_fail(p, NT_ERR_MALFORMED, off, "event header truncated");
    return ps_fail(p, NT_ERR_MALFORMED, off, "compressed event header truncated or invalid");
}

/* The divisions of ps_parser_ticks_to_ns happen here, once, not per sample. */
static void set_clock(nt_parser *p, int64_t frequency)
{
    p->ns_fast_end = 0;
    if (frequency <= 0)
        return;
    uint64_t f = (uint64_t)frequency;
    p->ns_q = 1000000000u / f;
    p->ns_r = 1000000000u % f;
    p->ns_m = 0;
#if defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 u128;
    p->ns_m = (uint64_t)(((u128)p->ns_r << 64) / f); /* r < f: fits */
    /* The fast route while the result fits in int64 (beyond, the general
     * conversion saturates); t <= INT64_MAX also keeps t m below 2^127. */
    u128 fits = (u128)INT64_MAX * f / 1000000000u;
    p->ns_fast_end = (uint64_t)(fits < INT64_MAX ? fits : INT64_MAX) + 1;
#else
    if (p->ns_r == 0) /* whole-ns periods only: t q */
        p->ns_fast_end = (uint64_t)(INT64_MAX / (int64_t)p->ns_q) + 1;
#endif
}

nt_status ps_trace_check_pointer_size(nt_parser *p, uint64_t off)
{
    uint32_t ptr = p->info.pointer_size;
    if (ptr != 4 && ptr != 8)
        return ps_fail(p, NT_ERR_MALFORMED, off, "pointer size %u is neither 4 nor 8", ptr);
    return NT_OK;
}

nt_status ps_trace_commit(nt_parser *p)
{
    p->have_trace = true;
    set_clock(p, p->info.qpc_frequency);
    return PS_CALL(p, trace, &p->info);
}

nt_status ps_sp_reserve(nt_parser *p, uint32_t count, uint64_t off)
{
    if (!cm_mem_reserve(&p->mem, (void **)&p->sp_threads, &p->sp_threads_cap, count ? count : 1,
                        sizeof *p->sp_threads))
        return ps_fail(p, NT_ERR_NOMEM, off, "cannot hold %u sequence-point threads", count);
    return NT_OK;
}

nt_status ps_gap_report(nt_parser *p, const ps_thread_entry *t, uint32_t first, uint32_t lost, int64_t ticks,
                        uint64_t off, uint32_t found_at)
{
    p->stats.events_dropped += lost;
    if (!p->cb.sequence_gap)
        return NT_OK;
    int64_t ns = ticks == INT64_MIN ? INT64_MIN : ps_parser_ticks_to_ns(p, ticks);
    nt_sequence_gap g = { t->os_tid, first, lost, ticks, ns, off, found_at };
    return PS_CALL(p, sequence_gap, &g);
}

nt_status ps_sp_deliver(nt_parser *p, int64_t timestamp, uint32_t flags, uint32_t count)
{
    p->stats.sequence_points++;
    nt_sequence_point sp = { timestamp, flags, count, p->sp_threads };
    nt_status s = PS_CALL(p, sequence_point, &sp);
    ps_stacks_clear(&p->stacks); /* stack ids restart after every sequence point */
    return s;
}

nt_status ps_event_block_begin(nt_parser *p, cm_cursor *c, const uint8_t *content, size_t size, uint64_t off,
                               const char *what, bool *compressed)
{
    *c = cm_cursor_make(content, size);
    uint16_t header_size, flags;
    if (!cm_cur_u16(c, &header_size) || !cm_cur_u16(c, &flags))
        return ps_fail(p, NT_ERR_MALFORMED, off, "%s header truncated", what);
    if (header_size < 20 || header_size > size)
        return ps_fail(p, NT_ERR_MALFORMED, off, "%s header size %u out of range", what, header_size);
    c->p = content + header_size;
    *compressed = flags & CM_EVENT_BLOCK_COMPRESSED;
    return NT_OK;
}
