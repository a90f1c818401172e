"""The C library through ctypes: loading it, its structures and prototypes.

The structures mirror include/nettrace*.h field for field; only what the
module uses is declared.
"""
import ctypes
from ctypes import (CFUNCTYPE, POINTER, Structure, c_bool, c_char_p, c_int, c_int32, c_int64,
                    c_size_t, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p)

from ._find import load

# The loaded library and where it was found (_find.py: NETTRACE_LIBRARY, a
# bundled copy, pkg-config, the loader's path, the usual folders).
lib, path = load()


class nt_systemtime(Structure):
    _fields_ = [(n, c_uint16) for n in
                ("year", "month", "day_of_week", "day", "hour", "minute", "second", "milliseconds")]


class nt_trace_info(Structure):
    _fields_ = [("format_major", c_uint32), ("format_minor", c_uint32), ("object_version", c_uint32),
                ("min_reader_version", c_uint32), ("sync_time_utc", nt_systemtime), ("sync_qpc", c_int64),
                ("qpc_frequency", c_int64), ("pointer_size", c_uint32), ("process_id", c_uint32),
                ("processor_count", c_uint32), ("sampling_interval_ns", c_uint32)]


class nt_stack(Structure):
    _fields_ = [("id", c_uint32), ("count", c_uint32), ("ips", POINTER(c_uint64)), ("interval", c_uint32)]


class nt_event(Structure):
    _fields_ = [("desc", c_void_p), ("metadata_id", c_uint32), ("sequence_number", c_uint32),
                ("thread_id", c_uint64), ("capture_thread_id", c_uint64), ("processor_number", c_uint32),
                ("stack_id", c_uint32), ("stack", POINTER(nt_stack)), ("timestamp", c_int64),
                ("activity_id", c_uint8 * 16), ("related_activity_id", c_uint8 * 16), ("is_sorted", c_bool),
                ("payload_size", c_uint32), ("payload", c_void_p), ("offset", c_uint64), ("field_ctx", c_void_p)]


class nt_sample(Structure):
    _fields_ = [("timestamp", c_int64), ("time_ns", c_int64), ("thread_id", c_uint64), ("type", c_uint32),
                ("stack_id", c_uint32), ("stack", POINTER(nt_stack)), ("event", POINTER(nt_event))]


class nt_str16(Structure):
    _fields_ = [("units", POINTER(c_uint8)), ("count", c_uint32)]


class nt_method(Structure):
    _fields_ = [("which", c_int), ("version", c_uint32), ("method_id", c_uint64), ("module_id", c_uint64),
                ("start_address", c_uint64), ("size", c_uint32), ("token", c_uint32), ("flags", c_uint32),
                ("declaring_type", c_char_p), ("name", c_char_p), ("signature", c_char_p),
                ("clr_instance_id", c_uint16), ("rejit_id", c_uint64), ("timestamp", c_int64),
                ("event", POINTER(nt_event)), ("declaring_type16", nt_str16), ("name16", nt_str16),
                ("signature16", nt_str16)]


class nt_module(Structure):
    _fields_ = [("which", c_int), ("domain", c_bool), ("version", c_uint32), ("module_id", c_uint64),
                ("assembly_id", c_uint64), ("app_domain_id", c_uint64), ("flags", c_uint32),
                ("il_path", c_char_p), ("native_path", c_char_p), ("clr_instance_id", c_uint16),
                ("timestamp", c_int64), ("event", POINTER(nt_event)), ("il_path16", nt_str16),
                ("native_path16", nt_str16)]


class nt_assembly(Structure):
    _fields_ = [("which", c_int), ("version", c_uint32), ("assembly_id", c_uint64),
                ("app_domain_id", c_uint64), ("binding_id", c_uint64), ("flags", c_uint32), ("name", c_char_p),
                ("clr_instance_id", c_uint16), ("timestamp", c_int64), ("event", POINTER(nt_event)),
                ("name16", nt_str16)]


class nt_event_desc(Structure):
    _fields_ = [("metadata_id", c_uint32), ("provider", c_char_p), ("event_id", c_uint32), ("event_name", c_char_p),
                ("keywords", c_uint64), ("version", c_uint32), ("level", c_uint32), ("opcode", c_uint32),
                ("field_count", c_uint32), ("fields", c_void_p), ("kind", c_int), ("name", c_char_p),
                ("task_name", c_char_p), ("opcode_name", c_char_p), ("schema", c_void_p)]


class _value_str(Structure):
    _fields_ = [("ptr", c_void_p), ("len", c_size_t)]


class _value_union(ctypes.Union):
    _fields_ = [("i", c_int64), ("u", c_uint64), ("f", ctypes.c_double), ("guid", c_uint8 * 16),
                ("str", _value_str), ("bin", _value_str)]


class nt_field_value(Structure):
    _fields_ = [("name", c_char_p), ("kind", c_int), ("type", c_uint32), ("depth", c_uint32), ("index", c_uint32),
                ("count", c_uint32), ("in_array", c_bool), ("offset", c_uint32), ("v", _value_union)]


FIELD_ITER_MAX_DEPTH = 32  # NT_FIELD_ITER_MAX_DEPTH


class _field_frame(Structure):
    _fields_ = [(n, c_uint32) for n in ("first", "end", "cur", "count", "index", "start", "owner", "kind")]


class nt_field_iter(Structure):
    _fields_ = [("status", c_int), ("error_offset", c_uint32), ("leftover", c_uint32), ("message", c_char_p),
                ("ev_", c_void_p), ("fields_", c_void_p), ("nfields_", c_uint32), ("pos_", c_uint32),
                ("sp_", c_uint32), ("yielded_", c_uint32), ("done_", c_bool), ("schema_", c_bool),
                ("stack_", _field_frame * (FIELD_ITER_MAX_DEPTH + 1)), ("ints_", c_uint64 * 32)]


class nt_gc(Structure):
    _fields_ = [("number", c_uint32), ("generation", c_uint32), ("reason", c_uint32), ("type", c_uint32),
                ("thread_id", c_uint64), ("start_ns", c_int64), ("end_ns", c_int64), ("suspend_begin_ns", c_int64),
                ("suspend_end_ns", c_int64), ("restart_end_ns", c_int64), ("suspension_ns", c_int64),
                ("pause_ns", c_int64), ("heap_after", c_int64), ("heap_before", c_int64), ("promoted", c_int64),
                ("gen_size", c_int64 * 5)]


CB_TRACE = CFUNCTYPE(c_int, c_void_p, POINTER(nt_trace_info))
CB_ANY = CFUNCTYPE(c_int, c_void_p, c_void_p)
CB_SAMPLE = CFUNCTYPE(c_int, c_void_p, POINTER(nt_sample))
CB_METHOD = CFUNCTYPE(c_int, c_void_p, POINTER(nt_method))
CB_MODULE = CFUNCTYPE(c_int, c_void_p, POINTER(nt_module))
CB_ASSEMBLY = CFUNCTYPE(c_int, c_void_p, POINTER(nt_assembly))


class nt_callbacks(Structure):
    _fields_ = [("struct_size", c_uint32),
                ("trace", CB_TRACE), ("metadata", CB_ANY), ("event", CB_ANY), ("stack", CB_ANY),
                ("sample", CB_SAMPLE), ("method", CB_METHOD), ("module", CB_MODULE),
                ("assembly", CB_ASSEMBLY), ("sequence_point", CB_ANY), ("sequence_gap", CB_ANY)]


class nt_trace_method(Structure):
    _fields_ = [("start_address", c_uint64), ("size", c_uint64), ("method_id", c_uint64),
                ("module_id", c_uint64), ("rejit_id", c_uint64), ("name", c_char_p),
                ("declaring_type", c_char_p), ("signature", c_char_p), ("assembly", c_char_p),
                ("timestamp", c_int64), ("valid_from", c_int64), ("valid_until", c_int64),
                ("flags", c_uint32), ("token", c_uint32), ("source", c_int)]


class nt_frame(Structure):
    _fields_ = [("ip", c_uint64), ("method", POINTER(nt_trace_method)), ("method_index", c_uint32)]


NO_METHOD = 0xFFFFFFFF


class nt_trace_sample(Structure):
    _fields_ = [("timestamp", c_int64), ("time_ns", c_int64), ("thread_id", c_uint64), ("type", c_uint32),
                ("stack_index", c_uint32), ("frame_count", c_uint32), ("frame_ids", POINTER(c_uint32)),
                ("count", c_uint64)]


class nt_trace_stack(Structure):
    _fields_ = [("frame_count", c_uint32), ("frame_ids", POINTER(c_uint32))]


class nt_trace_module(Structure):
    _fields_ = [("module_id", c_uint64), ("assembly_id", c_uint64), ("il_path", c_char_p)]


class nt_trace_assembly(Structure):
    _fields_ = [("assembly_id", c_uint64), ("name", c_char_p)]


class nt_time_bound(Structure):
    _fields_ = [("set", c_bool), ("absolute", c_bool), ("ns", c_int64)]


class nt_sample_filter(Structure):
    _fields_ = [("managed_only", c_bool), ("has_thread", c_bool), ("thread_id", c_uint64),
                ("from", nt_time_bound), ("to", nt_time_bound)]


class nt_export_options(Structure):
    _fields_ = [("struct_size", c_uint32),
                ("filter", nt_sample_filter), ("weight", c_int), ("name", c_char_p), ("signatures", c_bool)]


class nt_top_options(Structure):
    _fields_ = [("struct_size", c_uint32),
                ("rows", c_uint32), ("by_inclusive", c_bool), ("by_thread", c_bool),
                ("filter", nt_sample_filter), ("signatures", c_bool), ("weight", c_int)]


class nt_trace_stats(Structure):
    _fields_ = [("struct_size", c_uint32), ("status", c_int), ("stream_bytes", c_uint64), ("samples", c_uint64),
                ("samples_unknown_stack", c_uint64), ("frames", c_uint64), ("resolved_frames", c_uint64),
                ("stacks", c_uint64), ("threads", c_uint64), ("method_records", c_uint64),
                ("jit_records", c_uint64), ("rundown_records", c_uint64), ("unload_records", c_uint64),
                ("modules", c_uint64), ("assemblies", c_uint64), ("events_dropped", c_uint64),
                ("memory", c_size_t), ("memory_peak", c_size_t)]


class nt_trace_window_config(Structure):
    _fields_ = [("struct_size", c_uint32), ("max_records", c_uint32), ("record_budget", c_uint64),
                ("recorder_ns", c_uint64), ("recorder_bytes", c_uint64), ("no_continuous", c_bool),
                ("sample_labels", c_bool)]


class nt_window_table(Structure):
    _fields_ = [("entries", c_uint64), ("bytes", c_uint64)]


class nt_trace_window_stats(Structure):
    _fields_ = [("struct_size", c_uint32), ("records", nt_window_table), ("strings", nt_window_table),
                ("address_index", nt_window_table), ("modules", nt_window_table), ("stacks", nt_window_table),
                ("recorder", nt_window_table), ("record_budget", c_uint64), ("records_seen", c_uint64),
                ("records_retired", c_uint64), ("records_evicted", c_uint64),
                ("records_evicted_sampled", c_uint64), ("windows", c_uint64), ("open_windows", c_uint64),
                ("last_window_work", c_uint64), ("events_dropped", c_uint64), ("memory", c_size_t),
                ("memory_peak", c_size_t)]


class nt_window_filter(Structure):
    _fields_ = [("struct_size", c_uint32), ("thread_ids", POINTER(c_uint64)), ("thread_count", c_size_t),
                ("has_activity", c_bool), ("activity_id", c_uint8 * 16), ("has_trace_id", c_bool),
                ("trace_id", c_uint8 * 16), ("has_span_id", c_bool), ("span_id", c_uint8 * 8)]


class nt_profile_options(Structure):
    _fields_ = [("struct_size", c_uint32),
                ("trace", c_void_p), ("keep_events", c_bool), ("events_only", c_bool), ("from", nt_time_bound),
                ("to", nt_time_bound), ("exception_messages", c_bool)]


class nt_profile_record(Structure):
    _fields_ = [("kind", c_int), ("stack_index", c_uint32), ("thread_id", c_uint64), ("label", c_char_p),
                ("message", c_char_p), ("heap", c_uint32), ("open", c_bool), ("value", c_int64),
                ("count", c_int64), ("timestamp", c_int64), ("time_ns", c_int64)]


class nt_profile_totals(Structure):
    _fields_ = [("struct_size", c_uint32),
                ("events", c_uint64), ("value", c_int64), ("records", c_uint64), ("open", c_uint64),
                ("unpaired_stops", c_uint64), ("without_stack", c_uint64)]


class nt_top_row(Structure):
    _fields_ = [("name", c_char_p), ("exclusive", c_uint64), ("inclusive", c_uint64)]


class nt_top_table(Structure):
    _fields_ = [("thread_id", c_uint64), ("samples", c_uint64), ("empty", c_uint64), ("row_count", c_size_t),
                ("rows", POINTER(nt_top_row))]


class nt_top(Structure):
    _fields_ = [("table_count", c_size_t), ("tables", POINTER(nt_top_table))]


WRITE_FN = CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t)


class nt_provider(Structure):
    _fields_ = [("struct_size", c_uint32),
                ("name", c_char_p), ("keywords", c_uint64), ("level", c_uint32), ("arguments", c_char_p)]


class nt_session_config(Structure):
    _fields_ = [("struct_size", c_uint32),
                ("providers", POINTER(nt_provider)), ("provider_count", c_size_t), ("buffer_mb", c_uint32),
                ("no_rundown", c_bool), ("rundown_keyword", c_uint64), ("no_stackwalk", c_bool),
                ("max_stream_bytes", c_uint64), ("sink", c_void_p), ("sink_user", c_void_p),
                ("caller_pumps", c_bool), ("reserved_", c_uint8 * 7), ("buffering", c_uint32)]


class nt_convert_options(Structure):
    _fields_ = [("struct_size", c_uint32),
                ("format", c_uint32), ("uncompressed", c_bool), ("limits", c_void_p), ("feed", c_void_p),
                ("from", nt_time_bound), ("to", nt_time_bound), ("alloc", c_void_p), ("records", c_uint32)]


class nt_convert_stats(Structure):
    _fields_ = [("struct_size", c_uint32),
                ("status", c_int), ("output_failed", c_bool), ("error_offset", c_uint64),
                ("input_bytes", c_uint64), ("output_bytes", c_uint64), ("events_written", c_uint64),
                ("events_without_metadata", c_uint64), ("fieldless_metadata", c_uint64),
                ("metadata_flushes", c_uint64), ("events_outside_window", c_uint64),
                ("records_outside_window", c_uint64), ("os_error", c_int), ("message", ctypes.c_char * 256),
                ("method_records_left_out", c_uint64)]


def _proto(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


_proto("nt_version", c_char_p)
_proto("nt_status_name", c_char_p, c_int)
_proto("nt_status_describe", c_char_p, c_int)
_proto("nt_hresult_name", c_char_p, c_uint32)
_proto("nt_event_fields_begin", c_int, c_void_p, POINTER(nt_field_iter))
_proto("nt_field_next", c_bool, POINTER(nt_field_iter), POINTER(nt_field_value))
_proto("nt_event_name", c_char_p, c_void_p)
_proto("nt_ticks_to_ns", c_int64, c_int64, c_int64)
_proto("nt_frame_name", c_size_t, c_void_p, c_char_p, c_size_t)
_proto("nt_profile_gc_count", c_size_t, c_void_p)
_proto("nt_profile_gc_at", POINTER(nt_gc), c_void_p, c_size_t)
_proto("nt_gc_reason_name", c_char_p, c_uint32)
_proto("nt_gc_type_name", c_char_p, c_uint32)
_proto("nt_parser_new", c_void_p, POINTER(nt_callbacks), c_void_p, c_void_p, c_void_p)
_proto("nt_parser_feed", c_int, c_void_p, c_void_p, c_size_t)
_proto("nt_parser_finish", c_int, c_void_p)
_proto("nt_parser_offset", c_uint64, c_void_p)
_proto("nt_parser_error_offset", c_uint64, c_void_p)
_proto("nt_parser_message", c_char_p, c_void_p)
_proto("nt_parser_free", None, c_void_p)
_proto("nt_parser_set_lazy_names", None, c_void_p, c_bool)
_proto("nt_trace_builder_new", c_void_p, c_void_p)
_proto("nt_trace_builder_callbacks", None, POINTER(nt_callbacks))
_proto("nt_trace_builder_finish", c_int, c_void_p, c_void_p, c_int, POINTER(c_void_p))
_proto("nt_trace_builder_free", None, c_void_p)
_proto("nt_trace_window_new", c_void_p, POINTER(nt_trace_window_config), c_void_p)
_proto("nt_trace_window_callbacks", None, POINTER(nt_callbacks))
_proto("nt_trace_window_take", c_int, c_void_p, POINTER(c_void_p))
_proto("nt_trace_window_free", None, c_void_p)
_proto("nt_trace_window_stats_get", None, c_void_p, POINTER(nt_trace_window_stats))
_proto("nt_trace_window_open", c_int, c_void_p, c_int64, POINTER(nt_window_filter), POINTER(c_uint64))
_proto("nt_trace_window_close", c_int, c_void_p, c_uint64, c_int64, POINTER(c_void_p))
_proto("nt_trace_window_cut", c_int, c_void_p, c_int64, c_int64, POINTER(nt_window_filter), POINTER(c_void_p))
_proto("nt_trace_header", POINTER(nt_trace_info), c_void_p)
_proto("nt_trace_stats_get", None, c_void_p, POINTER(nt_trace_stats))
_proto("nt_trace_frequency", c_int64, c_void_p)
_proto("nt_trace_pointer_size", c_uint32, c_void_p)
_proto("nt_trace_sample_count", c_size_t, c_void_p)
_proto("nt_trace_sample_at", nt_trace_sample, c_void_p, c_size_t)
_proto("nt_trace_stack_count", c_size_t, c_void_p)
_proto("nt_trace_stack_at", nt_trace_stack, c_void_p, c_size_t)
_proto("nt_trace_frame_count", c_size_t, c_void_p)
_proto("nt_trace_frame_at", POINTER(nt_frame), c_void_p, c_uint32)
_proto("nt_trace_method_count", c_size_t, c_void_p)
_proto("nt_trace_method_at", POINTER(nt_trace_method), c_void_p, c_size_t)
_proto("nt_trace_module_count", c_size_t, c_void_p)
_proto("nt_trace_module_at", POINTER(nt_trace_module), c_void_p, c_size_t)
_proto("nt_trace_assembly_count", c_size_t, c_void_p)
_proto("nt_trace_assembly_at", POINTER(nt_trace_assembly), c_void_p, c_size_t)
_proto("nt_trace_thread_count", c_size_t, c_void_p)
_proto("nt_trace_thread_id", c_uint64, c_void_p, c_size_t)
_proto("nt_trace_message", c_char_p, c_void_p)
_proto("nt_trace_free", None, c_void_p)
for _name in ("nt_export_folded", "nt_export_speedscope", "nt_export_pprof"):
    _proto(_name, c_int, c_void_p, POINTER(nt_export_options), WRITE_FN, c_void_p)
_proto("nt_top_build", c_int, c_void_p, POINTER(nt_top_options), POINTER(POINTER(nt_top)))
_proto("nt_top_free", None, POINTER(nt_top))
_proto("nt_trace_wall_ns", c_int, c_void_p, POINTER(c_int64))
_proto("nt_profile_from_file", c_int, c_char_p, POINTER(nt_profile_options), POINTER(c_void_p), c_char_p,
       c_size_t)
_proto("nt_profile_from_buffer", c_int, c_void_p, c_size_t, POINTER(nt_profile_options), POINTER(c_void_p),
       c_char_p, c_size_t)
_proto("nt_profile_trace", c_void_p, c_void_p)
_proto("nt_profile_record_count", c_size_t, c_void_p)
_proto("nt_profile_record_at", nt_profile_record, c_void_p, c_size_t)
_proto("nt_profile_totals_get", None, c_void_p, c_int, POINTER(nt_profile_totals))
_proto("nt_profile_span", None, c_void_p, POINTER(c_int64), POINTER(c_int64))
_proto("nt_profile_memory_peak", c_size_t, c_void_p)
_proto("nt_profile_kind_name", c_char_p, c_int)
_proto("nt_profile_free", None, c_void_p)
_proto("nt_time_bound_parse", c_bool, c_char_p, POINTER(nt_time_bound))
_proto("nt_time_bound_resolve", c_int64, POINTER(nt_time_bound), POINTER(nt_trace_info))
_proto("nt_deadline_after_ms", c_int64, c_int64)
_proto("nt_convert", c_int, c_int, POINTER(nt_convert_options), WRITE_FN, c_void_p, POINTER(nt_convert_stats))
_proto("nt_convert_bytes", c_int, c_void_p, c_size_t, POINTER(nt_convert_options), WRITE_FN, c_void_p,
       POINTER(nt_convert_stats))
_proto("nt_session_new", c_void_p, POINTER(nt_session_config), c_void_p)
_proto("nt_session_start", c_int, c_void_p, c_int32, c_int64)
_proto("nt_session_stop", c_int, c_void_p, c_int64)
_proto("nt_session_wait", c_int, c_void_p, c_int64)
_proto("nt_session_cancel", None, c_void_p)
_proto("nt_session_pump", c_int, c_void_p, POINTER(c_bool))
_proto("nt_session_request_stop", c_int, c_void_p)
_proto("nt_session_hresult", c_uint32, c_void_p)
_proto("nt_session_bytes", c_uint64, c_void_p)
_proto("nt_session_message", c_char_p, c_void_p)
_proto("nt_session_free", None, c_void_p)

# The library's own sinks, passed to a session by address: the stream's
# bytes then never cross into Python.
SINK_FD = ctypes.cast(lib.nt_sink_fd, c_void_p)
SINK_PARSER = ctypes.cast(lib.nt_sink_parser, c_void_p)


def text(b):
    """A C string as str ("" for NULL)."""
    return b.decode("utf-8", "replace") if b else ""
