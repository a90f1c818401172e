/* The block index (nt_index) on any input.
 *
 * Besides "no crash, no leak, no sanitizer report": its blocks tile the
 * input in order and end within it; an input the parser reads whole is
 * indexed whole; the index of a prefix is a prefix of the index (the blocks
 * before a cut never depend on what follows it); and no index is returned
 * only for the statuses that say so. */
#include "fuzz.h"
#include "nettrace_index.h"

#include <string.h>

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
    if (nt_parse_buffer(data, size, NULL, NULL, &lim, NULL, 0) == NT_OK && s != NT_OK)
        fz_fail("the parser reads the input whole, the index stops: %s", msg);

    /* A prefix's index is a prefix of this one. */
    size_t cut = size ? (size_t)(fz_hash(data, size) % size) : 0;
    nt_index *px = NULL;
    nt_index_from_buffer(data, cut, &opt, &px, NULL, 0);
    if (px) {
        size_t n = nt_index_block_count(px);
        if (n > nt_index_block_count(ix))
            fz_fail("a prefix has more blocks than the whole");
        for (size_t i = 0; i < n; i++)
            if (memcmp(nt_index_block_at(px, i), nt_index_block_at(ix, i), sizeof(nt_index_block)) != 0)
                fz_fail("block %zu differs in a prefix cut at %zu", i, cut);
        nt_index_free(px);
    }
    nt_index_free(ix);
    return 0;
}
