/* A slice's method records cut to what its frames need: a first pass over
 * the input collects the code addresses of the window's stacks (the events
 * a slice keeps), sorted and each once; then a method record from outside
 * the window is kept only when its code [start, start + size) holds one of
 * them.  Any reader names a frame by the record whose code holds its
 * address, so the ones left out name none of the slice's frames.  Module and
 * assembly records are few and all kept. */
#include "convert/convert_internal.h"
#include "common/sort.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct frames_pass {
    cv_conv *c;
    const nt_parser *p;
    bool failed;
} frames_pass;

static int fp_trace(void *user, const nt_trace_info *t)
{
    frames_pass *f = user;
    f->c->from_ns = f->c->from.set ? nt_time_bound_resolve(&f->c->from, t) : INT64_MIN;
    f->c->to_ns = f->c->to.set ? nt_time_bound_resolve(&f->c->to, t) : INT64_MAX;
    return 0;
}

static int fp_event(void *user, const nt_event *ev)
{
    frames_pass *f = user;
    cv_conv *c = f->c;
    if (!ev->stack || !ev->stack->count)
        return 0;
    int64_t ns = nt_parser_time_ns(f->p, ev->timestamp);
    if (ns < c->from_ns || ns >= c->to_ns)
        return 0;
    if (!cm_mem_reserve(&c->mem, (void **)&c->ips, &c->ips_cap, c->ips_n + ev->stack->count, sizeof *c->ips)) {
        f->failed = true;
        return 1;
    }
    memcpy(c->ips + c->ips_n, ev->stack->ips, ev->stack->count * sizeof *c->ips);
    c->ips_n += ev->stack->count;
    return 0;
}

static int cmp_u64(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The addresses sorted, each once; false when memory is short. */
static bool sort_unique(cv_conv *c)
{
    if (c->ips_n < 2)
        return true;
    uint64_t *tmp = cm_mem_alloc(&c->mem, c->ips_n * sizeof *tmp);
    if (!tmp)
        return false;
    cm_merge_sort(c->ips, tmp, c->ips_n, sizeof *c->ips, cmp_u64, NULL);
    cm_mem_free(&c->mem, tmp, c->ips_n * sizeof *tmp);
    size_t n = 1;
    for (size_t i = 1; i < c->ips_n; i++)
        if (c->ips[i] != c->ips[n - 1])
            c->ips[n++] = c->ips[i];
    c->ips_n = n;
    return true;
}

void cv_frames_collect(cv_conv *c, int fd, const void *data, size_t len, const nt_convert_options *o)
{
    /* A second read needs the input again: a buffer, or a regular file that can be read from where it is. */
    struct stat st;
    off_t at = data ? 0 : lseek(fd, 0, SEEK_CUR);
    if (!data && (at < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)))
        return;
    nt_callbacks cb = { .struct_size = sizeof cb, .trace = fp_trace, .event = fp_event };
    frames_pass f = { .c = c };
    nt_parser *p = nt_parser_new(&cb, &f, o->limits, o->alloc);
    if (!p)
        return;
    f.p = p;
    nt_parser_set_lazy_names(p, true);
    nt_status s = data ? nt_parser_feed(p, data, len) : nt_parser_feed_fd(p, fd, o->feed, NULL);
    (void)s; /* a damaged input: the addresses before the damage, as the slice holds the events before it */
    nt_parser_free(p);
    bool rewound = data || lseek(fd, at, SEEK_SET) == at;
    c->frames_known = rewound && !f.failed && sort_unique(c);
    if (!c->frames_known) {
        cm_mem_free(&c->mem, c->ips, c->ips_cap * sizeof *c->ips);
        c->ips = NULL;
        c->ips_n = c->ips_cap = 0;
    }
}

bool cv_frames_need(const cv_conv *c, uint64_t start, uint32_t size)
{
    if (!c->frames_known)
        return true;
    size_t lo = cm_lower_bound_u64(c->ips, c->ips_n, start); /* the first address >= start */
    return lo < c->ips_n && c->ips[lo] - start < size;
}

void cv_frames_free(cv_conv *c)
{
    cm_mem_free(&c->mem, c->ips, c->ips_cap * sizeof *c->ips);
    c->ips = NULL;
    c->ips_n = c->ips_cap = 0;
}
