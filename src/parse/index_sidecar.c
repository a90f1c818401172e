/* The index's sidecar: an index saved beside its trace (nt_index_save) and
 * read back by a later run (nt_index_load) only after the trace is seen to
 * be the one it describes.
 *
 * What a sidecar adds to the scan of block headers, which is cheap, is what
 * only a walk of every event is able to say: which event blocks hold method,
 * module or assembly events (NT_INDEX_BLOCK_RECORDS), and exact counts.
 * The load checks the trace's size, modification time and the hashes of its
 * head and tail, then the table's shape (every block inside the stream, in
 * order and contiguous, its content inside it, kinds and ranges possible,
 * the end mark where the table ends), and frames a spread of the trace's
 * block headers again (IX_SPOT_CHECKS of them, every one in a small trace),
 * which must be the table's entries field for field.  It does not rescan
 * every header: that was one read a block, most of a window's cost on a
 * large trace, for blocks the window never reads.  The blocks a window reads
 * are framed by the parser, which fails where the table misplaces one
 * (ps_parser_skip_to); a kind or time range the table states for a block
 * the window does not read is believed, as the block's own header would be.
 *
 * Version 2 adds the kept records (index_records.c): the method, module
 * and assembly events of the blocks flagged NT_INDEX_BLOCK_RECORDS_KEPT,
 * which a windowed read takes from here instead of reading those blocks.
 *
 * Version 3 seals the file with cm_checksum64 (common/checksum.h) in place
 * of SipHash: the same check of damage at a sixth of the cost.  Version 4
 * fingerprints the trace's head and tail with it too.
 *
 * Layout (little-endian): a 120-byte header, block_count entries of 56
 * bytes, the kept records (IX_REC_FIXED bytes each and its payload padded
 * to 8), and a checksum of everything before it, which catches a damaged or
 * cut file before any field is used.
 *
 *   0 "ntindex\0"   8 u32 version (4)   12 u32 entry size (56)
 *  16 u64 trace size   24 i64 trace mtime ns   32 u64 head hash   40 u64 tail hash
 *  48 u32 format major   52 u32 flags (1 complete, 2 estimate exact)   56 u64 block count
 *  64 u64 sampled event blocks, 72 sampled events, 80 sampled samples,
 *  88 events estimate, 96 samples estimate, 104 stream bytes, 112 u64 kept records' bytes
 * entry: u64 offset, u64 end, u64 body offset, u32 body size, u8 kind,
 *        u8 flags, u16 0, i64 min ticks, i64 max ticks, u32 next sample block, u32 0
 */
#include "common/cursor.h"
#include "common/checksum.h"
#include "common/le_store.h"
#include "parse/index_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define SC_MAGIC "ntindex"
#define SC_VERSION 4u
#define SC_HEADER 120u
#define SC_ENTRY 56u
#define SC_CHECKSUM 8u
#define SC_COMPLETE 0x1u
#define SC_EXACT 0x2u

uint64_t ix_sidecar_checksum(const uint8_t *p, size_t n) { return cm_checksum64(p, n); }

nt_status nt_index_save(const nt_index *ix, nt_sink_fn w, void *user)
{
    if (!ix || !w || !ix->id.known)
        return NT_ERR_INVALID_ARG;
    const nt_index_summary *s = &ix->sum;
    /* One span, header to checksum: the checksum is computed over the file's bytes at once. */
    size_t table = SC_HEADER + ix->count * SC_ENTRY;
    size_t total = table + ix->rec_len;
    cm_mem m;
    cm_mem_init(&m, &ix->mem.a);
    uint8_t *buf = cm_mem_alloc(&m, total + SC_CHECKSUM);
    if (!buf)
        return NT_ERR_NOMEM;
    memset(buf, 0, total);
    memcpy(buf, SC_MAGIC, sizeof SC_MAGIC);
    cm_store_le32(buf + 8, SC_VERSION);
    cm_store_le32(buf + 12, SC_ENTRY);
    cm_store_le64(buf + 16, ix->id.size);
    cm_store_le64(buf + 24, (uint64_t)ix->id.mtime_ns);
    cm_store_le64(buf + 32, ix->id.head_hash);
    cm_store_le64(buf + 40, ix->id.tail_hash);
    cm_store_le32(buf + 48, s->format_major);
    cm_store_le32(buf + 52, (s->complete ? SC_COMPLETE : 0) | (s->estimate_exact ? SC_EXACT : 0));
    cm_store_le64(buf + 56, ix->count);
    cm_store_le64(buf + 64, s->sampled_event_blocks);
    cm_store_le64(buf + 72, s->sampled_events);
    cm_store_le64(buf + 80, s->sampled_samples);
    cm_store_le64(buf + 88, s->events_estimate);
    cm_store_le64(buf + 96, s->samples_estimate);
    cm_store_le64(buf + 104, s->stream_bytes);
    cm_store_le64(buf + 112, ix->rec_len);
    if (ix->rec_len)
        memcpy(buf + table, ix->rec, ix->rec_len);
    for (size_t i = 0; i < ix->count; i++) {
        const nt_index_block *b = &ix->blocks[i];
        uint8_t *e = buf + SC_HEADER + i * SC_ENTRY;
        cm_store_le64(e, b->offset);
        cm_store_le64(e + 8, b->end);
        cm_store_le64(e + 16, b->body_offset);
        cm_store_le32(e + 24, b->body_size);
        e[28] = b->kind;
        e[29] = b->flags;
        cm_store_le64(e + 32, (uint64_t)b->min_ticks);
        cm_store_le64(e + 40, (uint64_t)b->max_ticks);
        cm_store_le32(e + 48, b->next_sample_block);
    }
    cm_store_le64(buf + total, ix_sidecar_checksum(buf, total));
    int r = w(user, buf, total + SC_CHECKSUM);
    cm_mem_free(&m, buf, total + SC_CHECKSUM);
    return r == 0 ? NT_OK : NT_ERR_IO;
}

static nt_status refuse(char *msg, size_t msg_size, nt_status s, uint64_t off, const char *what)
{
    if (msg && msg_size)
        snprintf(msg, msg_size, "sidecar byte %llu: %s", (unsigned long long)off, what);
    return s;
}

/* The header's checks that need no trace: magic, version, sizes, checksum. */
static nt_status check_header(const uint8_t *d, size_t len, char *msg, size_t msg_size, uint64_t *count)
{
    if (len < SC_HEADER + SC_CHECKSUM || memcmp(d, SC_MAGIC, sizeof SC_MAGIC) != 0)
        return refuse(msg, msg_size, NT_ERR_MALFORMED, 0, "not an index sidecar (no \"ntindex\" magic)");
    if (cm_le32(d + 8) != SC_VERSION || cm_le32(d + 12) != SC_ENTRY)
        return refuse(msg, msg_size, NT_ERR_UNSUPPORTED_VERSION, 8, "a sidecar version this reader does not know");
    uint64_t n = cm_le64(d + 56), rec = cm_le64(d + 112);
    uint64_t room = len - SC_HEADER - SC_CHECKSUM;
    if (n > room / SC_ENTRY || rec > room - n * SC_ENTRY || len != SC_HEADER + n * SC_ENTRY + rec + SC_CHECKSUM)
        return refuse(msg, msg_size, NT_ERR_MALFORMED, 56, "block count and records do not fit the sidecar's size");
    size_t body = len - SC_CHECKSUM;
    if (ix_sidecar_checksum(d, body) != cm_le64(d + body))
        return refuse(msg, msg_size, NT_ERR_MALFORMED, body, "checksum mismatch (the sidecar is damaged)");
    if ((cm_le32(d + 52) & ~(SC_COMPLETE | SC_EXACT)) != 0)
        return refuse(msg, msg_size, NT_ERR_MALFORMED, 52, "unknown flags");
    *count = n;
    return NT_OK;
}

/* The trace now against the identity the sidecar names. */
static nt_status check_identity(const uint8_t *d, const ix_identity *now, char *msg, size_t msg_size)
{
    if (cm_le64(d + 16) != now->size)
        return refuse(msg, msg_size, NT_ERR_STATE, 16, "stale: the trace's size changed since the sidecar was written");
    if ((int64_t)cm_le64(d + 24) != now->mtime_ns)
        return refuse(msg, msg_size, NT_ERR_STATE, 24,
                      "stale: the trace was modified since the sidecar was written (its modification time)");
    if (cm_le64(d + 32) != now->head_hash || cm_le64(d + 40) != now->tail_hash)
        return refuse(msg, msg_size, NT_ERR_STATE, 32, "stale: the trace's bytes differ from those the sidecar describes");
    return NT_OK;
}

/* The entry at e as a block, or false when no scan could have made it
 * after the block ending at prev_end (version `major`). */
static bool entry_block(const uint8_t *e, uint32_t major, uint64_t prev_end, nt_index_block *b)
{
    *b = (nt_index_block){ .offset = cm_le64(e), .end = cm_le64(e + 8), .body_offset = cm_le64(e + 16),
                           .body_size = cm_le32(e + 24), .kind = e[28], .min_ticks = (int64_t)cm_le64(e + 32),
                           .max_ticks = (int64_t)cm_le64(e + 40) };
    if (cm_le16(e + 30) != 0 || cm_le32(e + 52) != 0 || b->kind >= NT_INDEX_KIND_COUNT || b->offset != prev_end)
        return false;
    bool framed = major == 6 ? b->body_offset == b->offset + 4 && b->end == b->body_offset + b->body_size
                             : b->body_offset > b->offset && b->body_offset - b->offset <= IX_V4_HEADER_MAX &&
                                   b->body_size <= INT32_MAX && b->end == b->body_offset + b->body_size + 1;
    if (!framed || b->end <= b->offset)
        return false;
    switch (b->kind) {
    case NT_INDEX_EVENT:
        return b->min_ticks <= b->max_ticks;
    case NT_INDEX_SEQUENCE_POINT:
        return b->min_ticks == b->max_ticks;
    default:
        return b->min_ticks == 0 && b->max_ticks == 0;
    }
}

/* The sidecar's table taken as the trace's blocks after its shape is
 * checked, then a spread of them framed in the trace again (b: the trace,
 * its stream header read); then its flags and counts. */
static nt_status adopt_blocks(ix_build *b, uint64_t first, const uint8_t *d, uint64_t count, char *msg,
                              size_t msg_size)
{
    nt_index *ix = b->ix;
    nt_index_summary *s = &ix->sum;
    uint32_t flags = cm_le32(d + 52);
    uint64_t stream_bytes = cm_le64(d + 104);
    if (count > b->max_blocks || cm_le32(d + 48) != s->format_major || stream_bytes > b->len ||
        !(flags & SC_COMPLETE))
        return refuse(msg, msg_size, NT_ERR_MALFORMED, 48, "the sidecar's blocks are not the trace's");
    if (!cm_mem_reserve(&ix->mem, (void **)&ix->blocks, &ix->cap, (size_t)count, sizeof *ix->blocks))
        return refuse(msg, msg_size, NT_ERR_NOMEM, SC_HEADER, "out of memory for the block table");
    uint32_t interval = 0;
    uint64_t end = first;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *e = d + SC_HEADER + i * SC_ENTRY;
        nt_index_block blk;
        uint8_t f = e[29];
        uint32_t next = cm_le32(e + 48);
        bool flags_ok = (f & ~(NT_INDEX_BLOCK_RECORDS | NT_INDEX_BLOCK_RECORDS_KEPT)) == 0 &&
                        (!(f & NT_INDEX_BLOCK_RECORDS_KEPT) || (f & NT_INDEX_BLOCK_RECORDS));
        if (!entry_block(e, s->format_major, end, &blk) || blk.end > stream_bytes || !flags_ok ||
            (f && blk.kind != NT_INDEX_EVENT) || (next && (next <= i || next >= count || blk.kind != NT_INDEX_EVENT ||
                                                             d[SC_HEADER + (size_t)next * SC_ENTRY + 28] != NT_INDEX_EVENT)))
            return refuse(msg, msg_size, NT_ERR_MALFORMED, SC_HEADER + i * SC_ENTRY,
                          "a block entry is not a block the trace can hold there");
        blk.interval = interval;
        blk.flags = f;
        blk.next_sample_block = next;
        interval += blk.kind == NT_INDEX_SEQUENCE_POINT;
        end = blk.end;
        ix->blocks[ix->count++] = blk;
        ix_count_block(ix, &blk);
    }
    s->complete = true;
    s->stream_bytes = stream_bytes;
    /* The trace's own headers: the first block (the trace header, whose clock
     * is read again here), the last, a spread between and the end mark after
     * the last; every block of a trace of up to IX_SPOT_CHECKS + 2. */
    size_t checks = count <= IX_SPOT_CHECKS + 2 ? (size_t)count : IX_SPOT_CHECKS + 2;
    for (size_t k = 0; k < checks; k++) {
        size_t i = checks == count ? k : k == checks - 1 ? (size_t)count - 1 : (size_t)((uint64_t)k * count / (checks - 1));
        nt_index_block framed;
        bool end_mark = false;
        const nt_index_block *want = &ix->blocks[i];
        nt_status st = ix_frame_at(b, want->offset, &framed, &end_mark);
        if (st == NT_ERR_IO)
            return refuse(msg, msg_size, st, SC_HEADER + i * SC_ENTRY, "reading the trace's block header failed");
        if (st || end_mark || framed.end != want->end || framed.body_offset != want->body_offset ||
            framed.body_size != want->body_size || framed.kind != want->kind || framed.min_ticks != want->min_ticks ||
            framed.max_ticks != want->max_ticks)
            return refuse(msg, msg_size, NT_ERR_MALFORMED, SC_HEADER + i * SC_ENTRY,
                          "a block entry differs from the trace's block header there");
    }
    nt_index_block mark;
    bool end_mark = false;
    if (ix_frame_at(b, end, &mark, &end_mark) != NT_OK || !end_mark || mark.end != stream_bytes)
        return refuse(msg, msg_size, NT_ERR_MALFORMED, 104, "the trace's end-of-stream mark is not where the sidecar ends");
    /* Counts: believed as counts (they select nothing), capped by what the table holds. */
    uint64_t walked = cm_le64(d + 64);
    if (walked > s->blocks[NT_INDEX_EVENT])
        return refuse(msg, msg_size, NT_ERR_MALFORMED, 64, "more event blocks walked than the trace holds");
    s->sampled_event_blocks = walked;
    s->sampled_events = cm_le64(d + 72);
    s->sampled_samples = cm_le64(d + 80);
    s->events_estimate = cm_le64(d + 88);
    s->samples_estimate = cm_le64(d + 96);
    s->estimate_exact = (flags & SC_EXACT) != 0 && walked == s->blocks[NT_INDEX_EVENT];
    return NT_OK;
}

/* The table, then the kept records, checked against the flags just taken. */
static nt_status adopt(ix_build *b, uint64_t first, const uint8_t *d, uint64_t count, char *msg, size_t msg_size)
{
    nt_index *ix = b->ix;
    nt_status s = adopt_blocks(b, first, d, count, msg, msg_size);
    if (s)
        return s;
    size_t at = SC_HEADER + count * SC_ENTRY, bad = 0;
    s = ix_records_adopt(ix, d + at, (size_t)cm_le64(d + 112), &bad);
    if (s == NT_ERR_NOMEM)
        return refuse(msg, msg_size, s, at, "out of memory for the kept records");
    if (s)
        return refuse(msg, msg_size, s, at + bad,
                      "a kept record is not inside the section or not of a block flagged to keep them");
    if (!ix->sum.estimate_exact) { /* flags of blocks not walked are not known: none is believed */
        for (size_t i = 0; i < ix->count; i++) {
            ix->blocks[i].flags = 0;
            ix->blocks[i].next_sample_block = 0;
        }
        ix_records_truncate(ix, 0);
    }
    return NT_OK;
}

nt_status nt_index_load(const void *data, size_t len, int trace_fd, const nt_index_options *opt, nt_index **out,
                        char *msg, size_t msg_size)
{
    if (msg && msg_size)
        msg[0] = '\0';
    if (!out || (!data && len) || trace_fd < 0)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    const uint8_t *d = data;
    uint64_t count = 0;
    nt_status s = check_header(d, len, msg, msg_size, &count);
    if (s)
        return s;
    struct stat st;
    if (fstat(trace_fd, &st) != 0) {
        if (msg && msg_size)
            snprintf(msg, msg_size, "the trace: %s", strerror(errno));
        return NT_ERR_IO;
    }
    if (!S_ISREG(st.st_mode))
        return refuse(msg, msg_size, NT_ERR_INVALID_ARG, 0, "the trace is not a regular file");
    char scan_msg[256] = "";
    ix_build b = { .fd = trace_fd, .len = (uint64_t)st.st_size, .msg = scan_msg, .msg_size = sizeof scan_msg };
    s = ix_build_start(&b, opt, NULL); /* no walk: the sidecar's is taken */
    if (s)
        return s;
    nt_index *ix = b.ix;
    ix_identity now;
    uint64_t first = 0;
    if (!ix_identify(&b, (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec, &now)) {
        s = NT_ERR_IO;
        if (msg && msg_size)
            snprintf(msg, msg_size, "the trace: reading it failed");
    } else if ((s = check_identity(d, &now, msg, msg_size)) == NT_OK &&
               (s = ix_stream_head(&b, &first)) != NT_OK) { /* read by the parser, which says where */
        if (msg && msg_size)
            snprintf(msg, msg_size, "the trace's header: %s", scan_msg);
    }
    ix->id = now;
    if (s == NT_OK)
        s = adopt(&b, first, d, count, msg, msg_size);
    if (s) {
        nt_index_free(ix);
        return s;
    }
    *out = ix;
    return NT_OK;
}
