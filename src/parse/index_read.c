/* The block index's reads (the bytes a scan asks for, from the caller's
 * buffer or by pread from a file, counted in bytes_read either way) and its
 * failure messages: below both passes (index_scan.c, index_estimate.c) and
 * the entry points (index.c), which all use them. */
#include "common/file_read.h"
#include "common/checksum.h"
#include "parse/index_internal.h"

#include <stdio.h>

/* The want bytes at off (off < len, want <= len - off) into dst, or the
 * buffer's own bytes: counted either way; NULL when the read fails. */
static const uint8_t *fetch(ix_build *b, uint64_t off, size_t want, uint8_t *dst)
{
    b->ix->sum.bytes_read += want;
    if (b->data)
        return b->data + off;
    size_t got = 0;
    return cm_read_at(b->fd, off, dst, want, &got) == 0 && got == want ? dst : NULL;
}

const uint8_t *ix_at(ix_build *b, uint64_t off, size_t want, size_t *got)
{
    *got = 0;
    if (off >= b->len)
        return b->data ? b->data + b->len : b->head[0]; /* nothing there: a valid pointer to no bytes */
    if (want > b->len - off)
        want = (size_t)(b->len - off);
    if (want > sizeof b->head[0]) /* a header read: every caller asks for less */
        return NULL;
    /* A buffer's bytes are counted as a file's are read (the two slots alike), and are its own. */
    for (unsigned k = 0; k < 2; k++)
        if (b->head_len[k] && off >= b->head_off[k] && off - b->head_off[k] + want <= b->head_len[k]) {
            *got = want;
            return b->data ? b->data + off : b->head[k] + (off - b->head_off[k]);
        }
    /* A whole head's worth from off, into the older of the two. */
    unsigned k = b->head_older;
    size_t ahead = b->len - off < sizeof b->head[k] ? (size_t)(b->len - off) : sizeof b->head[k];
    b->head_len[k] = 0;
    const uint8_t *p = fetch(b, off, ahead, b->head[k]);
    if (!p)
        return NULL;
    b->head_off[k] = off;
    b->head_len[k] = ahead;
    b->head_older = k ^ 1u;
    *got = want;
    return p;
}

const uint8_t *ix_body(ix_build *b, const nt_index_block *blk)
{
    /* The framing pass put every block within the stream. */
    if (blk->body_size > NT_DEFAULT_MAX_BLOCK_BYTES)
        return NULL;
    if (!b->data && blk->body_size > b->body_cap) {
        if (!cm_mem_resize(&b->ix->mem, (void **)&b->body, b->body_cap, blk->body_size))
            return NULL;
        b->body_cap = blk->body_size;
    }
    return fetch(b, blk->body_offset, blk->body_size, b->body);
}

nt_status ix_fail(ix_build *b, nt_status s, uint64_t off, const char *what)
{
    if (b->msg && b->msg_size)
        snprintf(b->msg, b->msg_size, "%s at byte %llu: %s", nt_status_describe(s), (unsigned long long)off, what);
    return s;
}

/* The checksum of the n bytes at off (n <= IX_HEAD_BYTES), read into buf:
 * the trace's fingerprint (sidecar version 4; SipHash before, six times the
 * cost for a check of the same strength, since its key was fixed). */
static bool hash_span(ix_build *b, uint64_t off, size_t n, uint8_t *buf, uint64_t *out)
{
    const uint8_t *p = n ? fetch(b, off, n, buf) : buf;
    if (!p)
        return false;
    *out = cm_checksum64(p, n);
    return true;
}

bool ix_identify(ix_build *b, int64_t mtime_ns, ix_identity *out)
{
    size_t head = b->len < IX_HEAD_BYTES ? (size_t)b->len : IX_HEAD_BYTES;
    size_t tail = b->len < IX_TAIL_BYTES ? (size_t)b->len : IX_TAIL_BYTES;
    uint8_t *buf = cm_mem_alloc(&b->ix->mem, IX_HEAD_BYTES);
    bool ok = buf && hash_span(b, 0, head, buf, &out->head_hash) &&
              hash_span(b, b->len - tail, tail, buf, &out->tail_hash);
    cm_mem_free(&b->ix->mem, buf, IX_HEAD_BYTES);
    out->known = ok;
    out->size = b->len;
    out->mtime_ns = mtime_ns;
    return ok;
}
