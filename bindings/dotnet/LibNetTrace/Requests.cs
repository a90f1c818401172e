using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using LibNetTrace.Native;

namespace LibNetTrace;

/// <summary>Which samples a request window or a recorder cut takes: every
/// thread by default, or a set of OS threads, or one ActivityId.</summary>
public sealed class SampleSelection
{
    /// <summary>Only these OS thread ids (<see cref="ContinuousProfiler.CurrentOsThreadId"/>); null or empty = every thread.</summary>
    public IReadOnlyList<long>? ThreadIds { get; init; }
    /// <summary>Only samples whose event carries this ActivityId.</summary>
    public Guid? ActivityId { get; init; }
    /// <summary>Only samples whose V6 label list carries this TraceId (OpenTelemetry's, as the runtime records it).</summary>
    public System.Diagnostics.ActivityTraceId? TraceId { get; init; }
    /// <summary>Only samples whose V6 label list carries this SpanId.</summary>
    public System.Diagnostics.ActivitySpanId? SpanId { get; init; }

    /// <summary>The native filter, its thread array pinned until the result is disposed.</summary>
    internal unsafe Pinned Pin()
    {
        ulong[] ids = ThreadIds is { Count: > 0 } t ? new ulong[t.Count] : Array.Empty<ulong>();
        for (int i = 0; i < ids.Length; i++)
            ids[i] = (ulong)ThreadIds![i];
        var pin = GCHandle.Alloc(ids, GCHandleType.Pinned);
        var f = new nt_window_filter
        {
            struct_size = Sized.Of<nt_window_filter>(),
            thread_ids = ids.Length > 0 ? (ulong*)pin.AddrOfPinnedObject() : null,
            thread_count = (nuint)ids.Length,
        };
        if (ActivityId is Guid g)
        {
            f.has_activity = 1;
            g.TryWriteBytes(new Span<byte>(f.activity_id, 16));
        }
        if (TraceId is System.Diagnostics.ActivityTraceId tid)
        {
            f.has_trace_id = 1;
            tid.CopyTo(new Span<byte>(f.trace_id, 16));
        }
        if (SpanId is System.Diagnostics.ActivitySpanId sid)
        {
            f.has_span_id = 1;
            sid.CopyTo(new Span<byte>(f.span_id, 8));
        }
        return new Pinned(pin, f);
    }

    internal readonly struct Pinned : IDisposable
    {
        private readonly GCHandle _pin;
        internal readonly nt_window_filter Filter;
        internal Pinned(GCHandle pin, nt_window_filter f) { _pin = pin; Filter = f; }
        public void Dispose() => _pin.Free();
    }
}

/// <summary>What a profiler's trace windows hold now and what their bounds did
/// (<see cref="ContinuousProfiler.Stats"/>, nt_trace_window_stats).</summary>
public sealed class WindowStats
{
    internal WindowStats(in nt_trace_window_stats s)
    {
        MemoryBytes = (long)s.memory;
        PeakMemoryBytes = (long)s.memory_peak;
        Records = (long)s.records.entries;
        RecordBytes = (long)(s.records.bytes + s.strings.bytes + s.address_index.bytes);
        RecordBudgetBytes = (long)s.record_budget;
        RecordsSeen = (long)s.records_seen;
        RecordsRetired = (long)s.records_retired;
        RecordsEvicted = (long)s.records_evicted;
        RecordsEvictedSampled = (long)s.records_evicted_sampled;
        RecorderSamples = (long)s.recorder.entries;
        Windows = (long)s.windows;
        OpenWindows = (long)s.open_windows;
        EventsDropped = (long)s.events_dropped;
    }

    /// <summary>Bytes held now, everything included.</summary>
    public long MemoryBytes { get; }
    /// <summary>The most bytes ever held.</summary>
    public long PeakMemoryBytes { get; }
    /// <summary>Method records kept (one code extent each).</summary>
    public long Records { get; }
    /// <summary>Their bytes with their names and the address index.</summary>
    public long RecordBytes { get; }
    /// <summary>Bytes the records may hold (<see cref="WindowOptions.RecordBudgetBytes"/>).</summary>
    public long RecordBudgetBytes { get; }
    /// <summary>Method records the stream delivered.</summary>
    public long RecordsSeen { get; }
    /// <summary>Records dropped because their code was unloaded.</summary>
    public long RecordsRetired { get; }
    /// <summary>Records dropped by the budget: a frame of theirs is then unnamed.</summary>
    public long RecordsEvicted { get; }
    /// <summary>Of those, records a sample had hit.</summary>
    public long RecordsEvictedSampled { get; }
    /// <summary>Samples the flight recorder holds.</summary>
    public long RecorderSamples { get; }
    /// <summary>Traces handed out (windows taken, requests closed, cuts).</summary>
    public long Windows { get; }
    /// <summary>Request windows open now.</summary>
    public long OpenWindows { get; }
    /// <summary>Events the stream's sequence points reported lost, all windows.</summary>
    public long EventsDropped { get; }
}

/// <summary>A window open for one request (<see cref="ContinuousProfiler.OpenRequest"/>):
/// it takes the samples its selection picks from its opening until
/// <see cref="Close"/>.  Dispose without closing discards it.</summary>
public sealed class RequestWindow : IDisposable
{
    private readonly ContinuousProfiler _owner;
    private readonly ulong _id;
    private int _closed;

    internal RequestWindow(ContinuousProfiler owner, ulong id, long fromNs)
    {
        _owner = owner;
        _id = id;
        FromNs = fromNs;
    }

    /// <summary>When it opened, trace-clock ns.</summary>
    public long FromNs { get; }

    /// <summary>Close at now and hand over its samples as a trace (the caller's to
    /// dispose).  The runtime hands samples over in batches, so the stream is
    /// pumped for settle first (default 200 ms): samples taken before now but not
    /// yet delivered would be missing otherwise.</summary>
    public TraceFile Close(TimeSpan? settle = null)
    {
        long to = ContinuousProfiler.NowNs;
        DateTime until = DateTime.UtcNow + (settle ?? ContinuousProfiler.DefaultSettle);
        while (DateTime.UtcNow < until && _owner.Pump(TimeSpan.FromMilliseconds(20)))
        {
        }
        return Finish(to);
    }

    /// <summary><see cref="Close"/>, settling on the awaiting context.</summary>
    public async Task<TraceFile> CloseAsync(TimeSpan? settle = null, CancellationToken cancel = default)
    {
        long to = ContinuousProfiler.NowNs;
        DateTime until = DateTime.UtcNow + (settle ?? ContinuousProfiler.DefaultSettle);
        while (DateTime.UtcNow < until && _owner.Pump())
            await Task.Delay(TimeSpan.FromMilliseconds(20), cancel).ConfigureAwait(false);
        return Finish(to);
    }

    private TraceFile Finish(long toNs)
    {
        if (Interlocked.Exchange(ref _closed, 1) != 0)
            throw new InvalidOperationException("the request window is already closed");
        return _owner.CloseRequest(_id, toNs);
    }

    /// <summary>Discard the window if it was not closed.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _closed, 1) == 0)
            _owner.DiscardRequest(_id);
    }
}
