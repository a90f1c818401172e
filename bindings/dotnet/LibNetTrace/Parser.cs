using System;
using System.Runtime.ExceptionServices;
using System.Runtime.InteropServices;
using LibNetTrace.Native;

namespace LibNetTrace;

/// <summary>Called with each event; the event and everything it points to is valid only during the call.</summary>
public delegate void EventCallback(in TraceEvent ev);

/// <summary>Called with each thread sample as the parser reads it (unresolved addresses).</summary>
public delegate void SampleCallback(in RawSample sample);

/// <summary>What a push parser does with the stream.</summary>
public sealed class ParserOptions
{
    /// <summary>Build a resolved trace of the stream, handed over by <see cref="Parser.Finish"/>.</summary>
    public bool KeepTrace { get; set; }
    /// <summary>Called with every event (decoded fields on demand: <see cref="TraceEvent.Fields"/>).</summary>
    public EventCallback? OnEvent { get; set; }
    /// <summary>Called with every thread sample.</summary>
    public SampleCallback? OnSample { get; set; }
}

/// <summary>The push parser for bytes the caller already has: <see cref="Feed"/>
/// any chunks in order, then <see cref="Finish"/>.  The callbacks run on the
/// thread that calls Feed, inside the call; an exception one throws stops the
/// parse and comes out of that Feed as it was thrown.  One call at a time: a
/// second thread's Feed (or a callback's) gets InvalidOperationException.</summary>
public sealed unsafe class Parser : IDisposable
{
    private readonly ParserHandle _h;
    private readonly TraceBuilderHandle? _builder;
    private readonly ParserOptions _options;
    private readonly GCHandle _self; // freed with the native parser (ParserHandle), never while a Feed runs
    private nt_callbacks _chained; // the builder's callbacks, called before the caller's
    private ExceptionDispatchInfo? _error;
    private OneCall _call;
    private bool _finished;

    /// <summary>A parser with these callbacks (null: none, no trace kept).</summary>
    public Parser(ParserOptions? options = null)
    {
        _options = options ?? new ParserOptions();
        var cb = new nt_callbacks { struct_size = Sized.Of<nt_callbacks>() };
        if (_options.KeepTrace)
        {
            _builder = new TraceBuilderHandle(Lib.nt_trace_builder_new(null));
            if (_builder.IsInvalid)
                throw new OutOfMemoryException("nt_trace_builder_new");
            Lib.nt_trace_builder_callbacks(&cb);
            _chained = cb;
        }
        bool managed = _options.OnEvent != null || _options.OnSample != null;
        if (managed && _builder != null)
        {
            // One user pointer serves every callback: the builder's own ones are
            // then reached through forwarders that hand them the builder.
            cb.trace = cb.trace == 0 ? 0 : (nint)(delegate* unmanaged<void*, void*, int>)&ForwardTrace;
            cb.metadata = cb.metadata == 0 ? 0 : (nint)(delegate* unmanaged<void*, void*, int>)&ForwardMetadata;
            cb.stack = cb.stack == 0 ? 0 : (nint)(delegate* unmanaged<void*, void*, int>)&ForwardStack;
            cb.method = cb.method == 0 ? 0 : (nint)(delegate* unmanaged<void*, void*, int>)&ForwardMethod;
            cb.module = cb.module == 0 ? 0 : (nint)(delegate* unmanaged<void*, void*, int>)&ForwardModule;
            cb.assembly = cb.assembly == 0 ? 0 : (nint)(delegate* unmanaged<void*, void*, int>)&ForwardAssembly;
            cb.sequence_point = cb.sequence_point == 0 ? 0 : (nint)(delegate* unmanaged<void*, void*, int>)&ForwardSequencePoint;
        }
        if (_options.OnEvent != null)
            cb.@event = (nint)(delegate* unmanaged<void*, nt_event*, int>)&OnEventEntry;
        else if (managed)
            cb.@event = cb.@event == 0 ? 0 : (nint)(delegate* unmanaged<void*, void*, int>)&ForwardEvent;
        if (_options.OnSample != null)
            cb.sample = (nint)(delegate* unmanaged<void*, nt_sample*, int>)&OnSampleEntry;
        else if (managed)
            cb.sample = cb.sample == 0 ? 0 : (nint)(delegate* unmanaged<void*, void*, int>)&ForwardSample;
        _self = GCHandle.Alloc(this, GCHandleType.Weak);
        void* user = managed ? (void*)GCHandle.ToIntPtr(_self) : (_builder != null ? _builder.Ptr : null);
        _h = new ParserHandle(Lib.nt_parser_new(&cb, user, null, null)) { Companion = _self };
        if (_h.IsInvalid)
        {
            _self.Free();
            _builder?.Dispose();
            throw new OutOfMemoryException("nt_parser_new");
        }
        // Method, module and assembly records reach only the builder (never a
        // managed callback), which converts just the names it keeps.
        if (_builder != null)
            Lib.nt_parser_set_lazy_names(_h.Ptr, 1);
    }

    private static int Forward(void* user, nint fn, void* arg)
    {
        var self = (Parser)GCHandle.FromIntPtr((nint)user).Target!;
        return ((delegate* unmanaged<void*, void*, int>)fn)(self._builder!.Ptr, arg);
    }

    private static ref nt_callbacks Chained(void* user) => ref ((Parser)GCHandle.FromIntPtr((nint)user).Target!)._chained;

    [UnmanagedCallersOnly] private static int ForwardTrace(void* u, void* a) => Forward(u, Chained(u).trace, a);
    [UnmanagedCallersOnly] private static int ForwardMetadata(void* u, void* a) => Forward(u, Chained(u).metadata, a);
    [UnmanagedCallersOnly] private static int ForwardStack(void* u, void* a) => Forward(u, Chained(u).stack, a);
    [UnmanagedCallersOnly] private static int ForwardMethod(void* u, void* a) => Forward(u, Chained(u).method, a);
    [UnmanagedCallersOnly] private static int ForwardModule(void* u, void* a) => Forward(u, Chained(u).module, a);
    [UnmanagedCallersOnly] private static int ForwardAssembly(void* u, void* a) => Forward(u, Chained(u).assembly, a);
    [UnmanagedCallersOnly] private static int ForwardSequencePoint(void* u, void* a) => Forward(u, Chained(u).sequence_point, a);
    [UnmanagedCallersOnly] private static int ForwardEvent(void* u, void* a) => Forward(u, Chained(u).@event, a);
    [UnmanagedCallersOnly] private static int ForwardSample(void* u, void* a) => Forward(u, Chained(u).sample, a);

    [UnmanagedCallersOnly]
    private static int OnEventEntry(void* user, nt_event* ev)
    {
        var self = (Parser)GCHandle.FromIntPtr((nint)user).Target!;
        if (self._chained.@event != 0)
        {
            int rc = ((delegate* unmanaged<void*, nt_event*, int>)self._chained.@event)(self._builder!.Ptr, ev);
            if (rc != 0)
                return rc;
        }
        try
        {
            self._options.OnEvent?.Invoke(new TraceEvent(ev, self._h.Ptr));
            return 0;
        }
        catch (Exception e)
        {
            self._error = ExceptionDispatchInfo.Capture(e);
            return 1;
        }
    }

    [UnmanagedCallersOnly]
    private static int OnSampleEntry(void* user, nt_sample* s)
    {
        var self = (Parser)GCHandle.FromIntPtr((nint)user).Target!;
        if (self._chained.sample != 0)
        {
            int rc = ((delegate* unmanaged<void*, nt_sample*, int>)self._chained.sample)(self._builder!.Ptr, s);
            if (rc != 0)
                return rc;
        }
        try
        {
            self._options.OnSample?.Invoke(new RawSample(s));
            return 0;
        }
        catch (Exception e)
        {
            self._error = ExceptionDispatchInfo.Capture(e);
            return 1;
        }
    }

    /// <summary>Feed the next bytes of the stream (any chunking).  Throws what a
    /// callback threw, or <see cref="NetTraceException"/> once the stream is bad
    /// (the error is sticky: every later Feed throws it again).</summary>
    public void Feed(ReadOnlySpan<byte> data)
    {
        _call.Enter("the parser");
        try
        {
            using var _ = _h.Use();
            if (_finished)
                throw new InvalidOperationException("the parser is finished");
            int status;
            fixed (byte* p = data)
                status = Lib.nt_parser_feed(_h.Ptr, p, (nuint)data.Length);
            ThrowIfFailed(status);
        }
        finally
        {
            _call.Exit();
        }
    }

    private void ThrowIfFailed(int status)
    {
        if (_error != null)
        {
            ExceptionDispatchInfo e = _error;
            _error = null;
            e.Throw();
        }
        if (status != NetTraceException.Ok)
            throw new NetTraceException(status, Lib.Text(Lib.nt_parser_message(_h.Ptr)), (long)Lib.nt_parser_error_offset(_h.Ptr));
    }

    /// <summary>Declare the end of the stream.  Returns the trace with KeepTrace
    /// (the caller owns it), else null; throws <see cref="NetTraceException"/> for
    /// a stream that ended early or was bad, with the trace of what was read
    /// before in <see cref="NetTraceException.PartialTrace"/> under KeepTrace.</summary>
    public TraceFile? Finish()
    {
        _call.Enter("the parser");
        try
        {
            using var _ = _h.Use();
            if (_finished)
                throw new InvalidOperationException("the parser is finished");
            _finished = true;
            int status = Lib.nt_parser_finish(_h.Ptr);
            var outcome = status == NetTraceException.Ok ? new Reading.Outcome(0, -1, "")
                : new Reading.Outcome(status, (long)Lib.nt_parser_error_offset(_h.Ptr), Lib.Text(Lib.nt_parser_message(_h.Ptr)));
            if (_builder == null)
            {
                ThrowIfFailed(status);
                return null;
            }
            void* t;
            Lib.nt_trace_builder_finish(_builder.Detach(), _h.Ptr, status, &t);
            return TraceFile.Deliver(t == null ? null : new TraceFile(new TraceHandle(t)), outcome, false);
        }
        finally
        {
            _call.Exit();
        }
    }

    /// <summary>Bytes consumed so far.</summary>
    public long Offset
    {
        get
        {
            using var _ = _h.Use();
            return (long)Lib.nt_parser_offset(_h.Ptr);
        }
    }

    /// <summary>The trace header, or null before it was read.</summary>
    public TraceHeader? Header
    {
        get
        {
            using var _ = _h.Use();
            nt_trace_info* i = Lib.nt_parser_trace_info(_h.Ptr);
            return i == null ? null : new TraceHeader(*i);
        }
    }

    /// <summary>Release the parser (and the trace it was building).</summary>
    public void Dispose()
    {
        _h.Dispose();
        _builder?.Dispose();
    }
}
