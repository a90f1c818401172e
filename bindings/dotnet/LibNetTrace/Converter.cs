using System;
using System.IO;
using LibNetTrace.Native;

namespace LibNetTrace;

/// <summary>What <see cref="Converter"/> writes.  The defaults convert the whole trace into its own format version.</summary>
public sealed class ConvertOptions
{
    /// <summary>4 (NetTrace V4/V5) or 6; 0: the input's own.</summary>
    public int Format { get; init; }

    /// <summary>Uncompressed event headers.</summary>
    public bool Uncompressed { get; init; }

    /// <summary>A slice: only the events at or after this time (and every method, module and assembly record).</summary>
    public TimeBound? From { get; init; }

    /// <summary>A slice: only the events before this time.</summary>
    public TimeBound? To { get; init; }
}

/// <summary>The counts of a conversion (nt_convert_stats).</summary>
public sealed record ConvertResult(ulong EventsWritten, ulong EventsWithoutMetadata, ulong FieldlessMetadata,
    ulong MetadataFlushes, ulong EventsOutsideWindow, ulong RecordsOutsideWindow, ulong InputBytes, ulong OutputBytes);

/// <summary>A trace written again as NetTrace V4/V5 or V6, whole or as a time slice, by the library's
/// <c>nt_convert</c> (what carries over: nettrace_convert.h).  A damaged or cut input still gives the
/// output a complete trace of what was read before the damage, then throws <see cref="NetTraceException"/>
/// with the input's status and byte offset.</summary>
public static unsafe class Converter
{
    /// <summary>Convert the trace at path into output.</summary>
    public static ConvertResult Convert(string path, Stream output, ConvertOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(path);
        using var file = File.OpenHandle(path, FileMode.Open, FileAccess.Read);
        bool added = false;
        file.DangerousAddRef(ref added);
        try
        {
            // On Linux and macOS a SafeFileHandle holds the file descriptor itself.
            int fd = (int)file.DangerousGetHandle();
            return Run(options, output, fd, null, 0);
        }
        finally
        {
            if (added)
                file.DangerousRelease();
        }
    }

    /// <summary>Convert a trace in memory into output.</summary>
    public static ConvertResult Convert(ReadOnlySpan<byte> trace, Stream output, ConvertOptions? options = null)
    {
        byte empty = 0;
        fixed (byte* p = trace)
            return Run(options, output, -1, p == null ? &empty : p, (nuint)trace.Length);
    }

    /// <summary>nt_convert over fd when data is null, else nt_convert_bytes over data.</summary>
    private static ConvertResult Run(ConvertOptions? options, Stream output, int fd, byte* data, nuint len)
    {
        ArgumentNullException.ThrowIfNull(output);
        options ??= new ConvertOptions();
        if (options.Format is not (0 or 4 or 6))
            throw new ArgumentOutOfRangeException(nameof(options), "Format is 0, 4 or 6, not " + options.Format);
        var o = new nt_convert_options
        {
            struct_size = Sized.Of<nt_convert_options>(),
            format = (uint)options.Format,
            uncompressed = (byte)(options.Uncompressed ? 1 : 0),
            from = options.From?.Native ?? default,
            to = options.To?.Native ?? default,
        };
        var st = new nt_convert_stats { struct_size = Sized.Of<nt_convert_stats>() };
        StreamSink sink = StreamSink.Open(output);
        int status;
        try
        {
            status = data == null
                ? Lib.nt_convert(fd, &o, StreamSink.Function, sink.User, &st)
                : Lib.nt_convert_bytes(data, len, &o, StreamSink.Function, sink.User, &st);
        }
        finally
        {
            sink.Release();
        }
        sink.ThrowIfFailed();
        if (status != NetTraceException.Ok)
            throw new NetTraceException(status, "convert: " + Lib.Text(st.message), st.output_failed != 0 ? -1 : (long)st.error_offset);
        return new ConvertResult(st.events_written, st.events_without_metadata, st.fieldless_metadata, st.metadata_flushes,
            st.events_outside_window, st.records_outside_window, st.input_bytes, st.output_bytes);
    }
}
