using System;
using System.IO;
using System.Runtime.ExceptionServices;
using System.Runtime.InteropServices;
using LibNetTrace.Native;

namespace LibNetTrace;

/// <summary>The library's byte sink (nt_sink_fn) writing to a .NET Stream, on
/// the calling thread.  An exception the stream throws stops the export and is
/// rethrown, as it was, from the call that started it.</summary>
internal sealed unsafe class StreamSink
{
    private readonly Stream _stream;
    private ExceptionDispatchInfo? _error;

    private StreamSink(Stream stream) => _stream = stream;

    internal static nint Function => (nint)(delegate* unmanaged<void*, byte*, nuint, int>)&Write;

    [UnmanagedCallersOnly]
    private static int Write(void* user, byte* data, nuint len)
    {
        var self = (StreamSink)GCHandle.FromIntPtr((nint)user).Target!;
        try
        {
            while (len > 0)
            {
                int n = len > int.MaxValue ? int.MaxValue : (int)len;
                self._stream.Write(new ReadOnlySpan<byte>(data, n));
                data += n;
                len -= (nuint)n;
            }
            return 0;
        }
        catch (Exception e)
        {
            self._error = ExceptionDispatchInfo.Capture(e);
            return 1;
        }
    }

    /// <summary>A sink for one export into stream: pass <see cref="Function"/> and
    /// <see cref="User"/> to the C call, then <see cref="Finish"/> its status.</summary>
    internal static StreamSink Open(Stream stream)
    {
        ArgumentNullException.ThrowIfNull(stream);
        var sink = new StreamSink(stream);
        sink._gc = GCHandle.Alloc(sink);
        return sink;
    }

    private GCHandle _gc;

    internal void* User => (void*)GCHandle.ToIntPtr(_gc);

    /// <summary>Release the sink; rethrow the stream's exception, else throw for a failed status.</summary>
    internal void Finish(int status, string what)
    {
        Release();
        ThrowIfFailed();
        NetTraceException.Check(status, what);
    }

    internal void Release()
    {
        if (_gc.IsAllocated)
            _gc.Free();
    }

    /// <summary>Rethrow (once) what the stream threw.</summary>
    internal void ThrowIfFailed()
    {
        ExceptionDispatchInfo? e = _error;
        _error = null;
        e?.Throw();
    }
}
