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
