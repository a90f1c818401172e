using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using Xunit;

namespace LibNetTrace.Tests;

/// <summary>Converter against the tool: byte-identical conversions on every corpus trace,
/// a slice with the window's samples, a cut input that still gives what was read.</summary>
public class ConvertTests
{
    public static IEnumerable<object[]> Traces() => Env.Traces();

    /// <summary>What 'nettrace ARGS -o -' writes, whatever its exit status (3: something left out).</summary>
    private static byte[] Tool(params string[] args) => Env.Run(Env.Cli, args.Concat(new[] { "-o", "-" }).ToArray()).Stdout;

    [SkippableTheory]
    [MemberData(nameof(Traces))]
    public void ConversionIsTheTools(string path)
    {
        foreach (int format in new[] { 4, 6 })
        {
            byte[] want = Tool("convert", path, "--to", "v" + format);
            using var got = new MemoryStream();
            try
            {
                Converter.Convert(path, got, new ConvertOptions { Format = format });
            }
            catch (NetTraceException e) when (e.Status == "truncated")
            {
                // the output holds what was read: compared below all the same
            }
            Assert.True(want.AsSpan().SequenceEqual(got.ToArray()), Path.GetFileName(path) + " to V" + format + " differs from the tool's");
        }
    }

    [SkippableFact]
    public void SliceHoldsTheWindowsSamples()
    {
        string path = Env.Corpus("spin-threads.nettrace");
        byte[] data = File.ReadAllBytes(path);
        using TraceFile whole = TraceFile.Open(path);
        long[] all = whole.Samples.Select(s => s.TimestampNs).ToArray();
        long lo = all[all.Length / 4], hi = all[all.Length / 2]; // a window of a quarter of the samples
        using var got = new MemoryStream();
        ConvertResult r = Converter.Convert(data, got, new ConvertOptions { From = TimeBound.AtNs(lo), To = TimeBound.AtNs(hi) });
        Assert.True(r.EventsOutsideWindow > 0 && r.EventsWritten > 0, r.ToString());
        Assert.True(Tool("slice", path, "--from", "@" + lo, "--to", "@" + hi).AsSpan().SequenceEqual(got.ToArray()));
        using TraceFile slice = TraceFile.Parse(got.ToArray());
        long[] want = all.Where(t => t >= lo && t < hi).ToArray();
        Assert.NotEmpty(want);
        Assert.Equal(want, slice.Samples.Select(s => s.TimestampNs).ToArray());
    }

    [SkippableFact]
    public void CutInputThrowsAfterWritingWhatWasRead()
    {
        byte[] data = File.ReadAllBytes(Env.Corpus("spin-threads.nettrace"));
        using var got = new MemoryStream();
        var e = Assert.Throws<NetTraceException>(() => Converter.Convert(data.AsSpan(0, data.Length / 2), got, new ConvertOptions { Format = 6 }));
        Assert.Equal("truncated", e.Status);
        using TraceFile t = TraceFile.Parse(got.ToArray());
        Assert.NotEmpty(t.Samples);
        Assert.Throws<ArgumentOutOfRangeException>(() => Converter.Convert(data, new MemoryStream(), new ConvertOptions { Format = 5 }));
    }
}
