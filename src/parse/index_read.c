/* The block index's reads (the bytes a scan asks for, from the caller's
 * buffer or by pread from a file, counted in bytes_read either way) and its
 * failure messages: below both passes (index_scan.c, index_estimate.c) and
 * the entry points (index.c), which all use them. */
#include "parse/index_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* pread until want bytes or the end of the file; false on a read error. */
static bool read_fully(int fd, uint64_t off, uint8_t *dst, size_t want, size_t *got)
{
    *got = 0;
    while (*got < want) {
        ssize_t n = pread(fd, dst + *got, want - *got, (off_t)(off + *got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        if (n == 0)
            break;
        *got += (size_t)n;
    }
    return true;
}

const uint8_t *ix_at(ix_build *b, uint64_t off, size_t want, size_t *got)
{
    *got = 0;
    if (off >= b->len)
        return b->data ? b->data + b->len : b->head; /* nothing there: a valid pointer to no bytes */
    if (want > b->len - off)
        want = (size_t)(b->len - off);
    b->ix->sum.bytes_read += want;
    if (b->data) {
        *got = want;
        return b->data + off;
    }
    uint8_t *dst = b->head;
    if (want > sizeof b->head) {
        if (want > b->body_cap) {
            if (!nt_mem_resize(&b->ix->mem, (void **)&b->body, b->body_cap, want))
                return NULL;
            b->body_cap = want;
        }
        dst = b->body;
    }
    return read_fully(b->fd, off, dst, want, got) && *got == want ? dst : NULL;
}

const uint8_t *ix_body(ix_build *b, const nt_index_block *blk)
{
    if (blk->body_size > NT_DEFAULT_MAX_BLOCK_BYTES)
        return NULL;
    size_t got = 0;
    /* Never into the header buffer: a body read asks for more than it holds or is copied there. */
    if (blk->body_size <= sizeof b->head && !b->data) {
        const uint8_t *p = ix_at(b, blk->body_offset, blk->body_size, &got);
        if (!p || got != blk->body_size)
            return NULL;
        if (blk->body_size > b->body_cap) {
            if (!nt_mem_resize(&b->ix->mem, (void **)&b->body, b->body_cap, sizeof b->head))
                return NULL;
            b->body_cap = sizeof b->head;
        }
        memcpy(b->body, p, blk->body_size);
        return b->body;
    }
    const uint8_t *p = ix_at(b, blk->body_offset, blk->body_size, &got);
    return p && got == blk->body_size ? p : NULL;
}


nt_status ix_fail(ix_build *b, nt_status s, uint64_t off, const char *what)
{
    if (b->msg && b->msg_size)
        snprintf(b->msg, b->msg_size, "%s at byte %llu: %s", nt_status_describe(s), (unsigned long long)off, what);
    return s;
}
