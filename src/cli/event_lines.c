#include "cli/event_lines.h"
#include "common/json.h"

#include <limits.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* With a spool, lines move from memory to it in batches of this many bytes. */
#define EV_SPOOL_BATCH (1u << 20)

bool ev_lines_init(ev_lines *l, FILE *out, uint64_t hold_max, bool spool)
{
    *l = (ev_lines){ 0 };
    cm_mem_init(&l->mem_v, NULL);
    l->out = out;
    l->hold_max = hold_max ? hold_max : EV_LINES_DEFAULT_HOLD;
    l->mem = open_memstream(&l->buf, &l->buf_len);
    if (!l->mem)
        return false;
    /* One thread writes it: no locking per character (a third of the time). */
    __fsetlocking(l->mem, FSETLOCKING_BYCALLER);
    if (spool && !(l->spool = tmpfile()))
        return false;
    return true;
}

FILE *ev_lines_begin(ev_lines *l, int64_t timestamp)
{
    if (!cm_mem_reserve(&l->mem_v, (void **)&l->v, &l->cap, l->n + 1, sizeof *l->v))
        return NULL;
    l->start = ftell(l->mem);
    if (l->start < 0)
        return NULL;
    l->v[l->n] = (ev_line){ timestamp, l->seq++, l->spooled + (uint64_t)l->start, 0, false, false };
    return l->mem;
}

long ev_lines_limit(const ev_lines *l, uint64_t room)
{
    if (room > l->hold_max)
        room = l->hold_max;
    if (room > (uint64_t)(LONG_MAX - l->start))
        return LONG_MAX;
    return l->start + (long)room;
}

void ev_lines_drop(ev_lines *l)
{
    fseek(l->mem, l->start, SEEK_SET);
}

void ev_lines_mark_stack(ev_lines *l, bool json)
{
    l->v[l->n].has_stack = true;
    l->v[l->n].json = json;
}

/* The held lines' bytes move to the spool; their offsets are already the spool's. */
static bool spill(ev_lines *l)
{
    long held = ftell(l->mem);
    if (held < 0 || fflush(l->mem) != 0)
        return false;
    if (held && fwrite(l->buf, 1, (size_t)held, l->spool) != (size_t)held)
        return false;
    l->spooled += (uint64_t)held;
    rewind(l->mem);
    return true;
}

static int by_time(const void *a, const void *b)
{
    const ev_line *x = a, *y = b;
    if (x->timestamp != y->timestamp)
        return x->timestamp < y->timestamp ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* len bytes of line e's text, from memory or from the spool in bounded pieces. */
static bool copy_text(ev_lines *l, const ev_line *e, size_t len)
{
    if (!l->spool)
        return fwrite(l->buf + e->off, 1, len, l->out) == len;
    char piece[1 << 16];
    uint64_t off = e->off;
    while (len) {
        size_t want = len < sizeof piece ? len : sizeof piece;
        ssize_t got = pread(fileno(l->spool), piece, want, (off_t)off);
        if (got <= 0 || fwrite(piece, 1, (size_t)got, l->out) != (size_t)got)
            return false;
        off += (uint64_t)got;
        len -= (size_t)got;
    }
    return true;
}

static bool write_sorted(ev_lines *l, const char *(*stack_of)(void *ctx, size_t k), void *ctx,
                         uint64_t max_produced, bool *over)
{
    if (l->n > 1)
        qsort(l->v, l->n, sizeof *l->v, by_time);
    size_t k = 0;
    bool ok = true;
    for (size_t i = 0; i < l->n && ok; i++) {
        const ev_line *e = &l->v[i];
        const char *stack = stack_of && e->has_stack ? stack_of(ctx, k++) : NULL;
        if (!stack) {
            ok = copy_text(l, e, e->len);
            continue;
        }
        size_t extra = strlen(stack) + (e->json ? 10 : 7);
        if (l->produced + extra > max_produced) {
            *over = true;
            break;
        }
        l->produced += extra;
        /* the line without its newline (and, for JSON, its closing brace) */
        ok = copy_text(l, e, e->len - (e->json ? 2 : 1));
        fputs(e->json ? ",\"stack\":" : " stack=", l->out);
        if (e->json)
            cm_json_fputs(l->out, stack);
        else
            fputs(stack, l->out);
        fputs(e->json ? "}\n" : "\n", l->out);
    }
    l->n = 0;
    rewind(l->mem);
    return ok && !ferror(l->out);
}

ev_line_result ev_lines_end(ev_lines *l)
{
    fputc('\n', l->mem);
    long end = ftell(l->mem);
    if (end < 0 || ferror(l->mem))
        return EV_LINE_FAILED;
    l->v[l->n++].len = (size_t)(end - l->start);
    l->produced += (uint64_t)(end - l->start);
    if (l->spool)
        return (uint64_t)end < EV_SPOOL_BATCH || spill(l) ? EV_LINE_OK : EV_LINE_FAILED;
    if (!l->streaming && (uint64_t)end <= l->hold_max)
        return EV_LINE_OK;
    bool filled = !l->streaming;
    l->streaming = true;
    if (fflush(l->mem) != 0 || !write_sorted(l, NULL, NULL, UINT64_MAX, NULL))
        return EV_LINE_FAILED;
    return filled ? EV_LINE_UNORDERED : EV_LINE_OK;
}

bool ev_lines_flush(ev_lines *l)
{
    l->streaming = false;
    if (!l->n)
        return true;
    return fflush(l->mem) == 0 && write_sorted(l, NULL, NULL, UINT64_MAX, NULL);
}

bool ev_lines_flush_stacks(ev_lines *l, const char *(*stack_of)(void *ctx, size_t k), void *ctx,
                           uint64_t max_produced, bool *over)
{
    *over = false;
    if (!l->n)
        return true;
    if (l->spool ? !spill(l) || fflush(l->spool) != 0 : fflush(l->mem) != 0)
        return false;
    return write_sorted(l, stack_of, ctx, max_produced, over);
}

void ev_lines_free(ev_lines *l)
{
    if (l->mem)
        fclose(l->mem);
    if (l->spool)
        fclose(l->spool);
    free(l->buf);
    cm_mem_free(&l->mem_v, l->v, l->cap * sizeof *l->v);
    *l = (ev_lines){ 0 };
}
