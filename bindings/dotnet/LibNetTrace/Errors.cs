using System;
using LibNetTrace.Native;

namespace LibNetTrace;

/// <summary>A failure of the library: <see cref="Status"/> is the status's
/// stable short name ("not_nettrace", "truncated", "malformed", "timeout",
/// ...), <see cref="Offset"/> the byte offset in the stream it refers to (-1
/// when the failure is not about a place in a stream).</summary>
public class NetTraceException : Exception
{
    /// <summary>The status's short name, as <c>nt_status_name</c> gives it.</summary>
    public string Status { get; }

    /// <summary>The status's number (<c>nt_status</c>; stable).</summary>
    public int Code { get; }

    /// <summary>Byte offset in the stream the failure refers to, or -1.</summary>
    public long Offset { get; }

    /// <summary>What was read before the failure, when the stream's header was
    /// read (a truncated or damaged file): the caller owns and disposes it.</summary>
    public TraceFile? PartialTrace { get; internal set; }

    internal NetTraceException(int code, string message, long offset, Exception? inner = null)
        : base(message, inner)
    {
        Code = code;
        Status = StatusName(code);
        Offset = offset;
    }

    internal static unsafe string StatusName(int code) => Lib.Text(Lib.nt_status_name(code));

    internal static unsafe string Describe(int code) => Lib.Text(Lib.nt_status_describe(code));

    /// <summary>Throws for any status but ok, with the library's description.</summary>
    internal static void Check(int code, string what)
    {
        if (code != Ok)
            throw new NetTraceException(code, what + ": " + Describe(code), -1);
    }

    internal const int Ok = 0, Truncated = 5, Stopped = 8, InvalidArg = 9, Io = 10, Timeout = 22, Cancelled = 23, BadState = 26;
}
