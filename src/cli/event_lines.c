#include "event_lines.h"

#include <stdlib.h>

bool ev_lines_init(ev_lines *l)
{
    *l = (ev_lines){ 0 };
    l->mem = open_memstream(&l->buf, &l->buf_len);
    return l->mem != NULL;
}

FILE *ev_lines_begin(ev_lines *l, int64_t timestamp)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1024;
        ev_line *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return NULL;
        l->v = v;
        l->cap = cap;
    }
    l->start = ftell(l->mem);
    if (l->start < 0)
        return NULL;
    l->v[l->n] = (ev_line){ timestamp, l->seq++, (size_t)l->start, 0 };
    return l->mem;
}

bool ev_lines_end(ev_lines *l)
{
    fputc('\n', l->mem);
    long end = ftell(l->mem);
    if (end < 0 || ferror(l->mem))
        return false;
    l->v[l->n++].len = (size_t)(end - l->start);
    return true;
}

static int by_time(const void *a, const void *b)
{
    const ev_line *x = a, *y = b;
    if (x->timestamp != y->timestamp)
        return x->timestamp < y->timestamp ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

bool ev_lines_flush(ev_lines *l, FILE *out)
{
    if (!l->n)
        return true;
    if (fflush(l->mem) != 0)
        return false;
    qsort(l->v, l->n, sizeof *l->v, by_time);
    for (size_t i = 0; i < l->n; i++)
        fwrite(l->buf + l->v[i].off, 1, l->v[i].len, out);
    l->n = 0;
    rewind(l->mem);
    return !ferror(out);
}

void ev_lines_free(ev_lines *l)
{
    if (l->mem)
        fclose(l->mem);
    free(l->buf);
    free(l->v);
    *l = (ev_lines){ 0 };
}
