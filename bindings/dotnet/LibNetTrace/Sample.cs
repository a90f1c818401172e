using System.Collections.Generic;

namespace LibNetTrace;

/// <summary>What a thread was doing when it was sampled (the sample profiler's type).</summary>
public enum SampleKind
{
    /// <summary>Neither managed nor external (an error sample, or a type the runtime did not document).</summary>
    Other = 0,
    /// <summary>Outside managed code: native, blocked or waiting.</summary>
    External = 1,
    /// <summary>Running managed code.</summary>
    Managed = 2,
}

/// <summary>One thread sample, as one line of <c>nettrace samples</c>.</summary>
public readonly struct Sample
{
    /// <summary>The sample's time in ns of the trace clock.</summary>
    public long TimestampNs { get; }
    /// <summary>The sampled thread's OS id.</summary>
    public long ThreadId { get; }
    /// <summary>Managed, external or other.</summary>
    public SampleKind Kind { get; }
    /// <summary>The frames, root first, each "Assembly!Type.Method" or "0x&lt;hex ip&gt;"
    /// (the names <c>nettrace samples</c> prints); samples on one stack share one list.</summary>
    public IReadOnlyList<string> Frames { get; }
    /// <summary>Samples this one stands for (1 unless the trace counted samples).</summary>
    public long Count { get; }

    internal Sample(long timestampNs, long threadId, SampleKind kind, IReadOnlyList<string> frames, long count)
    {
        TimestampNs = timestampNs;
        ThreadId = threadId;
        Kind = kind;
        Frames = frames;
        Count = count;
    }

    /// <summary>The kind of an nt_sample_type value.</summary>
    internal static SampleKind KindOf(uint type) =>
        type == 2 ? SampleKind.Managed : type == 1 ? SampleKind.External : SampleKind.Other;
}
