/* The block index's object, its entry points and its queries.  The two passes
 * that fill it are index_scan.c and index_estimate.c. */
#include "common/alloc.h"
#include "parse/index_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

nt_status ix_fail(ix_build *b, nt_status s, uint64_t off, const char *what)
{
    if (b->msg && b->msg_size)
        snprintf(b->msg, b->msg_size, "%s at byte %llu: %s", nt_status_describe(s), (unsigned long long)off, what);
    return s;
}

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

static void no_message(char *msg, size_t msg_size)
{
    if (msg && msg_size)
        msg[0] = '\0';
}

/* One build over a buffer (data) or a file (fd). */
static nt_status build(ix_build *b, const nt_index_options *opt, nt_index **out)
{
    nt_index *ix = NT_MEM_NEW(nt_index, opt ? opt->alloc : NULL);
    if (!ix)
        return NT_ERR_NOMEM;
    b->ix = ix;
    b->max_blocks = opt && opt->max_blocks ? opt->max_blocks : NT_DEFAULT_INDEX_MAX_BLOCKS;
    uint32_t sample_blocks = opt && opt->sample_blocks ? opt->sample_blocks : NT_DEFAULT_INDEX_SAMPLE_BLOCKS;
    nt_status s = b->len ? ix_scan(b) : ix_fail(b, NT_ERR_NOT_NETTRACE, 0, "empty input");
    if (s != NT_ERR_NOMEM && s != NT_ERR_NOT_NETTRACE && s != NT_ERR_UNSUPPORTED_VERSION)
        ix_estimate(b, sample_blocks);
    nt_mem_free(&ix->mem, b->body, b->body_cap);
    if (s == NT_ERR_NOMEM || s == NT_ERR_NOT_NETTRACE || s == NT_ERR_UNSUPPORTED_VERSION) {
        nt_index_free(ix);
        return s;
    }
    *out = ix;
    return s;
}

nt_status nt_index_from_buffer(const void *data, size_t len, const nt_index_options *opt, nt_index **out,
                               char *msg, size_t msg_size)
{
    no_message(msg, msg_size);
    if (!out || (!data && len))
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    static const uint8_t none[1];
    ix_build b = { .data = data ? data : none, .fd = -1, .len = len, .msg = msg, .msg_size = msg_size };
    return build(&b, opt, out);
}

nt_status nt_index_from_file(const char *path, const nt_index_options *opt, nt_index **out, char *msg,
                             size_t msg_size)
{
    no_message(msg, msg_size);
    if (!path || !out)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        if (msg && msg_size)
            snprintf(msg, msg_size, "%s: %s", path, strerror(e));
        return NT_ERR_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        if (msg && msg_size)
            snprintf(msg, msg_size, "%s: not a regular file (an index is built over a file, not a pipe)", path);
        return NT_ERR_INVALID_ARG;
    }
    ix_build b = { .fd = fd, .len = (uint64_t)st.st_size, .msg = msg, .msg_size = msg_size };
    nt_status s = build(&b, opt, out);
    close(fd);
    return s;
}

void nt_index_free(nt_index *ix)
{
    if (!ix)
        return;
    nt_mem_free(&ix->mem, ix->blocks, ix->cap * sizeof *ix->blocks);
    NT_MEM_DELETE(nt_index, ix);
}

size_t nt_index_block_count(const nt_index *ix) { return ix ? ix->count : 0; }

const nt_index_block *nt_index_block_at(const nt_index *ix, size_t i)
{
    return ix && i < ix->count ? &ix->blocks[i] : NULL;
}

void nt_index_summarize(const nt_index *ix, nt_index_summary *out)
{
    if (!out)
        return;
    if (!ix) {
        memset(out, 0, sizeof *out);
        return;
    }
    *out = ix->sum;
}

size_t nt_index_event_blocks_in(const nt_index *ix, int64_t from_ticks, int64_t to_ticks,
                                void (*fn)(void *user, size_t block), void *user)
{
    size_t n = 0;
    for (size_t i = 0; ix && i < ix->count; i++) {
        const nt_index_block *b = &ix->blocks[i];
        if (b->kind != NT_INDEX_EVENT || b->max_ticks < from_ticks || b->min_ticks > to_ticks)
            continue;
        n++;
        if (fn)
            fn(user, i);
    }
    return n;
}

const char *nt_index_kind_name(nt_index_kind kind)
{
    static const char *const NAMES[NT_INDEX_KIND_COUNT] = {
        "trace", "event", "metadata", "stack", "sequence_point", "thread", "remove_thread", "label_list", "unknown",
    };
    return (unsigned)kind < NT_INDEX_KIND_COUNT ? NAMES[kind] : "unknown";
}
