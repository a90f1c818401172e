/* The block index's object, its entry points and its queries.  The two passes
 * that fill it are index_scan.c and index_estimate.c. */
#include "common/abi.h"
#include "common/alloc.h"
#include "common/file_read.h"
#include "parse/index_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


static void no_message(char *msg, size_t msg_size)
{
    if (msg && msg_size)
        msg[0] = '\0';
}

nt_status ix_build_start(ix_build *b, const nt_index_options *given, uint32_t *sample_blocks)
{
    nt_index_options o;
    if (!ABI_IN(nt_index_options, &o, given))
        return NT_ERR_INVALID_ARG;
    if (!(b->ix = CM_MEM_NEW(nt_index, o.alloc)))
        return NT_ERR_NOMEM;
    b->max_blocks = o.max_blocks ? o.max_blocks : NT_DEFAULT_INDEX_MAX_BLOCKS;
    if (sample_blocks)
        *sample_blocks = o.sample_blocks ? o.sample_blocks : NT_DEFAULT_INDEX_SAMPLE_BLOCKS;
    return NT_OK;
}

/* One build over a buffer (data) or a file (fd). */
nt_status ix_build_run(ix_build *b, const nt_index_options *given, bool estimate, nt_index **out)
{
    uint32_t sample_blocks = 0;
    nt_status started = ix_build_start(b, given, &sample_blocks);
    if (started)
        return started;
    nt_index *ix = b->ix;
    nt_status s = b->len ? ix_scan(b) : ix_fail(b, NT_ERR_NOT_NETTRACE, 0, "empty input");
    if (estimate && s != NT_ERR_NOMEM && s != NT_ERR_NOT_NETTRACE && s != NT_ERR_UNSUPPORTED_VERSION)
        ix_estimate(b, sample_blocks);
    cm_mem_free(&ix->mem, b->body, b->body_cap);
    b->body = NULL;
    b->body_cap = 0;
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
    return ix_build_run(&b, opt, true, out);
}

nt_status nt_index_from_fd(int fd, const nt_index_options *opt, nt_index **out, char *msg, size_t msg_size)
{
    no_message(msg, msg_size);
    if (fd < 0 || !out)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        if (msg && msg_size)
            snprintf(msg, msg_size, "%s", strerror(errno));
        return NT_ERR_IO;
    }
    if (!S_ISREG(st.st_mode)) {
        if (msg && msg_size)
            snprintf(msg, msg_size, "not a regular file (an index is built over a file, not a pipe)");
        return NT_ERR_INVALID_ARG;
    }
    ix_build b = { .fd = fd, .len = (uint64_t)st.st_size, .msg = msg, .msg_size = msg_size };
    nt_status s = ix_build_run(&b, opt, true, out);
    /* The identity a sidecar names is taken when every block is walked (the
     * index worth saving; the whole file is read then anyway), so an index of
     * headers only still reads a small share of the file.  A failed read
     * leaves it unknown: the index is usable, not saved. */
    bool walk_all = opt && opt->sample_blocks == NT_INDEX_WALK_ALL;
    if (*out && walk_all)
        ix_identify(&b, (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec, &(*out)->id);
    return s;
}

nt_status nt_index_from_file(const char *path, const nt_index_options *opt, nt_index **out, char *msg,
                             size_t msg_size)
{
    no_message(msg, msg_size);
    if (!path || !out)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    int fd = cm_open_read(path, msg, msg_size);
    if (fd < 0)
        return NT_ERR_IO;
    nt_status s = nt_index_from_fd(fd, opt, out, msg, msg_size);
    if (!*out && msg && msg_size && msg[0]) { /* name the file in the messages that do not */
        char inner[256];
        snprintf(inner, sizeof inner, "%s", msg);
        snprintf(msg, msg_size, "%s: %s", path, inner);
    }
    close(fd);
    return s;
}

void nt_index_free(nt_index *ix)
{
    if (!ix)
        return;
    cm_mem_free(&ix->mem, ix->blocks, ix->cap * sizeof *ix->blocks);
    cm_mem_free(&ix->mem, ix->rec, ix->rec_cap);
    CM_MEM_DELETE(nt_index, ix);
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
    nt_index_summary sum;
    memset(&sum, 0, sizeof sum);
    if (ix) {
        sum = ix->sum;
        sum.kept_records = ix->rec_count;
        sum.kept_record_bytes = ix->rec_len;
    }
    ABI_OUT(nt_index_summary, out, &sum);
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
