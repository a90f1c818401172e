/* The built trace as the exporters read it (trace_view.h): the layout of
 * trace_internal.h behind functions. */
#include "trace/trace_view.h"
#include "trace/trace_internal.h"

const nt_trace_info *tr_view_info(const nt_trace *t) { return &t->info; }
const nt_allocator *tr_view_allocator(const nt_trace *t) { return &t->mem.a; }
bool tr_view_counted(const nt_trace *t) { return t->agg != NULL; }

int64_t tr_view_ticks(const nt_trace *t, size_t i) { return TR_SAMPLE(t, i)->ticks; }
uint32_t tr_view_stack(const nt_trace *t, size_t i) { return TR_SAMPLE(t, i)->stack; }
uint32_t tr_view_thread(const nt_trace *t, size_t i) { return TR_THREAD(TR_SAMPLE(t, i)); }
uint32_t tr_view_type(const nt_trace *t, size_t i) { return TR_TYPE(TR_SAMPLE(t, i)); }
uint64_t tr_view_count(const nt_trace *t, size_t i) { return tr_count(t, i); }
int64_t tr_view_wall_ns(const nt_trace *t, size_t i) { return t->agg ? t->agg[i].wall_ns : 0; }
int64_t tr_view_last_ticks(const nt_trace *t, size_t i) { return t->agg ? t->agg[i].last_ticks : TR_SAMPLE(t, i)->ticks; }

size_t tr_view_next_of_thread(const nt_trace *t, uint32_t thread, size_t from, size_t end)
{
    /* The exporters' walk over few threads scans every sample once per
     * thread: the scan stays here, one call per sample found. */
    for (size_t i = from; i < end; i++)
        if (TR_THREAD(TR_SAMPLE(t, i)) == thread)
            return i;
    return SIZE_MAX;
}

int64_t tr_view_gap_ns(const nt_trace *t, size_t i, size_t j)
{
    return tr_gap_ns(t->info.qpc_frequency, TR_SAMPLE(t, i)->ticks, TR_SAMPLE(t, j)->ticks);
}

int64_t tr_view_default_ns(const nt_trace *t) { return tr_default_ns(&t->info); }

bool tr_view_labelled(const nt_trace *t) { return t->sample_labels != NULL; }
uint32_t tr_view_label_set(const nt_trace *t, size_t i)
{
    return t->sample_labels && i < t->sample_labels_cap ? t->sample_labels[i] : 0;
}
size_t tr_view_label_set_count(const nt_trace *t) { return t->nlabel_sets; }
const nt_event_labels *tr_view_label_set_at(const nt_trace *t, size_t j) { return &t->label_sets[j - 1]; }

const char *tr_view_module_path(const nt_trace *t, uint64_t module_id)
{
    uint32_t k = cm_map_index(&t->module_index, module_id);
    return k != UINT32_MAX && t->modules[k].il_path && t->modules[k].il_path[0] ? t->modules[k].il_path : NULL;
}
