using System;
using System.Collections.Generic;
using System.IO;
using System.Runtime.InteropServices;
using System.Threading;
using LibNetTrace.Native;

namespace LibNetTrace;

/// <summary>A live session's configuration; the defaults profile CPU.</summary>
public sealed class SessionOptions
{
    /// <summary>The profile presets to enable, "NAME[,NAME]" (<see cref="ProfilePresets"/>); "cpu" by default.</summary>
    public string Profiles { get; set; } = "cpu";
    /// <summary>Providers enabled besides (or, with Profiles empty, instead of) the presets'.</summary>
    public IList<Provider> Providers { get; } = new List<Provider>();
    /// <summary>The runtime's buffer for the session in MB; 0 selects 256.</summary>
    public int BufferMb { get; set; }
    /// <summary>Skip the rundown at stop (methods compiled before the session then stay unnamed in a file).</summary>
    public bool NoRundown { get; set; }
    /// <summary>Cap on the stream's bytes; 0 selects 1 GiB.  A continuous profiler has no cap unless set.</summary>
    public long MaxStreamBytes { get; set; }
    /// <summary>How long starting may take (finding the endpoint, the runtime's reply).</summary>
    public TimeSpan StartTimeout { get; set; } = TimeSpan.FromSeconds(30);
    /// <summary>How long a stop may take (the rundown included) before the session is abandoned.</summary>
    public TimeSpan StopTimeout { get; set; } = TimeSpan.FromSeconds(60);

    internal List<Provider> AllProviders()
    {
        var all = new List<Provider>(string.IsNullOrEmpty(Profiles) ? Array.Empty<Provider>() : ProfilePresets.Providers(Profiles));
        all.AddRange(Providers);
        return all;
    }

    internal bool WantsEvents => Profiles.Split(',') is var names
        && Array.Exists(names, n => n is "alloc" or "exceptions" or "contention" or "gc");
}

/// <summary>An EventPipe session to a .NET process over its diagnostics port,
/// the current process's included.  The stream's bytes move only when the caller
/// pumps (<see cref="Pump"/>, <see cref="Stop"/>, or a profiler's windows): no
/// library thread runs and no callback comes from a thread the caller did not give.</summary>
public sealed unsafe class LiveSession : IDisposable
{
    private readonly SessionHandle _h;
    private readonly StreamSink? _sink;
    private readonly SessionOptions _options;
    private OneCall _call;
    private bool _ended;
    private int _final;

    private LiveSession(SessionHandle h, StreamSink? sink, SessionOptions options)
    {
        _h = h;
        _sink = sink;
        _options = options;
    }

    /// <summary>Start a session to pid whose NetTrace bytes go to output as they are pumped.</summary>
    public static LiveSession Start(int pid, Stream output, SessionOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(output);
        StreamSink sink = StreamSink.Open(output);
        try
        {
            return Start(pid, options ?? new SessionOptions(), StreamSink.Function, sink.User, sink);
        }
        catch
        {
            sink.Release();
            throw;
        }
    }

    /// <summary>Start a session to the current process (its own diagnostics port).</summary>
    public static LiveSession StartSelf(Stream output, SessionOptions? options = null) =>
        Start(Environment.ProcessId, output, options);

    internal static LiveSession Start(int pid, SessionOptions options, nint sinkFn, void* sinkUser, StreamSink? sink)
    {
        List<Provider> providers = options.AllProviders();
        if (providers.Count == 0)
            throw new ArgumentException("the session enables no provider", nameof(options));
        var strings = new List<GCHandle>();
        var native = new nt_provider[providers.Count];
        try
        {
            for (int i = 0; i < providers.Count; i++)
            {
                native[i].struct_size = Sized.Of<nt_provider>();
                native[i].name = Pin(strings, providers[i].Name);
                native[i].keywords = providers[i].Keywords;
                native[i].level = (uint)providers[i].Level;
                native[i].arguments = providers[i].Arguments == null ? null : Pin(strings, providers[i].Arguments!);
            }
            fixed (nt_provider* pv = native)
            {
                var cfg = new nt_session_config
                {
                    struct_size = Sized.Of<nt_session_config>(),
                    providers = pv,
                    provider_count = (nuint)native.Length,
                    buffer_mb = (uint)options.BufferMb,
                    no_rundown = (byte)(options.NoRundown ? 1 : 0),
                    max_stream_bytes = (ulong)options.MaxStreamBytes,
                    sink = sinkFn,
                    sink_user = sinkUser,
                    caller_pumps = 1,
                };
                var h = new SessionHandle(Lib.nt_session_new(&cfg, null));
                if (h.IsInvalid)
                    throw new OutOfMemoryException("nt_session_new");
                int st = Lib.nt_session_start(h.Ptr, pid, Deadline(options.StartTimeout));
                if (st != NetTraceException.Ok)
                {
                    string msg = Lib.Text(Lib.nt_session_message(h.Ptr));
                    h.Dispose();
                    throw new NetTraceException(st, "starting a session to process " + pid + ": " + (msg.Length > 0 ? msg : NetTraceException.Describe(st)), -1);
                }
                return new LiveSession(h, sink, options);
            }
        }
        finally
        {
            foreach (GCHandle g in strings)
                g.Free();
        }
    }

    private static byte* Pin(List<GCHandle> pins, string s)
    {
        GCHandle g = GCHandle.Alloc(TimeBound.Utf8Z(s), GCHandleType.Pinned);
        pins.Add(g);
        return (byte*)g.AddrOfPinnedObject();
    }

    internal static long Deadline(TimeSpan t) =>
        t == Timeout.InfiniteTimeSpan ? 0 : Lib.nt_now_ns() + (long)Math.Min(t.TotalMilliseconds * 1e6, long.MaxValue / 2);

    /// <summary>Move what the connection has to the sink, waiting up to wait for
    /// bytes.  False once the stream has ended (<see cref="Stop"/> then returns its status).</summary>
    public bool Pump(TimeSpan wait = default)
    {
        _call.Enter("the session");
        try
        {
            using var _ = _h.Use();
            if (_ended)
                return false;
            if (wait > TimeSpan.Zero)
                Poll.Readable(Lib.nt_session_fd(_h.Ptr), wait);
            byte ended;
            int st = Lib.nt_session_pump(_h.Ptr, &ended);
            _sink?.ThrowIfFailed();
            if (ended != 0)
            {
                _ended = true;
                _final = st;
            }
            return !_ended;
        }
        finally
        {
            _call.Exit();
        }
    }

    /// <summary>Wait up to wait for the connection to have bytes (outside any call's gate).</summary>
    internal void WaitReadable(TimeSpan wait)
    {
        using var _ = _h.Use();
        Poll.Readable(Lib.nt_session_fd(_h.Ptr), wait);
    }

    /// <summary>Bytes passed to the sink so far.</summary>
    public long Bytes
    {
        get
        {
            using var _ = _h.Use();
            return (long)Lib.nt_session_bytes(_h.Ptr);
        }
    }

    /// <summary>Stop the session: the runtime writes its rundown and ends the
    /// stream, which this call pumps to the sink on the calling thread.  Throws
    /// <see cref="NetTraceException"/> unless the stream ended cleanly ("truncated"
    /// when the stop timed out and the session was abandoned).</summary>
    public void Stop()
    {
        _call.Enter("the session");
        try
        {
            using var _ = _h.Use();
            int st = _ended ? _final : Lib.nt_session_stop(_h.Ptr, Deadline(_options.StopTimeout));
            _ended = true;
            _final = st;
            _sink?.ThrowIfFailed();
            if (st != NetTraceException.Ok)
                throw new NetTraceException(st, "stopping the session: " + Lib.Text(Lib.nt_session_message(_h.Ptr)), -1);
        }
        finally
        {
            _call.Exit();
        }
    }

    /// <summary>Abandon the session if running (no rundown) and release it.</summary>
    public void Dispose()
    {
        if (!_h.IsClosed)
        {
            using (var _ = _h.Use())
                Lib.nt_session_cancel(_h.Ptr);
        }
        _h.Dispose();
        _sink?.Release();
    }
}

/// <summary>Waiting for a descriptor to be readable, for the pumps.</summary>
internal static unsafe partial class Poll
{
    private struct PollFd
    {
        public int fd;
        public short events, revents;
    }

    [LibraryImport("libc", EntryPoint = "poll", SetLastError = false)]
    private static partial int poll(PollFd* fds, nuint n, int timeoutMs);

    internal static void Readable(int fd, TimeSpan wait)
    {
        if (fd < 0)
            return;
        var p = new PollFd { fd = fd, events = 1 /* POLLIN */ };
        poll(&p, 1, (int)Math.Min(wait.TotalMilliseconds, int.MaxValue));
    }
}
