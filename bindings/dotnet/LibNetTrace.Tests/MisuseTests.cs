using System;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Xunit;

namespace LibNetTrace.Tests;

/// <summary>Disposal and misuse: a .NET exception every time, never a crash.</summary>
public class MisuseTests
{
    [SkippableFact]
    public void UseAfterDisposeThrowsObjectDisposed()
    {
        TraceFile t = TraceFile.Open(Env.Corpus("call-tree.nettrace"));
        var samples = t.Samples.GetEnumerator();
        Assert.True(samples.MoveNext());
        t.Dispose();
        t.Dispose(); // twice is fine
        Assert.Throws<ObjectDisposedException>(() => t.SampleCount);
        Assert.Throws<ObjectDisposedException>(() => t.Samples);
        Assert.Throws<ObjectDisposedException>(() => samples.MoveNext());
        Assert.Throws<ObjectDisposedException>(() => t.Top());
        Assert.Throws<ObjectDisposedException>(() => t.ExportPprof(new MemoryStream()));

        Profile p = Profile.Open(Env.Corpus("profile-alloc.nettrace"));
        TraceFile inner = p.Trace;
        p.Dispose();
        Assert.Throws<ObjectDisposedException>(() => p.Records);
        Assert.Throws<ObjectDisposedException>(() => inner.SampleCount);

        var parser = new Parser();
        parser.Dispose();
        Assert.Throws<ObjectDisposedException>(() => parser.Feed(new byte[] { 1, 2, 3 }));
    }

    [SkippableFact]
    public void TwoThreadsReadOneTraceAlike()
    {
        using TraceFile t = TraceFile.Open(Env.Corpus("spin-threads.nettrace"));
        string Dump() => string.Join('\n', t.Samples.Select(s => s.ThreadId + " " + string.Join(';', s.Frames)));
        string[] dumps = new string[4];
        Parallel.For(0, dumps.Length, i => dumps[i] = Dump());
        Assert.All(dumps, d => Assert.Equal(dumps[0], d));
        Assert.NotEmpty(dumps[0]);
    }

    [SkippableFact]
    public void DisposeWhileAnotherThreadReadsIsSafe()
    {
        for (int round = 0; round < 20; round++)
        {
            TraceFile t = TraceFile.Open(Env.Corpus("call-tree.nettrace"));
            Exception? seen = null;
            var reader = new Thread(() =>
            {
                try
                {
                    for (int k = 0; k < 1000; k++)
                        foreach (Sample s in t.Samples)
                            _ = s.Frames.Count;
                }
                catch (Exception e)
                {
                    seen = e;
                }
            });
            reader.Start();
            Thread.Sleep(round);
            t.Dispose();
            reader.Join();
            Assert.True(seen is ObjectDisposedException, "the reader saw " + seen);
        }
    }

    [SkippableFact]
    public void ParserUsedFromTwoThreadsAtOnceRefusesTheSecond()
    {
        byte[] data = File.ReadAllBytes(Env.Corpus("call-tree.nettrace"));
        using var inCallback = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        bool first = true;
        using var p = new Parser(new ParserOptions
        {
            OnSample = (in RawSample s) =>
            {
                if (!first)
                    return;
                first = false;
                inCallback.Set();
                release.Wait();
            },
        });
        var feeding = Task.Run(() => p.Feed(data));
        Assert.True(inCallback.Wait(TimeSpan.FromSeconds(30)));
        Assert.Throws<InvalidOperationException>(() => p.Feed(data));
        release.Set();
        feeding.Wait();
        p.Finish();
    }

    private sealed class Boom : Exception
    {
        public Boom() : base("thrown by the test's callback") { }
    }

    [SkippableFact]
    public void CallbackThatThrowsSurfacesItsException()
    {
        byte[] data = File.ReadAllBytes(Env.Corpus("call-tree.nettrace"));
        int calls = 0;
        using var p = new Parser(new ParserOptions
        {
            KeepTrace = true,
            OnEvent = (in TraceEvent ev) =>
            {
                if (++calls == 10)
                    throw new Boom();
            },
        });
        Assert.Throws<Boom>(() => p.Feed(data));
        Assert.Equal(10, calls);
        // The parse stopped there and says so from now on.
        var again = Assert.Throws<NetTraceException>(() => p.Feed(data));
        Assert.Equal("stopped", again.Status);
    }

    [SkippableFact]
    public void CallbackReenteringItsParserIsRefused()
    {
        byte[] data = File.ReadAllBytes(Env.Corpus("call-tree.nettrace"));
        Parser? self = null;
        using var p = new Parser(new ParserOptions { OnEvent = (in TraceEvent ev) => self!.Feed(data) });
        self = p;
        Assert.Throws<InvalidOperationException>(() => p.Feed(data));
    }

    private sealed class FailingStream : MemoryStream
    {
        public override void Write(ReadOnlySpan<byte> buffer) => throw new IOException("disk full (the test's stream)");
    }

    [SkippableFact]
    public void ExportToAFailingStreamSurfacesItsException()
    {
        using TraceFile t = TraceFile.Open(Env.Corpus("call-tree.nettrace"));
        var e = Assert.Throws<IOException>(() => t.ExportFolded(new FailingStream()));
        Assert.Contains("disk full", e.Message);
        // The trace is still good.
        Assert.NotEmpty(CorpusTests.Export(s => t.ExportFolded(s)));
    }
}
