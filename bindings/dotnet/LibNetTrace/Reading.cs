using System;
using System.IO;
using System.Runtime.InteropServices;
using System.Runtime.ExceptionServices;
using LibNetTrace.Native;

namespace LibNetTrace;

/// <summary>Feeding a whole stream to a parser whose callbacks are a
/// builder's: the one read loop of the package's file and stream entry points.</summary>
internal static unsafe class Reading
{
    internal const int ChunkBytes = 1 << 20;
    private const int ChunkAlign = 64;

    /// <summary>What the read ended with: the parser's status and, when not ok, where and why.</summary>
    internal readonly struct Outcome
    {
        internal readonly int Status;
        internal readonly long Offset;
        internal readonly string Message;
        internal readonly Exception? Inner;
        internal Outcome(int status, long offset, string message, Exception? inner = null)
        {
            Status = status; Offset = offset; Message = message; Inner = inner;
        }
        internal NetTraceException Error() => new(Status, Message, Offset, Inner);
    }

    /// <summary>Read input to its end into parser, then finish it.  An exception
    /// of the input stream propagates after the parser is finished (the builder
    /// still has what was read).</summary>
    internal static Outcome Feed(void* parser, Stream input)
    {
        // Native memory on a cache line, not a pooled byte[]: the kernel's copy
        // into a buffer 16 bytes past a line (where a managed array's data
        // starts) can cost up to twice as much (nt_parser_feed_fd aligns its
        // own buffer for that reason).  Here: HeartRateMonitor's TraceFile.Open
        // 14.9-15.0 -> 14.4-14.6 ms of thread CPU, the two alternating in one
        // process; equal on small traces.  Every stream of the BCL reads into a
        // span directly (Stream's fallback rents an array and copies).
        byte* buf = (byte*)NativeMemory.AlignedAlloc(ChunkBytes, ChunkAlign);
        ExceptionDispatchInfo? ioError = null;
        int status = NetTraceException.Ok;
        try
        {
            var span = new Span<byte>(buf, ChunkBytes);
            while (status == NetTraceException.Ok)
            {
                int n;
                try
                {
                    n = input.Read(span);
                }
                catch (Exception e)
                {
                    ioError = ExceptionDispatchInfo.Capture(e);
                    break;
                }
                if (n <= 0)
                    break;
                status = Lib.nt_parser_feed(parser, buf, (nuint)n);
            }
        }
        finally
        {
            NativeMemory.AlignedFree(buf);
        }
        return Finish(parser, ioError);
    }

    /// <summary>Feed one buffer and finish.</summary>
    internal static Outcome Feed(void* parser, ReadOnlySpan<byte> data)
    {
        fixed (byte* p = data)
            Lib.nt_parser_feed(parser, p, (nuint)data.Length);
        return Finish(parser, null);
    }

    private static Outcome Finish(void* parser, ExceptionDispatchInfo? ioError)
    {
        int status = Lib.nt_parser_finish(parser);
        if (ioError != null)
            return new Outcome(NetTraceException.Io, (long)Lib.nt_parser_offset(parser),
                "reading the input failed at byte " + Lib.nt_parser_offset(parser) + ": " + ioError.SourceException.Message,
                ioError.SourceException);
        if (status == NetTraceException.Ok)
            return new Outcome(status, -1, "");
        return new Outcome(status, (long)Lib.nt_parser_error_offset(parser), Lib.Text(Lib.nt_parser_message(parser)));
    }
}
