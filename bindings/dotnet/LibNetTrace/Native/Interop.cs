// The C functions the package calls: source-generated P/Invoke (LibraryImport),
// no runtime marshalling, so the calls are the same under trimming and NativeAOT.
// Handles are passed as raw pointers: the SafeHandle wrappers (Handles.cs) keep
// the object alive across each call themselves.
using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

[assembly: DisableRuntimeMarshalling]

namespace LibNetTrace.Native;

internal static unsafe partial class Lib
{
    internal const string Name = "nettrace";

    // nettrace.h
    [LibraryImport(Name)] internal static partial byte* nt_version();
    [LibraryImport(Name)] internal static partial byte* nt_status_name(int status);
    [LibraryImport(Name)] internal static partial byte* nt_status_describe(int status);
    [LibraryImport(Name)] internal static partial void* nt_parser_new(nt_callbacks* cb, void* user, nt_limits* lim, void* alloc);
    [LibraryImport(Name)] internal static partial int nt_parser_feed(void* p, byte* data, nuint len);
    [LibraryImport(Name)] internal static partial int nt_parser_finish(void* p);
    [LibraryImport(Name)] internal static partial int nt_parser_status(void* p);
    [LibraryImport(Name)] internal static partial ulong nt_parser_offset(void* p);
    [LibraryImport(Name)] internal static partial ulong nt_parser_error_offset(void* p);
    [LibraryImport(Name)] internal static partial byte* nt_parser_message(void* p);
    [LibraryImport(Name)] internal static partial nt_trace_info* nt_parser_trace_info(void* p);
    [LibraryImport(Name)] internal static partial void nt_parser_free(void* p);
    [LibraryImport(Name)] internal static partial void nt_parser_set_lazy_names(void* p, byte lazy);
    [LibraryImport(Name)] internal static partial void nt_parser_stats_get(void* p, nt_parser_stats* stats);
    [LibraryImport(Name)] internal static partial long nt_parser_time_ns(void* p, long ticks);
    [LibraryImport(Name)] internal static partial int nt_event_fields_begin(nt_event* ev, nt_field_iter* it);
    [LibraryImport(Name)] internal static partial byte nt_field_next(nt_field_iter* it, nt_field_value* v);

    // nettrace_trace.h
    [LibraryImport(Name)] internal static partial void* nt_trace_builder_new(void* alloc);
    [LibraryImport(Name)] internal static partial void nt_trace_builder_callbacks(nt_callbacks* cb);
    [LibraryImport(Name)] internal static partial int nt_trace_builder_finish(void* b, void* parser, int status, void** trace);
    [LibraryImport(Name)] internal static partial void nt_trace_builder_free(void* b);
    [LibraryImport(Name)] internal static partial nt_trace_info* nt_trace_header(void* t);
    [LibraryImport(Name)] internal static partial long nt_trace_frequency(void* t);
    [LibraryImport(Name)] internal static partial nuint nt_trace_sample_count(void* t);
    [LibraryImport(Name)] internal static partial nt_trace_sample nt_trace_sample_at(void* t, nuint i);
    [LibraryImport(Name)] internal static partial nuint nt_trace_stack_count(void* t);
    [LibraryImport(Name)] internal static partial nt_trace_stack nt_trace_stack_at(void* t, nuint i);
    [LibraryImport(Name)] internal static partial nuint nt_trace_frame_count(void* t);
    [LibraryImport(Name)] internal static partial nt_frame* nt_trace_frame_at(void* t, uint id);
    [LibraryImport(Name)] internal static partial nuint nt_trace_thread_count(void* t);
    [LibraryImport(Name)] internal static partial ulong nt_trace_thread_id(void* t, nuint i);
    [LibraryImport(Name)] internal static partial void nt_trace_stats_get(void* t, nt_trace_stats* stats);
    [LibraryImport(Name)] internal static partial byte* nt_trace_message(void* t);
    [LibraryImport(Name)] internal static partial void nt_trace_free(void* t);
    [LibraryImport(Name)] internal static partial int nt_trace_wall_ns(void* t, long* out_);
    [LibraryImport(Name)] internal static partial nuint nt_frame_name_ex(nt_frame* f, uint flags, byte* buf, nuint size);
    [LibraryImport(Name)] internal static partial int nt_export_folded(void* t, nt_export_options* o, nint sink, void* user);
    [LibraryImport(Name)] internal static partial int nt_export_speedscope(void* t, nt_export_options* o, nint sink, void* user);
    [LibraryImport(Name)] internal static partial int nt_export_pprof(void* t, nt_export_options* o, nint sink, void* user);
    [LibraryImport(Name)] internal static partial int nt_top_build(void* t, nt_top_options* o, nt_top** top);
    [LibraryImport(Name)] internal static partial void nt_top_free(nt_top* top);
    [LibraryImport(Name)] internal static partial void* nt_trace_window_new(nt_trace_window_config* cfg, void* alloc);
    [LibraryImport(Name)] internal static partial void nt_trace_window_callbacks(nt_callbacks* cb);
    [LibraryImport(Name)] internal static partial int nt_trace_window_take(void* w, void** trace);
    [LibraryImport(Name)] internal static partial void nt_trace_window_stats_get(void* w, nt_trace_window_stats* stats);
    [LibraryImport(Name)] internal static partial void nt_trace_window_free(void* w);
    [LibraryImport(Name)] internal static partial int nt_trace_window_open(void* w, long from_ns, nt_window_filter* f, ulong* id);
    [LibraryImport(Name)] internal static partial int nt_trace_window_close(void* w, ulong id, long to_ns, void** trace);
    [LibraryImport(Name)] internal static partial int nt_trace_window_cut(void* w, long from_ns, long to_ns, nt_window_filter* f, void** trace);
    [LibraryImport(Name)] internal static partial byte nt_trace_window_recorder_span(void* w, long* from_ns, long* to_ns);

    // nettrace_convert.h
    [LibraryImport(Name)] internal static partial int nt_convert(int fd, nt_convert_options* o, nint sink, void* user, nt_convert_stats* st);
    [LibraryImport(Name)] internal static partial int nt_convert_bytes(byte* data, nuint len, nt_convert_options* o, nint sink, void* user, nt_convert_stats* st);

    // nettrace_profile.h
    [LibraryImport(Name)] internal static partial byte nt_time_bound_parse(byte* s, nt_time_bound* b);
    [LibraryImport(Name)] internal static partial void* nt_profile_builder_new(nt_profile_options* o, void* alloc);
    [LibraryImport(Name)] internal static partial void nt_profile_builder_callbacks(nt_callbacks* cb);
    [LibraryImport(Name)] internal static partial int nt_profile_builder_finish(void* b, void* parser, int status, void** profile);
    [LibraryImport(Name)] internal static partial void nt_profile_builder_free(void* b);
    [LibraryImport(Name)] internal static partial void* nt_profile_trace(void* p);
    [LibraryImport(Name)] internal static partial nuint nt_profile_record_count(void* p);
    [LibraryImport(Name)] internal static partial nt_profile_record nt_profile_record_at(void* p, nuint i);
    [LibraryImport(Name)] internal static partial void nt_profile_totals_get(void* p, int kind, nt_profile_totals* t);
    [LibraryImport(Name)] internal static partial nuint nt_profile_gc_count(void* p);
    [LibraryImport(Name)] internal static partial nt_gc* nt_profile_gc_at(void* p, nuint i);
    [LibraryImport(Name)] internal static partial byte* nt_gc_reason_name(uint reason);
    [LibraryImport(Name)] internal static partial byte* nt_gc_type_name(uint type);
    [LibraryImport(Name)] internal static partial void nt_profile_free(void* p);
    [LibraryImport(Name)] internal static partial int nt_profile_export_folded(void* p, nt_profile_export_options* o, nint sink, void* user);
    [LibraryImport(Name)] internal static partial int nt_profile_export_speedscope(void* p, nt_profile_export_options* o, nint sink, void* user);
    [LibraryImport(Name)] internal static partial int nt_profile_export_pprof(void* p, nt_profile_export_options* o, nint sink, void* user);
    [LibraryImport(Name)] internal static partial void* nt_profile_window_new(nt_trace_window_config* cfg, void* alloc);
    [LibraryImport(Name)] internal static partial void nt_profile_window_callbacks(nt_callbacks* cb);
    [LibraryImport(Name)] internal static partial int nt_profile_window_take(void* w, void** profile);

    // nettrace_session.h
    [LibraryImport(Name)] internal static partial long nt_now_ns();
    [LibraryImport(Name)] internal static partial void* nt_session_new(nt_session_config* cfg, void* alloc);
    [LibraryImport(Name)] internal static partial int nt_session_start(void* s, int pid, long deadline_ns);
    [LibraryImport(Name)] internal static partial int nt_session_stop(void* s, long deadline_ns);
    [LibraryImport(Name)] internal static partial void nt_session_cancel(void* s);
    [LibraryImport(Name)] internal static partial int nt_session_fd(void* s);
    [LibraryImport(Name)] internal static partial int nt_session_pump(void* s, byte* ended);
    [LibraryImport(Name)] internal static partial int nt_session_request_stop(void* s);
    [LibraryImport(Name)] internal static partial uint nt_session_hresult(void* s);
    [LibraryImport(Name)] internal static partial ulong nt_session_bytes(void* s);
    [LibraryImport(Name)] internal static partial byte* nt_session_message(void* s);
    [LibraryImport(Name)] internal static partial void nt_session_free(void* s);

    /// <summary>The library's own sink that feeds a parser (nt_sink_parser): a
    /// live session's bytes then go from the socket to the parser without
    /// entering managed code.</summary>
    internal static nint SinkParser => s_sinkParser != 0 ? s_sinkParser
        : (s_sinkParser = NativeLibrary.GetExport(Handle(), "nt_sink_parser"));
    private static nint s_sinkParser;

    /// <summary>NETTRACE_LIBRARY names the native library to load instead of the
    /// package's (the build tree's copy in make check).</summary>
    private static readonly string? s_override = Environment.GetEnvironmentVariable("NETTRACE_LIBRARY") is { Length: > 0 } v ? v : null;

    /// <summary>The native library as P/Invoke loads it.</summary>
    private static nint Handle() =>
        s_override != null ? NativeLibrary.Load(s_override) : NativeLibrary.Load(Name, typeof(Lib).Assembly, null);

#pragma warning disable CA2255 // the package's one module initializer: it must run before the first call
    [ModuleInitializer]
    internal static void UseLibraryFromEnvironment()
    {
        if (s_override != null)
            NativeLibrary.SetDllImportResolver(typeof(Lib).Assembly, (name, asm, search) =>
                name == Name ? NativeLibrary.Load(s_override) : 0);
    }
#pragma warning restore CA2255

    /// <summary>A NUL-terminated UTF-8 string from the library, "" for NULL.</summary>
    internal static string Text(byte* s) =>
        s == null ? "" : System.Text.Encoding.UTF8.GetString(MemoryMarshal.CreateReadOnlySpanFromNullTerminated(s));
}
