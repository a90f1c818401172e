/* pprof: a gzipped profile.proto message (github.com/google/pprof, proto/
 * profile.proto; the encoding is export_pb.c's).  Fields are written as they
 * are ready, since a protobuf message may list its fields in any order and
 * repeated fields concatenate; only the string table has to keep its own
 * order, and it does.
 *
 * Samples are merged per (stack, thread, sample type) with two values: the
 * sample count and the wall time (ns to the thread's next sample).  Weighed by
 * time (the wall profile), default_sample_type (Profile field 14) names the
 * wall time, so viewers open that one.  A trace that kept its samples' labels
 * merges per label set too, and each sample carries them as string labels
 * trace_id, span_id and activity_id (hex of the bytes as the stream holds
 * them; trace_id and span_id are the names Pyroscope reads). */
#include "export/export_pb.h"

#include <string.h>

enum { S_EMPTY, S_SAMPLES, S_COUNT, S_WALL, S_NS, S_THREAD, S_STATE, S_MANAGED, S_EXTERNAL, S_OTHER, S_FIRST_NAME };
static const char *const FIXED[] = { "", "samples", "count", "wall", "nanoseconds", "thread_id", "state",
                                     "managed", "external", "other" };

/* Hex of n bytes, into out (2n + 1 bytes). */
static void hex(const uint8_t *b, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = 0;
}

enum { L_TRACE, L_SPAN, L_ACTIVITY, L_KINDS };
static const char *const LABEL_KEYS[L_KINDS] = { "trace_id", "span_id", "activity_id" };

/* The label sets' strings after the names (from *next): the keys, then each set's values; str[3 * set + kind]
 * is a value's string index, 0 when the set has none of that kind. */
static bool emit_label_strings(ex_gzip *g, cm_mem *m, const nt_trace *t, uint32_t next, uint32_t **str)
{
    size_t nsets = tr_view_label_set_count(t), n = (nsets + 1) * L_KINDS;
    *str = cm_mem_alloc(m, n * sizeof **str);
    if (!*str)
        return false;
    memset(*str, 0, n * sizeof **str);
    for (int k = 0; k < L_KINDS; k++)
        pb_emit_string(g, LABEL_KEYS[k], strlen(LABEL_KEYS[k]));
    uint32_t at = next + L_KINDS;
    static const uint8_t zero[16];
    for (size_t j = 0; j < nsets; j++) {
        const nt_event_labels *l = tr_view_label_set_at(t, j + 1);
        char buf[33];
        const uint8_t *v[L_KINDS] = { l->has_trace_id ? l->trace_id : NULL, l->has_span_id ? l->span_id : NULL,
                                      memcmp(l->activity_id, zero, 16) ? l->activity_id : NULL };
        const size_t len[L_KINDS] = { 16, 8, 16 };
        for (int k = 0; k < L_KINDS; k++) {
            if (!v[k])
                continue;
            hex(v[k], len[k], buf);
            pb_emit_string(g, buf, 2 * len[k]);
            (*str)[(j + 1) * L_KINDS + (size_t)k] = at++;
        }
    }
    return true;
}

/* The merged sample of (key, set): agg keys a plain key; a labeled one goes
 * by a keyed hash of both into lagg, checked against keys and sets (probing
 * on), so distinct label sets never merge. */
static uint64_t labeled_key(uint64_t key, uint32_t set, uint32_t probe)
{
    uint64_t h = (key ^ ((uint64_t)set << 40 | probe)) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 31) ^ set;
}

nt_status nt_export_pprof(const nt_trace *t, const nt_export_options *given, nt_sink_fn w, void *user)
{
    ex_export x;
    nt_status st = ex_export_open(&x, t, given, w);
    if (st != NT_OK)
        return st;
    const ex_names *nm = &x.nm;
    ex_walk *wk = &x.wk;
    cm_mem *m = &x.m;
    cm_map agg = { 0 };
    int64_t *vals = NULL; /* per merged sample: count, wall */
    uint64_t *keys = NULL;
    uint32_t *sets = NULL;  /* per merged sample: its label set (labeled traces) */
    uint32_t *label_str = NULL;
    cm_map lagg = { 0 };
    size_t nagg = 0, agg_cap = 0, keys_cap = 0, sets_cap = 0;
    int64_t first_ticks = INT64_MAX, last_ticks = INT64_MIN;
    bool labelled = tr_view_labelled(t);
    for (uint32_t th = 0, nth = (uint32_t)nt_trace_thread_count(t); st == NT_OK && th < nth; th++) {
        if (!ex_walk_thread_selected(wk, th))
            continue;
        ex_walk_it it;
        ex_walk_begin(wk, th, &it);
        int64_t wall;
        for (size_t i; st == NT_OK && (i = ex_walk_next(wk, &it, true, &wall)) != SIZE_MAX;) {
            /* The merge key: stack << 32 | type << 24 | thread index (the trace has fewer than 2^24 threads). */
            uint64_t key = (uint64_t)tr_view_stack(t, i) << 32 | tr_view_type(t, i) << 24 | tr_view_thread(t, i);
            uint32_t set = tr_view_label_set(t, i);
            cm_map *into = set ? &lagg : &agg;
            uint64_t mkey = key;
            uint32_t a = UINT32_MAX;
            for (uint32_t probe = 0;; probe++) {
                mkey = set ? labeled_key(key, set, probe) : key;
                a = cm_map_index(into, mkey);
                if (a == UINT32_MAX || !set || (keys[a] == key && sets[a] == set))
                    break;
            }
            if (a == UINT32_MAX) {
                if (nagg >= UINT32_MAX - 2 ||
                    !cm_mem_reserve(m, (void **)&vals, &agg_cap, 2 * (nagg + 1), sizeof *vals) ||
                    !cm_mem_reserve(m, (void **)&keys, &keys_cap, nagg + 1, sizeof *keys) ||
                    (labelled && !cm_mem_reserve(m, (void **)&sets, &sets_cap, nagg + 1, sizeof *sets)) ||
                    !cm_map_set(m, into, mkey, (uint32_t)nagg)) {
                    st = NT_ERR_NOMEM;
                    break;
                }
                a = (uint32_t)nagg++;
                keys[a] = key;
                if (sets)
                    sets[a] = set;
                vals[2 * a] = vals[2 * a + 1] = 0;
            }
            vals[2 * a] += (int64_t)tr_view_count(t, i);
            vals[2 * a + 1] = cm_sat_add(vals[2 * a + 1], wall);
            int64_t ticks = tr_view_ticks(t, i), ticks_last = tr_view_last_ticks(t, i);
            if (ticks < first_ticks)
                first_ticks = ticks;
            if (ticks_last > last_ticks)
                last_ticks = ticks_last;
        }
    }
    /* Converted once: ticks to ns never decreases, so the span's ends are the ends' conversions. */
    int64_t freq = tr_view_info(t)->qpc_frequency;
    int64_t first_ns = nagg ? nt_ticks_to_ns(first_ticks, freq) : INT64_MAX;
    int64_t last_ns = nagg ? nt_ticks_to_ns(last_ticks, freq) : INT64_MIN;
    ex_walk_free(wk); /* not needed for writing: its memory is better spent on the output */
    ex_out o;
    ex_out_init(&o, w, user);
    ex_gzip g;
    if (st == NT_OK)
        st = ex_gzip_begin(&g, &o);
    if (st == NT_OK) {
        for (size_t i = 0; i < sizeof FIXED / sizeof FIXED[0]; i++)
            pb_emit_string(&g, FIXED[i], strlen(FIXED[i]));
        pb_emit_value_type(&g, 1, S_SAMPLES, S_COUNT);
        pb_emit_value_type(&g, 1, S_WALL, S_NS);
        pb_emit_value_type(&g, 11, S_WALL, S_NS); /* period_type: wall nanoseconds */
        pb_emit_times(&g, t, first_ns, last_ns, x.sel.default_ns);
        if (x.sel.opt.weight == NT_WEIGHT_TIME) {
            pbuf def = { .n = 0 };
            pb_uint(&def, 14, S_WALL);
            ex_gzip_write(&g, def.d, def.n);
        }
        uint32_t next_string;
        st = pb_emit_names(&g, m, t, nm, S_FIRST_NAME, &next_string);
        if (st == NT_OK && labelled && !emit_label_strings(&g, m, t, next_string, &label_str))
            st = NT_ERR_NOMEM;
        for (size_t a = 0; st == NT_OK && a < nagg && !g.failed && !o.failed; a++) {
            uint32_t k = (uint32_t)(keys[a] >> 32);
            nt_trace_stack r = nt_trace_stack_at(t, k);
            uint32_t tt = (uint32_t)keys[a];
            uint32_t type = tt >> 24;
            pb_label labels[2 + L_KINDS] = {
                { S_THREAD, true, nt_trace_thread_id(t, tt & 0xFFFFFFu) },
                { S_STATE, false, type == NT_SAMPLE_MANAGED ? S_MANAGED : type == NT_SAMPLE_EXTERNAL ? S_EXTERNAL : S_OTHER },
            };
            size_t nl = 2;
            for (int kind = 0; sets && sets[a] && kind < L_KINDS; kind++) {
                uint32_t v = label_str[(size_t)sets[a] * L_KINDS + (size_t)kind];
                if (v)
                    labels[nl++] = (pb_label){ next_string + (uint32_t)kind, false, v };
            }
            pb_emit_sample(&g, r.frame_ids, nm->of_frame, r.frame_count, vals + 2 * a, 2, labels, nl);
        }
        st = ex_gzip_close(&g, st);
    }
    cm_map_free(m, &agg);
    cm_map_free(m, &lagg);
    cm_mem_free(m, sets, sets_cap * sizeof *sets);
    if (label_str)
        cm_mem_free(m, label_str, (tr_view_label_set_count(t) + 1) * L_KINDS * sizeof *label_str);
    cm_mem_free(m, vals, agg_cap * sizeof *vals);
    cm_mem_free(m, keys, keys_cap * sizeof *keys);
    ex_export_close(&x);
    return st;
}
