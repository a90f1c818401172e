/* nt_membuf: a growable memory sink for the writer or any nt_sink_fn user. */
#include "nettrace_writer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int nt_membuf_write(void *user, const void *data, size_t len)
{
    nt_membuf *b = user;
    if (len > SIZE_MAX / 2 - b->len)
        return -1;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len)
            cap *= 2;
        uint8_t *d = realloc(b->data, cap);
        if (!d)
            return -1;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

void nt_membuf_free(nt_membuf *b)
{
    if (!b)
        return;
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
