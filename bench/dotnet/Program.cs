// The .NET package against TraceEvent 4.0.0 (bench_dotnet.sh runs it):
//
//   BenchDotnet files RUNS FILE...   per file, a cold read and RUNS warm runs of
//       each reader in this one process: LibNetTrace (TraceFile.Open, every
//       sample's frame names, the hot-method table) and TraceEvent (TraceLog from
//       the file, every sample's CallStack names, the same table by name); a warm
//       run repeats the read K times (at least BENCH_DOTNET_RUN_MS, 200, of wall
//       time) and prints per read: wall, process CPU, the reading thread's CPU;
//       then, from one more read outside the timing, the memory each holds with
//       its result (managed heap with it alive + the native bytes), its peak
//       (the managed heap's high mark + the native bytes) and the bytes it
//       allocated (Files and GcPeak say how and why).
//   BenchDotnet live SECONDS MODE    this process runs a churning workload (two
//       threads serving "requests", a third minting dynamic methods and compiled
//       regexes, ~300 new methods a second, each dropped) for SECONDS while MODE profiles it in-process:
//       none, libnettrace (ContinuousProfiler on its own thread pumped every second, a window every
//       10 s exported as pprof) or traceevent (a session to itself through
//       DiagnosticsClient, real-time TraceLog (CreateFromEventPipeSession with
//       rundown) on its own thread, every sample's stack names folded into a
//       profile reset every 10 s with TraceLog.TrimLiveSessionState, as an agent does).
//       Prints the workload's requests per second, the reader thread's CPU
//       (CLOCK_THREAD_CPUTIME_ID) per second of profiling, the process's CPU,
//       and the managed heap and RSS at each window.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.IO;
using System.Linq;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text.RegularExpressions;
using System.Threading;
using LibNetTrace;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;
using Microsoft.Diagnostics.Tracing.Parsers;
using TE = Microsoft.Diagnostics.Tracing.TraceEvent;

internal static unsafe class Program
{
    private static long s_sink;

    private static int Main(string[] args)
    {
        if (args.Length >= 3 && args[0] == "files")
            return Files(int.Parse(args[1]), args.Skip(2).ToArray());
        if (args.Length == 3 && args[0] == "live")
            return Live(int.Parse(args[1]), args[2]);
        Console.Error.WriteLine("usage: BenchDotnet files RUNS FILE... | live SECONDS none|libnettrace|traceevent");
        return 2;
    }

    // ---- files -------------------------------------------------------------

    /// <summary>One read's counts, its result (kept alive for the memory
    /// figure, then released by Dispose) and the native bytes the result holds.</summary>
    private sealed class Read : IDisposable
    {
        public long Samples, Frames, Native;
        public IDisposable Result;
        public Action Cleanup;
        public void Dispose()
        {
            Result?.Dispose();
            Cleanup?.Invoke();
        }
    }

    private static Read Ours(string path)
    {
        TraceFile t = TraceFile.Open(path);
        var r = new Read { Result = t };
        foreach (Sample s in t.Samples)
        {
            r.Samples++;
            long sum = 0;
            // By index: a foreach over the IReadOnlyList would allocate an enumerator
            // per sample (3 MB of garbage over the webapp trace's 83K samples).
            IReadOnlyList<string> names = s.Frames;
            for (int k = 0; k < names.Count; k++)
            {
                r.Frames++;
                sum += names[k].Length;
            }
            s_sink += sum;
        }
        s_sink += t.Top().Tables[0].Rows.Count;
        r.Native = t.Stats.MemoryBytes;
        return r;
    }

    private static int s_etlx;

    private static Read Theirs(string path)
    {
        string etlx = Path.Combine(Path.GetTempPath(), $"bench-dotnet-{Environment.ProcessId}-{s_etlx++}.etlx");
        var r = new Read { Cleanup = () => File.Delete(etlx) };
        var exclusive = new Dictionary<string, long>();
        var inclusive = new Dictionary<string, long>();
        try
        {
            TraceLog.CreateFromEventPipeDataFile(path, etlx);
            var log = new TraceLog(etlx);
            r.Result = log;
            var seen = new HashSet<string>();
            foreach (TE ev in log.Events)
            {
                if (ev.ProviderName != "Microsoft-DotNETCore-SampleProfiler" || (int)ev.ID != 0)
                    continue;
                r.Samples++;
                seen.Clear();
                bool leaf = true;
                for (TraceCallStack st = ev.CallStack(); st != null; st = st.Caller)
                {
                    r.Frames++;
                    string name = st.CodeAddress.ModuleName + "!" + st.CodeAddress.FullMethodName;
                    if (leaf)
                        exclusive[name] = exclusive.GetValueOrDefault(name) + 1;
                    leaf = false;
                    if (seen.Add(name))
                        inclusive[name] = inclusive.GetValueOrDefault(name) + 1;
                }
            }
            s_sink += exclusive.OrderByDescending(kv => kv.Value).Take(20).Count() + inclusive.Count;
            r.Native = new FileInfo(etlx).Length;
            return r;
        }
        catch
        {
            r.Dispose();
            throw;
        }
    }

    /// <summary>Milliseconds of wall time a warm run lasts at least (BENCH_DOTNET_RUN_MS, 200 by default).</summary>
    private static readonly double s_runMs = double.TryParse(Environment.GetEnvironmentVariable("BENCH_DOTNET_RUN_MS"), out double rm) && rm > 0 ? rm : 200;

    /// <summary>Per file and reader: a cold read (run 0), untimed warm-up reads
    /// (WarmUp) that set how many reads (K) a warm run repeats, then RUNS warm runs of K reads
    /// each, timed as a whole and divided by K: a read of 1-7 ms measured alone
    /// is as much the process's background threads (GC, tiered JIT) waking in it
    /// as the read, K reads spread them.  Both readers alike.  CPU is the
    /// process's (Process.TotalProcessorTime: the GC's and JIT's threads' work on
    /// the reader's behalf counts) and the reading thread's
    /// (CLOCK_THREAD_CPUTIME_ID).  Memory is taken on one more read outside the
    /// timing, so that no watcher thread and no forced collection runs in the
    /// timed reads: held = the managed heap with the result alive minus before
    /// (both after a full collection) plus the native bytes the result holds (the
    /// library's; TraceEvent's .etlx), peak = the managed heap's high mark over the
    /// read minus before (GcPeak) plus the same native bytes, allocated = the bytes
    /// allocated over the read (GC.GetTotalAllocatedBytes, precise).</summary>
    private static int Files(int runs, string[] paths)
    {
        Console.WriteLine("file reader run reads wall_ms cpu_ms thread_ms samples frames held_kb peak_kb alloc_kb native_kb");
        foreach (string path in paths)
        {
            foreach ((string name, Func<string, Read> read) in new (string, Func<string, Read>)[] { ("libnettrace", Ours), ("traceevent", Theirs) })
            {
                int reads = 1;
                for (int run = 0; run <= runs; run++)
                {
                    if (run == 1)
                        reads = WarmUp(read, path);
                    GC.Collect();
                    GC.WaitForPendingFinalizers();
                    GC.Collect();
                    TimeSpan cpu0 = Process.GetCurrentProcess().TotalProcessorTime;
                    double thread0 = ThreadCpu();
                    var wall = Stopwatch.StartNew();
                    long samples = 0, frames = 0;
                    for (int k = 0; k < reads; k++)
                    {
                        using Read r = read(path);
                        samples = r.Samples;
                        frames = r.Frames;
                    }
                    wall.Stop();
                    double thread = ThreadCpu() - thread0;
                    TimeSpan cpu = Process.GetCurrentProcess().TotalProcessorTime - cpu0;
                    (long held, long peak, long alloc, long native) = run == 0 ? (-1, -1, -1, -1) : Memory(read, path);
                    Console.WriteLine($"{Path.GetFileName(path)} {name} {run} {reads} {wall.Elapsed.TotalMilliseconds / reads:F3} " +
                                      $"{cpu.TotalMilliseconds / reads:F3} {1e3 * thread / reads:F3} {samples} {frames} " +
                                      $"{Kb(held)} {Kb(peak)} {Kb(alloc)} {Kb(native)}");
                }
            }
        }
        GC.KeepAlive(s_sink);
        return 0;
    }

    private static long Kb(long bytes) => bytes < 0 ? -1 : bytes / 1024;

    /// <summary>Untimed reads until both readers' code is warm (tiered JIT: TraceEvent's
    /// read of HeartRateMonitor took 362, 245 then 102 ms in its first three warm
    /// reads): at least 5 reads and BENCH_DOTNET_WARM_MS (2000) of wall time.  Returns
    /// K, the reads of a warm run of at least s_runMs by the median warm-up read of
    /// the second half (one read's time alone is too often a GC's or the scheduler's).</summary>
    private static int WarmUp(Func<string, Read> read, string path)
    {
        var all = Stopwatch.StartNew();
        var times = new List<double>();
        while (times.Count < 5 || all.Elapsed.TotalMilliseconds < s_warmMs)
        {
            var w = Stopwatch.StartNew();
            read(path).Dispose();
            times.Add(w.Elapsed.TotalMilliseconds);
        }
        List<double> late = times.Skip(times.Count / 2).OrderBy(t => t).ToList();
        double typical = late[late.Count / 2];
        return (int)Math.Clamp(Math.Ceiling(s_runMs / Math.Max(0.01, typical)), 1, 10_000);
    }

    private static readonly double s_warmMs = double.TryParse(Environment.GetEnvironmentVariable("BENCH_DOTNET_WARM_MS"), out double wm) && wm >= 0 ? wm : 2000;

    /// <summary>One read outside the timing: the managed bytes its result holds
    /// (plus the native bytes), its peak (the managed heap's high mark over the
    /// read, GcPeak, plus the native bytes), the bytes it allocated and the native
    /// bytes held.</summary>
    private static (long held, long peak, long alloc, long native) Memory(Func<string, Read> read, string path)
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        long heap0 = GC.GetTotalMemory(true);
        long alloc0 = GC.GetTotalAllocatedBytes(true);
        var peak = new GcPeak(heap0);
        using Read r = read(path);
        long high = peak.End();
        long alloc = GC.GetTotalAllocatedBytes(true) - alloc0;
        long held = GC.GetTotalMemory(true) - heap0;
        GC.KeepAlive(r.Result);
        return (Math.Max(0, held) + r.Native, Math.Max(0, high - heap0) + r.Native, alloc, r.Native);
    }

    /// <summary>The managed heap's high mark without a watcher thread: the heap
    /// grows only by allocation and shrinks only in a collection, so its high
    /// marks are its sizes just before each collection (GCMemoryInfo: the
    /// generations' SizeBeforeBytes less their free space, as GC.GetTotalMemory
    /// counts) and its size at the end.  A finalizable sentinel that dies in each
    /// collection notes the collection's figures (its finalizer runs after it) and
    /// leaves a new sentinel.  A 5 ms watcher sampled the heap between
    /// collections (missing the top of any rise shorter than 5 ms, most of a
    /// 1 ms read) and woke during the timed reads.</summary>
    private sealed class GcPeak
    {
        private long _high;
        private readonly long[] _seen = new long[3];
        private volatile bool _done;

        public GcPeak(long heap)
        {
            _high = heap;
            foreach (GCKind k in new[] { GCKind.Ephemeral, GCKind.FullBlocking, GCKind.Background })
                _seen[(int)k - 1] = GC.GetGCMemoryInfo(k).Index;
            Arm(this);
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        private static void Arm(GcPeak p) => _ = new Sentinel(p);

        /// <summary>The latest collection of each kind, when new (the finalizer thread and End both call it).</summary>
        private void Note()
        {
            lock (_seen)
                foreach (GCKind k in new[] { GCKind.Ephemeral, GCKind.FullBlocking, GCKind.Background })
                {
                    GCMemoryInfo i = GC.GetGCMemoryInfo(k);
                    if (i.Index <= _seen[(int)k - 1])
                        continue;
                    _seen[(int)k - 1] = i.Index;
                    long before = 0;
                    foreach (GCGenerationInfo g in i.GenerationInfo)
                        before += g.SizeBeforeBytes - g.FragmentationBeforeBytes;
                    _high = Math.Max(_high, before);
                }
        }

        /// <summary>The high mark, the heap at this call included (the sentinel then stops).</summary>
        public long End()
        {
            long now = GC.GetTotalMemory(false);
            _done = true;
            Note(); // a collection whose sentinel has not been finalized yet
            lock (_seen)
                return Math.Max(_high, now);
        }

        private sealed class Sentinel
        {
            private readonly GcPeak _p;
            public Sentinel(GcPeak p) => _p = p;
            ~Sentinel()
            {
                if (_p._done)
                    return;
                _p.Note();
                Arm(_p);
            }
        }
    }

    // ---- live --------------------------------------------------------------

    private struct Timespec
    {
        public long Sec, Nsec;
    }

    [DllImport("libc")]
    private static extern int clock_gettime(int clock, Timespec* ts);

    /// <summary>CPU seconds of the calling thread, to the nanosecond
    /// (CLOCK_THREAD_CPUTIME_ID; getrusage(RUSAGE_THREAD) lags for a running
    /// thread until its next tick or context switch, so it misplaces short spans).</summary>
    private static double ThreadCpu()
    {
        Timespec t;
        clock_gettime(3 /* CLOCK_THREAD_CPUTIME_ID */, &t);
        return t.Sec + t.Nsec / 1e9;
    }

    private static long RssKb()
    {
        foreach (string line in File.ReadLines("/proc/self/status"))
            if (line.StartsWith("VmRSS:"))
                return long.Parse(line.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1]);
        return -1;
    }

    /// <summary>The reader thread's CPU and the time at its first window: the
    /// figures per second are taken after it (session start, JIT and the first
    /// window's work excluded).</summary>
    private static double s_warmCpu = -1, s_warmAt;

    private static void Warm(Stopwatch wall)
    {
        if (s_warmCpu < 0)
        {
            s_warmCpu = ThreadCpu();
            s_warmAt = wall.Elapsed.TotalSeconds;
        }
    }

    /// <summary>The libnettrace reader's time between pumps (BENCH_DOTNET_PUMP_MS, 1000 by default, as
    /// WindowsAsync pumps): each wake-up costs the thread a fixed ~70 us (cold caches, the pump's syscalls)
    /// beside the bytes' own work, and the runtime buffers the stream (256 MB) meanwhile.</summary>
    private static readonly int s_pumpMs = int.TryParse(Environment.GetEnvironmentVariable("BENCH_DOTNET_PUMP_MS"), out int ms) && ms > 0 ? ms : 1000;

    private static long s_requests;
    private static volatile bool s_stop;
    private static volatile object s_kept;

    /// <summary>One request of the churning service: parse, allocate, compute, in a
    /// few methods so stacks vary.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static long Serve(int n)
    {
        var parts = new List<string>();
        for (int i = 0; i < 32; i++)
            parts.Add(Format(n, i));
        s_kept = parts;
        return Compute(parts);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static string Format(int n, int i) => "req-" + n + "-" + i.ToString("x4");

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static long Compute(List<string> parts)
    {
        long h = 17;
        foreach (string p in parts)
            foreach (char c in p)
                h = h * 31 + c;
        for (int i = 0; i < 2000; i++)
            h ^= h << 7 ^ h >> 3;
        return h;
    }

    /// <summary>The code churn of a long-lived service (the always-on issue's): a
    /// new dynamic method every round, dropped at once (the runtime reports each
    /// unload), and a compiled regex of a new pattern every 16th round, about 300
    /// rounds a second, so a reader's method tables meet new code all the time.</summary>
    private static void ChurnCode()
    {
        long sink = 0;
        for (long round = 0; !s_stop; round++)
        {
            var dm = new DynamicMethod("Dyn" + round, typeof(long), new[] { typeof(long) }, typeof(Program).Module);
            ILGenerator il = dm.GetILGenerator();
            il.Emit(OpCodes.Ldarg_0);
            il.Emit(OpCodes.Ldc_I8, round);
            il.Emit(OpCodes.Xor);
            il.Emit(OpCodes.Ret);
            sink += ((Func<long, long>)dm.CreateDelegate(typeof(Func<long, long>)))(round);
            if (round % 16 == 0)
                sink += new Regex("^a" + round + "[b-z]+$", RegexOptions.Compiled).IsMatch("a" + round + "bcd") ? 1 : 0;
            Thread.Sleep(3);
        }
        GC.KeepAlive(sink);
    }

    private static int Live(int seconds, string mode)
    {
        var workers = Enumerable.Range(0, 2).Select(w => new Thread(() =>
        {
            long sink = 0;
            for (int n = 0; !s_stop; n++)
            {
                sink += Serve(n);
                Interlocked.Increment(ref s_requests);
            }
            GC.KeepAlive(sink);
        }) { IsBackground = true, Name = "worker" + w }).ToList();
        workers.Add(new Thread(ChurnCode) { IsBackground = true, Name = "churn" });
        workers.ForEach(w => w.Start());
        Thread.Sleep(1000); // the workload warms up before anything is measured
        long req0 = Interlocked.Read(ref s_requests);
        TimeSpan cpu0 = Process.GetCurrentProcess().TotalProcessorTime;
        var wall = Stopwatch.StartNew();
        double readerCpu = 0;
        long samples = 0, windows = 0, bytes = 0;
        var memory = new List<string>();
        void Note() => memory.Add($"{GC.GetTotalMemory(false) / 1024}/{RssKb()}");
        Thread reader = mode switch
        {
            "none" => new Thread(() =>
            {
                while (wall.Elapsed.TotalSeconds < seconds)
                {
                    Thread.Sleep((int)Math.Min(10_000 - wall.ElapsedMilliseconds % 10_000, Math.Max(1, seconds * 1000 - wall.ElapsedMilliseconds)));
                    Note();
                }
            }),
            "libnettrace" => new Thread(() =>
            {
                using var prof = ContinuousProfiler.StartSelf();
                double next = 10;
                // Where the reader thread's CPU goes after its first window: waiting
                // between pumps, the pumps, the takes and the exports (thread CPU each).
                var split = new double[4];
                long pumps = 0;
                double Lap(ref double t0) { double t = ThreadCpu(), d = t - t0; t0 = t; return d; }
                double c = ThreadCpu();
                while (wall.Elapsed.TotalSeconds < seconds)
                {
                    // Batches: the runtime buffers the session (256 MB); a pump reads what has come.
                    Thread.Sleep(s_pumpMs);
                    split[0] += Lap(ref c);
                    prof.Pump(TimeSpan.Zero);
                    split[1] += Lap(ref c);
                    pumps++;
                    if (wall.Elapsed.TotalSeconds >= next)
                    {
                        next += 10;
                        using ProfileWindow w = prof.TakeWindow();
                        samples += w.Trace.SampleCount;
                        windows++;
                        split[2] += Lap(ref c);
                        using var pprof = new MemoryStream();
                        w.Trace.ExportPprof(pprof);
                        s_sink += pprof.Length;
                        split[3] += Lap(ref c);
                        Note();
                        if (s_warmCpu < 0)
                        {
                            Array.Clear(split);
                            pumps = 0;
                        }
                        Warm(wall);
                        c = ThreadCpu();
                    }
                }
                readerCpu = ThreadCpu();
                bytes = prof.Session.Bytes;
                Console.WriteLine($"libnettrace split after the first window: pumps {pumps} every {s_pumpMs} ms, thread CPU us per pump: " +
                                  $"wait {1e6 * split[0] / Math.Max(1, pumps):F1} pump {1e6 * split[1] / Math.Max(1, pumps):F1}; per window: " +
                                  $"take {1e3 * split[2] / Math.Max(1, windows - 1):F2} ms export {1e3 * split[3] / Math.Max(1, windows - 1):F2} ms");
            }),
            "traceevent" => new Thread(() => readerCpu = TraceEventReader(seconds, wall, ref samples, ref windows, Note)),
            _ => throw new ArgumentException("mode: none, libnettrace or traceevent"),
        };
        reader.Name = "reader";
        reader.Start();
        reader.Join();
        double secs = wall.Elapsed.TotalSeconds;
        s_stop = true;
        workers.ForEach(w => w.Join());
        long requests = Interlocked.Read(ref s_requests) - req0;
        double cpu = (Process.GetCurrentProcess().TotalProcessorTime - cpu0).TotalSeconds;
        double warmCpu = s_warmCpu < 0 ? 0 : readerCpu - s_warmCpu, warmSecs = s_warmCpu < 0 ? 0 : secs - s_warmAt;
        Console.WriteLine($"mode {mode} seconds {secs:F1} requests_per_s {requests / secs:F0} reader_cpu_s {readerCpu:F3} " +
                          $"reader_cpu_per_s_after_first_window {(warmSecs > 0 ? warmCpu / warmSecs : 0):F5} process_cpu_per_s {cpu / secs:F3} samples {samples} stream_bytes {bytes} windows {windows} " +
                          $"managed_kb/rss_kb_per_window {string.Join(' ', memory)}");
        GC.KeepAlive(s_sink);
        return 0;
    }

    /// <summary>What an in-process agent on TraceEvent does (Sentry's profiler):
    /// a session to its own process, real-time TraceLog, each sample's stack
    /// walked by name into a profile taken every 10 s.</summary>
    private static double TraceEventReader(int seconds, Stopwatch wall, ref long samples, ref long windows, Action note)
    {
        var client = new DiagnosticsClient(Environment.ProcessId);
        var providers = new[]
        {
            new EventPipeProvider("Microsoft-DotNETCore-SampleProfiler", EventLevel.Informational),
            new EventPipeProvider("Microsoft-Windows-DotNETRuntime", EventLevel.Verbose, 0x18),
        };
        using EventPipeSession session = client.StartEventPipeSession(providers, requestRundown: false, circularBufferMB: 256);
        TraceLogEventSource log = TraceLog.CreateFromEventPipeSession(session, TraceLog.EventPipeRundownConfiguration.Enable(client));
        var profile = new Dictionary<string, long>();
        long count = 0, taken = 0;
        double next = 10;
        new Microsoft.Diagnostics.Tracing.EventPipe.SampleProfilerTraceEventParser(log).ThreadSample += d =>
        {
            count++;
            var names = new List<string>();
            for (TraceCallStack st = d.CallStack(); st != null; st = st.Caller)
                names.Add(st.CodeAddress.ModuleName + "!" + st.CodeAddress.FullMethodName);
            string key = string.Join(';', names);
            profile[key] = profile.GetValueOrDefault(key) + 1;
            if (wall.Elapsed.TotalSeconds >= next)
            {
                next += 10;
                taken++;
                s_sink += profile.Count;
                profile.Clear();
                log.TraceLog.TrimLiveSessionState(); // 4.0.0 has it: the live session's state dropped each window
                note();
                Warm(wall);
            }
        };
        var stopper = new Thread(() =>
        {
            Thread.Sleep(TimeSpan.FromSeconds(seconds) - wall.Elapsed);
            session.Stop();
        });
        stopper.Start();
        try
        {
            log.Process();
        }
        catch (Exception e)
        {
            Console.Error.WriteLine("traceevent reader: " + e.GetType().Name + ": " + e.Message);
        }
        stopper.Join();
        samples = count;
        windows = taken;
        return ThreadCpu();
    }
}
