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
using System;
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
            if (args.Length == 2 && args[0] == "fields")
                return Fields(args[1]);
            Console.Error.WriteLine("usage: BenchTraceEvent read|fields|tracelog FILE");
            return 2;
        }

        private static int Fields(string path)
        {
            long events = 0, values = 0;
            using (var source = new EventPipeEventSource(path))
            {
                source.Clr.All += _ => { };
                new ClrRundownTraceEventParser(source).All += _ => { };
                new ClrPrivateTraceEventParser(source).All += _ => { };
                new SampleProfilerTraceEventParser(source).All += _ => { };
                new EventPipeTraceEventParser(source).All += _ => { };
                source.Dynamic.All += _ => { };
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

        private static int Resolve(string path)
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
                        samples++;
                        for (TraceCallStack stack = ev.CallStack(); stack != null; stack = stack.Caller)
                        {
                            frames++;
                            s_sink += stack.CodeAddress.FullMethodName.Length + stack.CodeAddress.ModuleName.Length;
                        }
                    }
                }
            }
            finally
            {
                File.Delete(etlx);
            }
            Console.WriteLine($"samples {samples} frames {frames}");
            GC.KeepAlive(s_sink);
            return 0;
        }
    }
}
