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

    internal nt_trace_window_config ToNative()
    {
        if (MaxRecords < 0)
            throw new ArgumentOutOfRangeException(nameof(MaxRecords), "0 (the default) or more");
        return new nt_trace_window_config { struct_size = Sized.Of<nt_trace_window_config>(), max_records = (uint)MaxRecords };
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
    /// <summary>A window every interval, pumping the stream meanwhile (every
    /// pumpEvery, 50 ms by default) on the awaiting context, until cancelled or
    /// the stream ends.  Each window is the caller's to dispose.</summary>
    public async IAsyncEnumerable<ProfileWindow> WindowsAsync(TimeSpan interval, TimeSpan pumpEvery = default,
        [EnumeratorCancellation] CancellationToken cancel = default)
    {
        if (interval <= TimeSpan.Zero)
            throw new ArgumentOutOfRangeException(nameof(interval), "a window lasts more than zero");
        if (pumpEvery <= TimeSpan.Zero)
            pumpEvery = TimeSpan.FromMilliseconds(50);
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
