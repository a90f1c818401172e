/* The block index (nt_index) on any input.
 *
 * Besides "no crash, no leak, no sanitizer report": its blocks tile the
 * input in order and end within it; an input the parser reads whole is
 * indexed whole; the index of a prefix is a prefix of the index (the blocks
 * before a cut never depend on what follows it); and no index is returned
 * only for the statuses that say so.  Then the sidecar: an input indexed
 * whole, saved and loaded back against the same file, gives the same table;
 * a windowed read through it never fails where the whole parse succeeds
 * (with every kept record or those the window's frames need); and
 * a byte of the sidecar changed (and the checksum re-sealed, to reach the
 * checks behind it) is refused or gives a table whose every field is the
 * trace's own (where the load framed every header; else blocks that tile
 * the stream) and whose next-sample links stay within it, whose kept
 * records each lie in a block flagged to keep them, and through which a
 * windowed read ends with a status (the records' contents are believed:
 * any status, never a crash). */
#include "fuzz.h"
#include "nettrace_index.h"
#include "parse/index_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct saved {
    uint8_t *p;
    size_t n, cap;
} saved;

static int keep(void *user, const void *data, size_t len)
{
    saved *s = user;
    uint8_t *q = realloc(s->p, s->n + len);
    if (!q)
        return -1;
    memcpy(q + s->n, data, len);
    s->p = q;
    s->n += len;
    return 0;
}

/* A loaded table: the trace's own, field for field, where the load framed
 * every header (a trace of up to IX_SPOT_CHECKS + 2 blocks, or the sidecar
 * just saved); else blocks that tile the stream in order. */
static void check_loaded(const nt_index *ix, const nt_index *fresh, bool every_field)
{
    size_t n = nt_index_block_count(ix);
    if (n != nt_index_block_count(fresh))
        fz_fail("a loaded sidecar has %zu blocks, the trace %zu", n, nt_index_block_count(fresh));
    every_field |= n <= IX_SPOT_CHECKS + 2;
    uint64_t prev = n ? nt_index_block_at(fresh, 0)->offset : 0;
    for (size_t i = 0; i < n; i++) {
        const nt_index_block *a = nt_index_block_at(ix, i), *b = nt_index_block_at(fresh, i);
        if (every_field && (a->offset != b->offset || a->end != b->end || a->body_offset != b->body_offset ||
                            a->body_size != b->body_size || a->kind != b->kind || a->min_ticks != b->min_ticks ||
                            a->max_ticks != b->max_ticks || a->interval != b->interval))
            fz_fail("loaded block %zu differs from the trace's", i);
        if (a->offset != prev || a->body_offset < a->offset || a->body_offset + a->body_size > a->end ||
            a->kind >= NT_INDEX_KIND_COUNT)
            fz_fail("loaded block %zu does not follow the one before it", i);
        prev = a->end;
        if (a->next_sample_block && (a->next_sample_block <= i || a->next_sample_block >= n))
            fz_fail("loaded block %zu links to block %u", i, a->next_sample_block);
    }
}

/* Every kept record inside a block flagged to keep them, in block order. */
static void check_records(const nt_index *ix)
{
    ix_record r;
    uint32_t prev = 0;
    for (size_t at = 0; ix_records_next(ix, &at, &r); prev = r.block) {
        const nt_index_block *b = nt_index_block_at(ix, r.block);
        if (!b || r.block < prev || !(b->flags & NT_INDEX_BLOCK_RECORDS_KEPT) || r.ev.offset < b->body_offset ||
            r.ev.offset >= b->body_offset + b->body_size || at > ix->rec_len)
            fz_fail("kept record of block %u is not inside a block that keeps records", r.block);
    }
}

/* A windowed read at from_ns through ix (with the method records cut to
 * the window's frames, or all of them): p's status. */
static nt_status read_window(int fd, const nt_index *ix, int64_t from, bool frame_records)
{
    nt_window_options wo = { .struct_size = sizeof wo, .flags = frame_records ? NT_WINDOW_FRAME_RECORDS : 0,
                             .from_ns = from, .to_ns = from < INT64_MAX ? from + 1 : from };
    nt_limits lim;
    fz_harness_limits(&lim);
    nt_parser *p = nt_parser_new(NULL, NULL, &lim, NULL);
    if (!p)
        return NT_ERR_NOMEM;
    nt_status s = nt_parser_feed_window(p, fd, ix, &wo, NULL, NULL);
    if (s != NT_OK && s != NT_ERR_STATE && s != NT_ERR_NOMEM && !nt_parser_message(p)[0] && s != NT_ERR_IO)
        fz_fail("a windowed read fails (%s) without a message", nt_status_name(s));
    nt_parser_free(p);
    return s;
}

/* The input as a file, indexed, saved, loaded, read through a window, and its sidecar mutated. */
static void sidecar_round_trip(const uint8_t *data, size_t size, bool parses)
{
    FILE *f = tmpfile();
    if (!f)
        return;
    int fd = fileno(f);
    if (fwrite(data, 1, size, f) != size || fflush(f) != 0) {
        fclose(f);
        return;
    }
    nt_index_options opt = { .max_blocks = 1u << 16, .sample_blocks = NT_INDEX_WALK_ALL };
    nt_index *ix = NULL;
    saved sv = { 0 };
    if (nt_index_from_fd(fd, &opt, &ix, NULL, 0) == NT_OK && nt_index_save(ix, keep, &sv) == NT_OK) {
        nt_index *back = NULL;
        nt_status s = nt_index_load(sv.p, sv.n, fd, &opt, &back, NULL, 0);
        if (s != NT_OK)
            fz_fail("a sidecar just saved does not load: %s", nt_status_name(s));
        check_loaded(back, ix, true);
        check_records(back);
        nt_index_summary sum = { .struct_size = sizeof sum };
        nt_index_summarize(back, &sum);
        /* A point of the stated span, in unsigned arithmetic: a hostile file's ticks span anything. */
        uint64_t span = (uint64_t)sum.max_ticks - (uint64_t)sum.min_ticks;
        int64_t at = (int64_t)((uint64_t)sum.min_ticks + (fz_hash(data, size) % 1000) * (span / 1000));
        int64_t from = nt_ticks_to_ns(at, sum.qpc_frequency);
        for (int cut = 0; cut < 2; cut++) {
            s = read_window(fd, back, from, cut);
            if (parses && s != NT_OK && s != NT_ERR_STATE && s != NT_ERR_NOMEM)
                fz_fail("a windowed read fails (%s) where the whole parse succeeds%s", nt_status_name(s),
                        cut ? " (records cut to the window's frames)" : "");
        }
        nt_index_free(back);
        /* One byte changed, the seal made good again. */
        if (sv.n > 8) {
            uint64_t h = fz_hash(data, size);
            sv.p[h % (sv.n - 8)] ^= (uint8_t)(1u + (h >> 32) % 255u);
            uint64_t c = ix_sidecar_checksum(sv.p, sv.n - 8);
            for (int k = 0; k < 8; k++)
                sv.p[sv.n - 8 + (size_t)k] = (uint8_t)(c >> (8 * k));
            nt_index *bad = NULL;
            if (nt_index_load(sv.p, sv.n, fd, &opt, &bad, NULL, 0) == NT_OK) {
                check_loaded(bad, ix, false);
                check_records(bad);
                read_window(fd, bad, from, (h >> 40) & 1);
            }
            nt_index_free(bad);
        }
    }
    free(sv.p);
    nt_index_free(ix);
    fclose(f);
}

static void check_tiling(const nt_index *ix, size_t size)
{
    uint64_t prev = 0;
    for (size_t i = 0; i < nt_index_block_count(ix); i++) {
        const nt_index_block *b = nt_index_block_at(ix, i);
        if (b->offset < prev || b->body_offset < b->offset || b->body_offset + b->body_size > b->end || b->end > size)
            fz_fail("block %zu does not tile the input", i);
        if (b->kind >= NT_INDEX_KIND_COUNT)
            fz_fail("block %zu has kind %u", i, b->kind);
        prev = b->end;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nt_index_options opt = { .max_blocks = 1u << 16, .sample_blocks = 4 };
    nt_index *ix = NULL;
    char msg[256];
    nt_status s = nt_index_from_buffer(data, size, &opt, &ix, msg, sizeof msg);
    if (!ix) {
        if (s != NT_ERR_NOT_NETTRACE && s != NT_ERR_UNSUPPORTED_VERSION && s != NT_ERR_NOMEM)
            fz_fail("no index, status %s", nt_status_name(s));
        return 0;
    }
    if (s != NT_OK && !msg[0])
        fz_fail("status %s without a message", nt_status_name(s));
    check_tiling(ix, size);
    nt_index_summary sum;
    nt_index_summarize(ix, &sum);
    if (sum.complete != (s == NT_OK))
        fz_fail("complete=%d with status %s", sum.complete, nt_status_name(s));

    nt_limits lim;
    fz_harness_limits(&lim);
    bool parses = nt_parse_buffer(data, size, NULL, NULL, &lim, NULL, 0) == NT_OK;
    if (parses && s != NT_OK)
        fz_fail("the parser reads the input whole, the index stops: %s", msg);
    if (s == NT_OK)
        sidecar_round_trip(data, size, parses);

    /* A prefix's index is a prefix of this one. */
    size_t cut = size ? (size_t)(fz_hash(data, size) % size) : 0;
    nt_index *px = NULL;
    nt_index_from_buffer(data, cut, &opt, &px, NULL, 0);
    if (px) {
        size_t n = nt_index_block_count(px);
        if (n > nt_index_block_count(ix))
            fz_fail("a prefix has more blocks than the whole");
        /* The scan's fields: flags and next-sample links come from the walk, which spreads over
         * a prefix's blocks differently. */
        for (size_t i = 0; i < n; i++) {
            nt_index_block a = *nt_index_block_at(px, i), b = *nt_index_block_at(ix, i);
            a.flags = b.flags = 0;
            a.next_sample_block = b.next_sample_block = 0;
            if (memcmp(&a, &b, sizeof a) != 0)
                fz_fail("block %zu differs in a prefix cut at %zu", i, cut);
        }
        nt_index_free(px);
    }
    nt_index_free(ix);
    return 0;
}
