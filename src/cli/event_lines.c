#include "cli/event_lines.h"
#include "common/json.h"

#include <stdio_ext.h>
#include <stdlib.h>

bool ev_lines_init(ev_lines *l)
{
    *l = (ev_lines){ 0 };
    nt_mem_init(&l->mem_v, NULL);
    l->mem = open_memstream(&l->buf, &l->buf_len);
    /* One thread writes it: no locking per character (a third of the time). */
    if (l->mem)
        __fsetlocking(l->mem, FSETLOCKING_BYCALLER);
    return l->mem != NULL;
}

FILE *ev_lines_begin(ev_lines *l, int64_t timestamp)
{
    if (!nt_mem_reserve(&l->mem_v, (void **)&l->v, &l->cap, l->n + 1, sizeof *l->v))
        return NULL;
    l->start = ftell(l->mem);
    if (l->start < 0)
        return NULL;
    l->v[l->n] = (ev_line){ timestamp, l->seq++, (size_t)l->start, 0, false, false };
    return l->mem;
}

void ev_lines_mark_stack(ev_lines *l, bool json)
{
    l->v[l->n].has_stack = true;
    l->v[l->n].json = json;
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

bool ev_lines_flush_stacks(ev_lines *l, FILE *out, const char *(*stack_of)(void *ctx, size_t k), void *ctx)
{
    if (!l->n)
        return true;
    if (fflush(l->mem) != 0)
        return false;
    qsort(l->v, l->n, sizeof *l->v, by_time);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        const ev_line *e = &l->v[i];
        const char *stack = stack_of && e->has_stack ? stack_of(ctx, k++) : NULL;
        if (!stack) {
            fwrite(l->buf + e->off, 1, e->len, out);
            continue;
        }
        /* the line without its newline (and, for JSON, its closing brace) */
        fwrite(l->buf + e->off, 1, e->len - (e->json ? 2 : 1), out);
        fputs(e->json ? ",\"stack\":" : " stack=", out);
        if (e->json)
            nt_json_fputs(out, stack);
        else
            fputs(stack, out);
        fputs(e->json ? "}\n" : "\n", out);
    }
    l->n = 0;
    rewind(l->mem);
    return !ferror(out);
}

bool ev_lines_flush(ev_lines *l, FILE *out)
{
    return ev_lines_flush_stacks(l, out, NULL, NULL);
}

void ev_lines_free(ev_lines *l)
{
    if (l->mem)
        fclose(l->mem);
    free(l->buf);
    nt_mem_free(&l->mem_v, l->v, l->cap * sizeof *l->v);
    *l = (ev_lines){ 0 };
}
