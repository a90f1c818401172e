using System;
using LibNetTrace.Native;

namespace LibNetTrace;

/// <summary>How samples weigh: by count, or by time (ns to the same thread's next sample: the wall profile).</summary>
public enum Weight
{
    /// <summary>Each sample counts 1.</summary>
    Samples = 0,
    /// <summary>Each sample weighs the ns to its thread's next sample.</summary>
    Time = 1,
}

/// <summary>Which samples an export or a hot-method table covers.  The defaults cover every sample.</summary>
public class SampleFilter
{
    /// <summary>Only samples taken in managed code.</summary>
    public bool ManagedOnly { get; set; }
    /// <summary>Only this thread's samples.</summary>
    public long? ThreadId { get; set; }
    /// <summary>Only samples at or after this time (trace-clock ns; see <see cref="TimeBound.Parse"/> for "2s"-style times).</summary>
    public long? FromNs { get; set; }
    /// <summary>Only samples before this time (trace-clock ns).</summary>
    public long? ToNs { get; set; }
    /// <summary>By count (the default) or by time.</summary>
    public Weight Weight { get; set; }
    /// <summary>Names carry the methods' parameter lists, so overloads are told apart.</summary>
    public bool Signatures { get; set; }

    /// <summary>The members every options struct that filters samples shares
    /// (nt_export_options, nt_top_options): filter, weight, signatures.</summary>
    internal nt_sample_filter NativeFilter => nt_sample_filter.Of(ManagedOnly, ThreadId, FromNs, ToNs);
    internal int NativeWeight => (int)Weight;
    internal byte NativeSignatures => (byte)(Signatures ? 1 : 0);
}

/// <summary>What a pprof, speedscope or folded export of samples covers.</summary>
public sealed class ExportOptions : SampleFilter
{
    /// <summary>The profile's name (speedscope); null selects "nettrace".</summary>
    public string? Name { get; set; }

    internal unsafe nt_export_options ToNative(byte* name) => new()
    {
        struct_size = Sized.Of<nt_export_options>(),
        filter = NativeFilter,
        weight = NativeWeight,
        name = name,
        signatures = NativeSignatures,
    };
}

/// <summary>How a hot-method table is counted (<c>nettrace top</c>'s options).</summary>
public sealed class TopOptions : SampleFilter
{
    /// <summary>Rows per table; 0 = all.</summary>
    public int Rows { get; set; }
    /// <summary>Sort by inclusive weight instead of exclusive.</summary>
    public bool ByInclusive { get; set; }
    /// <summary>One table per thread, threads in the order they first sampled.</summary>
    public bool ByThread { get; set; }

    internal nt_top_options ToNative()
    {
        if (Rows < 0)
            throw new ArgumentOutOfRangeException(nameof(Rows), "rows is 0 (all) or more");
        return new nt_top_options
        {
            struct_size = Sized.Of<nt_top_options>(),
            rows = (uint)Rows,
            by_inclusive = (byte)(ByInclusive ? 1 : 0),
            by_thread = (byte)(ByThread ? 1 : 0),
            filter = NativeFilter,
            signatures = NativeSignatures,
            weight = NativeWeight,
        };
    }
}

/// <summary>One end of a time window as the tool's --from / --to read it.</summary>
public readonly struct TimeBound
{
    internal readonly nt_time_bound Native;
    private TimeBound(nt_time_bound b) => Native = b;

    /// <summary>An end on the trace clock, in ns.</summary>
    public static TimeBound AtNs(long traceClockNs) => new(new nt_time_bound { set = 1, absolute = 1, ns = traceClockNs });

    /// <summary>"2s", "+1.5ms", "250us" after the trace's start, or "@864741168641" on the
    /// trace clock (nt_time_bound_parse); FormatException for anything else.</summary>
    public static unsafe TimeBound Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        byte[] utf8 = Utf8Z(text);
        nt_time_bound b;
        fixed (byte* p = utf8)
            if (Lib.nt_time_bound_parse(p, &b) == 0)
                throw new FormatException("bad time '" + text + "': give a unit, relative to the trace's start (2s, +1.5ms, 250us, 40ns, 3m), or '@' and trace-clock ns (@864741168641)");
        return new TimeBound(b);
    }

    internal static byte[] Utf8Z(string s)
    {
        byte[] b = new byte[System.Text.Encoding.UTF8.GetByteCount(s) + 1];
        System.Text.Encoding.UTF8.GetBytes(s, 0, s.Length, b, 0);
        return b;
    }
}
