using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Text.Json;
using Xunit;

namespace LibNetTrace.Tests;

/// <summary>The package against the CLI on every corpus trace: the same samples
/// (the lines of nettrace samples), the same hot-method tables, byte-identical exports.</summary>
public class CorpusTests
{
    public static IEnumerable<object[]> Traces() => Env.Traces();

    private static bool Readable(string path)
    {
        var (_, code, _) = Env.Run(Env.Cli, "info", path);
        return code == 0;
    }

    [SkippableTheory]
    [MemberData(nameof(Traces))]
    public void SamplesAreTheCliSamples(string path)
    {
        Skip.IfNot(Readable(path), "the tool does not read " + Path.GetFileName(path) + " cleanly");
        string cli = Encoding.UTF8.GetString(Env.CliOut("samples", path));
        var sb = new StringBuilder();
        using (TraceFile t = TraceFile.Open(path))
        {
            foreach (Sample s in t.Samples)
            {
                sb.Append(s.TimestampNs).Append(' ').Append(s.ThreadId).Append(' ')
                  .Append(s.Kind == SampleKind.Managed ? 'M' : s.Kind == SampleKind.External ? 'E' : '?').Append(' ');
                sb.Append(s.Frames.Count == 0 ? "-" : string.Join(';', s.Frames.Select(Env.EscapeSamples)));
                sb.Append('\n');
            }
            Assert.Equal(t.SampleCount, t.Samples.Count());
        }
        Assert.Equal(cli, sb.ToString()); // a trace without samples: both empty
    }

    [SkippableTheory]
    [MemberData(nameof(Traces))]
    public void TopIsTheCliTop(string path)
    {
        Skip.IfNot(Readable(path), "the tool does not read " + Path.GetFileName(path) + " cleanly");
        foreach (bool byThread in new[] { false, true })
        {
            var args = new List<string> { "top", "--json", "-n", "0", path };
            if (byThread)
                args.Insert(1, "--by-thread");
            using JsonDocument cli = JsonDocument.Parse(Env.CliOut(args.ToArray()));
            using TraceFile t = TraceFile.Open(path);
            TopResult top = t.Top(new TopOptions { ByThread = byThread });
            JsonElement[] tables = cli.RootElement.GetProperty("tables").EnumerateArray().ToArray();
            Assert.Equal(tables.Length, top.Tables.Count);
            for (int i = 0; i < tables.Length; i++)
            {
                Assert.Equal(tables[i].GetProperty("thread_id").GetInt64(), top.Tables[i].ThreadId);
                Assert.Equal(tables[i].GetProperty("samples").GetInt64(), top.Tables[i].Samples);
                JsonElement[] rows = tables[i].GetProperty("methods").EnumerateArray().ToArray();
                Assert.Equal(rows.Length, top.Tables[i].Rows.Count);
                for (int r = 0; r < rows.Length; r++)
                {
                    TopRow row = top.Tables[i].Rows[r];
                    Assert.Equal(rows[r].GetProperty("name").GetString(), row.Name);
                    Assert.Equal(rows[r].GetProperty("exclusive").GetInt64(), row.Exclusive);
                    Assert.Equal(rows[r].GetProperty("inclusive").GetInt64(), row.Inclusive);
                }
            }
        }
    }

    [SkippableTheory]
    [MemberData(nameof(Traces))]
    public void ExportsAreByteIdentical(string path)
    {
        Skip.IfNot(Readable(path), "the tool does not read " + Path.GetFileName(path) + " cleanly");
        using TraceFile t = TraceFile.Open(path);
        string name = Path.GetFileName(path);
        Assert.Equal(Env.CliOut("stacks", "-f", "folded", path), Export(s => t.ExportFolded(s)));
        Assert.Equal(Env.CliOut("stacks", "-f", "pprof", path), Export(s => t.ExportPprof(s, new ExportOptions { Name = name })));
        Assert.Equal(Env.CliOut("stacks", "-f", "speedscope", path),
            Export(s => t.ExportSpeedscope(s, new ExportOptions { Name = name, Weight = Weight.Time })));
        Assert.Equal(Env.CliOut("stacks", "-f", "folded", "--weight", "time", "--managed-only", path),
            Export(s => t.ExportFolded(s, new ExportOptions { Weight = Weight.Time, ManagedOnly = true })));
    }

    public static IEnumerable<object[]> EventProfiles() => new[]
    {
        new object[] { "profile-alloc.nettrace", ProfileKind.Alloc, "alloc" },
        new object[] { "profile-exceptions.nettrace", ProfileKind.Exceptions, "exceptions" },
        new object[] { "profile-contention.nettrace", ProfileKind.Contention, "contention" },
    };

    [SkippableTheory]
    [MemberData(nameof(EventProfiles))]
    public void EventProfileExportsAreByteIdentical(string file, ProfileKind kind, string cliName)
    {
        string path = Env.Corpus(file);
        // The tool reads event profiles without the thread samples (their span is then the events').
        using Profile p = Profile.Open(path, new ProfileOptions { EventsOnly = true });
        Assert.True(p.Totals(kind).Events > 0, "no " + cliName + " events in " + file);
        Assert.Equal(p.Totals(kind).Records, p.RecordsOf(kind).Count());
        Assert.All(p.RecordsOf(kind), r => Assert.NotEmpty(r.Frames));
        Assert.Equal(Env.CliOut("stacks", "--profile", cliName, "-f", "folded", path), Export(s => p.ExportFolded(kind, s)));
        Assert.Equal(Env.CliOut("stacks", "--profile", cliName, "-f", "pprof", path),
            Export(s => p.ExportPprof(kind, s, new ProfileExportOptions { Name = file })));
    }

    [SkippableFact]
    public void GcTimelineIsTheCliTimeline()
    {
        string path = Env.Corpus("profile-gc.nettrace");
        using JsonDocument cli = JsonDocument.Parse(Env.CliOut("gc", "--json", path));
        using Profile p = Profile.Open(path, new ProfileOptions { EventsOnly = true });
        JsonElement[] gcs = cli.RootElement.GetProperty("gcs").EnumerateArray().ToArray();
        Assert.NotEmpty(gcs);
        Assert.Equal(gcs.Length, p.Gcs.Count);
        for (int i = 0; i < gcs.Length; i++)
        {
            Assert.Equal(gcs[i].GetProperty("number").GetInt32(), p.Gcs[i].Number);
            Assert.Equal(gcs[i].GetProperty("generation").GetInt32(), p.Gcs[i].Generation);
            Assert.Equal(gcs[i].GetProperty("reason").GetString(), p.Gcs[i].Reason);
            Assert.Equal(gcs[i].GetProperty("type").GetString(), p.Gcs[i].Type);
            Assert.Equal(gcs[i].GetProperty("start_ns").GetInt64(), p.Gcs[i].StartNs);
            Assert.Equal(gcs[i].GetProperty("pause_ns").GetInt64(), p.Gcs[i].PauseNs);
            JsonElement after = gcs[i].GetProperty("heap_after");
            Assert.Equal(after.ValueKind == JsonValueKind.Null ? -1 : after.GetInt64(), p.Gcs[i].HeapAfter);
        }
    }

    internal static byte[] Export(Action<Stream> export)
    {
        using var ms = new MemoryStream();
        export(ms);
        return ms.ToArray();
    }
}
