/* What the layers above the trace (the exporters, src/export/) read of a
 * built trace beyond the public accessors of nettrace_trace.h: functions
 * only, so the trace's layout (trace_internal.h) stays inside src/trace/
 * and can change without touching a reader.  Sample indices are those of
 * nt_trace_sample_at, thread indices those of nt_trace_thread_id; none of
 * these takes a NULL trace (the exporters check theirs at the entry point).
 * The event profiles' records are read through the public
 * nt_profile_record_at. */
#ifndef TR_VIEW_H
#define TR_VIEW_H

#include "nettrace_trace.h"

/* The header as read, zeroed when the stream ended before it. */
const nt_trace_info *tr_view_info(const nt_trace *t);
/* The allocator the trace was made with: what reads of it allocate through. */
const nt_allocator *tr_view_allocator(const nt_trace *t);
/* True when the trace was built counting (nt_trace_options.aggregate): a
 * sample then stands for several and keeps no time of its own to cut by. */
bool tr_view_counted(const nt_trace *t);

/* Sample i: its ticks (a counted one's: the first of its samples), resolved
 * stack, thread index and nt_sample_type. */
int64_t tr_view_ticks(const nt_trace *t, size_t i);
uint32_t tr_view_stack(const nt_trace *t, size_t i);
uint32_t tr_view_thread(const nt_trace *t, size_t i);
uint32_t tr_view_type(const nt_trace *t, size_t i);
/* The samples sample i stands for (1 unless counted). */
uint64_t tr_view_count(const nt_trace *t, size_t i);
/* A counted sample's weight by time (its samples' gaps summed) and the ticks
 * of its last sample; for a sample of its own: 0 and its ticks. */
int64_t tr_view_wall_ns(const nt_trace *t, size_t i);
int64_t tr_view_last_ticks(const nt_trace *t, size_t i);
/* The first sample in [from, end) of thread index thread, or SIZE_MAX. */
size_t tr_view_next_of_thread(const nt_trace *t, uint32_t thread, size_t from, size_t end);

/* The rule of weights by time: from sample i to sample j (the difference of
 * their printed times, saturating), and what a thread's last sample weighs
 * (the sampling interval). */
int64_t tr_view_gap_ns(const nt_trace *t, size_t i, size_t j);
int64_t tr_view_default_ns(const nt_trace *t);

/* With labels kept (nt_trace_builder_keep_labels): whether any sample has a
 * label set, sample i's set (0: none), the number of sets and set j (1 ..
 * count). */
bool tr_view_labelled(const nt_trace *t);
uint32_t tr_view_label_set(const nt_trace *t, size_t i);
size_t tr_view_label_set_count(const nt_trace *t);
const nt_event_labels *tr_view_label_set_at(const nt_trace *t, size_t j);

/* The file of the module record module_id (its IL path), NULL when the trace
 * has no such record or it names no file. */
const char *tr_view_module_path(const nt_trace *t, uint64_t module_id);

#endif
