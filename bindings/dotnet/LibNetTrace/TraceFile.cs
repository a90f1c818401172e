using System;
using System.Collections.Generic;
using System.IO;
using LibNetTrace.Native;

namespace LibNetTrace;

/// <summary>A whole trace with its frames resolved: from a .nettrace file or
/// stream, a push <see cref="Parser"/>, or a live window.  Reading it from
/// several threads at once is safe; Dispose releases the native trace (waiting
/// for calls in flight), and any use after it throws ObjectDisposedException.</summary>
public sealed unsafe class TraceFile : IDisposable
{
    private readonly NativeHandle _h;
    private readonly FrameNames _names;

    internal TraceFile(NativeHandle h)
    {
        _h = h;
        _names = new FrameNames(h);
        using var _ = h.Use();
        nt_trace_info* info = Lib.nt_trace_header(h.Ptr);
        Header = info != null ? new TraceHeader(*info) : null;
        var st = new nt_trace_stats { struct_size = Sized.Of<nt_trace_stats>() };
        Lib.nt_trace_stats_get(h.Ptr, &st);
        Stats = new TraceStats(st);
    }

    /// <summary>Read a .nettrace file.  A file that is not NetTrace, damaged or cut
    /// short throws <see cref="NetTraceException"/> (status name and byte offset);
    /// with allowPartial a file whose header was read is returned instead, what was
    /// read before the fault in it and the fault in <see cref="Error"/>.</summary>
    public static TraceFile Open(string path, bool allowPartial = false)
    {
        ArgumentNullException.ThrowIfNull(path);
        using var f = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 1, FileOptions.SequentialScan);
        return Open(f, allowPartial);
    }

    /// <summary>Read a NetTrace stream to its end (the stream is not closed).</summary>
    public static TraceFile Open(Stream stream, bool allowPartial = false)
    {
        ArgumentNullException.ThrowIfNull(stream);
        return Build(stream, default, allowPartial);
    }

    /// <summary>Read a NetTrace stream held in memory.</summary>
    public static TraceFile Parse(ReadOnlySpan<byte> data, bool allowPartial = false) =>
        Build(null, data, allowPartial);

    private static TraceFile Build(Stream? stream, ReadOnlySpan<byte> data, bool allowPartial)
    {
        var builder = new TraceBuilderHandle(Lib.nt_trace_builder_new(null));
        if (builder.IsInvalid)
            throw new OutOfMemoryException("nt_trace_builder_new");
        var cb = new nt_callbacks { struct_size = Sized.Of<nt_callbacks>() };
        Lib.nt_trace_builder_callbacks(&cb);
        using var parser = new ParserHandle(Lib.nt_parser_new(&cb, builder.Ptr, null, null));
        if (parser.IsInvalid)
        {
            builder.Dispose();
            throw new OutOfMemoryException("nt_parser_new");
        }
        // The builder converts only the names it keeps (the frames' methods),
        // as nt_trace_from_file and the CLI read: without this the parser made
        // UTF-8 of every method record's three strings, a third of the read on
        // a trace of rundown records (HeartRateMonitor: 106,881 records, 12.5
        // -> 8.7 ms of native CPU), for names the builder dropped.
        Lib.nt_parser_set_lazy_names(parser.Ptr, 1);
        Reading.Outcome o = stream != null ? Reading.Feed(parser.Ptr, stream) : Reading.Feed(parser.Ptr, data);
        void* t;
        Lib.nt_trace_builder_finish(builder.Detach(), parser.Ptr, o.Status, &t);
        return Deliver(t == null ? null : new TraceFile(new TraceHandle(t)), o, allowPartial);
    }

    /// <summary>Hand over a read's result: the trace when it read cleanly (or
    /// partially, when asked), else the exception with the partial trace in it.</summary>
    internal static T Deliver<T>(T? result, Reading.Outcome o, bool allowPartial) where T : class
    {
        if (o.Status == NetTraceException.Ok && result != null)
            return result;
        NetTraceException e = o.Status == NetTraceException.Ok
            ? new NetTraceException(NetTraceException.Io, "the stream holds no trace", 0)
            : o.Error();
        if (result is TraceFile { Header: null } headless)
        {
            headless.Dispose(); // nothing was read: no partial trace to hand over
        }
        else if (result is TraceFile tf)
        {
            tf.Error = e;
            if (allowPartial)
                return result;
            e.PartialTrace = tf;
        }
        else if (result is Profile pf)
        {
            pf.Error = e;
            if (allowPartial)
                return result;
            pf.Dispose();
        }
        throw e;
    }

    /// <summary>The trace header (null for a live window taken before the header arrived).</summary>
    public TraceHeader? Header { get; }

    /// <summary>What the build saw and how well frames resolved.</summary>
    public TraceStats Stats { get; }

    /// <summary>The fault a partial read stopped at, else null.</summary>
    public NetTraceException? Error { get; internal set; }

    /// <summary>Number of samples (as <see cref="Samples"/> yields them).</summary>
    public int SampleCount
    {
        get
        {
            using var _ = _h.Use();
            return (int)Lib.nt_trace_sample_count(_h.Ptr);
        }
    }

    /// <summary>Every thread sample in time order (ties in stream order): the
    /// order and names of <c>nettrace samples</c>.</summary>
    public IEnumerable<Sample> Samples
    {
        get
        {
            using (_h.Use()) { }
            return Enumerate();
        }
    }

    private IEnumerable<Sample> Enumerate()
    {
        for (nuint i = 0; TryRead(i, out Sample s); i++)
            yield return s;
    }

    private bool TryRead(nuint i, out Sample s)
    {
        using var _ = _h.Use();
        if (i >= Lib.nt_trace_sample_count(_h.Ptr))
        {
            s = default;
            return false;
        }
        nt_trace_sample ns = Lib.nt_trace_sample_at(_h.Ptr, i);
        s = new Sample(ns.time_ns, (long)ns.thread_id, Sample.KindOf(ns.type), _names.Stack(ns.stack_index), (long)ns.count);
        return true;
    }

    /// <summary>The sampled threads' ids, in the order they first sampled.</summary>
    public IReadOnlyList<long> Threads
    {
        get
        {
            using var _ = _h.Use();
            int n = (int)Lib.nt_trace_thread_count(_h.Ptr);
            var ids = new long[n];
            for (int i = 0; i < n; i++)
                ids[i] = (long)Lib.nt_trace_thread_id(_h.Ptr, (nuint)i);
            return ids;
        }
    }

    /// <summary>Each sample's weight by time, in ns (the order of <see cref="Samples"/>).</summary>
    public long[] WallNs()
    {
        using var _ = _h.Use();
        var w = new long[(int)Lib.nt_trace_sample_count(_h.Ptr)];
        fixed (long* p = w)
            NetTraceException.Check(Lib.nt_trace_wall_ns(_h.Ptr, p), "wall weights");
        return w;
    }

    /// <summary>The hot methods, as <c>nettrace top</c> counts them.</summary>
    public TopResult Top(TopOptions? options = null)
    {
        nt_top_options o = (options ?? new TopOptions()).ToNative();
        using var _ = _h.Use();
        nt_top* top;
        NetTraceException.Check(Lib.nt_top_build(_h.Ptr, &o, &top), "top");
        try
        {
            return new TopResult(top);
        }
        finally
        {
            Lib.nt_top_free(top);
        }
    }

    /// <summary>Write the samples as a gzipped pprof profile.proto.</summary>
    public void ExportPprof(Stream output, ExportOptions? options = null) => Export(output, options, 0);

    /// <summary>Write the samples as speedscope JSON (one profile per thread).</summary>
    public void ExportSpeedscope(Stream output, ExportOptions? options = null) => Export(output, options, 1);

    /// <summary>Write folded stacks ("root;...;leaf weight\n", merged, sorted) for flamegraph.pl.</summary>
    public void ExportFolded(Stream output, ExportOptions? options = null) => Export(output, options, 2);

    private void Export(Stream output, ExportOptions? options, int format)
    {
        options ??= new ExportOptions();
        byte[]? name = options.Name == null ? null : TimeBound.Utf8Z(options.Name);
        using var _ = _h.Use();
        fixed (byte* np = name)
        {
            nt_export_options o = options.ToNative(np);
            StreamSink sink = StreamSink.Open(output);
            int status = format switch
            {
                0 => Lib.nt_export_pprof(_h.Ptr, &o, StreamSink.Function, sink.User),
                1 => Lib.nt_export_speedscope(_h.Ptr, &o, StreamSink.Function, sink.User),
                _ => Lib.nt_export_folded(_h.Ptr, &o, StreamSink.Function, sink.User),
            };
            sink.Finish(status, format == 0 ? "pprof export" : format == 1 ? "speedscope export" : "folded export");
        }
    }

    internal NativeHandle Handle => _h;

    /// <summary>Release the native trace.</summary>
    public void Dispose() => _h.Dispose();
}
