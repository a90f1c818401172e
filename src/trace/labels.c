/* Labels of a trace's samples (nt_trace_sample_labels): the distinct label
 * sets (ActivityId, RelatedActivityId, V6 TraceId / SpanId) interned once,
 * and per sample its set's number, kept only once a sample has one (a trace
 * without labels holds nothing for them).  The sets come from the input:
 * they are found by a keyed hash (cm_map_find) and their number is capped,
 * so a hostile stream costs linear work. */
#include "trace/build_internal.h"

#include <string.h>

#define TR_MAX_LABEL_SETS (1u << 20)

static bool no_labels(const nt_event_labels *l)
{
    static const nt_event_labels zero;
    return !l->has_trace_id && !l->has_span_id && memcmp(l->activity_id, zero.activity_id, 16) == 0 &&
           memcmp(l->related_activity_id, zero.related_activity_id, 16) == 0;
}

static uint64_t labels_hash(const nt_trace_builder *b, const nt_event_labels *l)
{
    uint64_t w[8] = { 0 };
    memcpy(w, l->activity_id, 16);
    memcpy(w + 2, l->related_activity_id, 16);
    memcpy(w + 4, l->trace_id, 16);
    memcpy(w + 6, l->span_id, 8);
    w[7] = (uint64_t)l->has_trace_id << 1 | l->has_span_id;
    uint64_t h = 0;
    for (int i = 0; i < 8; i++)
        h = cm_hash_u64(&b->stack_key, h ^ w[i]);
    return h | 1; /* never 0: the map's key 0 is as good, but an odd key reads better in a dump */
}

typedef struct tr_labels_sought {
    const nt_trace *t;
    const nt_event_labels *l;
} tr_labels_sought;

/* Whether set number val (1-based) is the set sought. */
static bool same_labels(const void *ctx, uint64_t val)
{
    const tr_labels_sought *q = ctx;
    return memcmp(&q->t->label_sets[val - 1], q->l, sizeof *q->l) == 0;
}

/* The number (1-based) of set l, added if new; 0 when it has none or cannot be kept. */
static uint32_t label_set(nt_trace_builder *b, const nt_event_labels *l)
{
    nt_trace *t = b->t;
    uint64_t h = labels_hash(b, l);
    const tr_labels_sought q = { t, l };
    const uint64_t *found = cm_map_find(&b->label_index, h, same_labels, &q);
    if (found)
        return (uint32_t)*found;
    if (t->nlabel_sets >= TR_MAX_LABEL_SETS ||
        !cm_mem_reserve(&t->mem, (void **)&t->label_sets, &t->label_sets_cap, t->nlabel_sets + 1,
                        sizeof *t->label_sets) ||
        !cm_map_add(&t->mem, &b->label_index, h, t->nlabel_sets + 1))
        return 0;
    t->label_sets[t->nlabel_sets] = *l;
    return (uint32_t)++t->nlabel_sets;
}

bool tr_note_labels(nt_trace_builder *b, size_t sample, const nt_event_labels *l)
{
    nt_trace *t = b->t;
    if (no_labels(l) && !t->sample_labels)
        return true;
    uint32_t set = no_labels(l) ? 0 : label_set(b, l);
    size_t old = t->sample_labels_cap;
    if (sample >= old) {
        if (!cm_mem_reserve(&t->mem, (void **)&t->sample_labels, &t->sample_labels_cap, sample + 1,
                            sizeof *t->sample_labels))
            return false;
        memset(t->sample_labels + old, 0, (t->sample_labels_cap - old) * sizeof *t->sample_labels);
    }
    t->sample_labels[sample] = set;
    return true;
}

bool nt_trace_sample_labels(const nt_trace *t, size_t i, nt_event_labels *out)
{
    uint32_t set = t && t->sample_labels && i < t->nsamples && i < t->sample_labels_cap ? t->sample_labels[i] : 0;
    if (out && set)
        *out = t->label_sets[set - 1];
    else if (out)
        memset(out, 0, sizeof *out);
    return set != 0;
}
