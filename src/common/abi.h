/* Public structs as their callers laid them out (doc/abi.md, "How structs
 * grow"): every struct that begins with struct_size is read and written
 * through these two calls, so a caller built against an older or newer
 * header than the library's is served by the same rule everywhere. */
#ifndef CM_ABI_H
#define CM_ABI_H

#include "nettrace.h"
#include "nettrace_profile.h"
#include "nettrace_session.h"
#include "nettrace_trace.h"
#include "nettrace_writer.h"
#include "nettrace_index.h"
#include "nettrace_heap.h"
#include "nettrace_convert.h"
#include "nettrace_parallel.h"

#include <stddef.h>

/* The bytes of type up to the end of member. */
#define ABI_UPTO(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

/* What a struct_size of 0 stands for: each struct's first layout (ABI 3,
 * libnettrace.so.3), named by its last member then.  When a struct grows,
 * its line here stays as it is. */
#define ABI3_nt_limits ABI_UPTO(nt_limits, max_field_depth)
#define ABI3_nt_callbacks ABI_UPTO(nt_callbacks, sequence_point)
#define ABI3_nt_parser_stats ABI_UPTO(nt_parser_stats, memory_peak)
#define ABI3_nt_feed_options ABI_UPTO(nt_feed_options, chunk_bytes)
#define ABI3_nt_trace_stats ABI_UPTO(nt_trace_stats, memory_peak)
#define ABI3_nt_trace_limits ABI_UPTO(nt_trace_limits, max_variants)
#define ABI3_nt_trace_options ABI_UPTO(nt_trace_options, aggregate)
#define ABI3_nt_export_options ABI_UPTO(nt_export_options, signatures)
#define ABI3_nt_top_options ABI_UPTO(nt_top_options, weight)
#define ABI3_nt_trace_window_config ABI_UPTO(nt_trace_window_config, max_records)
#define ABI3_nt_profile_totals ABI_UPTO(nt_profile_totals, without_stack)
#define ABI3_nt_profile_options ABI_UPTO(nt_profile_options, exception_messages)
#define ABI3_nt_profile_export_options ABI_UPTO(nt_profile_export_options, signatures)
#define ABI3_nt_provider ABI_UPTO(nt_provider, arguments)
#define ABI3_nt_session_config ABI_UPTO(nt_session_config, caller_pumps)
#define ABI3_nt_writer_options ABI_UPTO(nt_writer_options, block_bytes)
#define ABI3_nt_trace_window_stats ABI_UPTO(nt_trace_window_stats, memory_peak)
#define ABI3_nt_window_filter ABI_UPTO(nt_window_filter, span_id)
#define ABI3_nt_window_loss ABI_UPTO(nt_window_loss, unplaced)
#define ABI3_nt_index_options ABI_UPTO(nt_index_options, alloc)
#define ABI3_nt_parallel_options ABI_UPTO(nt_parallel_options, lazy_names)
#define ABI3_nt_parallel_stats ABI_UPTO(nt_parallel_stats, primed_blocks)
#define ABI3_nt_index_summary ABI_UPTO(nt_index_summary, estimate_exact)
#define ABI3_nt_window_options ABI_UPTO(nt_window_options, feed)
#define ABI3_nt_window_stats ABI_UPTO(nt_window_stats, stack_blocks)
#define ABI3_nt_heap_limits ABI_UPTO(nt_heap_limits, max_name_bytes)
#define ABI3_nt_heap_options ABI_UPTO(nt_heap_options, progress_user)
#define ABI3_nt_heap_stats ABI_UPTO(nt_heap_stats, format)
#define ABI3_nt_heap_export_options ABI_UPTO(nt_heap_export_options, by_count)
#define ABI3_nt_convert_options ABI_UPTO(nt_convert_options, alloc)
#define ABI3_nt_convert_stats ABI_UPTO(nt_convert_stats, message)

/* The bytes a caller's struct holds: its struct_size, or the first layout's for 0. */
size_t abi_caller_size(const void *caller, size_t first_size);

/* dst (the library's layout, lib_size bytes) = the caller's struct at src:
 * its bytes up to its size, zero beyond (members it does not know select
 * their defaults); src NULL gives all zeros.  dst's struct_size is set to
 * lib_size.  False (dst all zeros) when the caller's size is below the first
 * layout, or above lib_size with a non-zero byte beyond: a member this
 * library does not know is set. */
bool abi_struct_in(void *dst, size_t lib_size, size_t first_size, const void *src);
#define ABI_IN(type, dst, src) abi_struct_in((dst), sizeof(type), ABI3_##type, (src))

/* The caller's struct at dst = the library's src (lib_size bytes), as many
 * bytes as the caller's struct_size has room for and at least the first
 * layout (which every caller's struct holds); its struct_size becomes the
 * bytes written. */
void abi_struct_out(void *dst, const void *src, size_t lib_size, size_t first_size);
#define ABI_OUT(type, dst, src) abi_struct_out((dst), (src), sizeof(type), ABI3_##type)

#endif
