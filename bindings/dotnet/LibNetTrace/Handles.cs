using System;
using System.Runtime.InteropServices;
using System.Threading;
using LibNetTrace.Native;

namespace LibNetTrace;

/// <summary>Every native object the package holds: released once, by Dispose
/// or the finalizer, never while a call on another thread is using it (each
/// call holds a reference for its duration through <see cref="Use"/>).</summary>
internal abstract unsafe class NativeHandle : SafeHandle
{
    protected NativeHandle(void* p) : base(0, true) => SetHandle((nint)p);

    public override bool IsInvalid => handle == 0;

    internal void* Ptr => (void*)handle;

    /// <summary>Keep the object alive until the returned lease is disposed;
    /// ObjectDisposedException once it was disposed.</summary>
    internal Lease Use()
    {
        bool added = false;
        try
        {
            DangerousAddRef(ref added);
        }
        catch (ObjectDisposedException)
        {
            throw new ObjectDisposedException(GetType().Name.Replace("Handle", ""), "used after Dispose");
        }
        return new Lease(this);
    }

    internal readonly struct Lease : IDisposable
    {
        private readonly NativeHandle _h;
        internal Lease(NativeHandle h) => _h = h;
        public void Dispose() => _h.DangerousRelease();
    }

    /// <summary>Hand the pointer over (to another owner): this handle then frees nothing.</summary>
    internal void* Detach()
    {
        void* p = (void*)handle;
        SetHandleAsInvalid();
        return p;
    }
}

internal sealed unsafe class TraceHandle : NativeHandle
{
    internal TraceHandle(void* p) : base(p) { }
    protected override bool ReleaseHandle() { Lib.nt_trace_free((void*)handle); return true; }
}

/// <summary>A trace owned by a profile: freed with the profile, which this handle keeps alive.</summary>
internal sealed unsafe class BorrowedTraceHandle : NativeHandle
{
    private readonly NativeHandle _owner;
    internal BorrowedTraceHandle(void* p, NativeHandle owner) : base(p)
    {
        bool added = false;
        owner.DangerousAddRef(ref added);
        _owner = owner;
    }
    protected override bool ReleaseHandle() { _owner.DangerousRelease(); return true; }
}

internal sealed unsafe class ProfileHandle : NativeHandle
{
    internal ProfileHandle(void* p) : base(p) { }
    protected override bool ReleaseHandle() { Lib.nt_profile_free((void*)handle); return true; }
}

internal sealed unsafe class ParserHandle : NativeHandle
{
    internal ParserHandle(void* p) : base(p) { }

    /// <summary>The handle the parser's callbacks find their managed object by: freed with the parser.</summary>
    internal GCHandle Companion { get; init; }

    protected override bool ReleaseHandle()
    {
        Lib.nt_parser_free((void*)handle);
        if (Companion.IsAllocated)
            Companion.Free();
        return true;
    }
}

internal sealed unsafe class TraceBuilderHandle : NativeHandle
{
    internal TraceBuilderHandle(void* p) : base(p) { }
    protected override bool ReleaseHandle() { Lib.nt_trace_builder_free((void*)handle); return true; }
}

internal sealed unsafe class ProfileBuilderHandle : NativeHandle
{
    internal ProfileBuilderHandle(void* p) : base(p) { }
    protected override bool ReleaseHandle() { Lib.nt_profile_builder_free((void*)handle); return true; }
}

internal sealed unsafe class WindowHandle : NativeHandle
{
    internal WindowHandle(void* p) : base(p) { }
    protected override bool ReleaseHandle() { Lib.nt_trace_window_free((void*)handle); return true; }
}

internal sealed unsafe class SessionHandle : NativeHandle
{
    internal SessionHandle(void* p) : base(p) { }
    protected override bool ReleaseHandle() { Lib.nt_session_free((void*)handle); return true; }
}

/// <summary>A busy flag for objects whose native side allows one call at a time
/// (a parser, a session): a second concurrent call, or a callback re-entering
/// its own parser, gets InvalidOperationException instead of corrupting it.</summary>
internal struct OneCall
{
    private int _busy;

    internal void Enter(string what)
    {
        if (Interlocked.Exchange(ref _busy, 1) != 0)
            throw new InvalidOperationException(what + " is already in a call (from another thread, or from one of its own callbacks): one call at a time");
    }

    internal void Exit() => Volatile.Write(ref _busy, 0);
}
