/* A slice's method records cut to what its frames need: a first pass over
 * the input collects the code addresses of the window's stacks (the events
 * a slice keeps), sorted and each once; then a method record from outside
 * the window is kept only when its code [start, start + size) holds one of
 * them.  Any reader names a frame by the record whose code holds its
 * address, so the ones left out name none of the slice's frames.  Module and
 * assembly records are few and all kept. */
#include "convert/convert_internal.h"

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
    if (!cm_addr_set_add(&c->mem, &c->frames, ev->stack->ips, ev->stack->count)) {
        f->failed = true;
        return 1;
    }
    return 0;
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
    c->frames_known = rewound && !f.failed && cm_addr_set_seal(&c->mem, &c->frames);
    if (!c->frames_known)
        cm_addr_set_free(&c->mem, &c->frames);
}

bool cv_frames_need(const cv_conv *c, uint64_t start, uint32_t size)
{
    return !c->frames_known || cm_addr_set_holds(&c->frames, start, size);
}

void cv_frames_free(cv_conv *c) { cm_addr_set_free(&c->mem, &c->frames); }
