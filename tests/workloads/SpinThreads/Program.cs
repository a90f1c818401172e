// Two named threads, each spinning in its own non-inlined method, while the
// main thread waits for them.  Recorded into corpus/spin-threads.nettrace: a
// sampler should attribute the workers' samples to SpinAlpha / SpinBeta and
// the main thread's samples to a wait (external samples).
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Diagnostics.Tracing;
using System.Threading;

namespace Workloads.SpinThreads
{
    internal static class Spin
    {
        // Written so the JIT cannot drop the loops as dead code.
        public static long Sink;
    }

    // Thread names are not part of a NetTrace stream.  Each worker announces
    // its own name through this EventSource, so the event's header ThreadId
    // ties the name to the OS thread id that the samples carry.
    [EventSource(Name = "Workloads-SpinThreads")]
    internal sealed class ThreadNames : EventSource
    {
        public static readonly ThreadNames Log = new ThreadNames();

        [Event(1, Level = EventLevel.Informational)]
        public void ThreadNamed(string name) => WriteEvent(1, name);
    }

    internal static class AlphaSpinner
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long SpinAlpha(long deadlineTicks)
        {
            long x = 1;
            // Arithmetic only inside the loop; the clock is read once per
            // million iterations so nearly every sample lands in this frame.
            while (Stopwatch.GetTimestamp() < deadlineTicks)
            {
                for (int i = 0; i < 1_000_000; i++)
                    x = x * 6364136223846793005L + 1442695040888963407L;
            }
            return x;
        }
    }

    internal static class BetaSpinner
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long SpinBeta(long deadlineTicks)
        {
            long x = 7;
            while (Stopwatch.GetTimestamp() < deadlineTicks)
            {
                for (int i = 0; i < 1_000_000; i++)
                    x = (x ^ (x >> 7)) * 2862933555777941757L + 3037000493L;
            }
            return x;
        }
    }

    internal static class Program
    {
        private static int Main(string[] args)
        {
            int ms = args.Length > 0 ? int.Parse(args[0]) : 2000;
            long deadline = Stopwatch.GetTimestamp() + ms * Stopwatch.Frequency / 1000;

            var alpha = new Thread(() =>
            {
                ThreadNames.Log.ThreadNamed(Thread.CurrentThread.Name!);
                Spin.Sink += AlphaSpinner.SpinAlpha(deadline);
            }) { Name = "alpha-worker" };
            var beta = new Thread(() =>
            {
                ThreadNames.Log.ThreadNamed(Thread.CurrentThread.Name!);
                Spin.Sink += BetaSpinner.SpinBeta(deadline);
            }) { Name = "beta-worker" };
            ThreadNames.Log.ThreadNamed("main");
            alpha.Start();
            beta.Start();
            alpha.Join();
            beta.Join();
            Console.WriteLine($"spin-threads done ({ms} ms)");
            return 0;
        }
    }
}
