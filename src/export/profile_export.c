/* Folded stacks and speedscope for the event profiles (allocations,
 * exceptions, contention): the records of one kind, weighed by their value
 * (bytes, events, wait ns) or their event count, with the frames, names and
 * separators of the CPU exporters (export_folded.c, export_speedscope.c). */
#include "common/abi.h"
#include "export/profile_export.h"
#include "common/sort.h"
#include "export/flame_html.h"

#include <stdlib.h>
#include <string.h>

bool ex_prof_selected(const nt_profile_record *r, const nt_profile_export_options *o)
{
    return r->kind == o->kind && (!o->filter.has_thread || r->thread_id == o->filter.thread_id);
}

int64_t ex_prof_weight(const nt_profile_record *r, const nt_profile_export_options *o)
{
    return o->by_count ? r->count : r->value;
}

size_t ex_prof_label(const nt_profile_record *r, char *buf, size_t size)
{
    const char *l = *r->label ? r->label : "?";
    int n;
    if (r->kind == NT_PROFILE_ALLOC)
        n = snprintf(buf, size, "%s:%s", nt_alloc_heap_name((nt_alloc_heap)r->heap), l); /* as top and samples spell it */
    else if (r->kind == NT_PROFILE_CONTENTION)
        n = snprintf(buf, size, "%s%s", r->heap == 1 ? "native lock" : "managed lock", r->open ? " (open)" : "");
    else if (*r->message)
        n = snprintf(buf, size, "%s: %s", l, r->message);
    else
        n = snprintf(buf, size, "%s", l);
    return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

typedef struct prof_ctx {
    const nt_profile *p;
    const ex_names *nm;
    bool with_label; /* records of different labels stay apart */
} prof_ctx;

/* An allocation's type is what a flame graph of allocations is read for: its
 * leaf frame, under the allocating method, unless the label is the root. */
static bool label_leaf(const nt_profile_export_options *o)
{
    return !o->with_label && o->kind == NT_PROFILE_ALLOC;
}

/* Records ordered by label (when shown), then by stack names root first. */
static int cmp_recs(const prof_ctx *c, uint32_t a, uint32_t b)
{
    nt_profile_record x = nt_profile_record_at(c->p, a), y = nt_profile_record_at(c->p, b);
    if (c->with_label) {
        char lx[512], ly[512];
        ex_prof_label(&x, lx, sizeof lx);
        ex_prof_label(&y, ly, sizeof ly);
        int d = strcmp(lx, ly);
        if (d)
            return d < 0 ? -1 : 1;
    }
    return ex_stacks_cmp(nt_profile_trace(c->p), c->nm, x.stack_index, y.stack_index);
}

static int cmp_rec_ids(const void *a, const void *b, void *ctx)
{
    return cmp_recs(ctx, *(const uint32_t *)a, *(const uint32_t *)b);
}

nt_status ex_prof_export(const nt_profile *p, const nt_profile_export_options *given, nt_sink_fn w, void *user,
                         ex_prof_body body)
{
    nt_profile_export_options opts, *o = &opts;
    if (!p || !given || !w || !ABI_IN(nt_profile_export_options, o, given))
        return NT_ERR_INVALID_ARG;
    if (o->kind != NT_PROFILE_ALLOC && o->kind != NT_PROFILE_EXCEPTIONS && o->kind != NT_PROFILE_CONTENTION)
        return NT_ERR_INVALID_ARG;
    if (o->filter.managed_only || o->filter.from.set || o->filter.to.set)
        return NT_ERR_INVALID_ARG; /* merged records hold neither the managed flag nor each event's time */
    cm_mem m;
    ex_names nm;
    const nt_trace *t = nt_profile_trace(p);
    cm_mem_init(&m, tr_view_allocator(t));
    nt_status st = ex_names_build(&m, t, o->signatures ? NT_NAME_SIGNATURE : 0, &nm);
    st = body(p, o, &m, &nm, st, w, user);
    ex_names_free(&m, &nm);
    return st;
}
static nt_status folded_body(const nt_profile *p, const nt_profile_export_options *opt, cm_mem *m,
                             const ex_names *nm, nt_status st, nt_sink_fn w, void *user)
{
    const nt_trace *t = nt_profile_trace(p);
    size_t nrecs = nt_profile_record_count(p), n = 0, cap = nrecs ? 2 * nrecs : 1;
    uint32_t *order = st == NT_OK ? cm_mem_alloc(m, cap * sizeof *order) : NULL;
    if (st == NT_OK && !order)
        st = NT_ERR_NOMEM;
    if (st == NT_OK) {
        for (size_t i = 0; i < nrecs; i++) {
            nt_profile_record r = nt_profile_record_at(p, i);
            if (ex_prof_selected(&r, opt))
                order[n++] = (uint32_t)i;
        }
        bool leaf = label_leaf(opt);
        prof_ctx c = { p, nm, opt->with_label || leaf };
        cm_merge_sort(order, order + n, n, sizeof *order, cmp_rec_ids, &c);
        ex_out o;
        ex_out_init(&o, w, user);
        char label[512];
        for (size_t i = 0; i < n && !o.failed; i++) {
            nt_profile_record r = nt_profile_record_at(p, order[i]);
            int64_t total = ex_prof_weight(&r, opt);
            while (i + 1 < n && cmp_recs(&c, order[i], order[i + 1]) == 0) {
                r = nt_profile_record_at(p, order[++i]);
                total = cm_sat_add(total, ex_prof_weight(&r, opt));
            }
            bool frames = nt_trace_stack_at(t, r.stack_index).frame_count != 0;
            if (opt->with_label) {
                ex_prof_label(&r, label, sizeof label);
                ex_folded_frame(&o, label);
                if (frames)
                    ex_out_bytes(&o, ";", 1);
            }
            if (!leaf && (!opt->with_label || frames))
                ex_folded_stack(&o, t, r.stack_index, nm->flags);
            if (leaf) {
                if (frames) {
                    ex_folded_stack(&o, t, r.stack_index, nm->flags);
                    ex_out_bytes(&o, ";", 1);
                }
                ex_prof_label(&r, label, sizeof label);
                ex_folded_frame(&o, label);
            }
            ex_out_bytes(&o, " ", 1);
            ex_out_i64(&o, total);
            ex_out_bytes(&o, "\n", 1);
        }
        st = ex_out_flush(&o);
    }
    cm_mem_free(m, order, cap * sizeof *order);
    return st;
}

nt_status nt_profile_export_folded(const nt_profile *p, const nt_profile_export_options *opt, nt_sink_fn w,
                                   void *user)
{
    return ex_prof_export(p, opt, w, user, folded_body);
}

/* The threads of the selected records into order (one entry per record) with
 * their totals and first records, busiest first; threads maps a thread id to
 * its place before the sort (the caller frees it). */
static nt_status prof_threads(const nt_profile *p, const nt_profile_export_options *opt, cm_mem *m, cm_map *threads,
                              ex_thread_total *order, size_t *count)
{
    size_t n = 0;
    for (size_t i = 0, nrecs = nt_profile_record_count(p); i < nrecs; i++) {
        nt_profile_record r = nt_profile_record_at(p, i);
        if (!ex_prof_selected(&r, opt))
            continue;
        uint32_t k = cm_map_index(threads, r.thread_id);
        if (k == UINT32_MAX) {
            k = (uint32_t)n++;
            if (!cm_map_set(m, threads, r.thread_id, k))
                return NT_ERR_NOMEM;
            order[k] = (ex_thread_total){ .thread = r.thread_id, .first = i };
        }
        order[k].total = cm_sat_add(order[k].total, ex_prof_weight(&r, opt));
    }
    if (n)
        qsort(order, n, sizeof *order, ex_cmp_busiest);
    *count = n;
    return NT_OK;
}

static nt_status speedscope_body(const nt_profile *p, const nt_profile_export_options *opt, cm_mem *m,
                                 const ex_names *nm, nt_status st, nt_sink_fn w, void *user)
{
    const nt_trace *t = nt_profile_trace(p);
    size_t nrecs = nt_profile_record_count(p), cap = nrecs ? nrecs : 1;
    cm_map threads = { 0 };   /* thread id -> its index in order */
    cm_map labels = { 0 };    /* record index of a label's first record -> frame index */
    uint32_t *label_of = NULL; /* record -> label frame index */
    size_t nlabels = 0;
    bool leaf = label_leaf(opt);
    if (st == NT_OK && (opt->with_label || leaf) &&
        !(label_of = cm_mem_alloc(m, cap * sizeof *label_of)))
        st = NT_ERR_NOMEM;
    ex_out o;
    ex_out_init(&o, w, user);
    ex_speedscope_open(&o, nm, st == NT_OK ? nm->n : 0);
    /* Labels are extra frames after the names, one per distinct text. */
    char label[512];
    for (size_t i = 0; st == NT_OK && label_of && i < nrecs; i++) {
        nt_profile_record rec = nt_profile_record_at(p, i);
        if (!ex_prof_selected(&rec, opt))
            continue;
        size_t len = ex_prof_label(&rec, label, sizeof label);
        uint64_t h = 1469598103934665603ull;
        for (size_t k = 0; k < len; k++)
            h = (h ^ (unsigned char)label[k]) * 1099511628211ull;
        uint32_t f = UINT32_MAX;
        for (;; h++) { /* probe past hash collisions with other texts */
            uint32_t r = cm_map_index(&labels, h);
            if (r == UINT32_MAX)
                break;
            char other[512];
            nt_profile_record first = nt_profile_record_at(p, r);
            ex_prof_label(&first, other, sizeof other);
            if (strcmp(other, label) == 0) {
                f = label_of[r];
                break;
            }
        }
        if (f == UINT32_MAX) {
            if (!cm_map_set(m, &labels, h, (uint32_t)i)) {
                st = NT_ERR_NOMEM;
                break;
            }
            f = (uint32_t)(nm->n + nlabels++);
            ex_out_str(&o, f ? ",\n{\"name\":" : "\n{\"name\":");
            ex_out_json(&o, label);
            ex_out_bytes(&o, "}", 1);
        }
        label_of[i] = f;
    }
    ex_out_str(&o, "]},\n\"profiles\":[");
    static const char *const units[] = { "none", "none", "bytes", "none", "nanoseconds" };
    /* One profile per thread, the busiest first (speedscope opens the first, as for the CPU profile). */
    ex_thread_total *order = NULL;
    size_t nthreads = 0;
    if (st == NT_OK && !(order = cm_mem_alloc(m, cap * sizeof *order)))
        st = NT_ERR_NOMEM;
    if (st == NT_OK)
        st = prof_threads(p, opt, m, &threads, order, &nthreads);
    for (size_t th = 0; st == NT_OK && th < nthreads && !o.failed; th++) {
        uint64_t tid = order[th].thread;
        size_t first = order[th].first;
        ex_speedscope_profile(&o, th == 0, tid, opt->by_count ? "none" : units[opt->kind], order[th].total);
        bool any = false;
        for (size_t i = first; i < nrecs; i++) {
            nt_profile_record rec = nt_profile_record_at(p, i);
            if (!ex_prof_selected(&rec, opt) || rec.thread_id != tid)
                continue;
            bool frames = nt_trace_stack_at(t, rec.stack_index).frame_count != 0;
            ex_out_str(&o, any ? ",[" : "[");
            any = true;
            if (label_of && !leaf) {
                ex_out_u64(&o, label_of[i]);
                if (frames)
                    ex_out_bytes(&o, ",", 1);
            }
            ex_speedscope_stack(&o, t, rec.stack_index, nm->of_frame);
            if (leaf) {
                if (frames)
                    ex_out_bytes(&o, ",", 1);
                ex_out_u64(&o, label_of[i]);
            }
            ex_out_bytes(&o, "]", 1);
        }
        ex_out_str(&o, "],\n\"weights\":[");
        any = false;
        for (size_t i = first; i < nrecs; i++) {
            nt_profile_record rec = nt_profile_record_at(p, i);
            if (!ex_prof_selected(&rec, opt) || rec.thread_id != tid)
                continue;
            if (any)
                ex_out_bytes(&o, ",", 1);
            any = true;
            ex_out_i64(&o, ex_prof_weight(&rec, opt));
        }
        ex_out_str(&o, "]}");
    }
    cm_mem_free(m, order, cap * sizeof *order);
    ex_speedscope_close(&o, opt->name);
    nt_status fs = ex_out_flush(&o);
    if (st == NT_OK)
        st = fs;
    cm_mem_free(m, label_of, cap * sizeof *label_of);
    cm_map_free(m, &labels);
    cm_map_free(m, &threads);
    return st;
}

nt_status nt_profile_export_speedscope(const nt_profile *p, const nt_profile_export_options *opt, nt_sink_fn w,
                                       void *user)
{
    return ex_prof_export(p, opt, w, user, speedscope_body);
}

/* The HTML flame graph (flame_html.h): the name table, then one label name
 * per selected record where the label is a frame (the root with with_label,
 * an allocation's leaf without), the threads busiest first, and each
 * record's stack in its thread's group. */
static nt_status html_body(const nt_profile *p, const nt_profile_export_options *opt, cm_mem *m, const ex_names *nm,
                           nt_status st, nt_sink_fn w, void *user)
{
    const nt_trace *t = nt_profile_trace(p);
    bool leaf = label_leaf(opt), labelled = opt->with_label || leaf;
    size_t nrecs = nt_profile_record_count(p), cap = nrecs ? nrecs : 1, nthreads = 0;
    cm_map threads = { 0 };
    ex_thread_total *order = st == NT_OK ? cm_mem_alloc(m, cap * sizeof *order) : NULL;
    uint32_t *group_of = st == NT_OK ? cm_mem_alloc(m, cap * sizeof *group_of) : NULL;
    if (st == NT_OK && (!order || !group_of))
        st = NT_ERR_NOMEM;
    if (st == NT_OK)
        st = prof_threads(p, opt, m, &threads, order, &nthreads);
    if (st == NT_OK) {
        for (size_t g = 0; g < nthreads; g++)
            group_of[cm_map_index(&threads, order[g].thread)] = (uint32_t)g;
        static const char *const units[] = { "samples", "samples", "bytes", "throws", "ns waited" };
        char buf[1024];
        snprintf(buf, sizeof buf, "%s: %s", opt->name ? opt->name : "nettrace", nt_profile_kind_name(opt->kind));
        ex_out o;
        ex_out_init(&o, w, user);
        ex_flame_open(&o, buf, opt->by_count ? "events" : units[opt->kind]);
        for (size_t i = 0; i < nm->n; i++) {
            nt_frame_name_ex(nm->rep[i], nm->flags, buf, sizeof buf);
            ex_flame_name(&o, i == 0, buf);
        }
        for (size_t i = 0; labelled && i < nrecs; i++) {
            nt_profile_record rec = nt_profile_record_at(p, i);
            if (ex_prof_selected(&rec, opt)) {
                ex_prof_label(&rec, buf, sizeof buf);
                ex_flame_name(&o, false, buf);
            }
        }
        ex_flame_groups(&o);
        for (size_t g = 0; g < nthreads; g++) {
            snprintf(buf, sizeof buf, "thread %llu", (unsigned long long)order[g].thread);
            ex_flame_group(&o, g == 0, buf, order[g].total);
        }
        ex_flame_stacks(&o);
        uint32_t label = (uint32_t)nm->n;
        for (size_t i = 0, first = 1; i < nrecs && !o.failed; i++) {
            nt_profile_record rec = nt_profile_record_at(p, i);
            if (!ex_prof_selected(&rec, opt))
                continue;
            nt_trace_stack r = nt_trace_stack_at(t, rec.stack_index);
            ex_flame_stack_begin(&o, first, group_of[cm_map_index(&threads, rec.thread_id)], ex_prof_weight(&rec, opt));
            first = 0;
            if (opt->with_label)
                ex_flame_stack_frame(&o, label);
            for (uint32_t f = r.frame_count; f-- > 0;)
                ex_flame_stack_frame(&o, nm->of_frame[r.frame_ids[f]]);
            if (leaf)
                ex_flame_stack_frame(&o, label);
            label += labelled;
            ex_flame_stack_end(&o);
        }
        ex_flame_close(&o);
        st = ex_out_flush(&o);
    }
    cm_mem_free(m, group_of, group_of ? cap * sizeof *group_of : 0);
    cm_mem_free(m, order, order ? cap * sizeof *order : 0);
    cm_map_free(m, &threads);
    return st;
}

nt_status nt_profile_export_html(const nt_profile *p, const nt_profile_export_options *opt, nt_sink_fn w, void *user)
{
    return ex_prof_export(p, opt, w, user, html_body);
}
