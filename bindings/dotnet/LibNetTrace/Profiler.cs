using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;
using LibNetTrace.Native;

namespace LibNetTrace;

/// <summary>One window of a continuous profile: the samples (and, with event
/// profiles, the events) since the previous window, resolved against every
/// method record of the stream so far.  Dispose it when done.</summary>
public sealed class ProfileWindow : IDisposable
{
    /// <summary>When the window began and ended (UTC wall clock of this process).</summary>
    public DateTime StartUtc { get; }
    /// <summary>When the window was taken.</summary>
    public DateTime EndUtc { get; }
    /// <summary>The thread samples of the window (the CPU and wall profiles).</summary>
    public TraceFile Trace { get; }
    /// <summary>The window's event profiles and GCs, when the session asked for them (else null);
    /// its own <see cref="LibNetTrace.Profile.Trace"/> holds no samples (they are in <see cref="Trace"/>).</summary>
    public Profile? Profile { get; }
    /// <summary>"ok", or "limit_exceeded" when more method records came than the window remembers
    /// (the window is still whole; later records are not remembered).</summary>
    public string Status { get; }

    internal ProfileWindow(DateTime start, DateTime end, TraceFile trace, Profile? profile, int status)
    {
        StartUtc = start;
        EndUtc = end;
        Trace = trace;
        Profile = profile;
        Status = NetTraceException.StatusName(status);
    }

    /// <summary>Release the window's trace and profile.</summary>
    public void Dispose()
    {
        Trace.Dispose();
        Profile?.Dispose();
    }
}

/// <summary>What the windows of a <see cref="ContinuousProfiler"/> keep; zero selects the library's default.</summary>
public sealed class WindowOptions
{
    /// <summary>Method records held at most (default 1,048,576).</summary>
    public int MaxRecords { get; set; }
    /// <summary>Bytes the kept method records, their names and the address index may hold (default 64 MiB);
    /// past it, records no sample hit are evicted first.</summary>
    public long RecordBudgetBytes { get; set; }
    /// <summary>The flight recorder: keep the samples of this last stretch of time, for
    /// <see cref="ContinuousProfiler.Cut"/> (zero: no recorder).</summary>
    public TimeSpan RecorderDuration { get; set; }
    /// <summary>... and at most this many bytes of them, oldest dropped first (default 16 MiB with a recorder).</summary>
    public long RecorderBytes { get; set; }
    /// <summary>Samples feed only request windows and the recorder: no continuous window
    /// (<see cref="ContinuousProfiler.TakeWindow"/> then throws "invalid_argument").</summary>
    public bool NoContinuous { get; set; }

    internal nt_trace_window_config ToNative()
    {
        if (MaxRecords < 0 || RecordBudgetBytes < 0 || RecorderBytes < 0 || RecorderDuration < TimeSpan.Zero)
            throw new ArgumentOutOfRangeException(nameof(WindowOptions), "window options are 0 (the default) or more");
        return new nt_trace_window_config
        {
            struct_size = Sized.Of<nt_trace_window_config>(),
            max_records = (uint)MaxRecords,
            record_budget = (ulong)RecordBudgetBytes,
            recorder_ns = (ulong)(RecorderDuration.Ticks * 100),
            recorder_bytes = (ulong)RecorderBytes,
            no_continuous = (byte)(NoContinuous ? 1 : 0),
        };
    }
}

/// <summary>Always-on profiling of a process (or of the current one): a live
/// session whose stream goes straight into a native parser feeding windows of
/// the library, taken every so often as <see cref="ProfileWindow"/>s.  With CPU
/// only, the bytes go from the socket to the parser without entering managed
/// code; event profiles (alloc, exceptions, contention, gc) add a second parser
/// and window, fed the same chunks.  Memory is the stream's method records plus
/// one window, however long it runs.  The stream moves only in this object's
/// calls, on the caller's thread; one call at a time.</summary>
public sealed unsafe class ContinuousProfiler : IDisposable
{
    private LiveSession? _session;
    private readonly ParserHandle _samples;      // feeds the trace window
    private readonly WindowHandle _trace;
    private readonly ParserHandle? _events;      // feeds the profile window (events only), when asked
    private readonly WindowHandle? _profile;
    private GCHandle _self;
    private DateTime _windowStart;
    // The native windows and parsers serve one call at a time: pumping (which
    // runs their callbacks), takes and request windows all hold this gate, so
    // a request may end on any thread while another pumps.
    private readonly object _gate = new();

    private ContinuousProfiler(bool events, WindowOptions w)
    {
        var cfg = w.ToNative();
        var cb = new nt_callbacks { struct_size = Sized.Of<nt_callbacks>() };
        _trace = new WindowHandle(Lib.nt_trace_window_new(&cfg, null));
        Lib.nt_trace_window_callbacks(&cb);
        _samples = new ParserHandle(_trace.IsInvalid ? null : Lib.nt_parser_new(&cb, _trace.Ptr, null, null));
        bool ok = !_samples.IsInvalid;
        if (events && ok)
        {
            _profile = new WindowHandle(Lib.nt_profile_window_new(&cfg, null));
            Lib.nt_profile_window_callbacks(&cb);
            _events = new ParserHandle(_profile.IsInvalid ? null : Lib.nt_parser_new(&cb, _profile.Ptr, null, null));
            ok = !_events.IsInvalid;
        }
        if (!ok)
        {
            Release();
            throw new OutOfMemoryException("nt_trace_window_new / nt_parser_new");
        }
        _windowStart = DateTime.UtcNow;
    }

    /// <summary>Start profiling pid with options' profiles (cpu by default; alloc,
    /// exceptions, contention and gc add the event profiles to each window);
    /// windows bounds what the windows keep (null: the library's defaults).</summary>
    public static ContinuousProfiler Start(int pid, SessionOptions? options = null, WindowOptions? windows = null)
    {
        options ??= new SessionOptions();
        var p = new ContinuousProfiler(options.WantsEvents, windows ?? new WindowOptions());
        try
        {
            if (p._events == null)
                p._session = LiveSession.Start(pid, options, Lib.SinkParser, p._samples.Ptr, null);
            else
            {
                p._self = GCHandle.Alloc(p, GCHandleType.Weak);
                p._session = LiveSession.Start(pid, options, (nint)(delegate* unmanaged<void*, byte*, nuint, int>)&FeedBoth,
                    (void*)GCHandle.ToIntPtr(p._self), null);
            }
            return p;
        }
        catch
        {
            p.Release();
            throw;
        }
    }

    /// <summary>The sink of a session with event profiles: each chunk to both parsers.</summary>
    [UnmanagedCallersOnly]
    private static int FeedBoth(void* user, byte* data, nuint len)
    {
        var self = (ContinuousProfiler)GCHandle.FromIntPtr((nint)user).Target!;
        int a = Lib.nt_parser_feed(self._samples.Ptr, data, len);
        int b = Lib.nt_parser_feed(self._events!.Ptr, data, len);
        return a != NetTraceException.Ok || b != NetTraceException.Ok ? 1 : 0;
    }

    /// <summary>Profile the current process through its own diagnostics port.</summary>
    public static ContinuousProfiler StartSelf(SessionOptions? options = null, WindowOptions? windows = null) =>
        Start(Environment.ProcessId, options, windows);

    /// <summary>The session (bytes so far, stop).</summary>
    public LiveSession Session => _session!;

    /// <summary>Pump the stream into the windows, waiting up to wait for bytes
    /// first; false once the stream has ended.  Safe from any thread.</summary>
    public bool Pump(TimeSpan wait = default)
    {
        if (wait > TimeSpan.Zero)
            Session.WaitReadable(wait);
        lock (_gate)
            return Session.Pump();
    }

    private static void ThrowIfBad(ParserHandle p)
    {
        int ps = Lib.nt_parser_status(p.Ptr);
        if (ps != NetTraceException.Ok)
            throw new NetTraceException(ps, Lib.Text(Lib.nt_parser_message(p.Ptr)), (long)Lib.nt_parser_error_offset(p.Ptr));
    }

    /// <summary>Pump what has arrived, then hand over the window since the previous
    /// take and start the next.  Throws <see cref="NetTraceException"/> when the
    /// stream is bad ("malformed", ... with the offset) or memory ran short.</summary>
    public ProfileWindow TakeWindow()
    {
        lock (_gate)
            return Take();
    }

    private ProfileWindow Take()
    {
        Session.Pump();
        using var _ = _samples.Use();
        using var __ = _trace.Use();
        ThrowIfBad(_samples);
        DateTime start = _windowStart, end = DateTime.UtcNow;
        _windowStart = end;
        void* obj;
        int st = Lib.nt_trace_window_take(_trace.Ptr, &obj);
        if (obj == null)
            throw new NetTraceException(st, "taking a window: " + NetTraceException.Describe(st), -1);
        var trace = new TraceFile(new TraceHandle(obj));
        Profile? prof = null;
        if (_events != null)
        {
            try
            {
                using var ___ = _events.Use();
                using var ____ = _profile!.Use();
                ThrowIfBad(_events);
                int ps = Lib.nt_profile_window_take(_profile.Ptr, &obj);
                if (obj == null)
                    throw new NetTraceException(ps, "taking a window: " + NetTraceException.Describe(ps), -1);
                prof = new Profile(new ProfileHandle(obj));
                st = st != NetTraceException.Ok ? st : ps;
            }
            catch
            {
                trace.Dispose();
                throw;
            }
        }
        return new ProfileWindow(start, end, trace, prof, st);
    }
    // ---- request windows and the flight recorder ---------------------------

    /// <summary>Now on the trace clock of a Linux runtime (CLOCK_MONOTONIC ns): what
    /// request windows and recorder cuts are given, and samples' TimestampNs.</summary>
    public static long NowNs => Lib.nt_now_ns();

    /// <summary>The calling thread's OS id (the ThreadId of its samples).</summary>
    public static long CurrentOsThreadId => Poll.Gettid();

    internal static readonly TimeSpan DefaultSettle = TimeSpan.FromMilliseconds(200);

    /// <summary>Open a window for one request from now: it takes the samples
    /// select picks (every thread by default; a thread set or an ActivityId) until
    /// it is closed, beside the continuous window and other request windows (up to
    /// 4,096 open at once).  Safe from any thread.</summary>
    public RequestWindow OpenRequest(SampleSelection? select = null)
    {
        long from = NowNs;
        ulong id;
        lock (_gate)
        {
            using var _ = _trace.Use();
            using SampleSelection.Pinned pin = (select ?? new SampleSelection()).Pin();
            nt_window_filter f = pin.Filter;
            NetTraceException.Check(Lib.nt_trace_window_open(_trace.Ptr, from, &f, &id), "opening a request window");
        }
        return new RequestWindow(this, id, from);
    }

    internal TraceFile CloseRequest(ulong id, long toNs)
    {
        lock (_gate)
        {
            Session.Pump();
            using var _ = _trace.Use();
            void* t;
            int st = Lib.nt_trace_window_close(_trace.Ptr, id, toNs, &t);
            if (t == null)
                throw new NetTraceException(st, "closing a request window: " + NetTraceException.Describe(st), -1);
            return new TraceFile(new TraceHandle(t));
        }
    }

    internal void DiscardRequest(ulong id)
    {
        lock (_gate)
        {
            if (_trace.IsClosed)
                return;
            using var _ = _trace.Use();
            void* t;
            if (Lib.nt_trace_window_close(_trace.Ptr, id, NowNs, &t) == NetTraceException.Ok && t != null)
                Lib.nt_trace_free(t);
        }
    }

    /// <summary>The flight recorder (<see cref="WindowOptions.RecorderDuration"/>):
    /// the samples of [fromNs, toNs) that select picks, cut out of what it keeps
    /// (it keeps them: cut again at will).  Throws "invalid_argument" without a
    /// recorder; a cut reaching into samples the recorder dropped gives what is left.</summary>
    public TraceFile Cut(long fromNs, long toNs, SampleSelection? select = null)
    {
        lock (_gate)
        {
            Session.Pump();
            using var _ = _trace.Use();
            using SampleSelection.Pinned pin = (select ?? new SampleSelection()).Pin();
            nt_window_filter f = pin.Filter;
            void* t;
            int st = Lib.nt_trace_window_cut(_trace.Ptr, fromNs, toNs, &f, &t);
            if (t == null)
                throw new NetTraceException(st, "cutting the recorder: " + NetTraceException.Describe(st), -1);
            return new TraceFile(new TraceHandle(t));
        }
    }

    /// <summary>What the trace windows hold now and what their bounds did: the agent's own cost.</summary>
    public WindowStats Stats
    {
        get
        {
            lock (_gate)
            {
                using var _ = _trace.Use();
                var st = new nt_trace_window_stats { struct_size = Sized.Of<nt_trace_window_stats>() };
                Lib.nt_trace_window_stats_get(_trace.Ptr, &st);
                return new WindowStats(st);
            }
        }
    }

    /// <summary>The span of the samples the recorder holds now (trace-clock ns), or null when it holds none.</summary>
    public (long FromNs, long ToNs)? RecorderSpan
    {
        get
        {
            lock (_gate)
            {
                using var _ = _trace.Use();
                long from, to;
                return Lib.nt_trace_window_recorder_span(_trace.Ptr, &from, &to) != 0 ? (from, to) : null;
            }
        }
    }

    /// <summary>How often <see cref="WindowsAsync"/> pumps by default.  Each pump
    /// costs the thread a fixed ~70 us (waking up on cold caches, the socket's
    /// syscalls) besides the bytes' own work, and the runtime buffers the stream
    /// meanwhile (256 MB by default), so a second between pumps costs a tenth of
    /// 100 ms's fixed work and delays no window (bench/README.md, ".NET").</summary>
    public static readonly TimeSpan DefaultPumpEvery = TimeSpan.FromSeconds(1);

    /// <summary>A window every interval, on time, pumping the stream meanwhile
    /// (every pumpEvery, <see cref="DefaultPumpEvery"/> by default, and once
    /// more as the window closes) on the awaiting context, until cancelled or
    /// the stream ends.  Each window is the caller's to dispose.</summary>
    public async IAsyncEnumerable<ProfileWindow> WindowsAsync(TimeSpan interval, TimeSpan pumpEvery = default,
        [EnumeratorCancellation] CancellationToken cancel = default)
    {
        if (interval <= TimeSpan.Zero)
            throw new ArgumentOutOfRangeException(nameof(interval), "a window lasts more than zero");
        if (pumpEvery <= TimeSpan.Zero)
            pumpEvery = DefaultPumpEvery;
        while (!cancel.IsCancellationRequested)
        {
            DateTime due = DateTime.UtcNow + interval;
            bool running = true;
            while (running && DateTime.UtcNow < due && !cancel.IsCancellationRequested)
            {
                running = Pump();
                TimeSpan left = due - DateTime.UtcNow;
                if (running && left > TimeSpan.Zero)
                {
                    try
                    {
                        await Task.Delay(left < pumpEvery ? left : pumpEvery, cancel).ConfigureAwait(false);
                    }
                    catch (OperationCanceledException)
                    {
                        yield break;
                    }
                }
            }
            yield return TakeWindow();
            if (!running)
                yield break;
        }
    }

    /// <summary>Stop the session (rundown pumped into the window) and hand over the last window.</summary>
    public ProfileWindow Stop()
    {
        lock (_gate)
        {
            Session.Stop();
            return Take();
        }
    }

    /// <summary>Abandon the session if running and release everything.</summary>
    public void Dispose()
    {
        lock (_gate)
            Release();
    }

    private void Release()
    {
        _session?.Dispose(); // first: the parsers are never fed again
        _samples?.Dispose();
        _events?.Dispose();
        _trace?.Dispose();
        _profile?.Dispose();
        if (_self.IsAllocated)
            _self.Free();
    }
}
