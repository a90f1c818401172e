using System;
using System.Collections.Generic;
using LibNetTrace.Native;

namespace LibNetTrace;

/// <summary>The trace header (the Trace object of V4/V5, the Trace block of V6).</summary>
public sealed class TraceHeader
{
    /// <summary>4 for NetTrace V4/V5, 6 for V6.</summary>
    public int FormatMajor { get; }
    /// <summary>The V6 minor version; 0 for V4/V5.</summary>
    public int FormatMinor { get; }
    /// <summary>Wall clock (UTC) when the trace started.</summary>
    public DateTime SyncTimeUtc { get; }
    /// <summary>The trace clock's value at <see cref="SyncTimeUtc"/>, in ticks.</summary>
    public long SyncTicks { get; }
    /// <summary>Trace clock ticks per second.</summary>
    public long TicksPerSecond { get; }
    /// <summary>4 or 8: the width of the stack addresses.</summary>
    public int PointerSize { get; }
    /// <summary>The traced process's id.</summary>
    public int ProcessId { get; }
    /// <summary>Its processor count.</summary>
    public int ProcessorCount { get; }
    /// <summary>The sample profiler's period, in ns.</summary>
    public long SamplingIntervalNs { get; }

    internal TraceHeader(in nt_trace_info i)
    {
        FormatMajor = (int)i.format_major;
        FormatMinor = (int)i.format_minor;
        SyncTicks = i.sync_qpc;
        TicksPerSecond = i.qpc_frequency;
        PointerSize = (int)i.pointer_size;
        ProcessId = (int)i.process_id;
        ProcessorCount = (int)i.processor_count;
        SamplingIntervalNs = i.sampling_interval_ns;
        nt_systemtime t = i.sync_time_utc;
        try
        {
            SyncTimeUtc = new DateTime(t.year, t.month, t.day, t.hour, t.minute, t.second, t.milliseconds, DateTimeKind.Utc);
        }
        catch (ArgumentOutOfRangeException)
        {
            SyncTimeUtc = default; // a header whose date is no date: kept as the zero DateTime
        }
    }
}

/// <summary>What a trace's build saw and how well its frames resolved.</summary>
public sealed class TraceStats
{
    /// <summary>How the stream read: "ok", "truncated", ...</summary>
    public string Status { get; }
    /// <summary>Bytes the parser consumed.</summary>
    public long StreamBytes { get; }
    /// <summary>Samples held.</summary>
    public long Samples { get; }
    /// <summary>Frames over all samples.</summary>
    public long Frames { get; }
    /// <summary>Of those, frames a method record names.</summary>
    public long ResolvedFrames { get; }
    /// <summary>Distinct resolved stacks.</summary>
    public long Stacks { get; }
    /// <summary>Sampled threads.</summary>
    public long Threads { get; }
    /// <summary>Lost events the parser detected.</summary>
    public long EventsDropped { get; }
    /// <summary>Bytes the trace holds.</summary>
    public long MemoryBytes { get; }
    /// <summary>Most bytes held while it was built.</summary>
    public long PeakMemoryBytes { get; }

    internal TraceStats(in nt_trace_stats s)
    {
        Status = NetTraceException.StatusName(s.status);
        StreamBytes = (long)s.stream_bytes;
        Samples = (long)s.samples;
        Frames = (long)s.frames;
        ResolvedFrames = (long)s.resolved_frames;
        Stacks = (long)s.stacks;
        Threads = (long)s.threads;
        EventsDropped = (long)s.events_dropped;
        MemoryBytes = (long)s.memory;
        PeakMemoryBytes = (long)s.memory_peak;
    }
}

/// <summary>One method of a hot-method table: by display name (code versions of one method share a row).</summary>
public readonly record struct TopRow(string Name, long Exclusive, long Inclusive);

/// <summary>One hot-method table (all samples, or one thread's).</summary>
public sealed class TopTable
{
    /// <summary>The thread of a per-thread table, else 0.</summary>
    public long ThreadId { get; }
    /// <summary>Samples counted (or ns, by time): the shares' denominator.</summary>
    public long Samples { get; }
    /// <summary>Of those, samples with an empty stack.</summary>
    public long Empty { get; }
    /// <summary>The rows, hottest first.</summary>
    public IReadOnlyList<TopRow> Rows { get; }

    internal unsafe TopTable(in nt_top_table t)
    {
        ThreadId = (long)t.thread_id;
        Samples = (long)t.samples;
        Empty = (long)t.empty;
        var rows = new TopRow[(int)t.row_count];
        for (int i = 0; i < rows.Length; i++)
            rows[i] = new TopRow(Lib.Text(t.rows[i].name), (long)t.rows[i].exclusive, (long)t.rows[i].inclusive);
        Rows = rows;
    }
}

/// <summary>The hot-method tables of a trace: one, or one per thread.</summary>
public sealed class TopResult
{
    /// <summary>The tables.</summary>
    public IReadOnlyList<TopTable> Tables { get; }

    internal unsafe TopResult(nt_top* top)
    {
        var tables = new TopTable[(int)top->table_count];
        for (int i = 0; i < tables.Length; i++)
            tables[i] = new TopTable(top->tables[i]);
        Tables = tables;
    }
}
