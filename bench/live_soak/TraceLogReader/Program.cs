// TraceEvent 4.0.0's real-time TraceLog on the churning service: the
// SampleProfiler with JIT and loader events and a rundown at start, each
// sample's call stack walked to its method names as a profiler would.
// Args: PID SECONDS [trim]; with "trim", TraceLog.TrimLiveSessionState() runs
// from the sample callback once a second (its contract: no CallStackIndex
// kept, called on the dispatching thread).  Prints its own RSS once a minute.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.IO;
using System.Threading;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;
using Microsoft.Diagnostics.Tracing.Parsers;

public static class Reader
{
    static long Rss()
    {
        foreach (var line in File.ReadLines("/proc/self/status"))
            if (line.StartsWith("VmRSS:"))
                return long.Parse(line.Substring(6).Trim().Split(' ')[0]);
        return 0;
    }

    public static void Main(string[] args)
    {
        int pid = int.Parse(args[0]);
        double seconds = double.Parse(args[1]);
        bool trim = args.Length > 2 && args[2] == "trim";
        var providers = new List<EventPipeProvider> {
            new EventPipeProvider("Microsoft-DotNETCore-SampleProfiler", EventLevel.Informational),
            new EventPipeProvider("Microsoft-Windows-DotNETRuntime", EventLevel.Verbose, 0x18),
        };
        var client = new DiagnosticsClient(pid);
        using var session = client.StartEventPipeSession(providers, false);
        using var source = TraceLog.CreateFromEventPipeSession(session, TraceLog.EventPipeRundownConfiguration.Enable(client));
        long samples = 0, frames = 0, named = 0;
        var sw = Stopwatch.StartNew();
        long lastTrim = 0;
        int minute = 0;
        Console.WriteLine($"minute rss_kib samples frames named (TraceEvent 4.0.0 TraceLog{(trim ? ", TrimLiveSessionState every second" : "")})");
        new SampleProfilerTraceEventParser(source).All += delegate (TraceEvent e)
        {
            if ((int)e.ID != 0)
                return;
            samples++;
            for (TraceCallStack cs = e.CallStack(); cs != null; cs = cs.Caller)
            {
                frames++;
                if (!string.IsNullOrEmpty(cs.CodeAddress.FullMethodName))
                    named++;
            }
            long s = sw.ElapsedMilliseconds;
            if (trim && s - lastTrim >= 1000)
            {
                source.TraceLog.TrimLiveSessionState();
                lastTrim = s;
            }
            if (s >= (minute + 1) * 60000L)
            {
                minute++;
                Console.WriteLine($"{minute} {Rss()} {samples} {frames} {named}");
            }
        };
        var stopper = new Thread(() => { Thread.Sleep(TimeSpan.FromSeconds(seconds)); session.Stop(); });
        stopper.IsBackground = true;
        stopper.Start();
        Console.WriteLine($"0 {Rss()} 0 0 0");
        source.Process();
        Console.WriteLine($"end {Rss()} {samples} {frames} {named}");
    }
}
