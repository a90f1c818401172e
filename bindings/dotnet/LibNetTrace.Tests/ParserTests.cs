using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Text.Json;
using Xunit;

namespace LibNetTrace.Tests;

/// <summary>The push parser, decoded events and failures with status names and offsets.</summary>
public class ParserTests
{
    private static List<string> Lines(TraceFile t) =>
        t.Samples.Select(s => s.TimestampNs + " " + s.ThreadId + " " + s.Kind + " " + string.Join(';', s.Frames)).ToList();

    [SkippableFact]
    public void FeedingAnyChunkingGivesTheFilesTrace()
    {
        string path = Env.Corpus("call-tree.nettrace");
        byte[] data = File.ReadAllBytes(path);
        List<string> whole;
        using (TraceFile t = TraceFile.Open(path))
            whole = Lines(t);
        Assert.NotEmpty(whole);
        foreach (int chunk in new[] { 1, 7, 4096, data.Length })
        {
            long samples = 0;
            using var p = new Parser(new ParserOptions { KeepTrace = true, OnSample = (in RawSample s) => samples++ });
            for (int at = 0; at < data.Length; at += chunk)
                p.Feed(data.AsSpan(at, Math.Min(chunk, data.Length - at)));
            using TraceFile t = p.Finish()!;
            Assert.Equal(whole, Lines(t));
            Assert.Equal(whole.Count, samples);
        }
        using (TraceFile t = TraceFile.Parse(data))
            Assert.Equal(whole, Lines(t));
        using (TraceFile t = TraceFile.Open(new MemoryStream(data)))
            Assert.Equal(whole, Lines(t));
    }

    [SkippableFact]
    public void EventsCarryNamesAndDecodedFields()
    {
        string path = Env.Corpus("event-fields.nettrace");
        using JsonDocument info = JsonDocument.Parse(Env.CliOut("info", "--json", path));
        long events = 0, decoded = 0, gcStarts = 0;
        var names = new HashSet<string>();
        using var p = new Parser(new ParserOptions
        {
            OnEvent = (in TraceEvent ev) =>
            {
                events++;
                names.Add(ev.Name);
                var fields = ev.Fields;
                foreach (Field f in fields)
                    decoded++;
                Assert.Equal("ok", fields.Status);
                if (ev.Name.StartsWith("GCStart") && ev.TryGetField("Count", out Field count))
                {
                    Assert.Equal(FieldKind.UInt, count.Kind);
                    Assert.True(count.UInt64 > 0);
                    gcStarts++;
                }
            },
        });
        p.Feed(File.ReadAllBytes(path));
        Assert.Null(p.Finish());
        Assert.Equal(info.RootElement.GetProperty("events").GetInt64(), events);
        Assert.True(decoded > events, "decoded " + decoded + " values of " + events + " events");
        Assert.Contains(names, n => n.Length > 0);
    }

    [Fact]
    public void NotNetTraceHasItsStatusAndOffset()
    {
        var e = Assert.Throws<NetTraceException>(() => TraceFile.Parse(Encoding.ASCII.GetBytes("this is no trace at all, not even close")));
        Assert.Equal("not_nettrace", e.Status);
        Assert.Equal(0, e.Offset);
        Assert.Null(e.PartialTrace);
    }

    [SkippableFact]
    public void TruncatedFileDeliversWhatWasRead()
    {
        byte[] data = File.ReadAllBytes(Env.Corpus("call-tree.nettrace"));
        byte[] cut = data.AsSpan(0, data.Length * 2 / 3).ToArray();
        var e = Assert.Throws<NetTraceException>(() => TraceFile.Parse(cut));
        Assert.Equal("truncated", e.Status);
        Assert.InRange(e.Offset, 1, cut.Length);
        Assert.NotNull(e.PartialTrace);
        using (e.PartialTrace)
            Assert.True(e.PartialTrace!.SampleCount > 0);
        using TraceFile partial = TraceFile.Parse(cut, allowPartial: true);
        Assert.Equal("truncated", partial.Error!.Status);
        Assert.Equal("truncated", partial.Stats.Status);
        Assert.True(partial.SampleCount > 0);
    }

    [SkippableFact]
    public void MissingFileIsTheFileSystemsException()
    {
        Assert.Throws<FileNotFoundException>(() => TraceFile.Open(Path.Combine(Env.SrcDir, "corpus", "no-such.nettrace")));
    }

    [Fact]
    public void TimeBoundsReadAsTheTool()
    {
        TimeBound.Parse("2s");
        TimeBound.Parse("@864741168641");
        Assert.Throws<FormatException>(() => TimeBound.Parse("12"));
    }
}
