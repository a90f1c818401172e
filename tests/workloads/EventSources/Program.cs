// Runs for the given milliseconds: tasks awaited on the thread pool (TPL task
// events), a Meter with a counter, a histogram and an observable gauge
// (System.Diagnostics.Metrics publishes them each refresh interval), and the
// runtime's own counters (System.Runtime's EventCounters, each interval).
using System;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Threading;
using System.Threading.Tasks;

namespace Workloads.EventSources;

internal static class Program
{
    private static int s_queue;

    private static async Task<int> Step(int n)
    {
        await Task.Delay(1);
        return await Task.Run(() => n * 2);
    }

    private static async Task Main(string[] args)
    {
        int ms = args.Length > 0 ? int.Parse(args[0]) : 2500;
        using var meter = new Meter("Workloads.EventSources", "1.0");
        Counter<long> requests = meter.CreateCounter<long>("requests", "{request}", "requests served");
        Histogram<double> latency = meter.CreateHistogram<double>("latency", "ms", "time per request");
        meter.CreateObservableGauge("queue", () => Volatile.Read(ref s_queue), "{item}", "items waiting");
        var clock = Stopwatch.StartNew();
        long sum = 0;
        for (int n = 0; clock.ElapsedMilliseconds < ms; n++)
        {
            var t0 = Stopwatch.GetTimestamp();
            Interlocked.Increment(ref s_queue);
            sum += await Step(n);
            Interlocked.Decrement(ref s_queue);
            requests.Add(1, new System.Collections.Generic.KeyValuePair<string, object?>("route", n % 2 == 0 ? "/a" : "/b"));
            latency.Record(Stopwatch.GetElapsedTime(t0).TotalMilliseconds);
            if (n % 50 == 0)
                await Task.Delay(20);
        }
        Console.WriteLine("done " + sum);
    }
}
