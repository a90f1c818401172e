// The C structures the package reads or fills, field for field as the public
// headers (include/*.h) lay them out: names are the C names, so the ABI test
// (LibNetTrace.Tests/AbiTests.cs) can compare every size and offset with what
// the C compiler says (bindings/python/abi_layout).  C's bool is a byte here;
// function pointers are nint.  A sized struct (doc/abi.md) begins with
// struct_size, which the package sets to its own sizeof everywhere (Sized<T>).
// Nothing here is public.
#pragma warning disable CS0649, CS8981, IDE1006
using System.Runtime.InteropServices;

namespace LibNetTrace.Native;

[StructLayout(LayoutKind.Sequential)]
internal struct nt_systemtime
{
    public ushort year, month, day_of_week, day, hour, minute, second, milliseconds;
}

[StructLayout(LayoutKind.Sequential)]
internal struct nt_trace_info
{
    public uint format_major, format_minor, object_version, min_reader_version;
    public nt_systemtime sync_time_utc;
    public long sync_qpc, qpc_frequency;
    public uint pointer_size, process_id, processor_count, sampling_interval_ns;
}

[StructLayout(LayoutKind.Sequential)]
internal struct nt_limits
{
    public uint struct_size; // the layout this package was built with: sizeof, set by every caller
    public uint max_block_bytes, max_metadata, max_metadata_bytes, max_fields, max_stacks, max_stack_frames,
        max_threads, max_array_elements, max_field_depth;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_trace_options
{
    public uint struct_size; // the layout this package was built with: sizeof, set by every caller
    public nt_limits* limits;
    public void* trace_limits;
    public void* alloc;
    public long deadline_ns;
    public nint progress;
    public void* progress_user;
    public byte aggregate;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_trace_sample
{
    public long timestamp, time_ns;
    public ulong thread_id;
    public uint type, stack_index, frame_count;
    public uint* frame_ids;
    public ulong count;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_trace_stack
{
    public uint frame_count;
    public uint* frame_ids;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_trace_method
{
    public ulong start_address, size, method_id, module_id, rejit_id;
    public byte* name, declaring_type, signature, assembly;
    public long timestamp, valid_from, valid_until;
    public uint flags, token;
    public int source;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_frame
{
    public ulong ip;
    public nt_trace_method* method;
    public uint method_index;
}

[StructLayout(LayoutKind.Sequential)]
internal struct nt_trace_stats
{
    public uint struct_size; // the layout this package was built with: sizeof, set by every caller
    public int status;
    public ulong stream_bytes, samples, samples_unknown_stack, frames, resolved_frames, stacks, threads,
        method_records, jit_records, rundown_records, unload_records, modules, assemblies, events_dropped;
    public nuint memory, memory_peak;
}

[StructLayout(LayoutKind.Sequential)]
internal struct nt_sample_filter
{
    public byte managed_only, has_thread;
    public ulong thread_id;
    public nt_time_bound from, to;

    /// <summary>The filter of a window in trace-clock ns (null: an open end).</summary>
    internal static nt_sample_filter Of(bool managedOnly, long? threadId, long? fromNs, long? toNs) => new()
    {
        managed_only = (byte)(managedOnly ? 1 : 0),
        has_thread = (byte)(threadId.HasValue ? 1 : 0),
        thread_id = (ulong)(threadId ?? 0),
        from = new nt_time_bound { set = (byte)(fromNs.HasValue ? 1 : 0), absolute = 1, ns = fromNs ?? 0 },
        to = new nt_time_bound { set = (byte)(toNs.HasValue ? 1 : 0), absolute = 1, ns = toNs ?? 0 },
    };
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_export_options
{
    public uint struct_size; // the layout this package was built with: sizeof, set by every caller
    public nt_sample_filter filter;
    public int weight;
    public byte* name;
    public byte signatures;
}

[StructLayout(LayoutKind.Sequential)]
internal struct nt_top_options
{
    public uint struct_size; // the layout this package was built with: sizeof, set by every caller
    public uint rows;
    public byte by_inclusive, by_thread;
    public nt_sample_filter filter;
    public byte signatures;
    public int weight;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_top_row
{
    public byte* name;
    public ulong exclusive, inclusive;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_top_table
{
    public ulong thread_id, samples, empty;
    public nuint row_count;
    public nt_top_row* rows;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_top
{
    public nuint table_count;
    public nt_top_table* tables;
}

[StructLayout(LayoutKind.Sequential)]
internal struct nt_time_bound
{
    public byte set, absolute;
    public long ns;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_profile_options
{
    public uint struct_size; // the layout this package was built with: sizeof, set by every caller
    public nt_trace_options* trace;
    public byte keep_events, events_only;
    public nt_time_bound from, to;
    public byte exception_messages;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_profile_record
{
    public int kind;
    public uint stack_index;
    public ulong thread_id;
    public byte* label, message;
    public uint heap;
    public byte open;
    public long value, count, timestamp, time_ns;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_gc
{
    public uint number, generation, reason, type;
    public ulong thread_id;
    public long start_ns, end_ns, suspend_begin_ns, suspend_end_ns, restart_end_ns, suspension_ns, pause_ns,
        heap_after, heap_before, promoted;
    public fixed long gen_size[5];
}

[StructLayout(LayoutKind.Sequential)]
internal struct nt_profile_totals
{
    public uint struct_size; // the layout this package was built with: sizeof, set by every caller
    public ulong events;
    public long value;
    public ulong records, open, unpaired_stops, without_stack;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_profile_export_options
{
    public uint struct_size; // the layout this package was built with: sizeof, set by every caller
    public int kind;
    public nt_sample_filter filter;
    public byte by_count, with_label;
    public byte* name;
    public byte signatures;
}

[StructLayout(LayoutKind.Sequential)]
internal struct nt_callbacks
{
    public uint struct_size; // the layout this package was built with: sizeof, set by every caller
    public nint trace, metadata, @event, stack, sample, method, module, assembly, sequence_point, sequence_gap;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_field
{
    public byte* name;
    public uint type, element_type, depth;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_event_desc
{
    public uint metadata_id;
    public byte* provider;
    public uint event_id;
    public byte* event_name;
    public ulong keywords;
    public uint version, level, opcode, field_count;
    public nt_field* fields;
    public int kind;
    public byte* name, task_name, opcode_name;
    public void* schema;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_stack
{
    public uint id, count;
    public ulong* ips;
    public uint interval;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_event
{
    public nt_event_desc* desc;
    public uint metadata_id, sequence_number;
    public ulong thread_id, capture_thread_id;
    public uint processor_number, stack_id;
    public nt_stack* stack;
    public long timestamp;
    public fixed byte activity_id[16];
    public fixed byte related_activity_id[16];
    public byte is_sorted;
    public uint payload_size;
    public byte* payload;
    public ulong offset;
    public void* field_ctx;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_sample
{
    public long timestamp, time_ns;
    public ulong thread_id;
    public uint type, stack_id;
    public nt_stack* stack;
    public nt_event* @event;
}

/// <summary>The value union of nt_field_value.</summary>
[StructLayout(LayoutKind.Explicit)]
internal unsafe struct nt_field_union
{
    [FieldOffset(0)] public long i;
    [FieldOffset(0)] public ulong u;
    [FieldOffset(0)] public double f;
    [FieldOffset(0)] public byte* ptr;  // str.ptr / bin.ptr; guid's first bytes
    [FieldOffset(8)] public nuint len;  // str.len / bin.len; guid's last bytes
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_field_value
{
    public byte* name;
    public int kind;
    public uint type, depth, index, count;
    public byte in_array;
    public uint offset;
    public nt_field_union v;
}

/// <summary>nt_field_iter: the public head, then the private state as one blob
/// (the ABI test checks where it starts and the whole size).</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_field_iter
{
    public int status;
    public uint error_offset, leftover;
    public byte* message;
    public fixed ulong ev_[169];
}

[StructLayout(LayoutKind.Sequential)]
internal struct nt_parser_stats
{
    public uint struct_size; // the layout this package was built with: sizeof, set by every caller
    public ulong bytes, blocks, event_blocks, metadata_blocks, stack_blocks, sp_blocks, unknown_blocks, events,
        metadata, stacks, sequence_points, samples, methods, modules, assemblies, events_dropped,
        unknown_metadata_refs, unknown_stack_refs;
    public nuint memory, memory_peak;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_provider
{
    public uint struct_size; // the layout this package was built with: sizeof, set by every caller
    public byte* name;
    public ulong keywords;
    public uint level;
    public byte* arguments;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_session_config
{
    public uint struct_size; // the layout this package was built with: sizeof, set by every caller
    public nt_provider* providers;
    public nuint provider_count;
    public uint buffer_mb;
    public byte no_rundown;
    public ulong rundown_keyword;
    public byte no_stackwalk;
    public ulong max_stream_bytes;
    public nint sink;
    public void* sink_user;
    public byte caller_pumps;
    public fixed byte reserved_[7];
    public uint buffering; // an nt_buffering: 0 (default) is lossy
}

[StructLayout(LayoutKind.Sequential)]
internal struct nt_trace_window_config
{
    public uint struct_size; // the layout this package was built with: sizeof, set by every caller
    public uint max_records;
    public ulong record_budget, recorder_ns, recorder_bytes;
    public byte no_continuous, sample_labels;
}

[StructLayout(LayoutKind.Sequential)]
internal struct nt_window_table
{
    public ulong entries, bytes;
}

[StructLayout(LayoutKind.Sequential)]
internal struct nt_trace_window_stats
{
    public uint struct_size; // the layout this package was built with: sizeof, set by every caller
    public nt_window_table records, strings, address_index, modules, stacks, recorder;
    public ulong record_budget, records_seen, records_retired, records_evicted, records_evicted_sampled;
    public ulong windows, open_windows, last_window_work, events_dropped;
    public nuint memory, memory_peak;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_window_filter
{
    public uint struct_size; // the layout this package was built with: sizeof, set by every caller
    public ulong* thread_ids;
    public nuint thread_count;
    public byte has_activity;
    public fixed byte activity_id[16];
    public byte has_trace_id;
    public fixed byte trace_id[16];
    public byte has_span_id;
    public fixed byte span_id[8];
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_convert_options
{
    public uint struct_size;
    public uint format;
    public byte uncompressed;
    public void* limits;
    public void* feed;
    public nt_time_bound from, to;
    public void* alloc;
    public uint records;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct nt_convert_stats
{
    public uint struct_size;
    public int status;
    public byte output_failed;
    public ulong error_offset, input_bytes, output_bytes, events_written, events_without_metadata, fieldless_metadata,
        metadata_flushes, events_outside_window, records_outside_window;
    public int os_error;
    public fixed byte message[256];
    public ulong method_records_left_out;
}

internal static unsafe class Sized
{
    /// <summary>A zeroed sized struct whose struct_size is this package's layout.</summary>
    internal static uint Of<T>() where T : unmanaged => (uint)sizeof(T);
}
