/* abi_layout: the size of every structure the Python module mirrors with
 * ctypes (nettrace/_lib.py) or the .NET package with blittable structs
 * (bindings/dotnet/LibNetTrace/Native/Structs.cs), and the offset of each of
 * its fields, as this compiler lays them out from the public headers.
 * tests/test_abi.py and LibNetTrace.Tests/AbiTests.cs compare them with their
 * own layouts, so a header change a binding has not followed fails make check
 * instead of corrupting memory. */
#include "nettrace.h"
#include "nettrace_convert.h"
#include "nettrace_profile.h"
#include "nettrace_session.h"
#include "nettrace_trace.h"

#include <stddef.h>
#include <stdio.h>

#define S(type) printf("%s %zu\n", #type, sizeof(type))
#define F(type, field) printf("%s.%s %zu\n", #type, #field, offsetof(type, field))

int main(void)
{
    S(nt_systemtime);
    F(nt_systemtime, year); F(nt_systemtime, month); F(nt_systemtime, day_of_week); F(nt_systemtime, day);
    F(nt_systemtime, hour); F(nt_systemtime, minute); F(nt_systemtime, second); F(nt_systemtime, milliseconds);
    S(nt_trace_info);
    F(nt_trace_info, format_major); F(nt_trace_info, format_minor); F(nt_trace_info, object_version);
    F(nt_trace_info, min_reader_version); F(nt_trace_info, sync_time_utc); F(nt_trace_info, sync_qpc);
    F(nt_trace_info, qpc_frequency); F(nt_trace_info, pointer_size); F(nt_trace_info, process_id);
    F(nt_trace_info, processor_count); F(nt_trace_info, sampling_interval_ns);
    S(nt_stack);
    F(nt_stack, id); F(nt_stack, count); F(nt_stack, ips); F(nt_stack, interval);
    S(nt_event);
    F(nt_event, desc); F(nt_event, metadata_id); F(nt_event, sequence_number); F(nt_event, thread_id);
    F(nt_event, capture_thread_id); F(nt_event, processor_number); F(nt_event, stack_id); F(nt_event, stack);
    F(nt_event, timestamp); F(nt_event, activity_id); F(nt_event, related_activity_id); F(nt_event, is_sorted);
    F(nt_event, payload_size); F(nt_event, payload); F(nt_event, offset); F(nt_event, field_ctx);
    S(nt_sample);
    F(nt_sample, timestamp); F(nt_sample, time_ns); F(nt_sample, thread_id); F(nt_sample, type);
    F(nt_sample, stack_id); F(nt_sample, stack); F(nt_sample, event);
    S(nt_str16);
    F(nt_str16, units); F(nt_str16, count);
    S(nt_method);
    F(nt_method, which); F(nt_method, version); F(nt_method, method_id); F(nt_method, module_id);
    F(nt_method, start_address); F(nt_method, size); F(nt_method, token); F(nt_method, flags);
    F(nt_method, declaring_type); F(nt_method, name); F(nt_method, signature); F(nt_method, clr_instance_id);
    F(nt_method, rejit_id); F(nt_method, timestamp); F(nt_method, event); F(nt_method, declaring_type16);
    F(nt_method, name16); F(nt_method, signature16);
    S(nt_module);
    F(nt_module, which); F(nt_module, domain); F(nt_module, version); F(nt_module, module_id);
    F(nt_module, assembly_id); F(nt_module, app_domain_id); F(nt_module, flags); F(nt_module, il_path);
    F(nt_module, native_path); F(nt_module, clr_instance_id); F(nt_module, timestamp); F(nt_module, event);
    F(nt_module, il_path16); F(nt_module, native_path16);
    S(nt_assembly);
    F(nt_assembly, which); F(nt_assembly, version); F(nt_assembly, assembly_id); F(nt_assembly, app_domain_id);
    F(nt_assembly, binding_id); F(nt_assembly, flags); F(nt_assembly, name); F(nt_assembly, clr_instance_id);
    F(nt_assembly, timestamp); F(nt_assembly, event); F(nt_assembly, name16);
    S(nt_callbacks);
    F(nt_callbacks, struct_size);
    F(nt_callbacks, trace); F(nt_callbacks, metadata); F(nt_callbacks, event); F(nt_callbacks, stack);
    F(nt_callbacks, sample); F(nt_callbacks, method); F(nt_callbacks, module); F(nt_callbacks, assembly);
    F(nt_callbacks, sequence_point); F(nt_callbacks, sequence_gap);
    S(nt_trace_method);
    F(nt_trace_method, start_address); F(nt_trace_method, size); F(nt_trace_method, method_id);
    F(nt_trace_method, module_id); F(nt_trace_method, rejit_id); F(nt_trace_method, name);
    F(nt_trace_method, declaring_type); F(nt_trace_method, signature); F(nt_trace_method, assembly);
    F(nt_trace_method, timestamp); F(nt_trace_method, valid_from); F(nt_trace_method, valid_until);
    F(nt_trace_method, flags); F(nt_trace_method, token); F(nt_trace_method, source);
    S(nt_frame);
    F(nt_frame, ip); F(nt_frame, method); F(nt_frame, method_index);
    S(nt_trace_sample);
    F(nt_trace_sample, timestamp); F(nt_trace_sample, time_ns); F(nt_trace_sample, thread_id);
    F(nt_trace_sample, type); F(nt_trace_sample, stack_index); F(nt_trace_sample, frame_count);
    F(nt_trace_sample, frame_ids); F(nt_trace_sample, count);
    S(nt_trace_stack);
    F(nt_trace_stack, frame_count); F(nt_trace_stack, frame_ids);
    S(nt_trace_module);
    F(nt_trace_module, module_id); F(nt_trace_module, assembly_id); F(nt_trace_module, il_path);
    S(nt_trace_assembly);
    F(nt_trace_assembly, assembly_id); F(nt_trace_assembly, name);
    S(nt_sample_filter);
    F(nt_sample_filter, managed_only); F(nt_sample_filter, has_thread); F(nt_sample_filter, thread_id);
    F(nt_sample_filter, from); F(nt_sample_filter, to);
    S(nt_export_options);
    F(nt_export_options, struct_size);
    F(nt_export_options, filter); F(nt_export_options, weight); F(nt_export_options, name);
    F(nt_export_options, signatures);
    S(nt_time_bound);
    F(nt_time_bound, set); F(nt_time_bound, absolute); F(nt_time_bound, ns);
    S(nt_profile_options);
    F(nt_profile_options, struct_size);
    F(nt_profile_options, trace); F(nt_profile_options, keep_events); F(nt_profile_options, events_only);
    F(nt_profile_options, from); F(nt_profile_options, to); F(nt_profile_options, exception_messages);
    S(nt_profile_record);
    F(nt_profile_record, kind); F(nt_profile_record, stack_index); F(nt_profile_record, thread_id);
    F(nt_profile_record, label); F(nt_profile_record, message); F(nt_profile_record, heap);
    F(nt_profile_record, open); F(nt_profile_record, value); F(nt_profile_record, count);
    F(nt_profile_record, timestamp); F(nt_profile_record, time_ns);
    S(nt_profile_totals);
    F(nt_profile_totals, struct_size);
    F(nt_profile_totals, events); F(nt_profile_totals, value); F(nt_profile_totals, records);
    F(nt_profile_totals, open); F(nt_profile_totals, unpaired_stops); F(nt_profile_totals, without_stack);
    S(nt_top_options);
    F(nt_top_options, struct_size);
    F(nt_top_options, rows); F(nt_top_options, by_inclusive); F(nt_top_options, by_thread);
    F(nt_top_options, filter); F(nt_top_options, signatures); F(nt_top_options, weight);
    S(nt_top_row);
    F(nt_top_row, name); F(nt_top_row, exclusive); F(nt_top_row, inclusive);
    S(nt_top_table);
    F(nt_top_table, thread_id); F(nt_top_table, samples); F(nt_top_table, empty); F(nt_top_table, row_count);
    F(nt_top_table, rows);
    S(nt_top);
    F(nt_top, table_count); F(nt_top, tables);
    S(nt_provider);
    F(nt_provider, struct_size);
    F(nt_provider, name); F(nt_provider, keywords); F(nt_provider, level); F(nt_provider, arguments);
    S(nt_session_config);
    F(nt_session_config, struct_size);
    F(nt_session_config, providers); F(nt_session_config, provider_count); F(nt_session_config, buffer_mb);
    F(nt_session_config, no_rundown); F(nt_session_config, rundown_keyword); F(nt_session_config, no_stackwalk);
    F(nt_session_config, max_stream_bytes); F(nt_session_config, sink); F(nt_session_config, sink_user);
    F(nt_session_config, caller_pumps); F(nt_session_config, reserved_); F(nt_session_config, buffering);
    /* The .NET package's structures beyond the Python module's. */
    S(nt_limits);
    F(nt_limits, struct_size); F(nt_limits, max_block_bytes); F(nt_limits, max_metadata); F(nt_limits, max_metadata_bytes);
    F(nt_limits, max_fields); F(nt_limits, max_stacks); F(nt_limits, max_stack_frames); F(nt_limits, max_threads);
    F(nt_limits, max_array_elements); F(nt_limits, max_field_depth);
    S(nt_trace_options);
    F(nt_trace_options, struct_size); F(nt_trace_options, limits); F(nt_trace_options, trace_limits); F(nt_trace_options, alloc);
    F(nt_trace_options, deadline_ns); F(nt_trace_options, progress); F(nt_trace_options, progress_user);
    F(nt_trace_options, aggregate);
    S(nt_trace_stats);
    F(nt_trace_stats, struct_size); F(nt_trace_stats, status); F(nt_trace_stats, stream_bytes); F(nt_trace_stats, samples);
    F(nt_trace_stats, samples_unknown_stack); F(nt_trace_stats, frames); F(nt_trace_stats, resolved_frames);
    F(nt_trace_stats, stacks); F(nt_trace_stats, threads); F(nt_trace_stats, method_records);
    F(nt_trace_stats, jit_records); F(nt_trace_stats, rundown_records); F(nt_trace_stats, unload_records);
    F(nt_trace_stats, modules); F(nt_trace_stats, assemblies); F(nt_trace_stats, events_dropped);
    F(nt_trace_stats, memory); F(nt_trace_stats, memory_peak);
    S(nt_gc);
    F(nt_gc, number); F(nt_gc, generation); F(nt_gc, reason); F(nt_gc, type); F(nt_gc, thread_id);
    F(nt_gc, start_ns); F(nt_gc, end_ns); F(nt_gc, suspend_begin_ns); F(nt_gc, suspend_end_ns);
    F(nt_gc, restart_end_ns); F(nt_gc, suspension_ns); F(nt_gc, pause_ns); F(nt_gc, heap_after);
    F(nt_gc, heap_before); F(nt_gc, promoted); F(nt_gc, gen_size);
    S(nt_profile_export_options);
    F(nt_profile_export_options, struct_size); F(nt_profile_export_options, kind); F(nt_profile_export_options, filter);
    F(nt_profile_export_options, by_count);
    F(nt_profile_export_options, with_label); F(nt_profile_export_options, name);
    F(nt_profile_export_options, signatures);
    S(nt_field);
    F(nt_field, name); F(nt_field, type); F(nt_field, element_type); F(nt_field, depth);
    S(nt_event_desc);
    F(nt_event_desc, metadata_id); F(nt_event_desc, provider); F(nt_event_desc, event_id);
    F(nt_event_desc, event_name); F(nt_event_desc, keywords); F(nt_event_desc, version); F(nt_event_desc, level);
    F(nt_event_desc, opcode); F(nt_event_desc, field_count); F(nt_event_desc, fields); F(nt_event_desc, kind);
    F(nt_event_desc, name); F(nt_event_desc, task_name); F(nt_event_desc, opcode_name); F(nt_event_desc, schema);
    S(nt_field_value);
    F(nt_field_value, name); F(nt_field_value, kind); F(nt_field_value, type); F(nt_field_value, depth);
    F(nt_field_value, index); F(nt_field_value, count); F(nt_field_value, in_array); F(nt_field_value, offset);
    F(nt_field_value, v);
    S(nt_field_iter); /* the public head; ev_ is where the private state a binding holds as bytes begins */
    F(nt_field_iter, status); F(nt_field_iter, error_offset); F(nt_field_iter, leftover); F(nt_field_iter, message);
    F(nt_field_iter, ev_);
    /* The Python module mirrors the private state field by field. */
    F(nt_field_iter, fields_); F(nt_field_iter, nfields_); F(nt_field_iter, pos_); F(nt_field_iter, sp_);
    F(nt_field_iter, yielded_); F(nt_field_iter, done_); F(nt_field_iter, schema_); F(nt_field_iter, stack_);
    F(nt_field_iter, ints_);
    S(nt_parser_stats);
    F(nt_parser_stats, struct_size); F(nt_parser_stats, bytes); F(nt_parser_stats, blocks); F(nt_parser_stats, event_blocks);
    F(nt_parser_stats, metadata_blocks); F(nt_parser_stats, stack_blocks); F(nt_parser_stats, sp_blocks);
    F(nt_parser_stats, unknown_blocks); F(nt_parser_stats, events); F(nt_parser_stats, metadata);
    F(nt_parser_stats, stacks); F(nt_parser_stats, sequence_points); F(nt_parser_stats, samples);
    F(nt_parser_stats, methods); F(nt_parser_stats, modules); F(nt_parser_stats, assemblies);
    F(nt_parser_stats, events_dropped); F(nt_parser_stats, unknown_metadata_refs);
    F(nt_parser_stats, unknown_stack_refs); F(nt_parser_stats, memory); F(nt_parser_stats, memory_peak);
    S(nt_trace_window_config);
    F(nt_trace_window_config, struct_size); F(nt_trace_window_config, max_records);
    F(nt_trace_window_config, record_budget); F(nt_trace_window_config, recorder_ns);
    F(nt_trace_window_config, recorder_bytes); F(nt_trace_window_config, no_continuous);
    F(nt_trace_window_config, sample_labels);
    S(nt_window_table);
    F(nt_window_table, entries); F(nt_window_table, bytes);
    S(nt_trace_window_stats);
    F(nt_trace_window_stats, struct_size); F(nt_trace_window_stats, records); F(nt_trace_window_stats, strings);
    F(nt_trace_window_stats, address_index); F(nt_trace_window_stats, modules); F(nt_trace_window_stats, stacks);
    F(nt_trace_window_stats, recorder); F(nt_trace_window_stats, record_budget);
    F(nt_trace_window_stats, records_seen); F(nt_trace_window_stats, records_retired);
    F(nt_trace_window_stats, records_evicted); F(nt_trace_window_stats, records_evicted_sampled);
    F(nt_trace_window_stats, windows); F(nt_trace_window_stats, open_windows);
    F(nt_trace_window_stats, last_window_work); F(nt_trace_window_stats, events_dropped);
    F(nt_trace_window_stats, memory); F(nt_trace_window_stats, memory_peak);
    S(nt_window_filter);
    F(nt_window_filter, struct_size);
    F(nt_window_filter, thread_ids); F(nt_window_filter, thread_count); F(nt_window_filter, has_activity);
    F(nt_window_filter, activity_id); F(nt_window_filter, has_trace_id); F(nt_window_filter, trace_id);
    F(nt_window_filter, has_span_id); F(nt_window_filter, span_id);
    S(nt_convert_options);
    F(nt_convert_options, struct_size); F(nt_convert_options, format); F(nt_convert_options, uncompressed);
    F(nt_convert_options, limits); F(nt_convert_options, feed); F(nt_convert_options, from);
    F(nt_convert_options, to); F(nt_convert_options, alloc); F(nt_convert_options, records);
    S(nt_convert_stats);
    F(nt_convert_stats, struct_size); F(nt_convert_stats, status); F(nt_convert_stats, output_failed);
    F(nt_convert_stats, error_offset); F(nt_convert_stats, input_bytes); F(nt_convert_stats, output_bytes);
    F(nt_convert_stats, events_written); F(nt_convert_stats, events_without_metadata);
    F(nt_convert_stats, fieldless_metadata); F(nt_convert_stats, metadata_flushes);
    F(nt_convert_stats, events_outside_window); F(nt_convert_stats, records_outside_window);
    F(nt_convert_stats, os_error); F(nt_convert_stats, message); F(nt_convert_stats, method_records_left_out);
    return 0;
}
