// TraceEvent's side of the libnettrace benchmark (bench/traceevent.sh): each
// job in its own process so bench_run measures it alone, like ours.
//
//   BenchTraceEvent read FILE       EventPipeEventSource reads every event;
//                                   a handler on every event touches it, and
//                                   the CLR/rundown parsers decode the method,
//                                   module and assembly records (what our
//                                   parser's callbacks do); prints "events N"
//   BenchTraceEvent fields FILE     every parser subscribed (CLR, rundown,
//                                   private, sample profiler, EventPipe,
//                                   dynamic) and an AllEvents handler that
//                                   reads every PayloadValue(i) of every
//                                   event; prints "events N values N"
//   BenchTraceEvent tracelog FILE   TraceLog.CreateFromEventPipeDataFile into
//                                   a temporary .etlx, then every
//                                   SampleProfiler sample's CallStack walked
//                                   and each frame's method name read (our
//                                   resolved trace); prints "samples N frames N"
//   BenchTraceEvent tracelog-warm FILE RUNS   the tracelog job RUNS times in
//                                   this one process (JIT and tiering warm
//                                   after the first runs, .NET's start not
//                                   counted); prints per run
//                                   "run I wall S cpu S samples N frames N"
//                                   (Stopwatch; Process.TotalProcessorTime:
//                                   every thread of the process, GC and JIT
//                                   included), as bench_ours trace-warm does
//   BenchTraceEvent tracelog-window FILE FROM_MS TO_MS   a time window's
//                                   samples, as `nettrace top --from --to`
//                                   reads them: TraceLog has no windowed
//                                   read, so the whole file is converted,
//                                   then the SampleProfiler samples whose
//                                   TimeStampRelativeMSec (from the trace's
//                                   sync time, as nettrace's relative times)
//                                   lies in [FROM_MS, TO_MS) have their
//                                   CallStack walked and names read; prints
//                                   "samples N frames N"
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;
using Microsoft.Diagnostics.Tracing.EventPipe;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

namespace BenchTraceEvent
{
    internal static class Program
    {
        private static long s_sink;

        private static int Main(string[] args)
        {
            if (args.Length == 2 && args[0] == "read")
                return Read(args[1]);
            if (args.Length == 2 && args[0] == "tracelog")
                return Resolve(args[1]);
            if (args.Length == 3 && args[0] == "tracelog-warm")
                return ResolveWarm(args[1], args[2]);
            if (args.Length == 4 && args[0] == "tracelog-window")
                return ResolveWindow(args[1], args[2], args[3]);
            if (args.Length == 2 && args[0] == "profiles")
                return Profiles(args[1]);
            if (args.Length == 2 && args[0] == "fields")
                return Fields(args[1]);
            Console.Error.WriteLine("usage: BenchTraceEvent read|fields|tracelog|profiles FILE | tracelog-warm FILE RUNS | tracelog-window FILE FROM_MS TO_MS");
            return 2;
        }

        private static int Fields(string path)
        {
            long events = 0, values = 0;
            using (var source = new EventPipeEventSource(path))
            {
                NetTraceShared.Parsers.RegisterTyped(source);
                source.AllEvents += e =>
                {
                    events++;
                    string[] names = e.PayloadNames;
                    if (names == null)
                        return;
                    for (int i = 0; i < names.Length; i++)
                    {
                        object v = e.PayloadValue(i);
                        values++;
                        s_sink += v == null ? 0 : v.GetHashCode();
                    }
                };
                source.Process();
            }
            Console.WriteLine($"events {events} values {values}");
            GC.KeepAlive(s_sink);
            return 0;
        }

        private static int Read(string path)
        {
            long events = 0;
            using (var source = new EventPipeEventSource(path))
            {
                source.AllEvents += e =>
                {
                    events++;
#pragma warning disable CS0618 // the raw clock value, as our callbacks read it
                    s_sink += e.TimeStampQPC + e.EventDataLength + e.ThreadID;
#pragma warning restore CS0618
                };
                var clr = new ClrTraceEventParser(source);
                clr.MethodLoadVerbose += d => s_sink += (long)d.MethodStartAddress + d.MethodName.Length;
                clr.LoaderModuleLoad += d => s_sink += d.ModuleID;
                clr.LoaderAssemblyLoad += d => s_sink += d.AssemblyID;
                var rundown = new ClrRundownTraceEventParser(source);
                rundown.MethodDCStopVerbose += d => s_sink += (long)d.MethodStartAddress + d.MethodName.Length;
                rundown.MethodDCStartVerbose += d => s_sink += (long)d.MethodStartAddress + d.MethodName.Length;
                rundown.LoaderModuleDCStop += d => s_sink += d.ModuleID;
                rundown.LoaderAssemblyDCStop += d => s_sink += d.AssemblyID;
                new SampleProfilerTraceEventParser(source).All += d => s_sink += d.ThreadID;
                source.Process();
            }
            Console.WriteLine($"events {events}");
            GC.KeepAlive(s_sink);
            return 0;
        }

        // The event profiles as a TraceEvent user would aggregate them: TraceLog
        // for the stacks, the typed CLR events merged per (type, heap, stack) /
        // (exception type, stack) / (start stack), contention paired per
        // thread; the frame names of every distinct stack read once.
        private static int Profiles(string path)
        {
            string etlx = Path.Combine(Path.GetTempPath(), $"bench-traceevent-{Environment.ProcessId}.etlx");
            long allocEvents = 0, allocBytes = 0, exceptions = 0, waits = 0, waitNs = 0;
            var alloc = new Dictionary<(string, int, int, int), long>();
            var exc = new Dictionary<(string, int, int), long>();
            var cont = new Dictionary<(int, int), long>();
            var open = new Dictionary<int, (long qpc, int stack)>();
            try
            {
                TraceLog.CreateFromEventPipeDataFile(path, etlx);
                using (var log = new TraceLog(etlx))
                {
                    long freq = (long)(typeof(TraceLog).GetField("_QPCFreq", System.Reflection.BindingFlags.Instance |
                        System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Public)?.GetValue(log) ?? 1000000000L);
                    foreach (TraceEvent ev in log.Events)
                    {
                        switch (ev)
                        {
                            case GCAllocationTickTraceData a:
                                long bytes = ev.Version >= 2 ? a.AllocationAmount64 : a.AllocationAmount;
                                var ka = (ev.Version >= 2 ? a.TypeName : "", (int)a.AllocationKind, ev.ThreadID, (int)ev.CallStackIndex());
                                alloc[ka] = alloc.GetValueOrDefault(ka) + bytes;
                                allocEvents++;
                                allocBytes += bytes;
                                break;
                            case ExceptionTraceData x:
                                var kx = (x.ExceptionType, ev.ThreadID, (int)ev.CallStackIndex());
                                exc[kx] = exc.GetValueOrDefault(kx) + 1;
                                exceptions++;
                                break;
                            case ContentionStartTraceData:
                                open[ev.ThreadID] = (ev.TimeStampQPC, (int)ev.CallStackIndex());
                                break;
                            case ContentionStopTraceData:
                                if (open.Remove(ev.ThreadID, out var st))
                                {
                                    long ns = (long)((Int128)ev.TimeStampQPC * 1000000000 / freq - (Int128)st.qpc * 1000000000 / freq);
                                    var kc = (ev.ThreadID, st.stack);
                                    cont[kc] = cont.GetValueOrDefault(kc) + ns;
                                    waits++;
                                    waitNs += ns;
                                }
                                break;
                        }
                    }
                    var stacks = new HashSet<int>();
                    foreach (var k in alloc.Keys) stacks.Add(k.Item4);
                    foreach (var k in exc.Keys) stacks.Add(k.Item3);
                    foreach (var k in cont.Keys) stacks.Add(k.Item2);
                    foreach (int si in stacks)
                        for (TraceCallStack s = si < 0 ? null : log.CallStacks[(CallStackIndex)si]; s != null; s = s.Caller)
                            s_sink += s.CodeAddress.FullMethodName.Length + s.CodeAddress.ModuleName.Length;
                }
            }
            finally
            {
                File.Delete(etlx);
            }
            Console.WriteLine($"alloc {allocEvents} {allocBytes} exceptions {exceptions} contention {waits} {waitNs}");
            GC.KeepAlive(s_sink);
            return 0;
        }

        private static int Resolve(string path)
        {
            var (samples, frames) = ResolveOnce(path);
            Console.WriteLine($"samples {samples} frames {frames}");
            GC.KeepAlive(s_sink);
            return 0;
        }

        private static int ResolveWindow(string path, string fromArg, string toArg)
        {
            var inv = System.Globalization.CultureInfo.InvariantCulture;
            if (!double.TryParse(fromArg, System.Globalization.NumberStyles.Float, inv, out double from) ||
                !double.TryParse(toArg, System.Globalization.NumberStyles.Float, inv, out double to) || to < from)
            {
                Console.Error.WriteLine($"BenchTraceEvent: tracelog-window: FROM_MS and TO_MS must be numbers, FROM_MS <= TO_MS, not '{fromArg}' '{toArg}'");
                return 2;
            }
            var (samples, frames) = ResolveOnce(path, from, to);
            Console.WriteLine($"samples {samples} frames {frames}");
            GC.KeepAlive(s_sink);
            return 0;
        }

        private static int ResolveWarm(string path, string runsArg)
        {
            if (!int.TryParse(runsArg, out int runs) || runs < 1)
            {
                Console.Error.WriteLine($"BenchTraceEvent: tracelog-warm: RUNS must be a positive number, not '{runsArg}'");
                return 2;
            }
            for (int r = 1; r <= runs; r++)
            {
                // Each run starts from a collected heap: the previous run's
                // garbage is not charged to this one.
                GC.Collect();
                GC.WaitForPendingFinalizers();
                GC.Collect();
                TimeSpan cpu0 = ProcessCpu();
                var wall = Stopwatch.StartNew();
                var (samples, frames) = ResolveOnce(path);
                wall.Stop();
                TimeSpan cpu = ProcessCpu() - cpu0;
                Console.WriteLine($"run {r} wall {wall.Elapsed.TotalSeconds:F6} cpu {cpu.TotalSeconds:F6} samples {samples} frames {frames}");
            }
            GC.KeepAlive(s_sink);
            return 0;
        }

        private static TimeSpan ProcessCpu()
        {
            using (Process self = Process.GetCurrentProcess())
                return self.TotalProcessorTime;
        }

        private static (long samples, long frames) ResolveOnce(string path) =>
            ResolveOnce(path, double.NegativeInfinity, double.PositiveInfinity);

        private static (long samples, long frames) ResolveOnce(string path, double fromMs, double toMs)
        {
            string etlx = Path.Combine(Path.GetTempPath(), $"bench-traceevent-{Environment.ProcessId}.etlx");
            long samples = 0, frames = 0;
            try
            {
                TraceLog.CreateFromEventPipeDataFile(path, etlx);
                using (var log = new TraceLog(etlx))
                {
                    foreach (TraceEvent ev in log.Events)
                    {
                        if (ev.ProviderName != "Microsoft-DotNETCore-SampleProfiler" || (int)ev.ID != 0)
                            continue;
                        double at = ev.TimeStampRelativeMSec;
                        if (at < fromMs || at >= toMs)
                            continue;
                        samples++;
                        // Summed in a local, added to the sink once per sample (as bench_ours).
                        long sum = 0;
                        for (TraceCallStack stack = ev.CallStack(); stack != null; stack = stack.Caller)
                        {
                            frames++;
                            sum += stack.CodeAddress.FullMethodName.Length + stack.CodeAddress.ModuleName.Length;
                        }
                        s_sink += sum;
                    }
                }
            }
            finally
            {
                File.Delete(etlx);
            }
            return (samples, frames);
        }
    }
}
