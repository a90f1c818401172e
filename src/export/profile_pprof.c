/* pprof for the event profiles, with the sample types Go's own profiles use
 * so that go tool pprof and Pyroscope-style viewers show them alike:
 *   alloc       alloc_objects/count, alloc_space/bytes   (labels type, heap)
 *   exceptions  exceptions/count                         (label type; message when kept)
 *   contention  contentions/count, delay/nanoseconds     (label lock; open waits: state=open)
 * every sample with the numeric label thread_id.  Records with the same
 * stack, thread and label are already merged by the profile. */
#include "export/export_pb.h"
#include "export/profile_export.h"

#include <string.h>

enum { S_EMPTY, S_ALLOC_OBJECTS, S_COUNT, S_ALLOC_SPACE, S_BYTES, S_EXCEPTIONS, S_CONTENTIONS, S_DELAY, S_NS,
       S_THREAD, S_TYPE, S_HEAP, S_SOH, S_LOH, S_POH, S_OTHER, S_LOCK, S_MANAGED, S_NATIVE, S_STATE, S_OPEN,
       S_FIRST_NAME };
static const char *const FIXED[] = { "", "alloc_objects", "count", "alloc_space", "bytes", "exceptions",
                                     "contentions", "delay", "nanoseconds", "thread_id", "type", "heap", "soh",
                                     "loh", "poh", "other", "lock", "managed", "native", "state", "open" };

/* The string index of an interned profile string (a type, a message, the key
 * "message"), added to the table when first used; UINT32_MAX when memory is
 * short.  Interned strings are equal exactly when their pointers are. */
static uint32_t string_index(ex_gzip *g, cm_mem *m, cm_map *seen, uint32_t *next_string, const char *s)
{
    uint32_t at = cm_map_index(seen, (uint64_t)(uintptr_t)s);
    if (at != UINT32_MAX)
        return at;
    if (!cm_map_set(m, seen, (uint64_t)(uintptr_t)s, *next_string))
        return UINT32_MAX;
    pb_emit_string(g, s, strlen(s));
    return (*next_string)++;
}

static nt_status pprof_body(const nt_profile *p, const nt_profile_export_options *opt, cm_mem *m,
                            const ex_names *nm, nt_status st, nt_sink_fn w, void *user)
{
    const nt_trace *t = nt_profile_trace(p);
    size_t nrecs = nt_profile_record_count(p);
    cm_map types = { 0 }; /* label or message pointer (interned) -> string index */
    static const char message_key[] = "message"; /* its own pointer: no interned string shares it */
    int64_t first_ticks = INT64_MAX, last_ticks = INT64_MIN;
    bool any = false;
    for (size_t i = 0; i < nrecs; i++) {
        nt_profile_record r = nt_profile_record_at(p, i);
        if (!ex_prof_selected(&r, opt))
            continue;
        int64_t ticks = r.timestamp;
        first_ticks = ticks < first_ticks ? ticks : first_ticks;
        last_ticks = ticks > last_ticks ? ticks : last_ticks;
        any = true;
    }
    /* Converted once: ticks to ns never decreases. */
    int64_t freq = tr_view_info(t)->qpc_frequency;
    int64_t first_ns = any ? nt_ticks_to_ns(first_ticks, freq) : INT64_MAX;
    int64_t last_ns = any ? nt_ticks_to_ns(last_ticks, freq) : INT64_MIN;
    ex_out o;
    ex_out_init(&o, w, user);
    ex_gzip g;
    if (st == NT_OK)
        st = ex_gzip_begin(&g, &o);
    if (st != NT_OK)
        return st;
    for (size_t i = 0; i < sizeof FIXED / sizeof FIXED[0]; i++)
        pb_emit_string(&g, FIXED[i], strlen(FIXED[i]));
    switch (opt->kind) {
    case NT_PROFILE_ALLOC:
        pb_emit_value_type(&g, 1, S_ALLOC_OBJECTS, S_COUNT);
        pb_emit_value_type(&g, 1, S_ALLOC_SPACE, S_BYTES);
        pb_emit_value_type(&g, 11, S_ALLOC_SPACE, S_BYTES);
        break;
    case NT_PROFILE_EXCEPTIONS:
        pb_emit_value_type(&g, 1, S_EXCEPTIONS, S_COUNT);
        pb_emit_value_type(&g, 11, S_EXCEPTIONS, S_COUNT);
        break;
    default:
        pb_emit_value_type(&g, 1, S_CONTENTIONS, S_COUNT);
        pb_emit_value_type(&g, 1, S_DELAY, S_NS);
        pb_emit_value_type(&g, 11, S_CONTENTIONS, S_COUNT);
        break;
    }
    pb_emit_times(&g, t, first_ns, last_ns, 1);
    /* The type names follow the frame names and mapping files in the string table. */
    uint32_t next_string;
    st = pb_emit_names(&g, m, t, nm, S_FIRST_NAME, &next_string);
    for (size_t i = 0; st == NT_OK && i < nrecs && !g.failed && !o.failed; i++) {
        nt_profile_record rec = nt_profile_record_at(p, i), *r = &rec;
        if (!ex_prof_selected(r, opt))
            continue;
        uint32_t type = UINT32_MAX, key = UINT32_MAX, message = UINT32_MAX;
        bool with_message = *r->message;
        if (opt->kind != NT_PROFILE_CONTENTION)
            type = string_index(&g, m, &types, &next_string, r->label);
        if (with_message) {
            key = string_index(&g, m, &types, &next_string, message_key);
            message = string_index(&g, m, &types, &next_string, r->message);
        }
        if ((opt->kind != NT_PROFILE_CONTENTION && type == UINT32_MAX) ||
            (with_message && (key == UINT32_MAX || message == UINT32_MAX))) {
            st = NT_ERR_NOMEM;
            break;
        }
        int64_t vals[2];
        size_t nvals = 0;
        pb_label labels[4];
        size_t nlab = 0;
        labels[nlab++] = (pb_label){ S_THREAD, true, r->thread_id };
        if (opt->kind == NT_PROFILE_ALLOC) {
            vals[nvals++] = r->count;
            vals[nvals++] = r->value;
            labels[nlab++] = (pb_label){ S_TYPE, false, type };
            labels[nlab++] = (pb_label){ S_HEAP, false, r->heap < 3 ? (uint64_t)S_SOH + r->heap : S_OTHER };
        } else if (opt->kind == NT_PROFILE_EXCEPTIONS) {
            vals[nvals++] = r->count;
            labels[nlab++] = (pb_label){ S_TYPE, false, type };
            if (with_message)
                labels[nlab++] = (pb_label){ key, false, message };
        } else {
            vals[nvals++] = r->count;
            vals[nvals++] = r->value;
            labels[nlab++] = (pb_label){ S_LOCK, false, r->heap == 1 ? S_NATIVE : S_MANAGED };
            if (r->open)
                labels[nlab++] = (pb_label){ S_STATE, false, S_OPEN };
        }
        nt_trace_stack rs = nt_trace_stack_at(t, r->stack_index);
        pb_emit_sample(&g, rs.frame_ids, nm->of_frame, rs.frame_count, vals, nvals, labels, nlab);
    }
    st = ex_gzip_close(&g, st);
    cm_map_free(m, &types);
    return st;
}

nt_status nt_profile_export_pprof(const nt_profile *p, const nt_profile_export_options *opt, nt_sink_fn w,
                                  void *user)
{
    return ex_prof_export(p, opt, w, user, pprof_body);
}
