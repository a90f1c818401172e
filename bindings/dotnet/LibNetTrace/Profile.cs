using System;
using System.Collections.Generic;
using System.IO;
using LibNetTrace.Native;

namespace LibNetTrace;

/// <summary>The profiles of a trace: CPU and wall (its samples), allocations,
/// exceptions and lock contention (events merged by stack, thread and label).</summary>
public enum ProfileKind
{
    /// <summary>Thread samples, weight = samples.</summary>
    Cpu = 0,
    /// <summary>Thread samples, weight = time to the thread's next sample.</summary>
    Wall = 1,
    /// <summary>GCAllocationTick: bytes and count by allocated type and heap.</summary>
    Alloc = 2,
    /// <summary>ExceptionThrown: count by exception type.</summary>
    Exceptions = 3,
    /// <summary>ContentionStart/Stop: wait ns and count.</summary>
    Contention = 4,
}

/// <summary>What a profile read keeps; the defaults keep everything, merged.</summary>
public sealed class ProfileOptions
{
    /// <summary>One record per event, in stream order (memory grows with events).</summary>
    public bool KeepEvents { get; set; }
    /// <summary>Keep no thread samples: the event profiles and the GC timeline alone.</summary>
    public bool EventsOnly { get; set; }
    /// <summary>Only events at or after this time count.</summary>
    public TimeBound? From { get; set; }
    /// <summary>Only events before this time count.</summary>
    public TimeBound? To { get; set; }
    /// <summary>Exceptions: the message is part of a record's key.</summary>
    public bool ExceptionMessages { get; set; }

    internal nt_profile_options ToNative() => new()
    {
        struct_size = Sized.Of<nt_profile_options>(),
        keep_events = (byte)(KeepEvents ? 1 : 0),
        events_only = (byte)(EventsOnly ? 1 : 0),
        from = From?.Native ?? default,
        to = To?.Native ?? default,
        exception_messages = (byte)(ExceptionMessages ? 1 : 0),
    };
}

/// <summary>One record of an event profile.</summary>
public sealed class ProfileRecord
{
    /// <summary>Alloc, Exceptions or Contention.</summary>
    public ProfileKind Kind { get; }
    /// <summary>The stack, root first, named as samples' frames are.</summary>
    public IReadOnlyList<string> Frames { get; }
    /// <summary>The thread the events were on.</summary>
    public long ThreadId { get; }
    /// <summary>The allocated type, the exception type, or "" for contention.</summary>
    public string Label { get; }
    /// <summary>Exceptions with <see cref="ProfileOptions.ExceptionMessages"/>: the message; else "".</summary>
    public string Message { get; }
    /// <summary>Alloc: the heap ("soh", "loh", "poh", "other"); contention: "managed" or "native"; else "".</summary>
    public string Heap { get; }
    /// <summary>Contention: a start with no stop in the stream.</summary>
    public bool Open { get; }
    /// <summary>Bytes (alloc), events (exceptions), wait ns (contention).</summary>
    public long Value { get; }
    /// <summary>Events merged.</summary>
    public long Count { get; }
    /// <summary>Trace-clock ns of the first event merged.</summary>
    public long TimestampNs { get; }

    internal unsafe ProfileRecord(in nt_profile_record r, IReadOnlyList<string> frames)
    {
        Kind = (ProfileKind)r.kind;
        Frames = frames;
        ThreadId = (long)r.thread_id;
        Label = Lib.Text(r.label);
        Message = Lib.Text(r.message);
        Heap = Kind == ProfileKind.Alloc ? (r.heap switch { 0 => "soh", 1 => "loh", 2 => "poh", _ => "other" })
            : Kind == ProfileKind.Contention ? (r.heap == 1 ? "native" : "managed") : "";
        Open = r.open != 0;
        Value = r.value;
        Count = r.count;
        TimestampNs = r.time_ns;
    }
}

/// <summary>Totals of one kind of a profile.</summary>
public readonly record struct ProfileTotals(long Events, long Value, long Records, long Open, long UnpairedStops, long WithoutStack);

/// <summary>One GC of the timeline.  Times are trace-clock ns, -1 when the event was absent.</summary>
public sealed class GcInfo
{
    /// <summary>GCStart Count.</summary>
    public int Number { get; }
    /// <summary>GCStart Depth.</summary>
    public int Generation { get; }
    /// <summary>GCStart Reason ("AllocSmall", "Induced", ...).</summary>
    public string Reason { get; }
    /// <summary>"blocking", "background", "foreground", or "other".</summary>
    public string Type { get; }
    /// <summary>The thread that wrote GCStart.</summary>
    public long ThreadId { get; }
    /// <summary>GCStart's time.</summary>
    public long StartNs { get; }
    /// <summary>GCEnd's time.</summary>
    public long EndNs { get; }
    /// <summary>How long the threads were stopped (restart - suspend begin, else end - start), or -1.</summary>
    public long PauseNs { get; }
    /// <summary>How long suspending took, or -1.</summary>
    public long SuspensionNs { get; }
    /// <summary>Bytes on the heap after the GC (sum of the generations), or -1.</summary>
    public long HeapAfter { get; }
    /// <summary>Bytes before it (previous GC's heap after plus the allocation ticks since), or -1.</summary>
    public long HeapBefore { get; }
    /// <summary>Bytes promoted, or -1.</summary>
    public long Promoted { get; }
    /// <summary>Generation sizes gen0-2, LOH, POH, each -1 when absent.</summary>
    public IReadOnlyList<long> GenerationSizes { get; }

    internal unsafe GcInfo(nt_gc* g)
    {
        Number = (int)g->number;
        Generation = (int)g->generation;
        Reason = Lib.Text(Lib.nt_gc_reason_name(g->reason));
        Type = Lib.Text(Lib.nt_gc_type_name(g->type));
        ThreadId = (long)g->thread_id;
        StartNs = g->start_ns;
        EndNs = g->end_ns;
        PauseNs = g->pause_ns;
        SuspensionNs = g->suspension_ns;
        HeapAfter = g->heap_after;
        HeapBefore = g->heap_before;
        Promoted = g->promoted;
        var sizes = new long[5];
        for (int i = 0; i < 5; i++)
            sizes[i] = g->gen_size[i];
        GenerationSizes = sizes;
    }
}

/// <summary>Which records of an event profile an export covers.</summary>
public sealed class ProfileExportOptions
{
    /// <summary>Only this thread's records.</summary>
    public long? ThreadId { get; set; }
    /// <summary>Folded / speedscope weight: event count instead of the value.</summary>
    public bool ByCount { get; set; }
    /// <summary>Folded / speedscope: the label (type, heap) as a root frame.</summary>
    public bool WithLabel { get; set; }
    /// <summary>The profile's name (speedscope); null selects "nettrace".</summary>
    public string? Name { get; set; }
    /// <summary>Names carry the methods' parameter lists.</summary>
    public bool Signatures { get; set; }
}

/// <summary>A trace read for its event profiles and GC timeline (and its CPU
/// samples, in <see cref="Trace"/>).  Thread-safe to read; Dispose releases it.</summary>
public sealed unsafe class Profile : IDisposable
{
    private readonly ProfileHandle _h;
    private readonly TraceFile _trace;
    private readonly FrameNames _names;

    internal Profile(ProfileHandle h)
    {
        _h = h;
        using var _ = h.Use();
        var th = new BorrowedTraceHandle(Lib.nt_profile_trace(h.Ptr), h);
        _trace = new TraceFile(th);
        _names = new FrameNames(th);
    }

    /// <summary>Read a .nettrace file's profiles (the same failures as <see cref="TraceFile.Open(string, bool)"/>).</summary>
    public static Profile Open(string path, ProfileOptions? options = null, bool allowPartial = false)
    {
        ArgumentNullException.ThrowIfNull(path);
        using var f = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 1, FileOptions.SequentialScan);
        return Open(f, options, allowPartial);
    }

    /// <summary>Read a NetTrace stream's profiles to its end (the stream is not closed).</summary>
    public static Profile Open(Stream stream, ProfileOptions? options = null, bool allowPartial = false)
    {
        ArgumentNullException.ThrowIfNull(stream);
        nt_profile_options o = (options ?? new ProfileOptions()).ToNative();
        var builder = new ProfileBuilderHandle(Lib.nt_profile_builder_new(&o, null));
        if (builder.IsInvalid)
            throw new OutOfMemoryException("nt_profile_builder_new");
        var cb = new nt_callbacks { struct_size = Sized.Of<nt_callbacks>() };
        Lib.nt_profile_builder_callbacks(&cb);
        using var parser = new ParserHandle(Lib.nt_parser_new(&cb, builder.Ptr, null, null));
        if (parser.IsInvalid)
        {
            builder.Dispose();
            throw new OutOfMemoryException("nt_parser_new");
        }
        Lib.nt_parser_set_lazy_names(parser.Ptr, 1); // the builder converts only the names it keeps, as in TraceFile
        Reading.Outcome outcome = Reading.Feed(parser.Ptr, stream);
        void* p;
        Lib.nt_profile_builder_finish(builder.Detach(), parser.Ptr, outcome.Status, &p);
        return TraceFile.Deliver(p == null ? null : new Profile(new ProfileHandle(p)), outcome, allowPartial);
    }

    /// <summary>The fault a partial read stopped at, else null.</summary>
    public NetTraceException? Error { get; internal set; }

    /// <summary>The thread samples (CPU and wall profiles), owned by this profile.</summary>
    public TraceFile Trace => _trace;

    /// <summary>The records of every event profile, grouped by kind, in stream order of first event.</summary>
    public IReadOnlyList<ProfileRecord> Records
    {
        get
        {
            using var _ = _h.Use();
            using var t = _trace.Handle.Use();
            int n = (int)Lib.nt_profile_record_count(_h.Ptr);
            var list = new ProfileRecord[n];
            for (int i = 0; i < n; i++)
            {
                nt_profile_record r = Lib.nt_profile_record_at(_h.Ptr, (nuint)i);
                list[i] = new ProfileRecord(r, _names.Stack(r.stack_index));
            }
            return list;
        }
    }

    /// <summary>The records of one kind.</summary>
    public IEnumerable<ProfileRecord> RecordsOf(ProfileKind kind)
    {
        foreach (ProfileRecord r in Records)
            if (r.Kind == kind)
                yield return r;
    }

    /// <summary>Totals of one kind.</summary>
    public ProfileTotals Totals(ProfileKind kind)
    {
        using var _ = _h.Use();
        var t = new nt_profile_totals { struct_size = Sized.Of<nt_profile_totals>() };
        Lib.nt_profile_totals_get(_h.Ptr, (int)kind, &t);
        return new ProfileTotals((long)t.events, t.value, (long)t.records, (long)t.open, (long)t.unpaired_stops, (long)t.without_stack);
    }

    /// <summary>The GC timeline, in order of start time.</summary>
    public IReadOnlyList<GcInfo> Gcs
    {
        get
        {
            using var _ = _h.Use();
            int n = (int)Lib.nt_profile_gc_count(_h.Ptr);
            var list = new GcInfo[n];
            for (int i = 0; i < n; i++)
                list[i] = new GcInfo(Lib.nt_profile_gc_at(_h.Ptr, (nuint)i));
            return list;
        }
    }

    /// <summary>Write one event profile as gzipped pprof (alloc_space + alloc_objects,
    /// exceptions, contentions + delay).  Cpu and wall: use <see cref="Trace"/>'s exports.</summary>
    public void ExportPprof(ProfileKind kind, Stream output, ProfileExportOptions? options = null) => Export(kind, output, options, 0);

    /// <summary>Write one event profile as speedscope JSON.</summary>
    public void ExportSpeedscope(ProfileKind kind, Stream output, ProfileExportOptions? options = null) => Export(kind, output, options, 1);

    /// <summary>Write one event profile as folded stacks.</summary>
    public void ExportFolded(ProfileKind kind, Stream output, ProfileExportOptions? options = null) => Export(kind, output, options, 2);

    private void Export(ProfileKind kind, Stream output, ProfileExportOptions? options, int format)
    {
        if (kind is ProfileKind.Cpu or ProfileKind.Wall)
            throw new ArgumentException("cpu and wall profiles export through Profile.Trace (ExportPprof with Weight.Time for wall)", nameof(kind));
        options ??= new ProfileExportOptions();
        byte[]? name = options.Name == null ? null : TimeBound.Utf8Z(options.Name);
        using var _ = _h.Use();
        fixed (byte* np = name)
        {
            var o = new nt_profile_export_options
            {
                struct_size = Sized.Of<nt_profile_export_options>(),
                kind = (int)kind,
                filter = nt_sample_filter.Of(false, options.ThreadId, null, null),
                by_count = (byte)(options.ByCount ? 1 : 0),
                with_label = (byte)(options.WithLabel ? 1 : 0),
                name = np,
                signatures = (byte)(options.Signatures ? 1 : 0),
            };
            StreamSink sink = StreamSink.Open(output);
            int status = format switch
            {
                0 => Lib.nt_profile_export_pprof(_h.Ptr, &o, StreamSink.Function, sink.User),
                1 => Lib.nt_profile_export_speedscope(_h.Ptr, &o, StreamSink.Function, sink.User),
                _ => Lib.nt_profile_export_folded(_h.Ptr, &o, StreamSink.Function, sink.User),
            };
            sink.Finish(status, "profile export");
        }
    }

    /// <summary>Release the profile (and its trace).</summary>
    public void Dispose()
    {
        _trace.Dispose();
        _h.Dispose();
    }
}
